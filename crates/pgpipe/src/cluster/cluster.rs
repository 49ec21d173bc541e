//! [`Cluster`]: the shards, the shard map, and the background probe of
//! every shard in use.

use std::collections::BTreeMap;
use std::fmt;
use std::sync::{Arc, Weak};

use tokio::task::JoinSet;
use tokio::time::Instant;

use super::key::ShardKey;
use super::map::{Kind, ShardMap};
use super::settings::Settings;
use super::shard::ShardNode;
use super::shard_handle::Shard;
use super::ShardId;
use crate::error::ErrorKind;
use crate::pool::budget::Budget;
use crate::Error;

/// Many databases as one: shards, each a primary with its streaming
/// replicas, a [`ShardMap`] from keys to shards, and routing by role and
/// consistency. Built with [`Cluster::builder`]; cheap to clone (clones
/// share everything). See the [module documentation](crate::cluster).
///
/// ```no_run
/// # async fn f() -> Result<(), pgpipe::Error> {
/// use pgpipe::cluster::{Cluster, Consistency, ShardMap};
///
/// let cluster = Cluster::builder()
///     .shard(0, ["postgres://app@db0a/mail", "postgres://app@db0b/mail"])
///     .shard(1, ["postgres://app@db1a/mail", "postgres://app@db1b/mail"])
///     .map(ShardMap::hash(2)?)
///     .build()?;
///
/// let shard = cluster.shard(7i64).await?;
/// shard.primary().execute("INSERT INTO mail (uid) VALUES ($1)", (7i64,)).await?;
/// let rows = shard.replica(Consistency::Any).query("SELECT * FROM mail WHERE uid = $1", (7i64,)).await?;
/// # Ok(()) }
/// ```
#[derive(Clone)]
pub struct Cluster {
    pub(crate) inner: Arc<ClusterInner>,
}

pub(crate) struct ClusterInner {
    pub(crate) shards: BTreeMap<ShardId, Arc<ShardNode>>,
    pub(crate) map: ShardMap,
    pub(crate) settings: Settings,
    /// The cap on open connections across every host pool.
    pub(crate) budget: Option<Arc<Budget>>,
}

impl Cluster {
    pub(crate) fn start(inner: ClusterInner) -> Result<Cluster, Error> {
        validate_map(&inner)?;
        let runtime = tokio::runtime::Handle::try_current().map_err(|_| {
            Error::new(
                ErrorKind::InvalidUse,
                "a Cluster must be built inside a tokio runtime (it probes its hosts in the background)",
            )
        })?;
        let inner = Arc::new(inner);
        runtime.spawn(probe_forever(Arc::downgrade(&inner)));
        Ok(Cluster { inner })
    }

    /// The shard `key` maps to (through the cluster's [`ShardMap`]).
    ///
    /// ```no_run
    /// # async fn f(cluster: pgpipe::cluster::Cluster) -> Result<(), pgpipe::Error> {
    /// let shard = cluster.shard("alice@example.com").await?;
    /// println!("alice lives on shard {}", shard.id());
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// Kind [`Routing`](ErrorKind::Routing): a key the map does not cover
    /// or cannot take (a text key for a range map), or a shard id the map
    /// or resolver gave that the cluster does not have; the resolver's own
    /// error, or [`Timeout`](ErrorKind::Timeout) if it did not answer in
    /// time.
    pub async fn shard(&self, key: impl Into<ShardKey>) -> Result<Shard, Error> {
        let key = key.into();
        let id = self.inner.map.lookup(&key).await?;
        self.shard_id(id)
            .map_err(|e| e.context(format!("the shard map sent key {key} to shard {id}")))
    }

