//! The zero-postgres adapter (sans-IO protocol core, I/O in its tokio
//! `Conn`), used the way its docs show: `Conn::new(url)`, statements
//! prepared once (`prepare`), point selects with `exec_first`, collected
//! reads with `exec_collect`, and streamed reads through an
//! `ExtendedHandler` whose `row` callback decodes each `DataRow` in place
//! (borrowed from the read buffer: its zero-copy path).
//!
//! Its `Conn` takes `&mut self` for every call, so the tasks sharing a
//! connection (`pipeline`) take turns through a mutex: one statement in
//! flight per connection. It speaks protocol 3.2 only (PostgreSQL 18+).

pub mod ozo;
pub mod techempower;

use tokio::sync::Mutex;
use zero_postgres::conversion::{FromRow, FromWireValue};
use zero_postgres::handler::ExtendedHandler;
use zero_postgres::protocol::backend::query::{DataRow, RowDescription};
use zero_postgres::protocol::types::Oid;
use zero_postgres::tokio::Conn as ZConn;
use zero_postgres::PreparedStatement;

use crate::checks::{self, RowsCheck};
use crate::drivers::jsonb::{jsonb_text, JsonbStr};
use crate::error::BenchError;
use crate::fixtures::{self, TS_COLUMNS};
use crate::workload::Workload;

/// The server major zero-postgres needs (it sends protocol 3.2 only).
pub const MIN_SERVER_MAJOR: u32 = 18;

/// Connects; a server below 18 refuses the 3.2 startup, said plainly.
pub async fn connect(url: &str) -> Result<ZConn, BenchError> {
    ZConn::new(url).await.map_err(|e| {
        BenchError::new(format!(
            "zero-postgres: {e} (it speaks protocol 3.2 only: PostgreSQL {MIN_SERVER_MAJOR}+)"
        ))
    })
}

/// A zero-postgres connection set up for one workload.
pub struct Conn {
    conn: Mutex<ZConn>,
    stmt: PreparedStatement,
    workload: Workload,
    /// `rows-*`: decoded in the handler as rows arrive instead of
    /// collected into owned tuples first.
    streamed: bool,
}

impl std::fmt::Debug for Conn {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("zero::Conn")
            .field("workload", &self.workload)
            .field("streamed", &self.streamed)
            .finish_non_exhaustive()
    }
}

impl Conn {
    /// Connects and prepares the workload's statement.
    pub async fn connect(
        url: &str,
        workload: Workload,
        streamed: bool,
    ) -> Result<Conn, BenchError> {
        let mut conn = connect(url).await?;
        let sql = match workload {
            Workload::Latency | Workload::Pipeline => fixtures::POINT_SQL.to_string(),
            Workload::Rows1Col => fixtures::ROWS1_SQL.to_string(),
            Workload::Rows9Col => fixtures::ROWS9_SQL.to_string(),
            Workload::RowsJson => fixtures::JSON_SQL.to_string(),
            Workload::Rows60Ts => fixtures::ts60_sql(),
            other => {
                return Err(BenchError::new(format!(
                    "zero-postgres does not run {other}"
                )))
            }
        };
        let stmt = conn.prepare(&sql).await?;
        Ok(Conn {
            conn: Mutex::new(conn),
            stmt,
            workload,
            streamed,
        })
    }

    /// One checked operation; returns rows read.
    pub async fn op(&self, key: i32) -> Result<u64, BenchError> {
        let mut conn = self.conn.lock().await;
        match self.workload {
            Workload::Latency | Workload::Pipeline => {
                let (id, v): (i32, i64) = conn
                    .exec_first(&self.stmt, (key,))
                    .await?
                    .ok_or_else(|| BenchError::new(format!("no row for id {key}")))?;
                checks::point(key, id, v)?;
                Ok(1)
            }
            // Collected: owned tuples first (its `exec_collect`), then checked.
            Workload::Rows1Col if !self.streamed => {
                let mut check = RowsCheck::default();
                for (id,) in conn.exec_collect::<(i32,), _, _>(&self.stmt, ()).await? {
                    check.id(id);
                }
                check.finish(true)
            }
            Workload::Rows9Col if !self.streamed => {
                let mut check = RowsCheck::default();
                let rows: Vec<Row9Owned> = conn.exec_collect(&self.stmt, ()).await?;
                for (id, a, b, c, d, e, f, g, h) in &rows {
                    check.row9(*id, *a, b, c, *d, *e, *f, g, *h)?;
                }
                check.finish(true)
            }
            // Streamed (and the json / 60-column reads, which have no owned
            // tuple form): decoded in the handler, borrowed from the buffer.
            workload => {
                let mut handler = CheckRows {
                    workload,
                    check: RowsCheck::default(),
                    error: None,
                };
                conn.exec(&self.stmt, (), &mut handler).await?;
                if let Some(e) = handler.error {
                    return Err(e);
                }
                handler.check.finish(workload != Workload::Rows60Ts)
            }
        }
    }
}

