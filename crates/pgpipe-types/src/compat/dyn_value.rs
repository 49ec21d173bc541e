//! Type-erased `&(dyn ToSql + Sync)` parameters, as query builders such as
//! sea-query-postgres hand them out.

use bytes::BytesMut;
use postgres_types::ToSql;

use super::value::{accepted_dyn, is_null, refuse_text, type_unknown};
use crate::{BoxError, Encode, IsNull, Type, TypeRef};

/// One `&(dyn ToSql + Sync)` parameter (see [`params`]).
///
/// A trait object cannot call `ToSql::accepts` (it needs `Self: Sized`),
/// so the check before sending is the value's own `to_sql_checked`, run
/// while the Bind message is encoded: a refused value fails the query with
/// an error naming the parameter, its Rust type and the PostgreSQL type,
/// and nothing of the statement is sent. An impl whose `accepts` answers
/// `true` for every type (sea-query-postgres' `PostgresValue` does) is
/// checked by the server instead, as with tokio-postgres.
#[derive(Clone, Copy)]
pub struct DynToSql<'a>(pub &'a (dyn ToSql + Sync));

impl std::fmt::Debug for DynToSql<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("DynToSql").field(self.0).finish()
    }
}

/// A tokio-postgres parameter list as pgpipe parameters: each value
/// wrapped in [`DynToSql`]. The result is a [`Params`](crate::Params), so
/// it goes wherever a tuple of parameters does.
///
/// ```
/// use pgpipe_types::compat::params;
/// use pgpipe_types::Params;
/// use postgres_types::ToSql;
///
/// let (id, name) = (7i64, "ann");
/// let list: Vec<&(dyn ToSql + Sync)> = vec![&id, &name];
/// let p = params(&list);
/// assert_eq!(p.len(), 2);
/// assert!(p.needs_server_types());
/// ```
///
/// sea-query-postgres' `PostgresValues::as_params()` is such a list: see
/// `pgpipe::compat` for a query built with sea-query run on a pgpipe pool.
pub fn params<'a>(values: &[&'a (dyn ToSql + Sync)]) -> Vec<DynToSql<'a>> {
    values.iter().map(|&v| DynToSql(v)).collect()
}

impl Encode for DynToSql<'_> {
    fn type_ref(&self) -> TypeRef {
        TypeRef::Oid(0)
    }

    /// `true` for any known type: the value checks itself while encoding
    /// (see [`DynToSql`]).
    fn accepts(&self, ty: &Type) -> bool {
        ty.oid() != 0
    }

    fn encode(&self, ty: &Type, buf: &mut BytesMut) -> Result<IsNull, BoxError> {
        if ty.oid() == 0 {
            return Err(type_unknown("&dyn ToSql"));
        }
        let pg = accepted_dyn(ty, self.0);
        refuse_text(self.0.encode_format(&pg), "&dyn ToSql")?;
        self.0.to_sql_checked(&pg, buf).map(is_null)
    }

    fn rust_type(&self) -> &'static str {
        "&dyn ToSql"
    }

    fn needs_server_type(&self) -> bool {
        true
    }
}
