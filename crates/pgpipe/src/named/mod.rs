//! Named queries: SQL kept in `.sql` files, bound to typed parameter
//! structs and row types, checked at compile time and against the server
//! at startup.
//!
//! A query file holds blocks headed `-- name: <name> [:one|:many|:exec|:execrows|:stream]`
//! with `:param` placeholders (see [`pgpipe_queryfile`] for the syntax):
//!
//! ```sql
//! -- name: get_messages :many
//! SELECT mid, subject, attaches FROM mail.messages
//!  WHERE uid = :uid AND mid = ANY(:mids)
//! ```
//!
//! `#[derive(pgpipe::Query)]` binds a struct of parameters to one block:
//!
//! ```no_run
//! # use pgpipe::{Composite, FromRow};
//! # #[derive(Composite)] #[pg(name = "mail.attach")]
//! # struct Attach { filename: String, r#type: String, size: i64 }
//! #[derive(FromRow)]
//! struct Message { mid: i64, subject: String, snippet: Option<String>, seen: bool, attaches: Vec<Attach> }
//!
//! #[derive(pgpipe::Query)]
//! #[query(file = "sql/mail.sql", name = "get_messages", row = Message)]
//! struct GetMessages { uid: i64, mids: Vec<i64> }
//!
//! # async fn f(pool: &pgpipe::Pool, uid: i64, mids: Vec<i64>) -> Result<(), pgpipe::Error> {
//! let msgs: Vec<Message> = GetMessages { uid, mids }.fetch_all(pool).await?;
//! # Ok(()) }
//! ```
//!
//! At compile time, without a database, the macro reads the file (a path
//! relative to the crate's `Cargo.toml`; editing it rebuilds the crate),
//! finds the block, checks that every `:param` is a field and every field
//! is used, and rewrites the SQL to `$n`. Mistakes are compile errors that
//! name the file and line.
//!
//! At startup, [`check_queries`] asks the real server to describe every
//! query and compares what it says with the Rust types, reporting every
//! mismatch in one [`Report`].
//!
//! The generated methods (`fetch_all`, `fetch_one`, `fetch_opt`,
//! `stream` and `execute`) and the checks run on any [`GenericClient`]: a
//! [`Client`], a [`Transaction`], a [`PooledClient`] or a [`Pool`] (which
//! checks out a connection where a session is needed). Their spans carry
//! the query's name as `db.query.summary`.

mod check;

pub use check::{check_files, check_queries, Problem, Report};
pub use pgpipe_queryfile::{is_name, parse, File, Kind, Param, ParseError, Query as ParsedQuery};

use std::future::Future;

use crate::query::{Column, FromRow, RowStream};
use crate::types::{Params, TypeRef};
use crate::{Error, GenericClient};

#[cfg(doc)]
use crate::{Client, Pool, PooledClient, Transaction};

/// What a named query is, as `#[derive(Query)]` records it: where it comes
/// from, its rewritten SQL, its parameters and its row type.
#[derive(Debug)]
pub struct QueryInfo {
    /// The query's name (`-- name: get_messages`).
    pub name: &'static str,
    /// The query file, as written in `#[query(file = ...)]`.
    pub file: &'static str,
    /// The line of the `-- name:` header in that file.
    pub line: u32,
    /// The result kind of the header.
    pub kind: Kind,
    /// The SQL with `:param` placeholders rewritten to `$n`.
    pub sql: &'static str,
    /// The parameters, in `$n` order.
    pub params: &'static [ParamInfo],
    /// The row type, if the query returns rows.
    pub row: Option<RowInfo>,
    /// Columns (or fields) the user vouches are never NULL, although the
    /// catalog cannot tell: no nullability warning for them.
    pub assume_not_null: &'static [&'static str],
    /// The Rust type holding the parameters.
    pub rust_type: &'static str,
}

impl QueryInfo {
    /// `file:line`, where the query is defined.
    pub fn location(&self) -> String {
        format!("{}:{}", self.file, self.line)
    }
}

/// One parameter of a named query.
#[derive(Debug, Clone, Copy)]
pub struct ParamInfo {
    /// The placeholder's (and field's) name.
    pub name: &'static str,
    /// The PostgreSQL type the field's Rust type is sent as.
    pub type_ref: TypeRef,
    /// The field's Rust type, for messages.
    pub rust_type: &'static str,
}

