//! The `pool` workload through pgpipe's `Pool`: its shared
//! `pool.query_one` path, a checkout per query, or a transaction.

use crate::checks;
use crate::drivers::with_param;
use crate::error::BenchError;
use crate::families::pool::{PooledOp, TOUCH_SQL};
use crate::fixtures;

/// A pgpipe pool, used through one of its paths.
#[derive(Debug)]
pub struct PgpipePool {
    pool: pgpipe::Pool,
    op: PooledOp,
}

impl PgpipePool {
    /// A pool of `max_size` connections (`shared` of them in the shared
    /// lane, or pgpipe's default; its admission line at `line_at`
    /// statements, or none); `op` says what each operation does.
    /// The shared lane and further connections open on demand, as in an
    /// application; the warm-up runs before any measured round.
    pub async fn connect(
        url: &str,
        max_size: usize,
        (shared, line_at): (Option<usize>, Option<usize>),
        op: PooledOp,
    ) -> Result<PgpipePool, BenchError> {
        let mut u = with_param(url, "pool_max_size", max_size);
        u = with_param(&u, "pool_acquire_timeout", 30_000);
        if let Some(n) = shared {
            u = with_param(&u, "pool_shared_connections", n);
        }
        if let Some(depth) = line_at {
            u = with_param(&u, "pool_shared_line_at", depth);
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
