//! pgpipe's side of `shards`: one `Cluster` over every shard, a hash map
//! of the shards, a small pool per host (pgpipe pipelines the statements
//! of all tasks on a host's shared connection).

use std::time::Duration;

use pgpipe::cluster::{Cluster, Consistency, ShardMap};
use pgpipe::PoolConfig;

use crate::error::BenchError;
use crate::families::shards::{draw, named, Tally, Topology, READ_SQL, WRITE_SQL};

/// Each host's pool: at most 2 connections, one of them the shared lane
/// that every task's single statements are pipelined on (the other is
/// left for checkouts and transactions, which this mix has none of, so it
/// never opens). The cluster's background probe holds one more session
/// per host in use.
pub const MAX_SIZE: usize = 2;
/// The shared lane of each host's pool.
pub const SHARED: usize = 1;

/// The fleet as one pgpipe `Cluster`.
#[derive(Debug)]
pub struct Shards {
    cluster: Cluster,
    keys: i64,
    tally: Tally,
}

impl Shards {
    /// A cluster of every shard of `topology` (primary and replica
    /// listed alike: the cluster asks the servers which is which), its
    /// connections named `application_name`. Connections open on first
    /// use, as in an application.
    pub fn connect(topology: &Topology, application_name: &str) -> Result<Self, BenchError> {
        let mut builder = Cluster::builder()
            .map(ShardMap::hash(topology.shard_count())?)
            .pool_config(
                PoolConfig::new()
                    .max_size(MAX_SIZE)
                    .shared_connections(SHARED)
                    .acquire_timeout(Duration::from_secs(30)),
            );
        for (id, shard) in topology.shards.iter().enumerate() {
            let hosts = std::iter::once(&shard.primary)
                .chain(shard.replica.as_ref())
                .map(|url| named(url, application_name));
            builder = builder.shard(id as u32, hosts.collect::<Vec<_>>());
        }
        Ok(Shards {
            cluster: builder.build()?,
            keys: topology.keys,
            tally: Tally::default(),
        })
    }

    /// One operation of the mix, checked; returns rows read.
    pub async fn op(&self) -> Result<u64, BenchError> {
        let d = draw(self.keys);
        let shard = self.cluster.shard(d.key).await?;
        if d.write {
            let n = shard.primary().execute(WRITE_SQL, (d.key,)).await?;
            self.tally.write(d.key, n)
        } else {
            let row = shard
                .replica(Consistency::Any)
                .query_one(READ_SQL, (d.key,))
                .await?;
            self.tally.read(d.key, row.try_get(0)?, row.try_get(1)?)
        }
    }

    /// What it did so far.
    pub fn tally(&self) -> &Tally {
        &self.tally
    }

    /// The cluster (for its status).
    pub fn cluster(&self) -> &Cluster {
        &self.cluster
    }
}
