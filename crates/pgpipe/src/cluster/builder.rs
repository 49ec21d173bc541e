//! [`ClusterBuilder`]: shards and their hosts, the shard map, timings.

use std::collections::BTreeMap;
use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use super::cluster::{Cluster, ClusterInner};
use super::consistency::Fallback;
use super::host::HostNode;
use super::map::ShardMap;
use super::settings::Settings;
use super::shard::ShardNode;
use super::ShardId;
use crate::error::ErrorKind;
use crate::pool::budget::Budget;
use crate::{Config, Error, PoolConfig};

/// Builds a [`Cluster`]: each shard's hosts (primary and standbys alike:
/// roles are asked of the servers, never configured), the [`ShardMap`],
/// the pools' settings and the timings of probes and waits.
///
/// ```no_run
/// # fn f() -> Result<(), pgpipe::Error> {
/// use std::time::Duration;
/// use pgpipe::cluster::{Cluster, Fallback, ShardMap};
/// use pgpipe::PoolConfig;
///
/// let cluster = Cluster::builder()
///     .shard(0, ["postgres://app@10.0.0.1/mail", "postgres://app@10.0.0.2/mail"])
///     .shard(1, ["postgres://app@10.0.1.1/mail", "postgres://app@10.0.1.2/mail"])
///     .map(ShardMap::ranges([(0..1_000_000, 0), (1_000_000..2_000_000, 1)])?)
///     .pool_config(PoolConfig::new().max_size(8))
///     .max_replica_lag(Some(Duration::from_secs(5)))
///     .token_wait(Duration::from_millis(200))
///     .replica_fallback(Fallback::Primary)
///     .build()?;
/// # Ok(()) }
/// ```
#[must_use = "a builder does nothing until build() is called"]
pub struct ClusterBuilder {
    shards: Vec<(ShardId, Vec<Result<Config, Error>>)>,
    map: Option<ShardMap>,
    pool_config: PoolConfig,
    max_connections: Option<usize>,
    settings: Settings,
    #[cfg(feature = "patroni")]
    patroni: Vec<(ShardId, String)>,
}

impl Cluster {
    /// A [`ClusterBuilder`] with no shards.
    ///
    /// ```
    /// let builder = pgpipe::cluster::Cluster::builder();
    /// ```
    pub fn builder() -> ClusterBuilder {
        ClusterBuilder {
            shards: Vec::new(),
            map: None,
            pool_config: PoolConfig::new(),
            max_connections: None,
            settings: Settings::default(),
            #[cfg(feature = "patroni")]
            patroni: Vec::new(),
        }
    }
}

impl ClusterBuilder {
    /// Adds shard `id` with its hosts, one connection string each (any
    /// form [`Config::parse`] takes; one host per string). List every host
    /// that may serve the shard: which one is primary is asked of them.
    ///
    /// ```
    /// let builder = pgpipe::cluster::Cluster::builder()
    ///     .shard(0, ["postgres://app@db0a/mail", "postgres://app@db0b/mail"]);
    /// ```
    pub fn shard<I>(mut self, id: ShardId, hosts: I) -> ClusterBuilder
    where
        I: IntoIterator,
        I::Item: AsRef<str>,
    {
        let hosts = hosts
            .into_iter()
            .map(|url| {
                Config::parse(url.as_ref())
                    .map_err(|e| Error::from(e).context(format!("a host of shard {id}")))
            })
            .collect();
        self.shards.push((id, hosts));
        self
    }

    /// Adds shard `id` with hosts configured in code.
    ///
    /// ```
    /// use pgpipe::Config;
    ///
    /// let mut a = Config::new();
    /// a.host("10.0.0.1").user("app").dbname("mail");
    /// let builder = pgpipe::cluster::Cluster::builder().shard_with_configs(0, [a]);
    /// ```
    pub fn shard_with_configs(
        mut self,
        id: ShardId,
        hosts: impl IntoIterator<Item = Config>,
    ) -> ClusterBuilder {
        self.shards.push((id, hosts.into_iter().map(Ok).collect()));
        self
    }

    /// How keys map to shards. Without one,
    /// [`Cluster::shard`](crate::cluster::Cluster::shard) hashes over
    /// shards `0..n` ([`ShardMap::hash`]) when the shards are exactly
    /// those; otherwise the map is required.
    pub fn map(mut self, map: ShardMap) -> ClusterBuilder {
        self.map = Some(map);
        self
    }

