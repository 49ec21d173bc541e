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

mod batch;
mod cache;
mod cancel;
mod catalog;
mod client;
pub mod config;
mod connect;
mod connection;
mod error;
pub mod from_row;
pub mod pool;
mod portal;
mod query;
mod registry;
mod row;
mod shared;
mod simple_query;
mod slot;
mod socket;
mod startup;
mod statement;
mod stream;

pub use batch::{Batch, BatchResult};
pub use cancel::CancelToken;
pub use client::{Client, ClientStats};
pub use config::{
    ChannelBinding, Config, ConfigError, Host, LoadBalanceHosts, QueryMode, SslMode,
    SslNegotiation, TargetSessionAttrs,
};
pub use connect::{connect, connect_with_driver};
pub use connection::Connection;
pub use error::{DbError, Error, ErrorKind, ErrorPosition, SqlState};
pub use from_row::FromRow;
pub use pgpipe_proto::backend::TransactionStatus;
pub use pool::{Pool, PoolConfig, PoolStats, PooledClient, Provider};
pub use portal::Portal;
pub use query::{StatementRef, ToStatement};
pub use row::{Column, Row, RowIndex};
pub use simple_query::{SimpleQueryMessage, SimpleQueryRow};
pub use statement::Statement;
pub use stream::RowStream;

/// The type system: encode/decode traits, parameter lists and type identities.
pub mod types {
    pub use pgpipe_types::*;
}
#[cfg(feature = "derive")]
pub use pgpipe_derive::{Composite, Decode, Encode, FromRow, PgEnum};
pub use pgpipe_types::{Decode, Encode, Params, Type};

#[doc(hidden)]
#[path = "derive_support.rs"]
pub mod __private;

/// The README's examples, compiled as doc tests so that what it shows works.
#[cfg(doctest)]
#[doc = include_str!("../../../README.md")]
pub struct ReadmeDoctests;