    /// The shard with id `id`.
    ///
    /// ```no_run
    /// # fn f(cluster: pgpipe::cluster::Cluster) -> Result<(), pgpipe::Error> {
    /// let shard = cluster.shard_id(3)?;
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// Kind [`Routing`](ErrorKind::Routing) for an id the cluster does not
    /// have (the message lists the ones it has).
    pub fn shard_id(&self, id: ShardId) -> Result<Shard, Error> {
        match self.inner.shards.get(&id) {
            Some(node) => Ok(Shard::new(self.inner.clone(), node.clone())),
            None => Err(Error::new(
                ErrorKind::Routing,
                format!(
                    "no shard {id} in the cluster (it has {})",
                    describe_ids(self.inner.shards.keys().copied())
                ),
            )),
        }
    }

    /// The ids of every shard, in order.
    ///
    /// ```no_run
    /// # fn f(cluster: pgpipe::cluster::Cluster) {
    /// for id in cluster.shard_ids() {
    ///     println!("shard {id}");
    /// }
    /// # }
    /// ```
    pub fn shard_ids(&self) -> Vec<ShardId> {
        self.inner.shards.keys().copied().collect()
    }

    /// Every shard, in id order.
    pub(crate) fn shards(&self) -> impl Iterator<Item = Shard> + '_ {
        self.inner
            .shards
            .values()
            .map(|node| Shard::new(self.inner.clone(), node.clone()))
    }
}

fn describe_ids(ids: impl Iterator<Item = ShardId>) -> String {
    let ids: Vec<String> = ids.map(|id| id.to_string()).collect();
    if ids.len() > 20 {
        format!(
            "{} shards: {} ... {}",
            ids.len(),
            ids[..10].join(", "),
            ids[ids.len() - 1]
        )
    } else {
        format!("shards {}", ids.join(", "))
    }
}

/// A static map must only send keys to shards that exist.
fn validate_map(inner: &ClusterInner) -> Result<(), Error> {
    let missing = |id: ShardId| {
        (!inner.shards.contains_key(&id)).then(|| {
            Error::new(
                ErrorKind::Config,
                format!(
                    "the shard map sends keys to shard {id}, which the cluster does not have ({})",
                    describe_ids(inner.shards.keys().copied())
                ),
            )
        })
    };
    match inner.map.kind() {
        Kind::Hash(n) => (0..*n).find_map(missing).map_or(Ok(()), Err),
        Kind::Ranges(ranges) => ranges
            .iter()
            .find_map(|(_, id)| missing(*id))
            .map_or(Ok(()), Err),
        Kind::Resolver(_) => Ok(()),
    }
}

/// Probes every host of every shard in use, each interval, until the
/// cluster is dropped: roles (a promotion, a demotion) and replay
/// positions (lag, tokens) stay current without any request waiting.
async fn probe_forever(cluster: Weak<ClusterInner>) {
    let Some(interval) = cluster.upgrade().map(|c| c.settings.probe_interval) else {
        return;
    };
    let mut tick = tokio::time::interval(interval);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tick.tick().await;
        let (shards, timeout, dormant_after) = match cluster.upgrade() {
            Some(c) => {
                #[cfg(feature = "metrics")]
                super::publish::publish(&c);
                (
                    c.shards
                        .values()
                        .filter(|s| s.is_active())
                        .cloned()
                        .collect::<Vec<_>>(),
                    c.settings.probe_timeout,
                    c.settings.dormant_after,
                )
            }
            None => return,
        };
        let started = Instant::now();
        let mut rounds = JoinSet::new();
        for shard in shards {
            rounds.spawn(async move {
                match dormant_after {
                    Some(after) if shard.unused_for(after, started) => {
                        shard.go_dormant(after, started).await
                    }
                    _ => shard.refresh_all(started, timeout).await,
                }
            });
        }
        while rounds.join_next().await.is_some() {}
    }
}

impl fmt::Debug for Cluster {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Cluster")
            .field("shards", &self.inner.shards.len())
            .field("map", &self.inner.map)
            .field("settings", &self.inner.settings)
            .finish()
    }
}