type Row9Owned = (i32, i64, String, String, f64, bool, i16, Vec<u8>, f32);
type Row9<'a> = (i32, i64, &'a str, &'a str, f64, bool, i16, &'a [u8], f32);

/// Checks `rows-*` rows as the connection reads them.
struct CheckRows {
    workload: Workload,
    check: RowsCheck,
    /// A failed check (kept: the handler's error type is the driver's).
    error: Option<BenchError>,
}

impl CheckRows {
    fn row_checked(
        &mut self,
        cols: &RowDescription<'_>,
        row: DataRow<'_>,
    ) -> Result<(), BenchError> {
        let fields = cols.fields();
        match self.workload {
            Workload::Rows1Col => {
                let (id,) = <(i32,)>::from_row_binary(fields, row)?;
                self.check.id(id);
            }
            Workload::Rows9Col => {
                let (id, a, b, c, d, e, f, g, h) = Row9::from_row_binary(fields, row)?;
                self.check.row9(id, a, b, c, d, e, f, g, h)?;
            }
            Workload::RowsJson => {
                let (id, doc) = <(i32, Jsonb<'_>)>::from_row_binary(fields, row)?;
                self.check.json(id, doc.0 .0)?;
            }
            Workload::Rows60Ts => {
                let mut ts = [0i64; TS_COLUMNS];
                let mut values = row.iter();
                for t in ts.iter_mut() {
                    let raw = values
                        .next()
                        .flatten()
                        .ok_or_else(|| BenchError::new("rows-60ts: missing timestamptz"))?;
                    let b: [u8; 8] = raw
                        .try_into()
                        .map_err(|_| BenchError::new("rows-60ts: timestamptz is not 8 bytes"))?;
                    *t = i64::from_be_bytes(b);
                }
                self.check.ts_row(&ts)?;
            }
            other => return Err(BenchError::new(format!("{other} is not a rows workload"))),
        }
        Ok(())
    }
}

impl ExtendedHandler for CheckRows {
    fn row(&mut self, cols: RowDescription<'_>, row: DataRow<'_>) -> zero_postgres::Result<()> {
        if self.error.is_none() {
            if let Err(e) = self.row_checked(&cols, row) {
                self.error = Some(e);
            }
        }
        Ok(())
    }
}

/// A `jsonb` value's text through zero-postgres' decode trait (the same
/// check as every driver's: version byte, UTF-8).
struct Jsonb<'a>(JsonbStr<'a>);

impl<'a> FromWireValue<'a> for Jsonb<'a> {
    fn from_text(_oid: Oid, bytes: &'a [u8]) -> zero_postgres::Result<Self> {
        std::str::from_utf8(bytes)
            .map(|s| Jsonb(JsonbStr(s)))
            .map_err(|e| zero_postgres::Error::Decode(e.to_string()))
    }

    fn from_binary(_oid: Oid, bytes: &'a [u8]) -> zero_postgres::Result<Self> {
        jsonb_text(bytes)
            .map(|s| Jsonb(JsonbStr(s)))
            .map_err(|e| zero_postgres::Error::Decode(e.to_string()))
    }
}

/// `stream`: `sql` with `$1 = n`, each row handed to `each` as (int4,
/// text) from the handler, borrowed from the read buffer.
pub async fn stream(
    url: &str,
    sql: &str,
    n: i32,
    each: impl FnMut(i32, &str) -> Result<(), BenchError>,
) -> Result<(), BenchError> {
    struct Each<F> {
        each: F,
        error: Option<BenchError>,
    }
    impl<F: FnMut(i32, &str) -> Result<(), BenchError>> ExtendedHandler for Each<F> {
        fn row(&mut self, cols: RowDescription<'_>, row: DataRow<'_>) -> zero_postgres::Result<()> {
            if self.error.is_none() {
                let r = <(i32, &str)>::from_row_binary(cols.fields(), row)
                    .map_err(BenchError::from)
                    .and_then(|(g, text)| (self.each)(g, text));
                if let Err(e) = r {
                    self.error = Some(e);
                }
            }
            Ok(())
        }
    }
    let mut conn = connect(url).await?;
    let stmt = conn.prepare(sql).await?;
    let mut handler = Each { each, error: None };
    conn.exec(&stmt, (n,), &mut handler).await?;
    handler.error.map_or(Ok(()), Err)
}
