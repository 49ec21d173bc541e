//! What the raw floor sends for a workload variant: one statement, how
//! many requests (Bind/Execute/Sync) make an operation, the rows each
//! returns and how their values are checked.

use super::rows::RowsTable;
use crate::error::BenchError;
use crate::families::techempower::{FORTUNE_SQL, WORLD_SQL};
use crate::fixtures;
use crate::shape::{Shape, TeCase, TE_N};
use crate::workload::Workload;

/// How the raw floor checks a DataRow.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RawCheck {
    /// Only counted.
    Count,
    /// `bench_kv`: id is the key, v is 3 * id.
    Point,
    /// `world`: id is the key, randomnumber in 1..=10,000.
    World,
    /// `rows-*`: every value decoded and checked as the drivers do.
    Rows(RowsTable),
}

/// The raw floor's plan for one workload variant.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RawSpec {
    /// The statement.
    pub sql: String,
    /// One int4 parameter (the key).
    pub with_param: bool,
    /// Parse before every Bind (no prepared statement).
    pub unprepared: bool,
    /// Requests (each with its Sync) per operation.
    pub requests_per_op: usize,
    /// DataRows each request must return.
    pub rows_per_request: u64,
    /// The check of each DataRow.
    pub check: RawCheck,
}

impl RawSpec {
    /// The spec for `workload` in a variant of `shape`.
    pub fn new(workload: Workload, shape: Shape) -> Result<RawSpec, BenchError> {
        let simple = |sql: String, rows, check| RawSpec {
            sql,
            with_param: false,
            unprepared: false,
            requests_per_op: 1,
            rows_per_request: rows,
            check,
        };
        let rows = |sql: String, table| simple(sql, fixtures::ROWS, RawCheck::Rows(table));
        Ok(match (workload, shape) {
            (Workload::Latency | Workload::Pipeline | Workload::Unprepared | Workload::Pool, _) => {
                RawSpec {
                    sql: fixtures::POINT_SQL.into(),
                    with_param: true,
                    unprepared: workload == Workload::Unprepared,
                    requests_per_op: 1,
                    rows_per_request: 1,
                    check: RawCheck::Point,
                }
            }
            (Workload::Rows1Col, _) => rows(fixtures::ROWS1_SQL.into(), RowsTable::Rows1),
            (Workload::Rows9Col, _) => rows(fixtures::ROWS9_SQL.into(), RowsTable::Rows9),
            (Workload::RowsJson, _) => rows(fixtures::JSON_SQL.into(), RowsTable::Json),
            (Workload::Rows60Ts, _) => rows(fixtures::ts60_sql(), RowsTable::Ts60),
            (Workload::Techempower, Shape::Te(TeCase::Fortunes)) => simple(
                FORTUNE_SQL.into(),
                fixtures::FORTUNES.len() as u64,
                RawCheck::Count,
            ),
            (Workload::Techempower, Shape::Te(TeCase::Queries)) => RawSpec {
                sql: WORLD_SQL.into(),
                with_param: true,
                unprepared: false,
                requests_per_op: TE_N,
                rows_per_request: 1,
                check: RawCheck::World,
            },
            (w, s) => return Err(BenchError::new(format!("raw cannot express {w} {s:?}"))),
        })
    }
}