/// Checks a result's columns against a row type; on success returns the
/// `(column index, field)` pairs it reads into fields that cannot hold NULL.
pub type RowCheck = fn(&[Column]) -> Result<Vec<(usize, String)>, Error>;

/// The row type of a named query, type-erased for [`check_queries`].
#[derive(Clone, Copy)]
pub struct RowInfo {
    /// The Rust type's name, for messages.
    pub rust_type: &'static str,
    /// Checks columns against the type; on success returns the columns it
    /// reads into fields that cannot hold NULL (see
    /// [`FromRow::non_null_columns`]).
    pub check: RowCheck,
}

impl std::fmt::Debug for RowInfo {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RowInfo")
            .field("rust_type", &self.rust_type)
            .finish()
    }
}

/// [`RowInfo::check`] for a `FromRow` type.
pub fn check_row<R: FromRow>(columns: &[Column]) -> Result<Vec<(usize, String)>, Error> {
    let plan = R::check(columns)?;
    Ok(R::non_null_columns(columns, &plan))
}

/// A parameter struct bound to a named query (implemented by
/// `#[derive(pgpipe::Query)]`).
pub trait Query: Sync {
    /// The row type (`()` when the query has none).
    type Row;

    /// Where the query comes from and what it is.
    const INFO: &'static QueryInfo;

    /// The parameter values, in `$n` order.
    fn params(&self) -> impl Params + Send + Sync + '_;
}

/// Runs the query and reads every row (see [`Client::query_as`]).
pub async fn fetch_all<Q, E>(query: &Q, on: &E) -> Result<Vec<Q::Row>, Error>
where
    Q: Query,
    Q::Row: FromRow + Send,
    E: GenericClient + ?Sized,
{
    let info = Q::INFO;
    run_named(info, on.query_as(info.sql, query.params())).await
}

/// Runs the query, which must return exactly one row.
pub async fn fetch_one<Q, E>(query: &Q, on: &E) -> Result<Q::Row, Error>
where
    Q: Query,
    Q::Row: FromRow + Send,
    E: GenericClient + ?Sized,
{
    let mut rows = fetch_all(query, on).await?;
    match rows.len() {
        1 => Ok(rows.remove(0)),
        n => Err(wrong_row_count(Q::INFO, "exactly one row", n)),
    }
}

/// Runs the query, which must return at most one row.
pub async fn fetch_opt<Q, E>(query: &Q, on: &E) -> Result<Option<Q::Row>, Error>
where
    Q: Query,
    Q::Row: FromRow + Send,
    E: GenericClient + ?Sized,
{
    let mut rows = fetch_all(query, on).await?;
    match rows.len() {
        0 | 1 => Ok(rows.pop()),
        n => Err(wrong_row_count(Q::INFO, "at most one row", n)),
    }
}

/// Runs the query and returns the number of rows affected (see
/// [`Client::execute`]).
pub async fn execute<Q, E>(query: &Q, on: &E) -> Result<u64, Error>
where
    Q: Query,
    E: GenericClient + ?Sized,
{
    let info = Q::INFO;
    run_named(info, on.execute(info.sql, query.params())).await
}

/// Streams the query's rows (see [`Client::query_stream`]); the stream's
/// span carries the query's name.
pub async fn stream<Q, E>(query: &Q, on: &E) -> Result<RowStream, Error>
where
    Q: Query,
    E: GenericClient + ?Sized,
{
    let info = Q::INFO;
    run_named(info, on.query_stream(info.sql, query.params())).await
}

/// Runs one call of a named query under a span carrying its name, and
/// names the query in its error.
async fn run_named<T>(
    info: &QueryInfo,
    call: impl Future<Output = Result<T, Error>>,
) -> Result<T, Error> {
    crate::observe::with_summary(info.name, call)
        .await
        .map_err(|e| in_query(e, info))
}

/// A query returned more (or fewer) rows than its caller expects.
fn wrong_row_count(info: &QueryInfo, expected: &str, n: usize) -> Error {
    Error::new(
        crate::ErrorKind::RowCount,
        format!(
            "query {} ({}): expected {expected}, it returned {n}",
            info.name,
            info.location()
        ),
    )
}

/// Says which named query failed.
fn in_query(e: Error, info: &QueryInfo) -> Error {
    e.context(format_args!("query {} ({})", info.name, info.location()))
}
