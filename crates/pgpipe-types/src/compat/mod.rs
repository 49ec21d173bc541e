//! Types written for tokio-postgres, used by pgpipe (feature
//! `postgres-types`).
//!
//! Code and crates that implement `postgres_types::ToSql` / `FromSql` (by
//! hand or with `#[derive(ToSql, FromSql)]`, and query builders such as
//! sea-query-postgres) work with pgpipe through two adapters:
//!
//! - [`PgType<T>`]: one value, as a parameter (`T: ToSql`) or a column
//!   (`T: FromSql`), checked with the impl's `accepts` before anything is
//!   sent or decoded;
//! - [`params`]: a `&[&(dyn ToSql + Sync)]` list as pgpipe parameters.
//!
//! Types map both ways with [`to_postgres_type`] and
//! [`from_postgres_type`]: built-in types by OID, user-defined ones with the
//! description pgpipe looked up in the server catalog.

mod dyn_value;
mod ty;
mod value;

pub use dyn_value::{params, DynToSql};
pub use ty::{from_postgres_type, to_postgres_type};
pub use value::PgType;
