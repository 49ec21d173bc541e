//! [`HostStatus`]: what the cluster knows of one host.

use std::time::Duration;

use pgpipe_types::PgLsn;

use super::host::{HostNode, Role};
use super::patroni_member::PatroniMember;
use super::shard::ShardNode;
use crate::PoolStats;

/// One host of a shard as the cluster last saw it (see
/// [`Shard::hosts`](crate::cluster::Shard::hosts)).
///
/// ```no_run
/// # fn f(shard: pgpipe::cluster::Shard) {
/// use pgpipe::cluster::Role;
///
/// let standbys = shard.hosts().into_iter().filter(|h| h.role == Role::Standby).count();
/// # }
/// ```
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct HostStatus {
    /// `host:port/dbname` (no user, no password).
    pub host: String,
    /// The role the server reported at the latest probe (or a 25006 since).
    pub role: Role,
    /// A standby's replay position, a primary's insert position.
    pub position: Option<PgLsn>,
    /// A primary's timeline; the timeline a standby receives WAL on
    /// (`None` while it streams from nowhere, or when the server hides
    /// `pg_stat_wal_receiver` from the cluster's user, which needs
    /// `pg_read_all_stats` to see it). A read with a
    /// [`WriteToken`](super::WriteToken) that names a later timeline never
    /// goes to a standby on an earlier one.
    pub timeline: Option<u32>,
    /// A standby's lag behind the primary, in time: how long ago the
    /// primary was first seen at a position the standby has not replayed
    /// (zero when it has replayed every position seen). Measured from
    /// the probes' positions, so at most one probe interval short; counted
    /// from when the cluster first saw the current primary. `None` for a
    /// primary, an unprobed host, or one behind every position kept.
    pub lag: Option<Duration>,
    /// `in_hot_standby` as the probe's open session last reported it: the
    /// server pushes it to open sessions when promoted (PostgreSQL 14+;
    /// `None` on older servers).
    pub in_hot_standby: Option<bool>,
    /// The backend process serving the probe's session: the same value
    /// across probes means the same open session.
    pub probe_backend_pid: Option<i32>,
    /// The latest probe's or request's failure, if the host is not usable.
    pub last_error: Option<String>,
    /// The host's pool, if one was created (on first use).
    pub pool: Option<PoolStats>,
    /// The host as the shard's Patroni last reported it (role, state,
    /// lag in bytes), when one is configured
    /// (`ClusterBuilder::patroni`) and
    /// answered at the latest round.
    pub patroni: Option<PatroniMember>,
}

impl HostStatus {
    pub(crate) fn of(shard: &ShardNode, host: &HostNode) -> HostStatus {
        let seen = host.seen();
        HostStatus {
            host: host.label.clone(),
            role: seen.role,
            position: seen.position,
            timeline: seen.timeline,
            lag: match seen.role {
                Role::Standby => shard.lag(&seen),
                _ => None,
            },
            in_hot_standby: seen.in_hot_standby,
            probe_backend_pid: seen.probe_pid,
            last_error: host.last_error(),
            pool: host.existing_pool().map(|p| p.stats()),
            patroni: host.patroni(),
        }
    }
}
