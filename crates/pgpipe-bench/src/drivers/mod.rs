//! Driver adapters: one folder (or file) per client measured, and in it
//! one type per workload family it runs, each implementing [`Op`] (its
//! `mod.rs` holds the point and row reads; `techempower.rs`, `ozo.rs`,
//! `copy.rs`, `batch.rs`, ... the families, whose shared definitions are in
//! `crate::families`). The catalog (`crate::catalog`) says which driver
//! runs which workload and connects them; drivers never import it. `raw`
//! and `pgbench` have their own runners; `external` runs the peers of
//! other languages (asyncpg, pgx) as child programs.

pub mod external;
pub mod jsonb;
pub mod pgbench;
pub mod pgpipe;
pub mod raw;
pub mod sqlx;
pub mod tokio_postgres;
pub mod xitca;
pub mod zero;

use std::fmt;
use std::future::Future;
use std::pin::Pin;

use crate::error::BenchError;
use crate::measure::LowWater;

/// One connection (or pool) of an in-process driver, set up for one
/// workload family: the generic task runner calls [`op`](Op::op) in a loop.
/// Static dispatch: the runner is monomorphized per type, so no boxed
/// future per operation.
pub trait Op: fmt::Debug + Send + Sync + 'static {
    /// One operation of the workload for `key` (a point select, a table
    /// read, a COPY, ...), checked; returns the rows read.
    fn op(&self, key: i32) -> impl Future<Output = Result<u64, BenchError>> + Send;

    /// Operations one [`op`](Op::op) call stands for: a `batch` call is
    /// one operation per select, so its rate compares with `pipeline`.
    fn ops_per_call(&self) -> u64 {
        1
    }

    /// The driver's own low-water counts so far (pgpipe's connections);
    /// `None` for a driver that keeps none.
    fn low_water(&self) -> Option<LowWater> {
        None
    }
}

/// Implements [`Op`] by the type's own `op(&self, key)`; a type marked
/// `[low_water]` also reports its own `low_water(&self)`.
macro_rules! op_by_key {
    ($($t:ty $([$counted:ident])?),* $(,)?) => {$(
        impl Op for $t {
            fn op(&self, key: i32) -> impl Future<Output = Result<u64, BenchError>> + Send {
                <$t>::op(self, key)
            }
            $(
                fn low_water(&self) -> Option<LowWater> {
                    <$t>::$counted(self)
                }
            )?
        }
    )*};
}

/// Implements [`Op`] by the type's own `op(&self)` (no key: a COPY, a
/// connect).
macro_rules! op_without_key {
    ($($t:ty $([$counted:ident])?),* $(,)?) => {$(
        impl Op for $t {
            fn op(&self, _key: i32) -> impl Future<Output = Result<u64, BenchError>> + Send {
                <$t>::op(self)
            }
            $(
                fn low_water(&self) -> Option<LowWater> {
                    <$t>::$counted(self)
                }
            )?
        }
    )*};
}

op_by_key!(
    pgpipe::Conn[low_water],
    tokio_postgres::Conn,
    sqlx::Conn,
    pgpipe::pool::PgpipePool,
    tokio_postgres::deadpool::Deadpool,
    pgpipe::techempower::Conn[low_water],
    tokio_postgres::techempower::Conn,
    sqlx::techempower::Conn,
    pgpipe::failing::Failing[low_water],
    tokio_postgres::failing::Failing,
    xitca::Conn,
    xitca::techempower::Conn,
    zero::techempower::Conn,
    zero::Conn,
);

op_without_key!(
    pgpipe::copy::Conn[low_water],
    tokio_postgres::copy::Conn,
    sqlx::copy::Conn,
    raw::copy::Conn,
    pgpipe::ozo::Conn,
    tokio_postgres::ozo::Conn,
    xitca::ozo::Conn,
    zero::ozo::Conn,
    pgpipe::shards::Shards,
    tokio_postgres::shards::Shards,
    pgpipe::magicstack::Conn[low_water],
    tokio_postgres::magicstack::Conn,
);

/// Implements [`Op`] for a batch type (its own `op(&self, key)`; one
/// operation per select of the batch).
macro_rules! op_by_batch {
    ($($t:ty $([$counted:ident])?),* $(,)?) => {$(
        impl Op for $t {
            fn op(&self, key: i32) -> impl Future<Output = Result<u64, BenchError>> + Send {
                <$t>::op(self, key)
            }

            fn ops_per_call(&self) -> u64 {
                self.size() as u64
            }
            $(
                fn low_water(&self) -> Option<LowWater> {
                    <$t>::$counted(self)
                }
            )?
        }
    )*};
}

op_by_batch!(
    pgpipe::batch::Batch[low_water],
    tokio_postgres::batch::Batch
);

/// `url` with pgpipe's coalesced Sync switched on (`pgpipe-coalesced`).
pub fn coalesced(url: &str) -> String {
    with_param(url, "coalesce_sync", "on")
}

/// Adds `key=value` to the query of `url`.
pub(crate) fn with_param(url: &str, key: &str, value: impl std::fmt::Display) -> String {
    let sep = if url.contains('?') { '&' } else { '?' };
    format!("{url}{sep}{key}={value}")
}

/// An [`Op`] behind a pointer (one boxed future per call): for tests and
/// one-off calls, never for measuring.
pub trait DynOp: fmt::Debug + Send + Sync {
    /// [`Op::op`], boxed.
    fn op(&self, key: i32) -> Pin<Box<dyn Future<Output = Result<u64, BenchError>> + Send + '_>>;

    /// [`Op::ops_per_call`].
    fn ops_per_call(&self) -> u64;

    /// [`Op::low_water`].
    fn low_water(&self) -> Option<LowWater>;
}

impl<S: Op> DynOp for S {
    fn op(&self, key: i32) -> Pin<Box<dyn Future<Output = Result<u64, BenchError>> + Send + '_>> {
        Box::pin(Op::op(self, key))
    }

    fn ops_per_call(&self) -> u64 {
        Op::ops_per_call(self)
    }

    fn low_water(&self) -> Option<LowWater> {
        Op::low_water(self)
    }
}
