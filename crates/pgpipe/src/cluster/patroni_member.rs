//! [`PatroniMember`]: one member of a shard as Patroni's REST API reports it.

/// One member of a shard as Patroni's `GET /cluster` last reported it
/// (see `ClusterBuilder::patroni`; the
/// feature `patroni`). Informative: the server's own answer to the probe
/// decides a host's [`Role`](super::Role).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct PatroniMember {
    /// The member's name in Patroni.
    pub name: String,
    /// Patroni's role: `leader`, `replica`, `sync_standby`,
    /// `standby_leader`, ...
    pub role: String,
    /// `running`, `streaming`, `starting`, `stopped`, ...
    pub state: String,
    /// The host PostgreSQL is reached at, as Patroni advertises it.
    pub host: String,
    /// Its port.
    pub port: u16,
    /// A replica's lag behind the leader in bytes of WAL, when Patroni
    /// knows it.
    pub lag: Option<u64>,
}

impl PatroniMember {
    /// Whether Patroni reports it as the leader (it holds the leader key).
    pub fn is_leader(&self) -> bool {
        self.role == "leader"
    }
}
