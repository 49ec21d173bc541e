//! The `pool` workload: the point select on `bench_kv` through a pool,
//! checked; pgpipe's `Pool` (`crate::drivers::pgpipe::pool`) against
//! deadpool-postgres over tokio-postgres
//! (`crate::drivers::tokio_postgres::deadpool`).

/// What one pooled operation does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PooledOp {
    /// The point select on the pool's shared path (`pool.query_one`).
    Shared,
    /// A checkout, then the point select.
    Checkout,
    /// A transaction: the row's UPDATE (to its own value, so the point
    /// check still holds), the point select, COMMIT.
    Transaction,
}

/// The UPDATE of the `Transaction` operation.
pub const TOUCH_SQL: &str = "UPDATE bench_kv SET v = v WHERE id = $1";
