//! The sqlx adapter: one `PgConnection` (default statement cache, so SQL
//! text is prepared once). sqlx cannot pipeline: concurrent tasks on one
//! connection take turns through a mutex.

pub mod copy;
pub mod stream;
pub mod techempower;

use futures_util::TryStreamExt;
use sqlx::postgres::{PgConnection, PgRow, PgValueFormat, PgValueRef, Postgres};
use sqlx::{Connection, Row, ValueRef};
use tokio::sync::Mutex;

use crate::checks::{self, RowsCheck};
use crate::drivers::jsonb::JsonbStr;
use crate::error::BenchError;
use crate::fixtures::{self, TS_COLUMNS};
use crate::workload::Workload;

/// A timestamptz read as microseconds since 2000-01-01 UTC (binary form).
struct Micros(i64);

impl<'r> sqlx::Decode<'r, Postgres> for Micros {
    fn decode(value: PgValueRef<'r>) -> Result<Self, sqlx::error::BoxDynError> {
        if value.format() != PgValueFormat::Binary || value.type_info().to_string() != "TIMESTAMPTZ"
        {
            return Err("expected a binary timestamptz".into());
        }
        let b: [u8; 8] = value.as_bytes()?.try_into()?;
        Ok(Micros(i64::from_be_bytes(b)))
    }
}

/// A sqlx connection set up for one workload.
#[derive(Debug)]
pub struct Conn {
    conn: Mutex<PgConnection>,
    sql: String,
    workload: Workload,
    /// `rows-*`: read through `fetch` (a row stream, rows decoded as they
    /// arrive) instead of `fetch_all` (all rows collected, then decoded).
    streamed: bool,
}

impl Conn {
    /// Connects; the statement is prepared (and cached) on first use.
    pub async fn connect(
        url: &str,
        workload: Workload,
        streamed: bool,
    ) -> Result<Conn, BenchError> {
        let conn = PgConnection::connect(url).await?;
        let sql = match workload {
            Workload::Latency | Workload::Pipeline | Workload::Unprepared | Workload::Pool => {
                fixtures::POINT_SQL.to_string()
            }
            Workload::Rows1Col => fixtures::ROWS1_SQL.to_string(),
            Workload::Rows9Col => fixtures::ROWS9_SQL.to_string(),
            Workload::Rows60Ts => fixtures::ts60_sql(),
            Workload::RowsJson => fixtures::JSON_SQL.to_string(),
            Workload::Ozo
            | Workload::Techempower
            | Workload::Stream
            | Workload::Copy
            | Workload::Batch
            | Workload::Shards
            | Workload::Magicstack => {
                return Err(BenchError::new(format!("{workload} has its own adapter")))
            }
        };
        Ok(Conn {
            conn: Mutex::new(conn),
            sql,
            workload,
            streamed,
        })
    }

    /// One checked operation; returns rows read.
    pub async fn op(&self, key: i32) -> Result<u64, BenchError> {
        let mut conn = self.conn.lock().await;
        match self.workload {
            Workload::Latency | Workload::Pipeline | Workload::Unprepared | Workload::Pool => {
                let row = sqlx::query(&self.sql)
                    .bind(key)
                    .fetch_one(&mut *conn)
                    .await?;
                checks::point(key, row.try_get(0)?, row.try_get(1)?)?;
                Ok(1)
            }
            Workload::Ozo
            | Workload::Techempower
            | Workload::Stream
            | Workload::Copy
            | Workload::Batch
            | Workload::Shards
            | Workload::Magicstack => Err(BenchError::new(format!(
                "{} has its own adapter",
                self.workload
            ))),
            Workload::Rows1Col | Workload::Rows9Col | Workload::RowsJson | Workload::Rows60Ts => {
                let mut check = RowsCheck::default();
                if self.streamed {
                    let mut rows = sqlx::query(&self.sql).fetch(&mut *conn);
                    while let Some(row) = rows.try_next().await? {
                        self.check_row(&mut check, &row)?;
                    }
                } else {
                    for row in &sqlx::query(&self.sql).fetch_all(&mut *conn).await? {
                        self.check_row(&mut check, row)?;
                    }
                }
                check.finish(self.workload != Workload::Rows60Ts)
            }
        }
    }

    /// Decodes and checks every value of one `rows-*` row.
    fn check_row(&self, check: &mut RowsCheck, row: &PgRow) -> Result<(), BenchError> {
        match self.workload {
            Workload::Rows1Col => check.id(row.try_get(0)?),
            Workload::Rows9Col => check.row9(
                row.try_get(0)?,
                row.try_get(1)?,
                row.try_get::<&str, _>(2)?,
                row.try_get::<&str, _>(3)?,
                row.try_get(4)?,
                row.try_get(5)?,
                row.try_get(6)?,
                row.try_get::<&[u8], _>(7)?,
                row.try_get(8)?,
            )?,
            Workload::RowsJson => {
                check.json(row.try_get(0)?, row.try_get_unchecked::<JsonbStr, _>(1)?.0)?
            }
            Workload::Rows60Ts => {
                let mut ts = [0i64; TS_COLUMNS];
                for (i, t) in ts.iter_mut().enumerate() {
                    *t = row.try_get_unchecked::<Micros, _>(i)?.0;
                }
                check.ts_row(&ts)?
            }
            other => return Err(BenchError::new(format!("{other} is not a rows workload"))),
        }
        Ok(())
    }
}
