//! pgpipe: a pipelined, binary-protocol PostgreSQL client for tokio.
//!
//! ```no_run
//! # async fn f() -> Result<(), pgpipe::Error> {
//! let client = pgpipe::connect("postgres://app:secret@localhost/app").await?;
//!
//! client.batch_execute("CREATE TEMP TABLE kv (k text PRIMARY KEY, v int8)").await?;
//! client.execute("INSERT INTO kv VALUES ($1, $2)", ("answer", 42i64)).await?;
//!
//! let row = client.query_one("SELECT v FROM kv WHERE k = $1", ("answer",)).await?;
//! let v: i64 = row.get("v");
//! assert_eq!(v, 42);
//! # Ok(()) }
//! ```
//!
//! A [`Client`] is cheap to clone; all clones share one connection and their
//! requests are pipelined: sent together, answered in order, each isolated
//! from the others' errors.

#![warn(missing_docs)]
#![warn(missing_debug_implementations)]
#![warn(unreachable_pub)]

mod client;
pub mod cluster;
#[cfg(feature = "postgres-types")]
pub mod compat;
pub mod config;
mod connect;
mod copy;
mod driver;
mod error;
#[cfg(feature = "refinery")]
pub mod migrate;
pub mod named;
mod notify;
pub mod observe;
pub mod pool;
mod query;
mod session;
mod sql;
mod transaction;
pub mod types;

pub use client::{connect, connect_with_driver};
pub use client::{Client, ClientStats};
pub use config::{
    ChannelBinding, Config, ConfigError, Host, LoadBalanceHosts, QueryMode, SslMode,
    SslNegotiation, TargetSessionAttrs,
};
pub use connect::CancelToken;
pub use copy::{
    BinaryCopyWriter, CopyIn, CopyOut, CopyOutReader, CopyOutRows, GenericCopy, OnConflict, ToRow,
    UpsertCounts,
};
pub use driver::Connection;
pub use error::{DbError, Error, ErrorKind, ErrorPosition, SqlState};
pub use notify::{
    Event, GapReason, Listener, ListenerBuilder, ListenerStats, Notification, Notifications,
};
pub use pgpipe_proto::backend::TransactionStatus;
pub use pool::{Pool, PoolConfig, PoolStats, PooledClient};
pub use query::MAX_PARAMS;
pub use query::{
    Batch, BatchResult, BuiltQuery, Column, FromRow, GenericClient, GenericSession, Ident, Portal,
    QueryBuilder, Row, RowBatch, RowIndex, RowRef, RowStream, Separated, SimpleQueryMessage,
    SimpleQueryRow, Statement, StatementRef, ToStatement,
};
pub use transaction::{
    GenericUpsert, IsolationLevel, Retried, RetryFuture, RetryPolicy, Transaction,
    TransactionBuilder,
};

#[cfg(feature = "derive")]
pub use pgpipe_derive::{Composite, Decode, Encode, FromRow, PgEnum, Query, ToRow};
pub use pgpipe_types::{Decode, Encode, Params, Type};

#[doc(hidden)]
#[path = "derive_support.rs"]
pub mod __private;

/// The README's examples, compiled as doc tests so that what it shows works.
#[cfg(doctest)]
#[doc = include_str!("../../../README.md")]
pub struct ReadmeDoctests;

/// docs/migrating.md's pgpipe examples, compiled as doc tests so that the
/// guide for switching from tokio-postgres and sqlx stays true.
#[cfg(doctest)]
#[doc = include_str!("../../../docs/migrating.md")]
pub struct MigratingDoctests;

/// docs/scale-out.md's examples, compiled as doc tests.
#[cfg(doctest)]
#[doc = include_str!("../../../docs/scale-out.md")]
pub struct ScaleOutDoctests;
