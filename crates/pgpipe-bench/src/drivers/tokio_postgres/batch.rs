//! The `batch` workload through tokio-postgres, which has no batch API:
//! `size` `query_one` futures polled together, which it pipelines with a
//! Sync each.

use futures_util::future::try_join_all;

use crate::checks;
use crate::error::BenchError;
use crate::families::batch::nth_key;
use crate::fixtures::POINT_SQL;

/// One connection set up for batches of `size` selects.
#[derive(Debug)]
pub struct Batch {
    client: tokio_postgres::Client,
    stmt: tokio_postgres::Statement,
    size: usize,
}

impl Batch {
    /// Connects and prepares the point select.
    pub async fn connect(url: &str, size: usize) -> Result<Batch, BenchError> {
        let client = crate::tls::tokio_postgres_connect(url).await?;
        let stmt = client.prepare(POINT_SQL).await?;
        Ok(Batch {
            client,
            stmt,
            size: size.max(1),
        })
    }

    /// Selects per operation call.
    pub fn size(&self) -> usize {
        self.size
    }

    /// One batch starting at `key`, every row checked; returns rows read.
    pub async fn op(&self, key: i32) -> Result<u64, BenchError> {
        let keys: Vec<i32> = (0..self.size).map(|i| nth_key(key, i)).collect();
        let params: Vec<[&(dyn tokio_postgres::types::ToSql + Sync); 1]> =
            keys.iter().map(|k| [k as _]).collect();
        let rows =
            try_join_all(params.iter().map(|p| self.client.query_one(&self.stmt, p))).await?;
        for (k, row) in keys.iter().zip(&rows) {
            checks::point(*k, row.try_get(0)?, row.try_get(1)?)?;
        }
        Ok(self.size as u64)
    }
}
