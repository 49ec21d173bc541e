//! [`Shard`]: one shard of a cluster, handing out its routes.

use std::fmt;
use std::sync::Arc;

use super::cluster::ClusterInner;
use super::consistency::Consistency;
use super::route::{Route, Target};
use super::shard::ShardNode;
use super::status::HostStatus;
use super::ShardId;

/// One shard of a [`Cluster`](crate::cluster::Cluster), from
/// [`Cluster::shard`](crate::cluster::Cluster::shard) (by key) or
/// [`Cluster::shard_id`](crate::cluster::Cluster::shard_id). Cheap to
/// clone.
///
/// ```no_run
/// # async fn f(cluster: pgpipe::cluster::Cluster) -> Result<(), pgpipe::Error> {
/// use pgpipe::cluster::Consistency;
///
/// let shard = cluster.shard(7i64).await?;
/// shard.primary().execute("UPDATE users SET seen = now() WHERE uid = $1", (7i64,)).await?;
/// let n: i64 = shard
///     .replica(Consistency::Any)
///     .query_one("SELECT count(*) FROM mail WHERE uid = $1", (7i64,))
///     .await?
///     .get(0);
/// # Ok(()) }
/// ```
#[derive(Clone)]
pub struct Shard {
    cluster: Arc<ClusterInner>,
    node: Arc<ShardNode>,
}

impl Shard {
    pub(crate) fn new(cluster: Arc<ClusterInner>, node: Arc<ShardNode>) -> Shard {
        Shard { cluster, node }
    }

    /// The shard's id.
    ///
    /// ```no_run
    /// # fn f(cluster: pgpipe::cluster::Cluster) -> Result<(), pgpipe::Error> {
    /// assert_eq!(cluster.shard_id(2)?.id(), 2);
    /// # Ok(()) }
    /// ```
    pub fn id(&self) -> ShardId {
        self.node.id
    }

    /// The shard's primary, for writes, transactions and reads that must
    /// see everything committed. Found by asking the hosts (at first use,
    /// in the background, and again when a write meets a host that is no
    /// longer primary).
    ///
    /// ```no_run
    /// # async fn f(shard: pgpipe::cluster::Shard) -> Result<(), pgpipe::Error> {
    /// shard.primary().execute("DELETE FROM mail WHERE id = $1", (1i64,)).await?;
    /// # Ok(()) }
    /// ```
    pub fn primary(&self) -> Route {
        Route::new(self.cluster.clone(), self.node.clone(), Target::Primary)
    }

    /// The shard's replicas for reads of `consistency`: each request goes
    /// to a standby that qualifies (round robin among them), or, when none
    /// does, to the primary or nowhere, as the cluster's
    /// [`replica_fallback`](crate::cluster::ClusterBuilder::replica_fallback)
    /// says.
    ///
    /// ```no_run
    /// # async fn f(shard: pgpipe::cluster::Shard) -> Result<(), pgpipe::Error> {
    /// use std::time::Duration;
    /// use pgpipe::cluster::Consistency;
    ///
    /// let recent = shard.replica(Consistency::MaxLag(Duration::from_millis(500)));
    /// let rows = recent.query("SELECT id FROM mail WHERE uid = $1", (7i64,)).await?;
    /// # Ok(()) }
    /// ```
    pub fn replica(&self, consistency: Consistency) -> Route {
        Route::new(
            self.cluster.clone(),
            self.node.clone(),
            Target::Replica(consistency),
        )
    }

    /// What the cluster knows of each host of the shard, as of its latest
    /// probe (nothing is asked of the servers here).
    ///
    /// ```no_run
    /// # fn f(shard: pgpipe::cluster::Shard) {
    /// for host in shard.hosts() {
    ///     println!("{} is {:?}, {:?} behind", host.host, host.role, host.lag);
    /// }
    /// # }
    /// ```
    pub fn hosts(&self) -> Vec<HostStatus> {
        self.node
            .hosts
            .iter()
            .map(|h| HostStatus::of(&self.node, h))
            .collect()
    }
}

impl fmt::Debug for Shard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Shard")
            .field("id", &self.node.id)
            .field("hosts", &self.hosts())
            .finish()
    }
}
