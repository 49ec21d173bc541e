//! The xitca-postgres adapter (the client behind xitca-web in TechEmpower),
//! used the way its README shows: `Postgres::new(url).connect()`, the
//! driver future spawned on its own task, statements prepared once with
//! `Statement::named(..).execute(&client)` and kept (`leak`), queries as
//! `stmt.bind([..]).query(&client)` read through its lending row
//! iterator, every value decoded by postgres-types' `FromSql` (borrowed
//! from the response buffer). The client is `&self`: concurrent tasks
//! pipeline on one connection, as in xitca-web.

pub mod ozo;
pub mod techempower;

use std::future::IntoFuture;

use xitca_postgres::iter::AsyncLendingIterator;
use xitca_postgres::row::Row;
use xitca_postgres::statement::Statement;
use xitca_postgres::types::Type;
use xitca_postgres::{Client, Execute, Postgres};

use crate::checks::{self, RowsCheck};
use crate::drivers::jsonb::JsonbStr;
use crate::drivers::tokio_postgres::Micros;
use crate::error::BenchError;
use crate::fixtures::{self, TS_COLUMNS};
use crate::workload::Workload;

/// Connects (plain TCP; the bench's `--tls` is not wired for this driver)
/// and spawns the connection's driver future.
pub async fn connect(url: &str) -> Result<Client, BenchError> {
    let (client, driver) = Postgres::new(url).connect().await?;
    tokio::spawn(driver.into_future());
    Ok(client)
}

/// A prepared statement, kept for the connection's life.
pub(crate) async fn prepare(
    client: &Client,
    sql: &str,
    types: &[Type],
) -> Result<Statement, BenchError> {
    Ok(Statement::named(sql, types).execute(client).await?.leak())
}

/// An xitca-postgres connection set up for one workload.
pub struct Conn {
    client: Client,
    stmt: Statement,
    workload: Workload,
}

impl std::fmt::Debug for Conn {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("xitca::Conn")
            .field("workload", &self.workload)
            .finish_non_exhaustive()
    }
}

impl Conn {
    /// Connects and prepares the workload's statement. Rows always come
    /// through the lending iterator, decoded as they arrive (the client
    /// has no collect-all call), so `rows-*` plain and streamed are the
    /// same path.
    pub async fn connect(url: &str, workload: Workload) -> Result<Conn, BenchError> {
        let client = connect(url).await?;
        let (sql, types): (String, &[Type]) = match workload {
            Workload::Latency | Workload::Pipeline => (fixtures::POINT_SQL.into(), &[Type::INT4]),
            Workload::Rows1Col => (fixtures::ROWS1_SQL.into(), &[]),
            Workload::Rows9Col => (fixtures::ROWS9_SQL.into(), &[]),
            Workload::RowsJson => (fixtures::JSON_SQL.into(), &[]),
            Workload::Rows60Ts => (fixtures::ts60_sql(), &[]),
            other => {
                return Err(BenchError::new(format!(
                    "xitca-postgres does not run {other}"
                )))
            }
        };
        let stmt = prepare(&client, &sql, types).await?;
        Ok(Conn {
            client,
            stmt,
            workload,
        })
    }

    /// One checked operation; returns rows read.
    pub async fn op(&self, key: i32) -> Result<u64, BenchError> {
        if matches!(self.workload, Workload::Latency | Workload::Pipeline) {
            let mut rows = self.stmt.bind([key]).query(&self.client).await?;
            let row = rows
                .try_next()
                .await?
                .ok_or_else(|| BenchError::new(format!("no row for id {key}")))?;
            checks::point(key, row.try_get(0)?, row.try_get(1)?)?;
            drop(row);
            if rows.try_next().await?.is_some() {
                return Err(BenchError::new(format!("more than one row for id {key}")));
            }
            return Ok(1);
        }
        let mut check = RowsCheck::default();
        let mut rows = self.stmt.bind_none().query(&self.client).await?;
        while let Some(row) = rows.try_next().await? {
            check_row(self.workload, &mut check, &row)?;
        }
        check.finish(self.workload != Workload::Rows60Ts)
    }
}

/// Decodes and checks every value of one `rows-*` row.
fn check_row(workload: Workload, check: &mut RowsCheck, row: &Row<'_>) -> Result<(), BenchError> {
    match workload {
        Workload::Rows1Col => check.id(row.try_get(0)?),
        Workload::Rows9Col => check.row9(
            row.try_get(0)?,
            row.try_get(1)?,
            row.try_get::<&str>(2)?,
            row.try_get::<&str>(3)?,
            row.try_get(4)?,
            row.try_get(5)?,
            row.try_get(6)?,
            row.try_get::<&[u8]>(7)?,
            row.try_get(8)?,
        )?,
        Workload::RowsJson => check.json(row.try_get(0)?, row.try_get::<JsonbStr>(1)?.0)?,
        Workload::Rows60Ts => {
            let mut ts = [0i64; TS_COLUMNS];
            for (i, t) in ts.iter_mut().enumerate() {
                *t = row.try_get::<Micros>(i)?.0;
            }
            check.ts_row(&ts)?
        }
        other => return Err(BenchError::new(format!("{other} is not a rows workload"))),
    }
    Ok(())
}

/// `stream`: `sql` with `$1 = n` through the lending iterator, each row
/// handed to `each` as (int4, text).
pub async fn stream(
    url: &str,
    sql: &str,
    n: i32,
    mut each: impl FnMut(i32, &str) -> Result<(), BenchError>,
) -> Result<(), BenchError> {
    let client = connect(url).await?;
    let stmt = prepare(&client, sql, &[Type::INT4]).await?;
    let mut rows = stmt.bind([n]).query(&client).await?;
    while let Some(row) = rows.try_next().await? {
        each(row.try_get(0)?, row.try_get::<&str>(1)?)?;
    }
    Ok(())
}
