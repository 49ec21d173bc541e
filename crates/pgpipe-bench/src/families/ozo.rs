//! The `ozo` workload: the reference talk's benchmark table. `SELECT 1`
//! with a connection per request, on one reused connection, through a pool
//! (rows counted) and through a pool into typed rows; then the talk's
//! `pg_type` query (about 370 rows of 12 columns) through a pool, rows only
//! counted (`complex-raw-N`) or every column decoded into [`PgType`]
//! (`complex-parsed-N`), from N tasks over N connections (a pool of N + 1,
//! as in the talk).

use crate::error::BenchError;
use crate::shape::{OzoCase, Shape};
use crate::workload::Variant;

/// The simple query of the talk.
pub const SIMPLE_SQL: &str = "SELECT 1";

/// The talk's "complex query", with its two literals as parameters
/// (`typtypmod = -1`, `typisdefined = true`), as ozo binds them.
pub const COMPLEX_SQL: &str = "SELECT typname, typnamespace, typowner, typlen, typbyval, \
     typcategory, typispreferred, typisdefined, typdelim, typrelid, typelem, typarray \
     FROM pg_type WHERE typtypmod = $1 AND typisdefined = $2";

/// `typtypmod` bound for [`COMPLEX_SQL`].
pub const TYPMOD: i32 = -1;

/// One row of [`COMPLEX_SQL`], every column typed (the talk's `pg_type`
/// struct).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PgType {
    /// `name`.
    pub typname: String,
    /// `oid`.
    pub typnamespace: u32,
    /// `oid`.
    pub typowner: u32,
    /// `int2`.
    pub typlen: i16,
    /// `bool`.
    pub typbyval: bool,
    /// `"char"`.
    pub typcategory: i8,
    /// `bool`.
    pub typispreferred: bool,
    /// `bool`.
    pub typisdefined: bool,
    /// `"char"`.
    pub typdelim: i8,
    /// `oid`.
    pub typrelid: u32,
    /// `oid`.
    pub typelem: u32,
    /// `oid`.
    pub typarray: u32,
}

/// What [`COMPLEX_SQL`] returns on the server, asked once at connect.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Expected {
    /// Rows.
    pub rows: u64,
    /// Sum of `typlen`.
    pub typlen_sum: i64,
    /// Sum of `typarray`.
    pub typarray_sum: i64,
}

/// The query that computes [`Expected`].
pub const EXPECTED_SQL: &str = "SELECT count(*)::int8, coalesce(sum(typlen), 0)::int8, \
     coalesce(sum(typarray::int8), 0)::int8 FROM pg_type WHERE typtypmod = -1 AND typisdefined";

/// Asks the server for [`Expected`] (through the setup client, not the
/// driver measured).
pub async fn expected(url: &str) -> Result<Expected, BenchError> {
    let client = crate::fixtures::setup_client(url).await?;
    let row = client.query_one(EXPECTED_SQL, &[]).await?;
    Ok(Expected {
        rows: row.try_get::<_, i64>(0)?.max(0) as u64,
        typlen_sum: row.try_get(1)?,
        typarray_sum: row.try_get(2)?,
    })
}

/// Checks a raw (counted) result.
pub fn check_count(case: OzoCase, rows: u64, expected: &Expected) -> Result<u64, BenchError> {
    let want = match case {
        OzoCase::ComplexRaw | OzoCase::ComplexParsed => expected.rows,
        _ => 1,
    };
    if rows != want {
        return Err(BenchError::new(format!(
            "ozo {case:?}: {rows} rows, expected {want}"
        )));
    }
    Ok(rows)
}

/// Checks a parsed `SELECT 1`.
pub fn check_simple(values: &[(i32,)]) -> Result<u64, BenchError> {
    if values != [(1,)] {
        return Err(BenchError::new(format!("ozo SELECT 1 returned {values:?}")));
    }
    Ok(1)
}

/// Checks a parsed `pg_type` result: count, sums and per-row sanity.
pub fn check_types(types: &[PgType], expected: &Expected) -> Result<u64, BenchError> {
    let mut typlen = 0i64;
    let mut typarray = 0i64;
    for t in types {
        if t.typname.is_empty()
            || !t.typisdefined
            || !(t.typdelim == b',' as i8 || t.typdelim == b';' as i8)
        {
            return Err(BenchError::new(format!(
                "ozo: implausible pg_type row {t:?}"
            )));
        }
        typlen += i64::from(t.typlen);
        typarray += i64::from(t.typarray);
    }
    let got = Expected {
        rows: types.len() as u64,
        typlen_sum: typlen,
        typarray_sum: typarray,
    };
    if got != *expected {
        return Err(BenchError::new(format!(
            "ozo: pg_type rows {got:?}, expected {expected:?}"
        )));
    }
    Ok(got.rows)
}

/// The case of an ozo variant.
pub fn case(variant: &Variant) -> Result<OzoCase, BenchError> {
    match variant.shape {
        Shape::Ozo(c) => Ok(c),
        other => Err(BenchError::new(format!("not an ozo variant: {other:?}"))),
    }
}
