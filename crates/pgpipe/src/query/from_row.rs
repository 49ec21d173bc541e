//! Rows into Rust types, checked against the result's columns once, before
//! any row is decoded.

use pgpipe_types::{Decode, WrongType};

use crate::error::ErrorKind;
use crate::query::{Column, Row};
use crate::Error;

/// A Rust type built from one result row.
///
/// [`Client::query_as`](crate::Client::query_as) and friends call
/// [`check`](FromRow::check) once with the result's columns before any row
/// is decoded: a wrong column count, a missing column name or a PostgreSQL
/// type the Rust type does not accept is one clear error, not garbage (and
/// not the first of a million identical errors). The check's output (for
/// example the position of each named column) is then handed to
/// [`decode`](FromRow::decode) for every row, so name lookups happen once.
///
/// Implemented for tuples of up to 16 [`Decode`] types (by position; the
/// column count must match) and by `#[derive(FromRow)]` for structs (by
/// column name).
///
/// ```no_run
/// # async fn f(client: &pgpipe::Client) -> Result<(), pgpipe::Error> {
/// let users: Vec<(i64, String)> = client
///     .query_as("SELECT id, email FROM users WHERE id < $1", (100i64,))
///     .await?;
/// # Ok(()) }
/// ```
pub trait FromRow: Sized {
    /// What the check learned that decoding each row needs.
    type Columns: Send + Sync;

    /// Checks the result's columns against `Self`, before any row is read.
    fn check(columns: &[Column]) -> Result<Self::Columns, Error>;

    /// Builds `Self` from a row whose columns passed [`check`](FromRow::check).
    fn decode(row: &Row, columns: &Self::Columns) -> Result<Self, Error>;

    /// The columns `Self` reads into Rust types that cannot hold NULL, as
    /// `(column index, field name)`, given columns that passed
    /// [`check`](FromRow::check). The startup check of named queries
    /// compares them with the catalog's nullability. The default lists
    /// none (no warnings); tuples and `#[derive(FromRow)]` list theirs.
    fn non_null_columns(columns: &[Column], plan: &Self::Columns) -> Vec<(usize, String)> {
        let _ = (columns, plan);
        Vec::new()
    }

    /// Checks and decodes one row on its own.
    fn from_row(row: &Row) -> Result<Self, Error> {
        let columns = Self::check(row.columns())?;
        Self::decode(row, &columns)
    }
}

/// Finds the column called `name` for field `field` of `target` (a helper
/// for `#[derive(FromRow)]`).
pub fn column_index(
    columns: &[Column],
    name: &str,
    field: &str,
    target: &'static str,
) -> Result<usize, Error> {
    columns.iter().position(|c| c.name() == name).ok_or_else(|| {
        let names: Vec<&str> = columns.iter().map(Column::name).collect();
        Error::new(
            ErrorKind::ColumnNotFound,
            format!(
                "{target}.{field} needs a column named {name:?}, but the result has columns {names:?}"
            ),
        )
    })
}

/// Checks that column `index` can be read as `T`, for field `field` of
/// `target` (a helper for `FromRow` implementations).
pub fn check_column<T>(
    columns: &[Column],
    index: usize,
    field: &str,
    target: &'static str,
) -> Result<(), Error>
where
    T: for<'a> Decode<'a>,
{
    let column = columns.get(index).ok_or_else(|| {
        Error::new(
            ErrorKind::ColumnNotFound,
            format!(
                "{target}.{field} reads column {index}, but the result has {} columns",
                columns.len()
            ),
        )
    })?;
    if T::accepts(column.type_()) {
        return Ok(());
    }
    Err(Error::new(
        ErrorKind::Decode,
        format!(
            "column {index} ({:?}) of type {} cannot be read into {target}.{field}",
            column.name(),
            column.type_()
        ),
    )
    .with_source(WrongType {
        pg_type: column.type_().clone(),
        rust_type: std::any::type_name::<T>(),
    }))
}