    /// The settings of each host's pool (one pool per host, created on
    /// first use). Default: [`PoolConfig::new`].
    ///
    /// Its [`idle_timeout`](PoolConfig::idle_timeout) also lets idle
    /// hosts shrink to zero connections: a pool closes connections idle
    /// that long (down to its `min_idle`, 0 by default), and a shard
    /// unused that long goes dormant: its hosts are no longer probed and
    /// the probes' sessions close. Its next use probes it again first.
    pub fn pool_config(mut self, config: PoolConfig) -> ClusterBuilder {
        self.pool_config = config;
        self
    }

    /// One cap on the connections all host pools of the cluster hold open
    /// together (idle, in use and being opened; the probe's own session
    /// per host in use is not counted), so that hosts x pool size cannot
    /// exceed the servers' `max_connections` by accident. A request that
    /// needs a new connection while the budget is spent closes the
    /// connection idle longest on another host to make room, or waits for
    /// one to be freed anywhere in the cluster, within the pool's
    /// [`acquire_timeout`](PoolConfig::acquire_timeout); then it fails with
    /// [`ErrorKind::Timeout`]. Default: no cap (each host's pool is only
    /// bounded by its own `max_size`).
    ///
    /// A task that holds a connection on one host while it waits for one
    /// on another can wait out its acquire timeout when every other task
    /// does the same: size the budget for the connections a task holds at
    /// once.
    ///
    /// ```no_run
    /// # fn f() -> Result<(), pgpipe::Error> {
    /// use pgpipe::PoolConfig;
    ///
    /// // 100 shards x 2 hosts x 8 per pool would be 1,600: cap it at 64.
    /// let mut builder = pgpipe::cluster::Cluster::builder()
    ///     .pool_config(PoolConfig::new().max_size(8))
    ///     .max_connections(64);
    /// for id in 0..100 {
    ///     builder = builder.shard(id, [format!("postgres://app@db{id}a/mail"), format!("postgres://app@db{id}b/mail")]);
    /// }
    /// let cluster = builder.build()?;
    /// # Ok(()) }
    /// ```
    pub fn max_connections(mut self, budget: usize) -> ClusterBuilder {
        self.max_connections = Some(budget);
        self
    }

    /// How often the hosts of every shard in use are probed (role, WAL
    /// position) in the background. Default 1 s.
    pub fn probe_interval(mut self, interval: Duration) -> ClusterBuilder {
        self.settings.probe_interval = interval.max(Duration::from_millis(1));
        self
    }

    /// How long a probe (connecting included) may take before the host
    /// counts as unreachable. Default 5 s.
    pub fn probe_timeout(mut self, timeout: Duration) -> ClusterBuilder {
        self.settings.probe_timeout = timeout;
        self
    }

    /// The most a standby may lag for [`Consistency::Any`](crate::cluster::Consistency::Any)
    /// reads; past it, it gets none until it catches up. `None`: no bound.
    /// Default 30 s.
    pub fn max_replica_lag(mut self, bound: Option<Duration>) -> ClusterBuilder {
        self.settings.max_replica_lag = bound;
        self
    }

    /// How long a read-your-writes read waits for a standby to replay its
    /// token (probing the standbys meanwhile) before the fallback. Default
    /// 1 s.
    pub fn token_wait(mut self, wait: Duration) -> ClusterBuilder {
        self.settings.token_wait = wait;
        self
    }

    /// How long a write waits for a shard without a primary (a failover in
    /// progress) to have one again. Default 10 s.
    pub fn primary_wait(mut self, wait: Duration) -> ClusterBuilder {
        self.settings.primary_wait = wait;
        self
    }

    /// What a replica read does when no standby qualifies. Default
    /// [`Fallback::Primary`].
    pub fn replica_fallback(mut self, fallback: Fallback) -> ClusterBuilder {
        self.settings.fallback = fallback;
        self
    }

