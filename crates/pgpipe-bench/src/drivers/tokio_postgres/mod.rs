//! The tokio-postgres adapter: prepared statements; its text path
//! (`query(&str, ..)`, which prepares every time) for `unprepared`.

pub mod batch;
pub mod copy;
pub mod deadpool;
pub mod failing;
pub mod magicstack;
pub mod ozo;
pub mod shards;
pub mod stream;
pub mod techempower;

use futures_util::TryStreamExt;
use tokio_postgres::types::{FromSql, ToSql, Type};
use tokio_postgres::{Client, Row, Statement};

use crate::checks::{self, RowsCheck};
use crate::drivers::jsonb::JsonbStr;
use crate::error::BenchError;
use crate::fixtures::{self, TS_COLUMNS};
use crate::workload::Workload;

/// A timestamptz read as microseconds since 2000-01-01 UTC (its binary
/// form): the same work as the pgpipe adapter does. (postgres-types'
/// `FromSql`: xitca-postgres decodes through it too.)
pub(crate) struct Micros(pub(crate) i64);

impl<'a> FromSql<'a> for Micros {
    fn from_sql(
        _ty: &Type,
        raw: &'a [u8],
    ) -> Result<Self, Box<dyn std::error::Error + Sync + Send>> {
        let b: [u8; 8] = raw.try_into()?;
        Ok(Micros(i64::from_be_bytes(b)))
    }

    fn accepts(ty: &Type) -> bool {
        *ty == Type::TIMESTAMPTZ
    }
}

/// A tokio-postgres connection set up for one workload.
#[derive(Debug)]
pub struct Conn {
    client: Client,
    stmt: Option<Statement>,
    workload: Workload,
    /// `rows-*`: read through `query_raw` (a row stream, rows decoded as
    /// they arrive) instead of `query` (all rows collected, then decoded).
    streamed: bool,
}

impl Conn {
    /// Connects (the connection future runs on its own task) and prepares.
    pub async fn connect(
        url: &str,
        workload: Workload,
        streamed: bool,
    ) -> Result<Conn, BenchError> {
        let client = crate::tls::tokio_postgres_connect(url).await?;
        let sql = match workload {
            Workload::Unprepared => None,
            Workload::RowsJson => Some(fixtures::JSON_SQL.to_string()),
            Workload::Ozo
            | Workload::Techempower
            | Workload::Stream
            | Workload::Copy
            | Workload::Batch
            | Workload::Shards
            | Workload::Magicstack => {
                return Err(BenchError::new(format!("{workload} has its own adapter")))
            }
            Workload::Latency | Workload::Pipeline | Workload::Pool => {
                Some(fixtures::POINT_SQL.to_string())
            }
            Workload::Rows1Col => Some(fixtures::ROWS1_SQL.to_string()),
            Workload::Rows9Col => Some(fixtures::ROWS9_SQL.to_string()),
            Workload::Rows60Ts => Some(fixtures::ts60_sql()),
        };
        let stmt = match sql {
            Some(sql) => Some(client.prepare(&sql).await?),
            None => None,
        };
        Ok(Conn {
            client,
            stmt,
            workload,
            streamed,
        })
    }

    fn stmt(&self) -> Result<&Statement, BenchError> {
        self.stmt
            .as_ref()
            .ok_or_else(|| BenchError::new("statement not prepared"))
    }

    /// One checked operation; returns rows read.
    pub async fn op(&self, key: i32) -> Result<u64, BenchError> {
        match self.workload {
            Workload::Latency | Workload::Pipeline | Workload::Pool => {
                let row = self.client.query_one(self.stmt()?, &[&key]).await?;
                checks::point(key, row.try_get(0)?, row.try_get(1)?)?;
                Ok(1)
            }
            Workload::Unprepared => {
                let row = self.client.query_one(fixtures::POINT_SQL, &[&key]).await?;
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
                    let no_params: [&(dyn ToSql + Sync); 0] = [];
                    let rows = self.client.query_raw(self.stmt()?, no_params).await?;
                    tokio::pin!(rows);
                    while let Some(row) = rows.try_next().await? {
                        self.check_row(&mut check, &row)?;
                    }
                } else {
                    for row in &self.client.query(self.stmt()?, &[]).await? {
                        self.check_row(&mut check, row)?;
                    }
                }
                check.finish(self.workload != Workload::Rows60Ts)
            }
        }
    }

    /// Decodes and checks every value of one `rows-*` row.
    fn check_row(&self, check: &mut RowsCheck, row: &Row) -> Result<(), BenchError> {
        match self.workload {
            Workload::Rows1Col => check.id(row.try_get(0)?),
            Workload::Rows9Col => check.row9(
                row.try_get(0)?,
                row.try_get(1)?,
                row.try_get::<_, &str>(2)?,
                row.try_get::<_, &str>(3)?,
                row.try_get(4)?,
                row.try_get(5)?,
                row.try_get(6)?,
                row.try_get::<_, &[u8]>(7)?,
                row.try_get(8)?,
            )?,
            Workload::RowsJson => check.json(row.try_get(0)?, row.try_get::<_, JsonbStr>(1)?.0)?,
            Workload::Rows60Ts => {
                let mut ts = [0i64; TS_COLUMNS];
                for (i, t) in ts.iter_mut().enumerate() {
                    *t = row.try_get::<_, Micros>(i)?.0;
                }
                check.ts_row(&ts)?
            }
            other => return Err(BenchError::new(format!("{other} is not a rows workload"))),
        }
        Ok(())
    }
}