/// Adds `(index, field)` to `out` when `T` cannot hold the NULL a column
/// of `index`'s type might bring (a helper for
/// [`FromRow::non_null_columns`]).
pub fn non_null<T>(columns: &[Column], index: usize, field: &str, out: &mut Vec<(usize, String)>)
where
    T: for<'a> Decode<'a>,
{
    if let Some(column) = columns.get(index) {
        if T::decode_null(column.type_()).is_err() {
            out.push((index, field.to_owned()));
        }
    }
}

/// Checks that a result has exactly the `expected` columns a tuple (or a
/// tuple struct) `target` reads; derived code calls it too.
pub fn column_count(
    columns: &[Column],
    expected: usize,
    target: &'static str,
) -> Result<(), Error> {
    if columns.len() == expected {
        return Ok(());
    }
    let names: Vec<&str> = columns.iter().map(Column::name).collect();
    Err(Error::new(
        ErrorKind::ColumnCount,
        format!(
            "{target} takes {expected} column(s), but the result has {}: {names:?}",
            columns.len()
        ),
    ))
}

macro_rules! tuple_from_row {
    ($n:literal; $($idx:tt $T:ident),+) => {
        impl<$($T),+> FromRow for ($($T,)+)
        where
            $($T: for<'a> Decode<'a>),+
        {
            type Columns = ();

            fn check(columns: &[Column]) -> Result<(), Error> {
                let target = std::any::type_name::<Self>();
                column_count(columns, $n, target)?;
                $(check_column::<$T>(columns, $idx, stringify!($idx), target)?;)+
                Ok(())
            }

            fn decode(row: &Row, _: &()) -> Result<Self, Error> {
                Ok(($(row.try_get::<$T, usize>($idx)?,)+))
            }

            fn non_null_columns(columns: &[Column], _: &()) -> Vec<(usize, String)> {
                let mut out = Vec::new();
                $(non_null::<$T>(columns, $idx, stringify!($idx), &mut out);)+
                out
            }
        }
    };
}

tuple_from_row!(1; 0 A);
tuple_from_row!(2; 0 A, 1 B);
tuple_from_row!(3; 0 A, 1 B, 2 C);
tuple_from_row!(4; 0 A, 1 B, 2 C, 3 D);
tuple_from_row!(5; 0 A, 1 B, 2 C, 3 D, 4 E);
tuple_from_row!(6; 0 A, 1 B, 2 C, 3 D, 4 E, 5 F);
tuple_from_row!(7; 0 A, 1 B, 2 C, 3 D, 4 E, 5 F, 6 G);
tuple_from_row!(8; 0 A, 1 B, 2 C, 3 D, 4 E, 5 F, 6 G, 7 H);
tuple_from_row!(9; 0 A, 1 B, 2 C, 3 D, 4 E, 5 F, 6 G, 7 H, 8 I);
tuple_from_row!(10; 0 A, 1 B, 2 C, 3 D, 4 E, 5 F, 6 G, 7 H, 8 I, 9 J);
tuple_from_row!(11; 0 A, 1 B, 2 C, 3 D, 4 E, 5 F, 6 G, 7 H, 8 I, 9 J, 10 K);
tuple_from_row!(12; 0 A, 1 B, 2 C, 3 D, 4 E, 5 F, 6 G, 7 H, 8 I, 9 J, 10 K, 11 L);
tuple_from_row!(13; 0 A, 1 B, 2 C, 3 D, 4 E, 5 F, 6 G, 7 H, 8 I, 9 J, 10 K, 11 L, 12 M);
tuple_from_row!(14; 0 A, 1 B, 2 C, 3 D, 4 E, 5 F, 6 G, 7 H, 8 I, 9 J, 10 K, 11 L, 12 M, 13 N);
tuple_from_row!(15; 0 A, 1 B, 2 C, 3 D, 4 E, 5 F, 6 G, 7 H, 8 I, 9 J, 10 K, 11 L, 12 M, 13 N, 14 O);
tuple_from_row!(16; 0 A, 1 B, 2 C, 3 D, 4 E, 5 F, 6 G, 7 H, 8 I, 9 J, 10 K, 11 L, 12 M, 13 N, 14 O, 15 P);
