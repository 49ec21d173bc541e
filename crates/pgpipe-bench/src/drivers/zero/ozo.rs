//! zero-postgres in the ozo rows it can run without a pool: a connection
//! per request (`basic`: connect, the SQL text run as an unnamed
//! statement, `close`) and one connection with the statement prepared once
//! (`reuse`, tasks taking turns through a mutex).

use tokio::sync::Mutex;
use zero_postgres::tokio::Conn as ZConn;
use zero_postgres::PreparedStatement;

use super::connect;
use crate::error::BenchError;
use crate::families::ozo::{check_count, Expected, SIMPLE_SQL};
use crate::shape::OzoCase;

enum Via {
    Connect(String),
    // Boxed: the connection and its buffers are large, the URL is not.
    Conn(Box<(Mutex<ZConn>, PreparedStatement)>),
}

/// zero-postgres set up for one ozo row.
pub struct Conn {
    via: Via,
    case: OzoCase,
    expected: Expected,
}

impl std::fmt::Debug for Conn {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("zero::ozo::Conn")
            .field("case", &self.case)
            .finish_non_exhaustive()
    }
}

/// Counts the `1`s of `SELECT 1`'s rows.
fn ones(rows: &[(i32,)]) -> u64 {
    rows.iter().filter(|(one,)| *one == 1).count() as u64
}

impl Conn {
    /// Sets up `case` (`basic` or `reuse`) and checks one request.
    pub async fn connect(url: &str, case: OzoCase, expected: Expected) -> Result<Conn, BenchError> {
        let via = match case {
            OzoCase::Basic => Via::Connect(url.to_string()),
            OzoCase::Reuse => {
                let mut conn = connect(url).await?;
                let stmt = conn.prepare(SIMPLE_SQL).await?;
                Via::Conn(Box::new((Mutex::new(conn), stmt)))
            }
            other => {
                return Err(BenchError::new(format!(
                    "zero-postgres has no pooled ozo adapter ({other:?})"
                )))
            }
        };
        let c = Conn {
            via,
            case,
            expected,
        };
        c.op().await?;
        Ok(c)
    }

    /// One checked request; returns rows read.
    pub async fn op(&self) -> Result<u64, BenchError> {
        let n = match &self.via {
            Via::Connect(url) => {
                let mut conn = connect(url).await?;
                let rows: Vec<(i32,)> = conn.exec_collect(SIMPLE_SQL, ()).await?;
                conn.close().await?;
                ones(&rows)
            }
            Via::Conn(held) => {
                let (conn, stmt) = &**held;
                let rows: Vec<(i32,)> = conn.lock().await.exec_collect(stmt, ()).await?;
                ones(&rows)
            }
        };
        check_count(self.case, n, &self.expected)
    }
}
