//! The cluster's timing and routing settings, set on
//! [`ClusterBuilder`](super::ClusterBuilder).

use std::time::Duration;

use super::consistency::Fallback;

#[derive(Debug, Clone)]
pub(crate) struct Settings {
    pub(crate) probe_interval: Duration,
    pub(crate) probe_timeout: Duration,
    pub(crate) max_replica_lag: Option<Duration>,
    pub(crate) token_wait: Duration,
    pub(crate) token_poll: Duration,
    pub(crate) primary_wait: Duration,
    pub(crate) fallback: Fallback,
    /// A shard unused this long goes dormant: no more probes, its probe
    /// sessions closed (its pools close their idle connections after the
    /// same time). The host pools' `idle_timeout`.
    pub(crate) dormant_after: Option<Duration>,
}

impl Default for Settings {
    fn default() -> Settings {
        Settings {
            probe_interval: Duration::from_secs(1),
            probe_timeout: Duration::from_secs(5),
            max_replica_lag: Some(Duration::from_secs(30)),
            token_wait: Duration::from_secs(1),
            token_poll: Duration::from_millis(5),
            primary_wait: Duration::from_secs(10),
            fallback: Fallback::Primary,
            dormant_after: Some(Duration::from_secs(600)),
        }
    }
}
