//! The `pool` workload's pooled adapters: pgpipe's `Pool` (its shared
//! `pool.query_one` path, or a checkout per query) and deadpool-postgres
//! over tokio-postgres (`NoTls`, a checkout and `prepare_cached` per
//! query). Every operation is the point select on `bench_kv`, checked.

use std::time::Duration;

use deadpool_postgres::{Manager, ManagerConfig, RecyclingMethod};
use tokio_postgres::NoTls;

use crate::checks;
use crate::error::BenchError;
use crate::fixtures;

/// Adds `key=value` to the query of `url`.
pub(crate) fn with_param(url: &str, key: &str, value: impl std::fmt::Display) -> String {
    let sep = if url.contains('?') { '&' } else { '?' };
    format!("{url}{sep}{key}={value}")
}

/// What one pooled operation does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PooledOp {
    /// The point select on the pool's shared path (`pool.query_one`).
    Shared,
    /// A checkout, then the point select.
    Checkout,
    /// A transaction: the row's UPDATE (to its own value, so the point
    /// check still holds), the point select, COMMIT.
    Transaction,
}

/// The UPDATE of the `Transaction` operation.
pub const TOUCH_SQL: &str = "UPDATE bench_kv SET v = v WHERE id = $1";

/// A pgpipe pool, used through one of its paths.
#[derive(Debug)]
pub struct PgpipePool {
    pool: pgpipe::Pool,
    op: PooledOp,
}

impl PgpipePool {
    /// A pool of `max_size` connections (`shared` of them in the shared
    /// lane, or pgpipe's default); `op` says what each operation does.
    /// The shared lane and further connections open on demand, as in an
    /// application; the warm-up runs before any measured round.
    pub async fn connect(
        url: &str,
        max_size: usize,
        shared: Option<usize>,
        op: PooledOp,
    ) -> Result<PgpipePool, BenchError> {
        let mut u = with_param(url, "pool_max_size", max_size);
        u = with_param(&u, "pool_acquire_timeout", 30_000);
        if let Some(n) = shared {
            u = with_param(&u, "pool_shared_connections", n);
        }
        let pool = pgpipe::Pool::connect(&u).await?;
        let p = PgpipePool { pool, op };
        // One operation on each path so that the lane and the statement
        // caches are warm (the runner warms up as well).
        p.op(1).await?;
        Ok(p)
    }

    /// One checked point select; returns rows read.
    pub async fn op(&self, key: i32) -> Result<u64, BenchError> {
        let row = match self.op {
            PooledOp::Shared => self.pool.query_one(fixtures::POINT_SQL, (key,)).await?,
            PooledOp::Checkout => {
                let conn = self.pool.get().await?;
                conn.query_one(fixtures::POINT_SQL, (key,)).await?
            }
            PooledOp::Transaction => {
                let tx = self.pool.transaction().await?;
                let touched = tx.execute(TOUCH_SQL, (key,)).await?;
                checks::count("UPDATE", 1, touched)?;
                let row = tx.query_one(fixtures::POINT_SQL, (key,)).await?;
                tx.commit().await?;
                row
            }
        };
        checks::point(key, row.try_get(0)?, row.try_get(1)?)?;
        Ok(1)
    }

    /// The pool (for its stats).
    pub fn pool(&self) -> &pgpipe::Pool {
        &self.pool
    }
}

/// A deadpool-postgres pool over tokio-postgres.
#[derive(Debug)]
pub struct Deadpool {
    pool: deadpool_postgres::Pool,
    transaction: bool,
}

impl Deadpool {
    /// A pool of `max_size` connections (fast recycling: no query on
    /// return), all opened before returning.
    pub async fn connect(
        url: &str,
        max_size: usize,
        transaction: bool,
    ) -> Result<Deadpool, BenchError> {
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
        let pool = deadpool_postgres::Pool::builder(manager)
            .max_size(max_size.max(1))
            .runtime(deadpool_postgres::Runtime::Tokio1)
            .wait_timeout(Some(Duration::from_secs(30)))
            .build()
            .map_err(|e| BenchError::new(format!("deadpool-postgres: {e}")))?;
        // Open every connection and prepare on each (held at once).
        let mut held = Vec::with_capacity(max_size);
        for _ in 0..max_size.max(1) {
            let client = pool.get().await?;
            client.prepare_cached(fixtures::POINT_SQL).await?;
            client.prepare_cached(TOUCH_SQL).await?;
            held.push(client);
        }
        drop(held);
        let d = Deadpool { pool, transaction };
        d.op(1).await?;
        Ok(d)
    }

    /// One checked point select: checkout, `prepare_cached`, `query_one`
    /// (inside a transaction with the row's UPDATE, for `transaction`).
    pub async fn op(&self, key: i32) -> Result<u64, BenchError> {
        let mut client = self.pool.get().await?;
        let stmt = client.prepare_cached(fixtures::POINT_SQL).await?;
        let row = if self.transaction {
            let touch = client.prepare_cached(TOUCH_SQL).await?;
            let tx = client.transaction().await?;
            let touched = tx.execute(&touch, &[&key]).await?;
            checks::count("UPDATE", 1, touched)?;
            let row = tx.query_one(&stmt, &[&key]).await?;
            tx.commit().await?;
            row
        } else {
            client.query_one(&stmt, &[&key]).await?
        };
        checks::point(key, row.try_get(0)?, row.try_get(1)?)?;
        Ok(1)
    }
}
