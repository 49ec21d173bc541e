//! The `batch` workload: each operation is an explicit batch of N point
//! selects sent together and answered together, the shape of pgbench's
//! `\startpipeline` .. `\endpipeline` (N statements, one Sync).
//!
//! pgpipe sends `client.batch()` with `run_atomic` (one Sync for the
//! batch); tokio-postgres has no batch API, so its adapter polls N
//! `query_one` futures together, which it pipelines with a Sync each; the
//! pgbench row is the libpq floor for the same batch. Every row of every
//! statement is checked. One "operation" in the results is one select, so
//! the rows compare directly with `pipeline`.

use futures_util::future::try_join_all;

use crate::checks;
use crate::driver_kind::DriverKind;
use crate::error::BenchError;
use crate::fixtures::{KV_ROWS, POINT_SQL};

/// The key of the `i`-th select of a batch that starts at `key`.
pub fn nth_key(key: i32, i: usize) -> i32 {
    ((key as i64 - 1 + i as i64).rem_euclid(i64::from(KV_ROWS)) + 1) as i32
}

/// One connection set up for batches of `size` selects.
#[derive(Debug)]
pub enum BatchSession {
    /// pgpipe: `batch().run_atomic()`.
    Pgpipe {
        /// The connection.
        client: pgpipe::Client,
        /// The point select, prepared.
        stmt: pgpipe::Statement,
        /// Selects per batch.
        size: usize,
    },
    /// tokio-postgres: `size` pipelined `query_one`s polled together.
    TokioPostgres {
        /// The connection.
        client: tokio_postgres::Client,
        /// The point select, prepared.
        stmt: tokio_postgres::Statement,
        /// Selects per batch.
        size: usize,
    },
}

impl BatchSession {
    /// Connects `driver` and prepares the point select.
    pub async fn connect(
        driver: DriverKind,
        url: &str,
        size: usize,
    ) -> Result<BatchSession, BenchError> {
        let size = size.max(1);
        match driver {
            DriverKind::Pgpipe => {
                let client = pgpipe::connect(&crate::tls::url(url)).await?;
                let stmt = client.prepare(POINT_SQL).await?;
                Ok(BatchSession::Pgpipe { client, stmt, size })
            }
            DriverKind::TokioPostgres => {
                let client = crate::tls::tokio_postgres_connect(url).await?;
                let stmt = client.prepare(POINT_SQL).await?;
                Ok(BatchSession::TokioPostgres { client, stmt, size })
            }
            other => Err(BenchError::new(format!("{other} has no batch adapter"))),
        }
    }

    /// Selects per operation call.
    pub fn size(&self) -> usize {
        match self {
            BatchSession::Pgpipe { size, .. } | BatchSession::TokioPostgres { size, .. } => *size,
        }
    }

    /// One batch starting at `key`, every row checked; returns rows read.
    pub async fn op(&self, key: i32) -> Result<u64, BenchError> {
        match self {
            BatchSession::Pgpipe { client, stmt, size } => {
                let mut batch = client.batch();
                for i in 0..*size {
                    batch.add(stmt, (nth_key(key, i),));
                }
                let results = batch.run_atomic().await?;
                if results.len() != *size {
                    return Err(BenchError::new(format!(
                        "pgpipe batch: {} results for {size} statements",
                        results.len()
                    )));
                }
                for (i, r) in results.iter().enumerate() {
                    let [row] = r.rows() else {
                        return Err(BenchError::new(format!(
                            "pgpipe batch: statement {i} returned {} rows",
                            r.rows().len()
                        )));
                    };
                    checks::point(nth_key(key, i), row.try_get(0)?, row.try_get(1)?)?;
                }
                Ok(*size as u64)
            }
            BatchSession::TokioPostgres { client, stmt, size } => {
                let keys: Vec<i32> = (0..*size).map(|i| nth_key(key, i)).collect();
                let params: Vec<[&(dyn tokio_postgres::types::ToSql + Sync); 1]> =
                    keys.iter().map(|k| [k as _]).collect();
                let rows = try_join_all(params.iter().map(|p| client.query_one(stmt, p))).await?;
                for (k, row) in keys.iter().zip(&rows) {
                    checks::point(*k, row.try_get(0)?, row.try_get(1)?)?;
                }
                Ok(*size as u64)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_stay_in_the_table() {
        assert_eq!(nth_key(1, 0), 1);
        assert_eq!(nth_key(KV_ROWS, 1), 1);
        for k in [1, 7, KV_ROWS] {
            for i in 0..200 {
                let n = nth_key(k, i);
                assert!((1..=KV_ROWS).contains(&n), "{k} {i} {n}");
            }
        }
    }
}
