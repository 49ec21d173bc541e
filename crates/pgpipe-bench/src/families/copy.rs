//! The `copy` workload: 1M rows of (int8, text, float8, timestamptz)
//! written with COPY FROM STDIN (`in`) or read with COPY TO STDOUT
//! (`out`), in the binary format with every value typed, per operation.
//!
//! pgpipe writes typed rows with `copy_in_rows` and reads them with
//! `copy_out_rows`; tokio-postgres with `BinaryCopyInWriter` /
//! `BinaryCopyOutStream`; sqlx has only raw bytes (`copy_in_raw`,
//! `copy_out_raw`), so its adapter formats text rows itself on the way in
//! and counts the bytes on the way out (no decoding: see the note). The
//! `raw` floor writes the rows pre-encoded (binary, framed once per
//! process) straight to the socket and skips what comes out: the ceiling
//! the server sets.

use std::sync::{Arc, OnceLock};
use std::time::{Duration, SystemTime};

use crate::driver_kind::DriverKind;
use crate::error::BenchError;

pub use crate::fixtures::COPY_ROWS;

/// The table `out` reads (made once by the first adapter that connects).
pub const SOURCE_TABLE: &str = "bench_copy_src";

/// The columns, as both tables have them.
pub const COLUMNS: [&str; 4] = ["id", "name", "score", "at"];

/// Makes the source table if it is missing (1M rows, the same values as
/// [`rows`]).
pub const SOURCE_SQL: &str = "CREATE UNLOGGED TABLE IF NOT EXISTS bench_copy_src AS \
    SELECT g::int8 AS id, 'name ' || g AS name, g * 0.5::float8 AS score, \
    timestamptz '2026-01-01 00:00:00+00' + g * interval '1 second' AS at \
    FROM generate_series(0, 999999) g";

/// The table a driver's `in` writes (its own, truncated before each op).
pub fn target_table(driver: DriverKind) -> String {
    format!("bench_copy_in_{}", driver.name().replace('-', "_"))
}

/// Makes (or empties) a driver's target table.
pub fn target_sql(driver: DriverKind) -> String {
    let t = target_table(driver);
    format!(
        "CREATE UNLOGGED TABLE IF NOT EXISTS {t} (id int8, name text, score float8, at timestamptz); \
         TRUNCATE {t}"
    )
}

/// One row to write.
pub type CopyRow = (i64, String, f64, SystemTime);

/// The rows every driver writes, generated once per process so that
/// making them is not measured.
pub fn rows() -> Arc<Vec<CopyRow>> {
    static ROWS: OnceLock<Arc<Vec<CopyRow>>> = OnceLock::new();
    ROWS.get_or_init(|| {
        let base = SystemTime::UNIX_EPOCH + Duration::from_secs(1_767_225_600);
        Arc::new(
            (0..COPY_ROWS as i64)
                .map(|i| {
                    (
                        i,
                        format!("name {i}"),
                        i as f64 * 0.5,
                        base + Duration::from_secs(i as u64),
                    )
                })
                .collect(),
        )
    })
    .clone()
}

/// Checks what an `out` operation read.
pub fn check_out(rows: u64, id_sum: i64) -> Result<u64, BenchError> {
    let n = COPY_ROWS as i64;
    if rows != COPY_ROWS || (id_sum != 0 && id_sum != n * (n - 1) / 2) {
        return Err(BenchError::new(format!(
            "copy out: {rows} rows, id sum {id_sum}"
        )));
    }
    Ok(rows)
}
