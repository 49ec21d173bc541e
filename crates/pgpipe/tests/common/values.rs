//! Round trips of single values, shared by the type tests.

use std::fmt::Debug;

use pgpipe::types::StaticType;
use pgpipe::{Client, Decode, Encode};

/// Sends `value` as `$1::ty`, reads it back, and checks the server's text
/// rendering of the parameter (its output function, through `format`: a
/// `::text` cast is not always the same, `inet::text` shows the prefix).
pub async fn round_trip<T>(client: &Client, ty: &str, value: T, text: &str)
where
    T: Encode + Sync + for<'a> Decode<'a> + PartialEq + Debug,
{
    let row = client
        .query_one(
            &format!("SELECT $1::{ty}, format('%s', $1::{ty})"),
            (&value,),
        )
        .await
        .unwrap_or_else(|e| panic!("SELECT $1::{ty} with {value:?}: {e}"));
    let back: T = row
        .try_get(0)
        .unwrap_or_else(|e| panic!("reading {ty} {value:?} back: {e}"));
    assert_eq!(back, value, "{ty} round trip");
    assert_eq!(
        row.get::<&str, _>(1),
        text,
        "server's rendering of {value:?} as {ty}"
    );
}

/// Selects a literal and reads it as `T`.
pub async fn literal<T>(client: &Client, sql: &str) -> T
where
    T: for<'a> Decode<'a>,
{
    let row = client
        .query_one(&format!("SELECT {sql}"), ())
        .await
        .unwrap_or_else(|e| panic!("SELECT {sql}: {e}"));
    row.try_get::<T, _>(0)
        .unwrap_or_else(|e| panic!("SELECT {sql} as {}: {e}", std::any::type_name::<T>()))
}

/// NULL both ways: a typed `None` as `$1::ty`, and `NULL::ty` as `Option<T>`.
pub async fn null<T>(client: &Client, ty: &str)
where
    T: Encode + StaticType + Sync + for<'a> Decode<'a> + Debug,
{
    let row = client
        .query_one(
            &format!("SELECT $1::{ty}, $1::{ty} IS NULL, NULL::{ty}"),
            (None::<T>,),
        )
        .await
        .unwrap_or_else(|e| panic!("NULL as {ty}: {e}"));
    assert!(row.get::<Option<T>, _>(0).is_none(), "{ty}");
    assert!(row.get::<bool, _>(1), "{ty}");
    assert!(row.get::<Option<T>, _>(2).is_none(), "{ty}");
    let err = row.try_get::<T, _>(2).unwrap_err();
    assert!(err.to_string().contains("NULL"), "{ty}: {err}");
}

/// The check every codec gets against the server: `lit::ty` is read as
/// `T` and shown by the server as `text`; that value sent back as `$1::ty`
/// (a prepared statement, so the parameter's type is the server's) is
/// shown as `text` too and, when `ty` has an `=` operator (`eq`), is
/// `IS NOT DISTINCT FROM` the literal. Returns the value read.
pub async fn literal_round_trip<T>(client: &Client, ty: &str, lit: &str, text: &str, eq: bool) -> T
where
    T: Encode + Sync + for<'a> Decode<'a> + Debug,
{
    let row = client
        .query_one(
            &format!("SELECT {lit}::{ty}, format('%s', {lit}::{ty})"),
            (),
        )
        .await
        .unwrap_or_else(|e| panic!("SELECT {lit}::{ty}: {e}"));
    let value: T = row
        .try_get(0)
        .unwrap_or_else(|e| panic!("reading {lit}::{ty}: {e}"));
    assert_eq!(row.get::<&str, _>(1), text, "server's text of {lit}::{ty}");
    let same = if eq {
        format!("$1::{ty} IS NOT DISTINCT FROM {lit}::{ty}")
    } else {
        "true".to_owned()
    };
    let statement = client
        .prepare(&format!("SELECT format('%s', $1::{ty}), {same}"))
        .await
        .unwrap_or_else(|e| panic!("preparing the check of {ty}: {e}"));
    let row = client
        .query_one(&statement, (&value,))
        .await
        .unwrap_or_else(|e| panic!("sending {value:?} as $1::{ty}: {e}"));
    assert_eq!(row.get::<&str, _>(0), text, "{value:?} sent back as {ty}");
    assert!(
        row.get::<bool, _>(1),
        "{value:?} sent back is not {lit}::{ty}"
    );
    value
}
