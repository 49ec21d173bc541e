//! xitca-postgres in the ozo rows it can run without a pool: a connection
//! per request (`basic`: connect, the statement sent as Parse, Bind and
//! Execute in one round trip, its single-RTT path, then the client dropped,
//! which ends the connection) and one client with the statement prepared
//! once (`reuse`).

use xitca_postgres::iter::AsyncLendingIterator;
use xitca_postgres::statement::Statement;
use xitca_postgres::{Client, Execute};

use super::{connect, prepare};
use crate::error::BenchError;
use crate::families::ozo::{check_count, Expected, SIMPLE_SQL};
use crate::shape::OzoCase;

enum Via {
    Connect(String),
    Client(Client, Statement),
}

/// xitca-postgres set up for one ozo row.
pub struct Conn {
    via: Via,
    case: OzoCase,
    expected: Expected,
}

impl std::fmt::Debug for Conn {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("xitca::ozo::Conn")
            .field("case", &self.case)
            .finish_non_exhaustive()
    }
}

impl Conn {
    /// Sets up `case` (`basic` or `reuse`) and checks one request.
    pub async fn connect(url: &str, case: OzoCase, expected: Expected) -> Result<Conn, BenchError> {
        let via = match case {
            OzoCase::Basic => Via::Connect(url.to_string()),
            OzoCase::Reuse => {
                let client = connect(url).await?;
                let stmt = prepare(&client, SIMPLE_SQL, &[]).await?;
                Via::Client(client, stmt)
            }
            other => {
                return Err(BenchError::new(format!(
                    "xitca-postgres has no pooled ozo adapter ({other:?})"
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
        let mut n = 0u64;
        match &self.via {
            Via::Connect(url) => {
                let client = connect(url).await?;
                let mut rows = Statement::named(SIMPLE_SQL, &[])
                    .bind_none()
                    .query(&client)
                    .await?;
                while let Some(row) = rows.try_next().await? {
                    let one: i32 = row.try_get(0)?;
                    n += u64::from(one == 1);
                }
            }
            Via::Client(client, stmt) => {
                let mut rows = stmt.bind_none().query(client).await?;
                while let Some(row) = rows.try_next().await? {
                    let one: i32 = row.try_get(0)?;
                    n += u64::from(one == 1);
                }
            }
        }
        check_count(self.case, n, &self.expected)
    }
}
