//! tokio-postgres in the `magicstack` workload: prepared statements
//! (binary results, every value decoded), `BinaryCopyInWriter` for
//! `copyfrom`, and, having no batch API, 1,000 `execute` futures polled
//! together for `batch` (pipelined, a Sync each).

use std::pin::pin;

use futures_util::future::try_join_all;
use tokio_postgres::binary_copy::BinaryCopyInWriter;
use tokio_postgres::types::{ToSql, Type};
use tokio_postgres::{Client, Statement};

use crate::drivers::tokio_postgres::ozo::pg_type;
use crate::error::BenchError;
use crate::families::magicstack::{
    check_array, check_bytes, check_count, check_pg_type, check_series, check_some, ensure_setup,
    MagicQuery, BATCH_ROWS, COPY_ROWS, ROW, SERIES_ROWS,
};

/// The column types of `copyfrom`'s `_test` (`e float` is float8).
const COPY_TYPES: [Type; 7] = [
    Type::INT4,
    Type::INT4,
    Type::INT4,
    Type::TEXT,
    Type::FLOAT8,
    Type::INT4,
    Type::TEXT,
];

/// One tokio-postgres connection set up for one MagicStack query.
#[derive(Debug)]
pub struct Conn {
    client: Client,
    stmt: Option<Statement>,
    query: MagicQuery,
}

fn row_params() -> [&'static (dyn ToSql + Sync); 7] {
    let (a, b, c, d, e, f, g) = &ROW;
    [a, b, c, d, e, f, g]
}

impl Conn {
    /// Runs the query's setup (once per process), connects, sets the
    /// `search_path` and prepares the statement.
    pub async fn connect(url: &str, query: MagicQuery) -> Result<Conn, BenchError> {
        ensure_setup(url, query).await?;
        let client = crate::tls::tokio_postgres_connect(url).await?;
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
                let rows = self.client.query(self.stmt()?, &[&-1i32, &true]).await?;
                for r in &rows {
                    check_pg_type(&pg_type(r)?)?;
                }
                check_some(q, rows.len() as u64)
            }
            MagicQuery::GenerateSeries => {
                let rows = self.client.query(self.stmt()?, &[&SERIES_ROWS]).await?;
                let values = rows
                    .iter()
                    .map(|r| r.try_get::<_, i32>(0))
                    .collect::<Result<Vec<_>, _>>()?;
                check_series(values)
            }
            MagicQuery::LargeObject => {
                let rows = self.client.query(self.stmt()?, &[]).await?;
                for r in &rows {
                    check_bytes(&r.try_get::<_, Vec<u8>>(0)?)?;
                }
                check_count(q, rows.len() as u64, 100)
            }
            MagicQuery::Arrays => {
                let rows = self.client.query(self.stmt()?, &[]).await?;
                for r in &rows {
                    check_array(&r.try_get::<_, Vec<i32>>(0)?)?;
                }
                check_count(q, rows.len() as u64, 100)
            }
            MagicQuery::Copyfrom => {
                let sink = self
                    .client
                    .copy_in("COPY _test (a, b, c, d, e, f, g) FROM STDIN (FORMAT binary)")
                    .await?;
                let mut writer = pin!(BinaryCopyInWriter::new(sink, &COPY_TYPES));
                let values = row_params();
                for _ in 0..COPY_ROWS {
                    writer.as_mut().write(&values).await?;
                }
                check_count(q, writer.finish().await?, COPY_ROWS as u64)
            }
            MagicQuery::Batch => {
                let stmt = self.stmt()?;
                let values = row_params();
                let counts =
                    try_join_all((0..BATCH_ROWS).map(|_| self.client.execute(stmt, &values)))
                        .await?;
                check_count(q, counts.iter().sum(), BATCH_ROWS as u64)
            }
            MagicQuery::OnePlusOne => {
                let rows = self.client.query(self.stmt()?, &[]).await?;
                let v = match rows.as_slice() {
                    [r] => r.try_get::<_, i32>(0)?,
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