    /// Reads shard `id`'s topology from Patroni too: at each probe round,
    /// `GET /cluster` on the REST API at `url` (`http://host:port`, any
    /// member's: each answers for the whole Patroni cluster), beside the
    /// probes of the servers. Feature `patroni`.
    ///
    /// The servers stay the authority on roles: a host Patroni calls
    /// leader gets writes only if its own probe says it is a writable
    /// primary; when two hosts say so (an old primary not yet fenced),
    /// writes go to Patroni's leader. Each host's member (matched by host
    /// and port as Patroni advertises them), its replication lag in bytes
    /// included, is in [`HostStatus::patroni`](crate::cluster::HostStatus::patroni)
    /// and [`HostStats::patroni`](crate::cluster::HostStats::patroni).
    /// When Patroni cannot be asked (bounded by the
    /// [`probe_timeout`](ClusterBuilder::probe_timeout)), the probes alone
    /// decide, the error is in [`ShardStats::patroni_error`](crate::cluster::ShardStats::patroni_error)
    /// and logged (`pgpipe::cluster`, warning). Plain `http://` only.
    ///
    /// ```no_run
    /// # fn f() -> Result<(), pgpipe::Error> {
    /// let cluster = pgpipe::cluster::Cluster::builder()
    ///     .shard(0, ["postgres://app@10.0.0.1/mail", "postgres://app@10.0.0.2/mail"])
    ///     .patroni(0, "http://10.0.0.1:8008")
    ///     .build()?;
    /// # Ok(()) }
    /// ```
    #[cfg(feature = "patroni")]
    pub fn patroni(mut self, id: ShardId, url: impl Into<String>) -> ClusterBuilder {
        self.patroni.push((id, url.into()));
        self
    }

    /// Builds the cluster and starts its background probe. No connection
    /// opens here: a shard's hosts are probed at its first use, and a
    /// host's pool opens connections as requests need them.
    ///
    /// # Errors
    ///
    /// Kind [`Config`](ErrorKind::Config): a `max_connections` of 0, no
    /// shards, a shard without
    /// hosts or listed twice, a connection string that does not parse, a
    /// Patroni source for a shard not listed or with a URL not `http://`, or
    /// a static map sending keys to a shard that is not there;
    /// [`InvalidUse`](ErrorKind::InvalidUse) outside a tokio runtime.
    pub fn build(self) -> Result<Cluster, Error> {
        let budget = match self.max_connections {
            Some(0) => {
                return Err(config_error(
                    "max_connections is 0: the cluster could open no connection".into(),
                ))
            }
            Some(n) => Some(Arc::new(Budget::new(n))),
            None => None,
        };
        let mut shards = BTreeMap::new();
        for (id, hosts) in self.shards {
            if hosts.is_empty() {
                return Err(config_error(format!("shard {id} has no hosts")));
            }
            let hosts = hosts
                .into_iter()
                .map(|config| {
                    let pool_config = self.pool_config.clone();
                    Ok(Arc::new(HostNode::new(
                        config?,
                        pool_config,
                        budget.clone(),
                    )))
                })
                .collect::<Result<Vec<_>, Error>>()?;
            #[allow(unused_mut)]
            let mut shard = ShardNode::new(id, hosts);
            #[cfg(feature = "patroni")]
            if let Some((_, url)) = self.patroni.iter().find(|(shard, _)| *shard == id) {
                if !url.starts_with("http://") {
                    return Err(config_error(format!(
                        "the Patroni URL of shard {id} ({url:?}) is not http://host:port"
                    )));
                }
                shard.patroni = Some(super::patroni::PatroniSource { url: url.clone() });
            }
            if shards.insert(id, Arc::new(shard)).is_some() {
                return Err(config_error(format!("shard {id} is listed twice")));
            }
        }
        if shards.is_empty() {
            return Err(config_error("a cluster needs at least one shard".into()));
        }
        #[cfg(feature = "patroni")]
        if let Some((id, _)) = self.patroni.iter().find(|(id, _)| !shards.contains_key(id)) {
            return Err(config_error(format!(
                "a Patroni source is given for shard {id}, which is not in the cluster"
            )));
        }
        let map = match self.map {
            Some(map) => map,
            None => {
                let n = u32::try_from(shards.len()).unwrap_or(u32::MAX);
                if shards.keys().copied().ne(0..n) {
                    return Err(config_error(
                        "without a shard map the shards must be 0..n (for a hash map); set one with ClusterBuilder::map".into(),
                    ));
                }
                ShardMap::hash(n)?
            }
        };
        let mut settings = self.settings;
        settings.dormant_after = self.pool_config.get_idle_timeout();
        Cluster::start(ClusterInner {
            shards,
            map,
            settings,
            budget,
        })
    }
}

fn config_error(message: String) -> Error {
    Error::new(ErrorKind::Config, message)
}

impl fmt::Debug for ClusterBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ClusterBuilder")
            .field("shards", &self.shards.len())
            .field("map", &self.map)
            .field("settings", &self.settings)
            .finish_non_exhaustive()
    }
}
