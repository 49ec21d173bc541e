//! [`ClusterStats`]: connections, waits, requests and errors per host, per
//! shard and for the cluster's connection budget.

use std::sync::atomic::Ordering;
use std::time::Duration;

use super::cluster::{Cluster, ClusterInner};
use super::host::{HostNode, Role};
use super::patroni_member::PatroniMember;
use super::shard::ShardNode;
use super::ShardId;
use crate::pool::budget::BudgetCounts;
use crate::PoolStats;

/// A snapshot of a [`Cluster`]'s connections and traffic, from
/// [`Cluster::stats`]. Gauges are read one after the other without a global
/// lock, so under load they may not add up exactly; counters only grow.
///
/// ```no_run
/// # fn f(cluster: &pgpipe::cluster::Cluster) {
/// let stats = cluster.stats();
/// println!("{} connections open", stats.open);
/// for shard in &stats.shards {
///     for host in &shard.hosts {
///         println!("shard {} {} {:?}: {} open", shard.id, host.host, host.role, host.open);
///     }
/// }
/// # }
/// ```
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct ClusterStats {
    /// The connection budget ([`ClusterBuilder::max_connections`](super::ClusterBuilder::max_connections)),
    /// if one is set.
    pub budget: Option<BudgetStats>,
    /// Connections open in every host pool (the probes' sessions not
    /// counted).
    pub open: usize,
    /// Sessions the role probes hold of their own: a host whose pool has a
    /// shared connection is probed on it, so only hosts in use without one
    /// (or whose pooled connection failed under a probe) hold one. The
    /// servers see `open + probe_sessions` connections from this cluster.
    pub probe_sessions: usize,
    /// Every shard, in id order.
    pub shards: Vec<ShardStats>,
}

/// The cluster's connection budget (see [`ClusterStats::budget`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct BudgetStats {
    /// The cap: [`ClusterBuilder::max_connections`](super::ClusterBuilder::max_connections).
    pub limit: usize,
    /// Connections holding a place in it now (open or being opened).
    pub open: usize,
    /// The most that ever held a place at once (never above `limit`).
    pub peak: usize,
    /// Connection openings that had to wait for a place.
    pub waits: u64,
    /// Idle connections closed to make room for another host's.
    pub evictions: u64,
    /// Openings that gave up waiting (their acquire timed out).
    pub timeouts: u64,
}

/// One shard's hosts and their totals (see [`ClusterStats::shards`]).
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct ShardStats {
    /// The shard's id.
    pub id: ShardId,
    /// Whether the shard is in use: probed in the background, its pools
    /// kept. A shard unused for its pools' idle timeout goes dormant.
    pub active: bool,
    /// Open connections of all its hosts.
    pub open: usize,
    /// Idle connections of all its hosts.
    pub idle: usize,
    /// Checked-out connections of all its hosts.
    pub in_use: usize,
    /// Acquires waiting for a connection on any of its hosts.
    pub waiters: usize,
    /// Successful acquires on all its hosts.
    pub acquired: u64,
    /// Requests routed to its hosts.
    pub requests: u64,
    /// Requests routed to its hosts that failed.
    pub errors: u64,
    /// Acquires that failed on its hosts' pools.
    pub acquire_failures: u64,
    /// Each host, in the order given to the builder.
    pub hosts: Vec<HostStats>,
    /// Why the shard's Patroni
    /// (`ClusterBuilder::patroni`)
    /// could not be asked at the latest round (the probes alone decide
    /// meanwhile); `None` when it answered or none is configured.
    pub patroni_error: Option<String>,
}

