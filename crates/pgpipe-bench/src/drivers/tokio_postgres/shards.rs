//! The hand-written side of `shards`: one deadpool-postgres pool per
//! shard and host over tokio-postgres, the shard found by the same hash,
//! reads on the shard's replica pool when it has one. Each operation
//! checks a connection out, `prepare_cached`, runs the statement.

use std::time::Duration;

use deadpool_postgres::{Manager, ManagerConfig, Pool, RecyclingMethod, Runtime};
use tokio_postgres::NoTls;

use crate::error::BenchError;
use crate::families::shards::{draw, named, shard_of, Tally, Topology, READ_SQL, WRITE_SQL};

/// Each pool's `max_size`: deadpool-postgres's own default on this
/// 2-core machine (`num_cpus * 4`), and about the most tasks that are on
/// one shard's host at once: with 256 tasks over 100 shards a shard sees
/// 2.6 of them on average, more than 8 about once in a thousand draws, so
/// a task almost never waits for a connection. Connections open on
/// demand and stay (no idle timeout), as deadpool's defaults do.
pub const MAX_SIZE: usize = 8;

/// One shard's pools.
#[derive(Debug)]
struct ShardPools {
    primary: Pool,
    replica: Option<Pool>,
}

/// The fleet as one deadpool-postgres pool per shard and host.
#[derive(Debug)]
pub struct Shards {
    shards: Vec<ShardPools>,
    count: u32,
    keys: i64,
    tally: Tally,
}

fn pool(url: &str, max_size: usize) -> Result<Pool, BenchError> {
    let config: tokio_postgres::Config = url
        .parse()
        .map_err(|e| BenchError::new(format!("deadpool-postgres: bad url: {e}")))?;
    let manager = Manager::from_config(
        config,
        NoTls,
        ManagerConfig {
            recycling_method: RecyclingMethod::Fast,
        },
    );
    Pool::builder(manager)
        .max_size(max_size.max(1))
        .runtime(Runtime::Tokio1)
        .wait_timeout(Some(Duration::from_secs(30)))
        .build()
        .map_err(|e| BenchError::new(format!("deadpool-postgres: {e}")))
}

impl Shards {
    /// A pool of `max_size` for every host of every shard of `topology`,
    /// its connections named `application_name`; none opens yet.
    pub fn connect(
        topology: &Topology,
        application_name: &str,
        max_size: usize,
    ) -> Result<Self, BenchError> {
        let shards = topology
            .shards
            .iter()
            .map(|s| {
                Ok(ShardPools {
                    primary: pool(&named(&s.primary, application_name), max_size)?,
                    replica: match &s.replica {
                        Some(r) => Some(pool(&named(r, application_name), max_size)?),
                        None => None,
                    },
                })
            })
            .collect::<Result<Vec<_>, BenchError>>()?;
        Ok(Shards {
            count: topology.shard_count(),
            shards,
            keys: topology.keys,
            tally: Tally::default(),
        })
    }

    /// One operation of the mix, checked; returns rows read.
    pub async fn op(&self) -> Result<u64, BenchError> {
        let d = draw(self.keys);
        let id = shard_of(d.key, self.count);
        let shard = self
            .shards
            .get(id as usize)
            .ok_or_else(|| BenchError::new(format!("shards: no shard {id}")))?;
        if d.write {
            let client = shard.primary.get().await?;
            let stmt = client.prepare_cached(WRITE_SQL).await?;
            let n = client.execute(&stmt, &[&d.key]).await?;
            self.tally.write(d.key, n)
        } else {
            let client = shard
                .replica
                .as_ref()
                .unwrap_or(&shard.primary)
                .get()
                .await?;
            let stmt = client.prepare_cached(READ_SQL).await?;
            let row = client.query_one(&stmt, &[&d.key]).await?;
            self.tally.read(d.key, row.try_get(0)?, row.try_get(1)?)
        }
    }

    /// What it did so far.
    pub fn tally(&self) -> &Tally {
        &self.tally
    }
}
