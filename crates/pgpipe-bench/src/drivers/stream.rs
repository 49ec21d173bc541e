//! The `stream` workload's operation: stream many rows through each
//! driver's streaming API (pgpipe `query_stream`, tokio-postgres
//! `query_raw`, sqlx `fetch`, xitca-postgres's lending row iterator,
//! zero-postgres's row handler) and check them as they pass, holding none.
//! The rows are made by the server (`generate_series` in the target list
//! is streamed, not materialized), so no fixture table is needed.

use futures_util::StreamExt;
use sqlx::{Connection, Row};
use tokio_postgres::types::ToSql;
use tokio_postgres::NoTls;

use crate::driver_kind::DriverKind;
use crate::error::BenchError;

/// Rows 1..=$1: `(g int4, 'row ' || g)`.
pub const STREAM_SQL: &str =
    "SELECT g, 'row ' || g FROM (SELECT generate_series(1, $1::int4) AS g) s";

/// Checks streamed rows as they pass: count, sum of `g`, text form.
#[derive(Debug, Default)]
struct Tally {
    count: u64,
    sum: u64,
}

impl Tally {
    #[inline]
    fn row(&mut self, g: i32, text: &str) -> Result<(), BenchError> {
        if !text.starts_with("row ") || text.len() < 5 {
            return Err(BenchError::new(format!("stream row {g} has text {text:?}")));
        }
        self.count += 1;
        self.sum = self.sum.wrapping_add(g as u64);
        Ok(())
    }

    fn finish(&self, rows: u64) -> Result<u64, BenchError> {
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

fn limit(rows: u64) -> Result<i32, BenchError> {
    i32::try_from(rows).map_err(|_| BenchError::new(format!("stream: {rows} rows is too many")))
}

/// Streams `rows` rows with `driver` (connecting first), checks them and
/// returns how many there were.
pub async fn stream(driver: DriverKind, url: &str, rows: u64) -> Result<u64, BenchError> {
    let n = limit(rows)?;
    let mut tally = Tally::default();
    match driver {
        DriverKind::Pgpipe => {
            let client = pgpipe::connect(url).await?;
            let mut s = client.query_stream(STREAM_SQL, (n,)).await?;
            while let Some(row) = s.next().await {
                let row = row?;
                tally.row(row.try_get(0)?, row.try_get::<&str, _>(1)?)?;
            }
        }
        DriverKind::TokioPostgres => {
            let (client, conn) = tokio_postgres::connect(url, NoTls).await?;
            tokio::spawn(async move {
                let _ = conn.await;
            });
            let stmt = client.prepare(STREAM_SQL).await?;
            let params: [&(dyn ToSql + Sync); 1] = [&n];
            let s = client.query_raw(&stmt, params).await?;
            let mut s = std::pin::pin!(s);
            while let Some(row) = s.next().await {
                let row = row?;
                tally.row(row.try_get(0)?, row.try_get::<_, &str>(1)?)?;
            }
        }
        DriverKind::Sqlx => {
            let mut conn = sqlx::postgres::PgConnection::connect(url).await?;
            let mut s = sqlx::query(STREAM_SQL).bind(n).fetch(&mut conn);
            while let Some(row) = s.next().await {
                let row = row?;
                tally.row(row.try_get(0)?, row.try_get::<&str, _>(1)?)?;
            }
        }
        DriverKind::XitcaPostgres => {
            crate::drivers::xitca::stream(url, STREAM_SQL, n, |g, text| tally.row(g, text)).await?
        }
        DriverKind::ZeroPostgres => {
            crate::drivers::zero::stream(url, STREAM_SQL, n, |g, text| tally.row(g, text)).await?
        }
        other => return Err(BenchError::new(format!("{other} has no stream adapter"))),
    }
    tally.finish(rows)
}