/// One host (see [`ShardStats::hosts`]).
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct HostStats {
    /// `host:port/dbname` (no user, no password).
    pub host: String,
    /// The role the server reported at the latest probe (or a 25006 since).
    pub role: Role,
    /// A standby's lag behind the primary (see
    /// [`HostStatus::lag`](super::HostStatus::lag)).
    pub lag: Option<Duration>,
    /// Open connections of its pool: idle, checked out and shared.
    pub open: usize,
    /// Connections in its pool's idle list.
    pub idle: usize,
    /// Connections checked out of its pool.
    pub in_use: usize,
    /// Acquires waiting for one of its pool's connections now.
    pub waiters: usize,
    /// Successful acquires on its pool.
    pub acquired: u64,
    /// Requests routed to it (single statements and their retries).
    pub requests: u64,
    /// Requests routed here that failed (whatever the cause: a server
    /// error, a timeout, an acquire that failed).
    pub errors: u64,
    /// Acquires on its pool that failed (timeout, connect error), by any
    /// caller.
    pub acquire_failures: u64,
    /// Its pool's own statistics, if the pool was created (on first use).
    pub pool: Option<PoolStats>,
    /// The host as the shard's Patroni last reported it (see
    /// [`HostStatus::patroni`](super::HostStatus::patroni)): its lag in
    /// bytes is there.
    pub patroni: Option<PatroniMember>,
    /// Whether the host's role probe holds a session of its own now (see
    /// [`ClusterStats::probe_sessions`]).
    pub probe_session: bool,
}

impl Cluster {
    /// Connections, waits, requests and errors per host, per shard and for
    /// the connection budget, as they are now (nothing is asked of the
    /// servers).
    pub fn stats(&self) -> ClusterStats {
        stats(&self.inner)
    }
}

pub(crate) fn stats(cluster: &ClusterInner) -> ClusterStats {
    let shards: Vec<ShardStats> = cluster
        .shards
        .values()
        .map(|s| shard_stats(s))
        .collect::<Vec<_>>();
    ClusterStats {
        budget: cluster.budget.as_ref().map(|b| budget_stats(b.counts())),
        open: shards.iter().map(|s| s.open).sum(),
        probe_sessions: shards
            .iter()
            .flat_map(|s| &s.hosts)
            .filter(|h| h.probe_session)
            .count(),
        shards,
    }
}

fn budget_stats(c: BudgetCounts) -> BudgetStats {
    BudgetStats {
        limit: c.limit,
        open: c.open,
        peak: c.peak,
        waits: c.waits,
        evictions: c.evictions,
        timeouts: c.exhausted,
    }
}

fn shard_stats(shard: &ShardNode) -> ShardStats {
    let hosts: Vec<HostStats> = shard.hosts.iter().map(|h| host_stats(shard, h)).collect();
    ShardStats {
        id: shard.id,
        active: shard.is_active(),
        open: hosts.iter().map(|h| h.open).sum(),
        idle: hosts.iter().map(|h| h.idle).sum(),
        in_use: hosts.iter().map(|h| h.in_use).sum(),
        waiters: hosts.iter().map(|h| h.waiters).sum(),
        acquired: hosts.iter().map(|h| h.acquired).sum(),
        requests: hosts.iter().map(|h| h.requests).sum(),
        errors: hosts.iter().map(|h| h.errors).sum(),
        acquire_failures: hosts.iter().map(|h| h.acquire_failures).sum(),
        hosts,
        patroni_error: shard.patroni_error(),
    }
}

fn host_stats(shard: &ShardNode, host: &HostNode) -> HostStats {
    let seen = host.seen();
    let pool = host.existing_pool().map(|p| p.stats());
    let gauge = |f: fn(&PoolStats) -> usize| pool.as_ref().map_or(0, f);
    HostStats {
        host: host.label.clone(),
        role: seen.role,
        lag: match seen.role {
            Role::Standby => shard.lag(&seen),
            _ => None,
        },
        open: gauge(|p| p.size),
        idle: gauge(|p| p.idle),
        in_use: gauge(|p| p.in_use),
        waiters: gauge(|p| p.waiters),
        acquired: pool.as_ref().map_or(0, |p| p.acquire_time.total()),
        acquire_failures: pool.as_ref().map_or(0, |p| p.acquire_failures),
        requests: host.requests.load(Ordering::Relaxed),
        errors: host.errors.load(Ordering::Relaxed),
        pool,
        patroni: host.patroni(),
        probe_session: host.probe_session_open(),
    }
}
