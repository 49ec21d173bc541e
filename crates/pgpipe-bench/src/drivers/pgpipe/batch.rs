//! The `batch` workload through pgpipe: `client.batch()` with
//! `run_atomic` (one Sync for the batch).

use crate::checks;
use crate::error::BenchError;
use crate::families::batch::nth_key;
use crate::fixtures::POINT_SQL;

/// One connection set up for batches of `size` selects.
#[derive(Debug)]
pub struct Batch {
    client: pgpipe::Client,
    stmt: pgpipe::Statement,
    size: usize,
}

impl Batch {
    /// The connection's low-water counts so far.
    pub fn low_water(&self) -> Option<crate::measure::LowWater> {
        super::low_water_of(&self.client)
    }

    /// Connects and prepares the point select.
    pub async fn connect(url: &str, size: usize) -> Result<Batch, BenchError> {
        let client = pgpipe::connect(&crate::tls::url(url)).await?;
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
        let size = self.size;
        let mut batch = self.client.batch();
        for i in 0..size {
            batch.add(&self.stmt, (nth_key(key, i),));
        }
        let results = batch.run_atomic().await?;
        if results.len() != size {
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
        Ok(size as u64)
    }
}
