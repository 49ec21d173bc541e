//! A `jsonb` value read as its text, for every in-process driver through
//! its public decode trait (pgpipe `Decode`, tokio-postgres `FromSql`,
//! sqlx `Decode`): the binary form is a version byte (1) and the text.
//! One type for all drivers keeps the work identical (pgpipe's own
//! `&str`/`String` decode of jsonb does the same): check the version,
//! validate the UTF-8.

use sqlx::postgres::{PgValueFormat, PgValueRef, Postgres};
use sqlx::ValueRef;

type BoxError = Box<dyn std::error::Error + Sync + Send>;

/// The text of a `jsonb` value, borrowed from the row.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct JsonbStr<'a>(pub &'a str);

/// `jsonb`'s type OID.
pub const JSONB_OID: u32 = 3802;

/// Splits the version byte off a binary `jsonb` value.
pub fn jsonb_text(raw: &[u8]) -> Result<&str, BoxError> {
    match raw.split_first() {
        Some((1, text)) => Ok(std::str::from_utf8(text)?),
        Some((v, _)) => Err(format!("unknown jsonb version {v}").into()),
        None => Err("empty jsonb value".into()),
    }
}

impl<'a> pgpipe::Decode<'a> for JsonbStr<'a> {
    fn accepts(ty: &pgpipe::Type) -> bool {
        ty.oid() == JSONB_OID
    }

    fn decode(_ty: &pgpipe::Type, raw: &'a [u8]) -> Result<Self, pgpipe::types::BoxError> {
        Ok(JsonbStr(jsonb_text(raw)?))
    }
}

impl<'a> tokio_postgres::types::FromSql<'a> for JsonbStr<'a> {
    fn from_sql(_ty: &tokio_postgres::types::Type, raw: &'a [u8]) -> Result<Self, BoxError> {
        Ok(JsonbStr(jsonb_text(raw)?))
    }

    fn accepts(ty: &tokio_postgres::types::Type) -> bool {
        *ty == tokio_postgres::types::Type::JSONB
    }
}

impl<'r> sqlx::Decode<'r, Postgres> for JsonbStr<'r> {
    fn decode(value: PgValueRef<'r>) -> Result<Self, sqlx::error::BoxDynError> {
        if value.format() != PgValueFormat::Binary || value.type_info().to_string() != "JSONB" {
            return Err("expected a binary jsonb".into());
        }
        Ok(JsonbStr(jsonb_text(value.as_bytes()?)?))
    }
}
