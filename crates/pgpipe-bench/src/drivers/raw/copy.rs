//! The raw floor: pre-encoded binary COPY bytes written straight to the
//! socket (see `drivers::raw::copy`).

use std::sync::Arc;

use tokio::sync::Mutex;

use crate::driver_kind::DriverKind;
use crate::drivers::raw::{encoded_rows, RawCheck, RawConn, RawSpec};
use crate::error::BenchError;
use crate::families::copy::{
    check_out, target_sql, target_table, COLUMNS, SOURCE_SQL, SOURCE_TABLE,
};
use crate::shape::CopyCase;

/// A raw connection set up for one `copy` case.
#[derive(Debug)]
pub struct Conn {
    conn: Mutex<RawConn>,
    data: Arc<Vec<u8>>,
    case: CopyCase,
}

impl Conn {
    /// Connects, makes the tables and encodes the rows (once per process).
    pub async fn connect(url: &str, case: CopyCase) -> Result<Conn, BenchError> {
        // Nothing to prepare: COPY goes through the simple query protocol.
        let spec = RawSpec {
            sql: String::new(),
            with_param: false,
            unprepared: true,
            requests_per_op: 1,
            rows_per_request: 0,
            check: RawCheck::Count,
        };
        let mut conn = RawConn::connect_with(url, spec).await?;
        conn.simple(SOURCE_SQL).await?;
        Ok(Conn {
            conn: Mutex::new(conn),
            data: encoded_rows(),
            case,
        })
    }

    /// One COPY of 1M rows.
    pub async fn op(&self) -> Result<u64, BenchError> {
        let mut conn = self.conn.lock().await;
        match self.case {
            CopyCase::In => {
                conn.simple(&target_sql(DriverKind::Raw)).await?;
                let sql = format!(
                    "COPY {} ({}) FROM STDIN (FORMAT binary)",
                    target_table(DriverKind::Raw),
                    COLUMNS.join(", ")
                );
                conn.copy_in(&sql, &self.data).await
            }
            CopyCase::Out => {
                let rows = conn
                    .copy_out(&format!(
                        "COPY (SELECT id, name, score, at FROM {SOURCE_TABLE}) TO STDOUT (FORMAT binary)"
                    ))
                    .await?;
                check_out(rows, 0)
            }
        }
    }
}
