//! The cluster's metrics (feature `metrics`): each probe round publishes
//! every host's connections, requests, errors and lag, and the budget's
//! state (names in `crate::observe`).

use super::cluster::ClusterInner;
use super::host::Role;
use super::stats::stats;
use crate::observe::metrics::{cluster_budget, cluster_host, ClusterHost};

pub(crate) fn publish(cluster: &ClusterInner) {
    let stats = stats(cluster);
    if let Some(b) = stats.budget {
        cluster_budget(b.limit, b.open, b.waits, b.evictions, b.timeouts);
    }
    for shard in &stats.shards {
        for host in shard.hosts.iter().filter(|h| h.pool.is_some()) {
            cluster_host(&ClusterHost {
                shard: shard.id,
                host: &host.host,
                role: role_name(host.role),
                idle: host.idle,
                used: host.open.saturating_sub(host.idle),
                pending: host.waiters,
                requests: host.requests,
                errors: host.errors,
                lag: host.lag,
            });
        }
    }
}

fn role_name(role: Role) -> &'static str {
    match role {
        Role::Primary => "primary",
        Role::Standby => "standby",
        Role::ReadOnly => "read_only",
        Role::Unreachable => "unreachable",
        Role::Unknown => "unknown",
    }
}
