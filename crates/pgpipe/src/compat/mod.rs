//! Types written for tokio-postgres, used by pgpipe (feature
//! `postgres-types`).
//!
//! Crates and services implement `postgres_types::ToSql` / `FromSql` for
//! their own types, by hand or with `#[derive(ToSql, FromSql)]`, and query
//! builders such as sea-query-postgres hand out their values as
//! `&(dyn ToSql + Sync)`. pgpipe takes them through two adapters:
//!
//! - [`PgType<T>`]: one value, as a parameter (`T: ToSql`) or a column
//!   (`T: FromSql`);
//! - [`params`]: a `&[&(dyn ToSql + Sync)]` list as a pgpipe parameter
//!   list.
//!
//! ```no_run
//! use pgpipe::compat::PgType;
//! use postgres_types::{FromSql, ToSql};
//!
//! // Written for tokio-postgres (CREATE TYPE mood AS ENUM ('sad', 'ok', 'happy')).
//! #[derive(Debug, PartialEq, ToSql, FromSql)]
//! #[postgres(name = "mood")]
//! enum Mood {
//!     #[postgres(name = "sad")]
//!     Sad,
//!     #[postgres(name = "ok")]
//!     Ok,
//!     #[postgres(name = "happy")]
//!     Happy,
//! }
//!
//! # async fn run(client: &pgpipe::Client) -> Result<(), pgpipe::Error> {
//! client
//!     .execute("INSERT INTO person (name, mood) VALUES ($1, $2)", ("ann", PgType(Mood::Happy)))
//!     .await?;
//! let row = client.query_one("SELECT mood FROM person WHERE name = $1", ("ann",)).await?;
//! let PgType(mood): PgType<Mood> = row.get(0);
//! assert_eq!(mood, Mood::Happy);
//!
//! // Checked before the first row: a column the impl does not accept
//! // (here `name`, a text) is pgpipe's usual type-mismatch error.
//! let wrong = client
//!     .query_as::<(PgType<Mood>,), _, _>("SELECT name FROM person", ())
//!     .await;
//! assert!(wrong.is_err());
//! # Ok(()) }
//! ```
//!
//! With sea-query and sea-query-postgres:
//!
//! ```no_run
//! use sea_query::{Alias, Expr, PostgresQueryBuilder, Query};
//! use sea_query_postgres::PostgresBinder;
//!
//! # async fn run(pool: &pgpipe::Pool) -> Result<(), pgpipe::Error> {
//! let (sql, values) = Query::select()
//!     .column(Alias::new("name"))
//!     .from(Alias::new("person"))
//!     .and_where(Expr::col(Alias::new("id")).eq(7))
//!     .build_postgres(PostgresQueryBuilder);
//! let names: Vec<(String,)> = pool
//!     .query_as(&sql, pgpipe::compat::params(&values.as_params()))
//!     .await?;
//! # Ok(()) }
//! ```
//!
//! sea-query-postgres' values answer `true` to every `accepts`, so a value
//! of the wrong type for its column is refused by the server (as with
//! tokio-postgres), not by the check below; see `examples/sea_query.rs`.
//!
//! # Parameter types, and what it costs
//!
//! pgpipe's own types declare their PostgreSQL type, so a statement given
//! as SQL text costs one round trip even the first time. A `ToSql` value
//! cannot declare one: its bytes depend on the type the server infers. So
//! for a parameter list holding one, pgpipe first learns the statement's
//! parameter types: from the connection's statement cache once the
//! statement has run there (no extra round trip), else with one Parse +
//! Describe round trip of the unnamed statement, the types then kept with
//! the cached statement. With the statement cache off
//! (`statement_cache_capacity=0`) every such query pays that round trip.
//! A [`Statement`](crate::Statement) from `prepare` carries its types:
//! none is needed.
//!
//! Each value is then checked against its parameter's type before the
//! statement is sent: `PgType<T>` with `T::accepts`, refused as
//! "parameter $N: Rust type ... cannot be sent as PostgreSQL type ...";
//! a trait object (which cannot call `accepts`) with its own
//! `to_sql_checked` while the Bind is encoded, also before anything is
//! sent. Columns are checked with `FromSql::accepts` before any row is
//! decoded, as pgpipe's own types are (`query_as` checks once per result;
//! `Row::get`/`try_get` per call). User-defined types reach `accepts` with
//! the name, schema and kind pgpipe looked up in the server catalog; a
//! domain is looked through to its base type when the impl refuses the
//! domain itself.
//!
//! Query methods, `query_stream`, `bind_portal` and prepared statements
//! learn the types; binary COPY checks against the table's columns. A
//! [`Batch`](crate::Batch) sends its statements without asking: a `ToSql`
//! value in a batch's SQL text fails with an error saying so; add a
//! prepared statement to the batch instead.
//!
//! NULL: send `PgType(None::<T>)`; read `Option<PgType<T>>` or
//! `PgType<Option<T>>`.

pub use pgpipe_types::compat::{from_postgres_type, params, to_postgres_type, DynToSql, PgType};
