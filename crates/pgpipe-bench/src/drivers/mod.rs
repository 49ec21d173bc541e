//! Driver adapters: one per client measured. `pgpipe`, `tokio-postgres` and
//! `sqlx` run as [`Session`]s driven by the generic task runner; `raw` and
//! `pgbench` have their own runners.

pub mod batch;
pub mod copy;
pub mod failing;
pub mod jsonb;
pub mod ozo;
pub mod pgbench;
pub mod pgpipe;
pub mod pool;
pub mod raw;
pub mod sqlx;
pub mod stream;
pub mod techempower;
pub mod tokio_postgres;

use crate::catalog::{DriverKind, PoolMode, Variant, Workload};
use crate::error::BenchError;
use crate::shape::Shape;

/// One connection of an in-process driver, set up for one workload
/// (statements prepared). Enum dispatch: no boxed future per operation.
#[derive(Debug)]
pub enum Session {
    /// pgpipe.
    Pgpipe(pgpipe::Conn),
    /// tokio-postgres.
    TokioPostgres(tokio_postgres::Conn),
    /// sqlx.
    Sqlx(sqlx::Conn),
    /// A pgpipe `Pool` (`pool` workload).
    PgpipePool(pool::PgpipePool),
    /// deadpool-postgres (`pool` workload).
    Deadpool(pool::Deadpool),
    /// One row of the `ozo` workload (any of its drivers).
    Ozo(ozo::OzoSession),
    /// One `techempower` shape (any of its drivers).
    Te(techempower::TeSession),
    /// One `copy` direction (any of its drivers).
    Copy(copy::CopySession),
    /// Explicit batches of point selects (`batch`).
    Batch(batch::BatchSession),
    /// `pipeline` with 1 % failing statements.
    Failing(failing::FailingSession),
}

impl Session {
    /// Connects `driver` (an in-process one) and prepares for `workload`
    /// in a variant of `shape`.
    pub async fn connect(
        driver: DriverKind,
        url: &str,
        workload: Workload,
        shape: Shape,
    ) -> Result<Session, BenchError> {
        let streamed = shape == Shape::Streamed;
        Ok(match driver {
            DriverKind::Pgpipe => Session::Pgpipe(
                pgpipe::Conn::connect(&crate::tls::url(url), workload, streamed).await?,
            ),
            DriverKind::PgpipeCoalesced => Session::Pgpipe(
                pgpipe::Conn::connect(&coalesced(&crate::tls::url(url)), workload, streamed)
                    .await?,
            ),
            // Handles --tls itself (its URL parser knows no verify-full).
            DriverKind::TokioPostgres => Session::TokioPostgres(
                tokio_postgres::Conn::connect(url, workload, streamed).await?,
            ),
            DriverKind::Sqlx => {
                Session::Sqlx(sqlx::Conn::connect(&crate::tls::url(url), workload, streamed).await?)
            }
            other => {
                return Err(BenchError::new(format!(
                    "{other} is not an in-process session driver"
                )))
            }
        })
    }

    /// A pooled session for a `pool` variant that is not `Dedicated`:
    /// pgpipe's `Pool` or deadpool-postgres; all the variant's tasks share it.
    pub async fn connect_pooled(
        driver: DriverKind,
        url: &str,
        variant: &Variant,
    ) -> Result<Session, BenchError> {
        Ok(match (driver, variant.pool) {
            (DriverKind::Pgpipe, PoolMode::Shared { max_size, shared }) => Session::PgpipePool(
                pool::PgpipePool::connect(url, max_size, shared, pool::PooledOp::Shared).await?,
            ),
            (DriverKind::PgpipeCoalesced, PoolMode::Shared { max_size, shared }) => {
                Session::PgpipePool(
                    pool::PgpipePool::connect(
                        &coalesced(url),
                        max_size,
                        shared,
                        pool::PooledOp::Shared,
                    )
                    .await?,
                )
            }
            (DriverKind::Pgpipe, PoolMode::Checkout) => Session::PgpipePool(
                pool::PgpipePool::connect(url, variant.connections, None, pool::PooledOp::Checkout)
                    .await?,
            ),
            (DriverKind::Pgpipe, PoolMode::Transaction) => Session::PgpipePool(
                pool::PgpipePool::connect(
                    url,
                    variant.connections,
                    None,
                    pool::PooledOp::Transaction,
                )
                .await?,
            ),
            (DriverKind::DeadpoolPostgres, PoolMode::Shared { .. } | PoolMode::Checkout) => {
                Session::Deadpool(pool::Deadpool::connect(url, variant.connections, false).await?)
            }
            (DriverKind::DeadpoolPostgres, PoolMode::Transaction) => {
                Session::Deadpool(pool::Deadpool::connect(url, variant.connections, true).await?)
            }
            (other, mode) => {
                return Err(BenchError::new(format!(
                    "{other} has no pooled session for {mode:?}"
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
            Session::PgpipePool(p) => p.op(key).await,
            Session::Deadpool(p) => p.op(key).await,
            Session::Ozo(o) => o.op().await,
            Session::Te(t) => t.op(key).await,
            Session::Copy(c) => c.op().await,
            Session::Batch(b) => b.op(key).await,
            Session::Failing(f) => f.op(key).await,
        }
    }

    /// Operations one [`op`](Self::op) call stands for: a `batch` call is
    /// one operation per select, so its rate compares with `pipeline`.
    pub fn ops_per_call(&self) -> u64 {
        match self {
            Session::Batch(b) => b.size() as u64,
            _ => 1,
        }
    }
}

/// `url` with pgpipe's coalesced Sync switched on (`pgpipe-coalesced`).
fn coalesced(url: &str) -> String {
    pool::with_param(url, "coalesce_sync", "on")
}
