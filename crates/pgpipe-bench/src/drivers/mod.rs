//! Driver adapters: one per client measured. `pgpipe`, `tokio-postgres` and
//! `sqlx` run as [`Session`]s driven by the generic task runner; `raw` and
//! `pgbench` have their own runners.

pub mod pgbench;
pub mod pgpipe;
pub mod raw;
pub mod sqlx;
pub mod tokio_postgres;

use crate::catalog::{DriverKind, Workload};
use crate::error::BenchError;

/// One connection of an in-process driver, set up for one workload
/// (statements prepared). Enum dispatch: no boxed future per operation.
pub enum Session {
    /// pgpipe.
    Pgpipe(pgpipe::Conn),
    /// tokio-postgres.
    TokioPostgres(tokio_postgres::Conn),
    /// sqlx.
    Sqlx(sqlx::Conn),
}

impl Session {
    /// Connects `driver` (an in-process one) and prepares for `workload`.
    pub async fn connect(
        driver: DriverKind,
        url: &str,
        workload: Workload,
    ) -> Result<Session, BenchError> {
        Ok(match driver {
            DriverKind::Pgpipe => Session::Pgpipe(pgpipe::Conn::connect(url, workload).await?),
            DriverKind::TokioPostgres => {
                Session::TokioPostgres(tokio_postgres::Conn::connect(url, workload).await?)
            }
            DriverKind::Sqlx => Session::Sqlx(sqlx::Conn::connect(url, workload).await?),
            other => {
                return Err(BenchError::new(format!(
                    "{other} is not an in-process session driver"
                )))
            }
        })
    }

    /// One operation of the workload (a point select for `key`, or a full
    /// table read), checked; returns the rows read.
    pub async fn op(&self, key: i32) -> Result<u64, BenchError> {
        match self {
            Session::Pgpipe(c) => c.op(key).await,
            Session::TokioPostgres(c) => c.op(key).await,
            Session::Sqlx(c) => c.op(key).await,
        }
    }
}
