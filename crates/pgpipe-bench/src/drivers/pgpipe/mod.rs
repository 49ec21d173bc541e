//! The pgpipe adapter: all tasks share one `Client` (pipelined).

pub mod batch;
pub mod copy;
pub mod failing;
pub mod magicstack;
pub mod ozo;
pub mod pool;
pub mod shards;
pub mod stream;
pub mod techempower;

use pgpipe::{Client, Decode, Row, Statement, Type};

use crate::checks::{self, RowsCheck};
use crate::drivers::jsonb::JsonbStr;
use crate::error::BenchError;
use crate::fixtures::{self, TS_COLUMNS};
use crate::measure::LowWater;
use crate::workload::Workload;

/// A timestamptz read as microseconds since 2000-01-01 UTC (its binary
/// form), through pgpipe's public `Decode` trait.
struct Micros(i64);

impl<'a> Decode<'a> for Micros {
    fn accepts(ty: &Type) -> bool {
        ty.oid() == 1184
    }

    fn decode(_ty: &Type, raw: &'a [u8]) -> Result<Self, pgpipe::types::BoxError> {
        let b: [u8; 8] = raw.try_into()?;
        Ok(Micros(i64::from_be_bytes(b)))
    }
}

/// Decodes and checks every value of one `rows-*` row: a `Row` or a
/// `RowRef` (the same reads, two types), returning from the caller on a
/// wrong value.
macro_rules! check_row {
    ($workload:expr, $check:expr, $row:expr) => {
        match $workload {
            Workload::Rows1Col => $check.id($row.try_get(0)?),
            Workload::Rows9Col => $check.row9(
                $row.try_get(0)?,
                $row.try_get(1)?,
                $row.try_get::<&str, _>(2)?,
                $row.try_get::<&str, _>(3)?,
                $row.try_get(4)?,
                $row.try_get(5)?,
                $row.try_get(6)?,
                $row.try_get::<&[u8], _>(7)?,
                $row.try_get(8)?,
            )?,
            Workload::RowsJson => {
                $check.json($row.try_get(0)?, $row.try_get::<JsonbStr, _>(1)?.0)?
            }
            Workload::Rows60Ts => {
                let mut ts = [0i64; TS_COLUMNS];
                for (i, t) in ts.iter_mut().enumerate() {
                    *t = $row.try_get::<Micros, _>(i)?.0;
                }
                $check.ts_row(&ts)?
            }
            other => return Err(BenchError::new(format!("{other} is not a rows workload"))),
        }
    };
}

/// `client`'s low-water counts so far (what the bench reports as
/// `raises/op` and `tails/op`).
pub(crate) fn low_water_of(client: &Client) -> Option<LowWater> {
    let stats = client.stats();
    Some(LowWater {
        raises: stats.low_water_raised,
        tail_waits: stats.low_water_tail_waits,
    })
}

/// A pgpipe connection set up for one workload.
#[derive(Debug)]
pub struct Conn {
    client: Client,
    stmt: Option<Statement>,
    workload: Workload,
    /// `rows-*`: read through `query_stream` (rows decoded as they arrive)
    /// instead of `query` (all rows collected, then decoded).
    streamed: bool,
}

impl Conn {
    /// Connects and prepares the workload's statement (none for `unprepared`).
    pub async fn connect(
        url: &str,
        workload: Workload,
        streamed: bool,
    ) -> Result<Conn, BenchError> {
        let client = pgpipe::connect(url).await?;
        let sql = match workload {
            Workload::Unprepared | Workload::Pool => None,
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
            Workload::Latency | Workload::Pipeline => Some(fixtures::POINT_SQL.to_string()),
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

    /// The connection's low-water counts so far.
    pub fn low_water(&self) -> Option<LowWater> {
        low_water_of(&self.client)
    }

    fn stmt(&self) -> Result<&Statement, BenchError> {
        self.stmt
            .as_ref()
            .ok_or_else(|| BenchError::new("statement not prepared"))
    }

    /// One checked operation; returns rows read.
    pub async fn op(&self, key: i32) -> Result<u64, BenchError> {
        match self.workload {
            Workload::Latency | Workload::Pipeline => {
                let row = self.client.query_one(self.stmt()?, (key,)).await?;
                checks::point(key, row.try_get(0)?, row.try_get(1)?)?;
                Ok(1)
            }
            Workload::Unprepared | Workload::Pool => {
                let row = self.client.query_one(fixtures::POINT_SQL, (key,)).await?;
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
                    // The fastest streaming read pgpipe offers: rows read
                    // in place, a batch per wake-up (`next`, one owned Row
                    // at a time, is what the `stream` workload measures).
                    let mut rows = self.client.query_stream(self.stmt()?, ()).await?;
                    while let Some(batch) = rows.next_batch().await {
                        for row in batch? {
                            check_row!(self.workload, check, row);
                        }
                    }
                } else {
                    for row in &self.client.query(self.stmt()?, ()).await? {
                        self.check_row(&mut check, row)?;
                    }
                }
                check.finish(self.workload != Workload::Rows60Ts)
            }
        }
    }

    /// Decodes and checks every value of one `rows-*` row.
    fn check_row(&self, check: &mut RowsCheck, row: &Row) -> Result<(), BenchError> {
        check_row!(self.workload, check, row);
        Ok(())
    }
}
