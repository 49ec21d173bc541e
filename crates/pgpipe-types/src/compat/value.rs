//! [`PgType`]: one value of a type written for tokio-postgres.

use std::fmt;

use bytes::BytesMut;
use postgres_types::{Format, FromSql, ToSql};

use super::ty::to_postgres_type;
use crate::{BoxError, Decode, Encode, IsNull, Type, TypeRef, UnexpectedNull, WrongType};

/// A value whose type implements tokio-postgres's traits, used as a pgpipe
/// parameter (`T: postgres_types::ToSql`) or read from a column
/// (`T: postgres_types::FromSql`).
///
/// pgpipe's own types declare their PostgreSQL type up front, so a
/// statement costs one round trip; a `ToSql` value cannot, so the client
/// learns the types the server inferred for the statement's parameters
/// first: from its statement cache once the statement has run on the
/// connection (no extra round trip), else with one Parse + Describe round
/// trip. Each value is then checked with `ToSql::accepts` against its
/// parameter's type before anything is sent, and a column with
/// `FromSql::accepts` before any row is decoded, so a mismatch is pgpipe's
/// usual error naming both types. User-defined types (enums, composites,
/// domains, arrays of them) reach `accepts` with the name, schema and kind
/// the server catalog gave; a domain is looked through to its base type
/// when the impl does not accept the domain itself, as pgpipe's own types
/// do.
///
/// NULL: send `PgType(None::<T>)` (tokio-postgres's `Option<T>`), read
/// `Option<PgType<T>>` or `PgType<Option<T>>`.
///
/// ```
/// use bytes::BytesMut;
/// use pgpipe_types::compat::PgType;
/// use pgpipe_types::{Decode, Encode, Type};
///
/// // Any `ToSql` type, here one of postgres-types' own.
/// let mut buf = BytesMut::new();
/// PgType(42i32).encode(&Type::INT4, &mut buf).unwrap();
/// assert!(PgType(42i32).accepts(&Type::INT4));
/// assert!(!PgType(42i32).accepts(&Type::TEXT));
/// assert_eq!(PgType::<i32>::decode(&Type::INT4, &buf).unwrap(), PgType(42));
/// assert!(!<PgType<i32> as Decode>::accepts(&Type::INT8));
/// ```
///
/// Parameters that must go through a type-erased `&(dyn ToSql + Sync)`
/// list, as sea-query-postgres gives them, use [`params`](super::params).
#[derive(Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct PgType<T>(pub T);

impl<T> PgType<T> {
    /// The wrapped value.
    pub fn into_inner(self) -> T {
        self.0
    }
}

impl<T: fmt::Debug> fmt::Debug for PgType<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("PgType").field(&self.0).finish()
    }
}

/// The `postgres_types::Type` an impl accepts for `ty`: `ty` itself, or for
/// a domain its base type (pgpipe's own types look domains through too);
/// `None` when neither is accepted.
pub(super) fn accepted(
    ty: &Type,
    accepts: impl Fn(&postgres_types::Type) -> bool,
) -> Option<postgres_types::Type> {
    let pg = to_postgres_type(ty);
    if accepts(&pg) {
        return Some(pg);
    }
    let base = ty.base();
    if base.oid() != ty.oid() {
        let pg = to_postgres_type(base);
        if accepts(&pg) {
            return Some(pg);
        }
    }
    None
}

/// The error for a parameter whose type is still unknown: the value was
/// handed to a path that sends without learning the statement's types.
pub(super) fn type_unknown(rust_type: &str) -> BoxError {
    format!(
        "{rust_type} (postgres_types::ToSql) needs the parameter's type from the server, \
         which this path does not ask for (a batch's SQL text): use a prepared statement"
    )
    .into()
}

/// pgpipe binds every parameter in binary.
pub(super) fn refuse_text(format: Format, rust_type: &str) -> Result<(), BoxError> {
    match format {
        Format::Binary => Ok(()),
        Format::Text => Err(format!(
            "{rust_type} (postgres_types::ToSql) sends text format; pgpipe binds parameters in binary"
        )
        .into()),
    }
}

pub(super) fn is_null(n: postgres_types::IsNull) -> IsNull {
    match n {
        postgres_types::IsNull::Yes => IsNull::Yes,
        postgres_types::IsNull::No => IsNull::No,
    }
}

impl<T: ToSql> Encode for PgType<T> {
    fn type_ref(&self) -> TypeRef {
        // The server infers it; `needs_server_type` makes the client ask.
        TypeRef::Oid(0)
    }

    fn accepts(&self, ty: &Type) -> bool {
        ty.oid() != 0 && accepted(ty, T::accepts).is_some()
    }

    fn encode(&self, ty: &Type, buf: &mut BytesMut) -> Result<IsNull, BoxError> {
        let rust_type = std::any::type_name::<T>();
        if ty.oid() == 0 {
            return Err(type_unknown(rust_type));
        }
        let pg = accepted(ty, T::accepts).ok_or_else(|| {
            Box::new(WrongType {
                pg_type: ty.clone(),
                rust_type,
            }) as BoxError
        })?;
        refuse_text(self.0.encode_format(&pg), rust_type)?;
        // Checked: an impl's `to_sql` may assume `accepts` (postgres-types'
        // arrays panic on a non-array type).
        self.0.to_sql_checked(&pg, buf).map(is_null)
    }

    fn rust_type(&self) -> &'static str {
        std::any::type_name::<T>()
    }

    fn needs_server_type(&self) -> bool {
        true
    }
}

impl<'a, T: FromSql<'a>> Decode<'a> for PgType<T> {
    fn accepts(ty: &Type) -> bool {
        accepted(ty, T::accepts).is_some()
    }

    fn decode(ty: &Type, raw: &'a [u8]) -> Result<Self, BoxError> {
        let pg = accepted(ty, T::accepts).ok_or_else(|| wrong_column::<T>(ty))?;
        T::from_sql(&pg, raw).map(PgType)
    }

    fn decode_null(ty: &Type) -> Result<Self, BoxError> {
        let pg = accepted(ty, T::accepts).ok_or_else(|| wrong_column::<T>(ty))?;
        T::from_sql_null(&pg).map(PgType).map_err(|e| {
            if e.is::<postgres_types::WasNull>() {
                Box::new(UnexpectedNull)
            } else {
                e
            }
        })
    }
}

fn wrong_column<T>(ty: &Type) -> BoxError {
    Box::new(WrongType {
        pg_type: ty.clone(),
        rust_type: std::any::type_name::<T>(),
    })
}

/// [`accepted`] for a trait object, which cannot call `accepts`: a domain
/// is looked through when the value refuses the domain itself (a trial
/// encode, only for domains); any other type is used as it is, and the
/// value's `to_sql_checked` judges it.
pub(super) fn accepted_dyn(ty: &Type, value: &(dyn ToSql + Sync)) -> postgres_types::Type {
    let pg = to_postgres_type(ty);
    let base = ty.base();
    if base.oid() == ty.oid() {
        return pg;
    }
    match value.to_sql_checked(&pg, &mut BytesMut::new()) {
        Err(e) if e.is::<postgres_types::WrongType>() => to_postgres_type(base),
        _ => pg,
    }
}
