//! pgpipe in the `magicstack` workload: prepared statements (binary
//! results, every value decoded), `copy_in_rows` (its typed binary COPY
//! writer) for `copyfrom`, and `batch().run_atomic()` (1,000 INSERTs, one
//! Sync) for `batch`.

use pgpipe::{Client, Statement};

use crate::drivers::pgpipe::ozo::pg_type;
use crate::error::BenchError;
use crate::families::magicstack::{
    check_array, check_bytes, check_count, check_pg_type, check_series, check_some, ensure_setup,
    MagicQuery, MagicRow, BATCH_ROWS, COPY_COLUMNS, COPY_ROWS, COPY_TABLE, ROW, SERIES_ROWS,
};

/// One pgpipe connection set up for one MagicStack query.
#[derive(Debug)]
pub struct Conn {
    client: Client,
    stmt: Option<Statement>,
    query: MagicQuery,
}

impl Conn {
    /// The connection's low-water counts so far.
    pub fn low_water(&self) -> Option<crate::measure::LowWater> {
        super::low_water_of(&self.client)
    }

    /// Runs the query's setup (once per process), connects, sets the
    /// `search_path` and prepares the statement.
    pub async fn connect(url: &str, query: MagicQuery) -> Result<Conn, BenchError> {
        ensure_setup(url, query).await?;
        let client = pgpipe::connect(&crate::tls::url(url)).await?;
        client.batch_execute(&query.search_path_sql()).await?;
        let stmt = match query {
            MagicQuery::Copyfrom => None,
            _ => Some(client.prepare(query.sql()).await?),
        };
        Ok(Conn {
            client,
            stmt,
            query,
        })
    }

    fn stmt(&self) -> Result<&Statement, BenchError> {
        self.stmt
            .as_ref()
            .ok_or_else(|| BenchError::new("no prepared statement"))
    }

    /// One run of the query, checked; returns the rows read or written.
    pub async fn op(&self) -> Result<u64, BenchError> {
        let q = self.query;
        match q {
            MagicQuery::PgType => {
                let rows = self.client.query(self.stmt()?, (-1i32, true)).await?;
                for r in &rows {
                    check_pg_type(&pg_type(r)?)?;
                }
                check_some(q, rows.len() as u64)
            }
            MagicQuery::GenerateSeries => {
                let rows = self.client.query(self.stmt()?, (SERIES_ROWS,)).await?;
                let values = rows
                    .iter()
                    .map(|r| r.try_get::<i32, _>(0))
                    .collect::<Result<Vec<_>, _>>()?;
                check_series(values)
            }
            MagicQuery::LargeObject => {
                let rows = self.client.query(self.stmt()?, ()).await?;
                for r in &rows {
                    check_bytes(&r.try_get::<Vec<u8>, _>(0)?)?;
                }
                check_count(q, rows.len() as u64, 100)
            }
            MagicQuery::Arrays => {
                let rows = self.client.query(self.stmt()?, ()).await?;
                for r in &rows {
                    check_array(&r.try_get::<Vec<i32>, _>(0)?)?;
                }
                check_count(q, rows.len() as u64, 100)
            }
            MagicQuery::Copyfrom => {
                let mut copy = self
                    .client
                    .copy_in_rows::<MagicRow>(COPY_TABLE, &COPY_COLUMNS)
                    .await?;
                for _ in 0..COPY_ROWS {
                    copy.write(&ROW).await?;
                }
                check_count(q, copy.finish().await?, COPY_ROWS as u64)
            }
            MagicQuery::Batch => {
                let stmt = self.stmt()?;
                let mut batch = self.client.batch();
                for _ in 0..BATCH_ROWS {
                    batch.add(stmt, ROW);
                }
                let results = batch.run_atomic().await?;
                let affected: u64 = results.iter().map(|r| r.rows_affected()).sum();
                check_count(q, results.len() as u64, BATCH_ROWS as u64)?;
                check_count(q, affected, BATCH_ROWS as u64)
            }
            MagicQuery::OnePlusOne => {
                let rows = self.client.query(self.stmt()?, ()).await?;
                let v = match rows.as_slice() {
                    [r] => r.try_get::<i32, _>(0)?,
                    _ => -1,
                };
                if v != 2 {
                    return Err(BenchError::new(format!(
                        "oneplusone: {v} ({} rows)",
                        rows.len()
                    )));
                }
                Ok(1)
            }
        }
    }
}
