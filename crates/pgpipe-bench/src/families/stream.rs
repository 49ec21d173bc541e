//! The `stream` workload: stream many rows through each driver's
//! streaming API (pgpipe `query_stream`, tokio-postgres
//! `query_raw`, sqlx `fetch`, xitca-postgres's lending row iterator,
//! zero-postgres's row handler) and check them as they pass, holding none.
//! The rows are made by the server (`generate_series` in the target list
//! is streamed, not materialized), so no fixture table is needed.

use crate::error::BenchError;

/// Rows 1..=$1: `(g int4, 'row ' || g)`.
pub const STREAM_SQL: &str =
    "SELECT g, 'row ' || g FROM (SELECT generate_series(1, $1::int4) AS g) s";

/// Checks streamed rows as they pass: count, sum of `g`, text form.
#[derive(Debug, Default)]
pub struct Tally {
    count: u64,
    sum: u64,
}

impl Tally {
    /// Checks one row.
    #[inline]
    pub fn row(&mut self, g: i32, text: &str) -> Result<(), BenchError> {
        if !text.starts_with("row ") || text.len() < 5 {
            return Err(BenchError::new(format!("stream row {g} has text {text:?}")));
        }
        self.count += 1;
        self.sum = self.sum.wrapping_add(g as u64);
        Ok(())
    }

    /// The row count, if every row arrived.
    pub fn finish(&self, rows: u64) -> Result<u64, BenchError> {
        let want = rows.wrapping_mul(rows + 1) / 2;
        if self.count != rows || self.sum != want {
            return Err(BenchError::new(format!(
                "streamed {} rows (sum {}), expected {rows} (sum {want})",
                self.count, self.sum
            )));
        }
        Ok(self.count)
    }
}

/// `rows` as the query's `$1`.
pub fn limit(rows: u64) -> Result<i32, BenchError> {
    i32::try_from(rows).map_err(|_| BenchError::new(format!("stream: {rows} rows is too many")))
}
