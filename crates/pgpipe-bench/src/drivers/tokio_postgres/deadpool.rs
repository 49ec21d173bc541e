//! The `pool` workload through deadpool-postgres over tokio-postgres
//! (`NoTls`, a checkout and `prepare_cached` per query): what a team
//! writes by hand today.

use std::time::Duration;

use deadpool_postgres::{Manager, ManagerConfig, RecyclingMethod};
use tokio_postgres::NoTls;

use crate::checks;
use crate::error::BenchError;
use crate::families::pool::TOUCH_SQL;
use crate::fixtures;

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
