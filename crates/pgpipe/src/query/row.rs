//! Result rows: lazy views over DataRow bytes.
//!
//! A `Row` keeps the DataRow body exactly as it came off the socket (a
//! `Bytes` slice of the read buffer, so no copy and no allocation per row)
//! and the statement's shared column list. A streamed row instead shares
//! its stream's [`RowChunk`] (the chunk it lies in and the column list,
//! one reference count for both), which halves the atomic operations that
//! make up most of an owned row's cost on a narrow result. A column is located, checked and
//! decoded only when it is read: on arrival only the column count is
//! checked, so a wide result is walked once (by the reads), not twice. A
//! malformed column length is a protocol error when that column is read.

use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use bytes::Bytes;
use pgpipe_types::{Decode, WrongType};

use crate::error::ErrorKind;
use crate::types::column::Column;
use crate::Error;

/// Something that selects a column: its position (`usize`) or its name
/// (`&str`).
pub trait RowIndex: fmt::Display + sealed::Sealed {
    /// The position of the column, if it exists.
    fn index(&self, columns: &[Column]) -> Option<usize>;
}

mod sealed {
    pub trait Sealed {}
    impl Sealed for usize {}
    impl Sealed for str {}
    impl Sealed for String {}
    impl<T: Sealed + ?Sized> Sealed for &T {}
}

impl RowIndex for usize {
    fn index(&self, columns: &[Column]) -> Option<usize> {
        (*self < columns.len()).then_some(*self)
    }
}

impl RowIndex for str {
    fn index(&self, columns: &[Column]) -> Option<usize> {
        columns.iter().position(|c| c.name() == self)
    }
}

impl RowIndex for String {
    fn index(&self, columns: &[Column]) -> Option<usize> {
        self.as_str().index(columns)
    }
}

impl<T: RowIndex + ?Sized> RowIndex for &T {
    fn index(&self, columns: &[Column]) -> Option<usize> {
        (**self).index(columns)
    }
}

/// One row of a query result.
pub struct Row {
    data: RowData,
    /// Where the column after the last one read starts: `index << 32 |
    /// offset` of its length prefix. Reading columns in order (the usual
    /// pattern) then starts right at the wanted column instead of walking
    /// from the first, so a wide row costs O(n) rather than O(n^2), with no
    /// per-row allocation. Relaxed atomics keep `Row: Sync`; a stale hint is
    /// still a valid starting point.
    hint: AtomicU64,
}

/// Where a row's columns and DataRow body are. The body is a 2-byte
/// column count, then per column a 4-byte length (-1 for NULL) and the
/// value; its column count was checked against the column list.
#[derive(Clone)]
enum RowData {
    /// A body of its own and the column list (rows of collected results).
    Owned { columns: Arc<[Column]>, body: Bytes },
    /// `chunk.bytes[start..end]`: a row a stream handed out from the run
    /// of DataRows in hand. Taking and dropping a `Bytes` share and an
    /// `Arc` of the columns per row (two atomic increments, two atomic
    /// decrements) was a third of the client's CPU per streamed row; one
    /// `Arc` of the chunk costs half that.
    InChunk {
        chunk: Arc<RowChunk>,
        start: usize,
        end: usize,
    },
}

/// A chunk of a response's messages and the column list of its rows,
/// shared by the rows a [`RowStream`](crate::RowStream) hands out of it.
pub(crate) struct RowChunk {
    columns: Arc<[Column]>,
    bytes: Bytes,
}

impl RowChunk {
    pub(crate) fn new(columns: Arc<[Column]>, bytes: Bytes) -> RowChunk {
        RowChunk { columns, bytes }
    }

    /// Whether this is `bytes` (the same view of the same buffer: the
    /// buffer cannot be reused while this holds it) with `columns`.
    #[inline]
    pub(crate) fn is(&self, bytes: &Bytes, columns: &Arc<[Column]>) -> bool {
        self.bytes.as_ptr() == bytes.as_ptr()
            && self.bytes.len() == bytes.len()
            && Arc::ptr_eq(&self.columns, columns)
    }
}

impl Clone for Row {
    fn clone(&self) -> Row {
        Row {
            data: self.data.clone(),
            hint: AtomicU64::new(self.hint.load(Ordering::Relaxed)),
        }
    }
}

/// The first column's length prefix follows the 2-byte column count.
pub(crate) const FIRST_COLUMN: u64 = 2;

impl Row {
    pub(crate) fn new(columns: Arc<[Column]>, body: Bytes) -> Row {
        Row {
            data: RowData::Owned { columns, body },
            hint: AtomicU64::new(FIRST_COLUMN),
        }
    }

    /// The row whose DataRow body is `chunk`'s bytes `start..end`, its
    /// column count already checked against the chunk's columns.
    #[inline]
    pub(crate) fn in_chunk(chunk: Arc<RowChunk>, start: usize, end: usize) -> Row {
        Row {
            data: RowData::InChunk { chunk, start, end },
            hint: AtomicU64::new(FIRST_COLUMN),
        }
    }

    /// The column list and the DataRow body.
    #[inline(always)]
    fn parts(&self) -> (&[Column], &[u8]) {
        match &self.data {
            RowData::Owned { columns, body } => (columns, body),
            // In range by construction; an empty body would only make
            // every read a protocol error, never a panic.
            RowData::InChunk { chunk, start, end } => (
                &chunk.columns,
                chunk.bytes.get(*start..*end).unwrap_or_default(),
            ),
        }
    }

    /// A row from a DataRow body. Only the column count is checked here;
    /// each column's length is checked when the column is read (a
    /// malformed one is then a protocol error naming the DataRow), so a
    /// result is walked once, by the reads, not once more on arrival.
    pub(crate) fn from_body(columns: &Arc<[Column]>, body: Bytes) -> Result<Row, Error> {
        check_column_count(&body, columns.len())?;
        Ok(Row::new(columns.clone(), body))
    }

    /// Replaces the column list once its user-defined types are described.
    pub(crate) fn set_columns(&mut self, columns: Arc<[Column]>) {
        let body = match &self.data {
            RowData::Owned { body, .. } => body.clone(),
            RowData::InChunk { chunk, start, end } => chunk.bytes.slice(*start..*end),
        };
        self.data = RowData::Owned { columns, body };
    }

    /// The result's columns.
    pub fn columns(&self) -> &[Column] {
        self.parts().0
    }

    /// Number of columns.
    pub fn len(&self) -> usize {
        self.columns().len()
    }

    /// Whether the row has no columns.
    pub fn is_empty(&self) -> bool {
        self.columns().is_empty()
    }

    /// Reads a column, by position or name, as `T`.
    ///
    /// ```no_run
    /// # async fn f(client: &pgpipe::Client) -> Result<(), pgpipe::Error> {
    /// let row = client.query_one("SELECT 1::int4 AS id, 'x'::text AS name", ()).await?;
    /// let id: i32 = row.get(0);
    /// let name: &str = row.get("name"); // borrowed from the row, no copy
    /// # Ok(()) }
    /// ```
    ///
    /// # Panics
    ///
    /// If the column does not exist, its type does not convert to `T`, or it
    /// is NULL and `T` is not an `Option`. Use [`Row::try_get`] to handle
    /// those as errors.
    #[track_caller]
    pub fn get<'a, T, I>(&'a self, idx: I) -> T
    where
        T: Decode<'a>,
        I: RowIndex,
    {
        match self.try_get(idx) {
            Ok(v) => v,
            Err(e) => panic!("Row::get: {e}"),
        }
    }

    /// Reads a column, by position or name, as `T`; errors name the column,
    /// its PostgreSQL type and the Rust type.
    // Inlined: this runs once per value of every row read, and the error
    // paths are out of line, so what remains is a type check, a length
    // read and the decode itself.
    #[inline]
    pub fn try_get<'a, T, I>(&'a self, idx: I) -> Result<T, Error>
    where
        T: Decode<'a>,
        I: RowIndex,
    {
        let (columns, body) = self.parts();
        read_column(columns, body, &self.hint, idx)
    }

    fn raw(&self, i: usize) -> Result<Option<&[u8]>, Error> {
        locate(self.parts().1, &self.hint, i)
    }
}

/// Reads column `idx` of a DataRow `body` as `T`: the whole of
/// [`Row::try_get`], shared with the borrowed rows of a
/// [`RowBatch`](crate::RowBatch). `hint` is the row's position hint.
#[inline]
pub(crate) fn read_column<'a, T, I>(
    columns: &[Column],
    body: &'a [u8],
    hint: &AtomicU64,
    idx: I,
) -> Result<T, Error>
where
    T: Decode<'a>,
    I: RowIndex,
{
    let Some(i) = idx.index(columns) else {
        return Err(no_such_column(&idx, columns.len()));
    };
    let column = &columns[i];
    let ty = column.type_();
    if !T::accepts(ty) {
        return Err(wrong_type(i, column, std::any::type_name::<T>()));
    }
    let raw = locate(body, hint, i)?;
    T::decode_opt(ty, raw).map_err(|e| undecodable(i, column, std::any::type_name::<T>(), e))
}

/// The raw binary value of column `i` of a DataRow body (`None` for
/// NULL). The column count was checked against the column list when the
/// row was built; each length is checked here, as it is read.
#[inline]
pub(crate) fn locate<'a>(
    body: &'a [u8],
    hint: &AtomicU64,
    i: usize,
) -> Result<Option<&'a [u8]>, Error> {
    let packed = hint.load(Ordering::Relaxed);
    let (mut col, mut pos) = ((packed >> 32) as usize, (packed & 0xffff_ffff) as usize);
    if col > i {
        (col, pos) = (0, FIRST_COLUMN as usize);
    }
    // Skip to column i (nothing to skip when reading in order).
    while col < i {
        pos = pos
            .checked_add(4 + column_len(body, pos)?.max(0) as usize)
            .ok_or_else(malformed)?;
        col += 1;
    }
    let len = column_len(body, pos)?;
    let start = pos + 4;
    let (value, end) = if len < 0 {
        (None, start)
    } else {
        let end = start.checked_add(len as usize).ok_or_else(malformed)?;
        (Some(body.get(start..end).ok_or_else(malformed)?), end)
    };
    hint.store(((i + 1) as u64) << 32 | end as u64, Ordering::Relaxed);
    Ok(value)
}

/// Checks a DataRow body's column count against the RowDescription's.
#[inline]
pub(crate) fn check_column_count(body: &[u8], expected: usize) -> Result<(), Error> {
    match body.first_chunk::<2>() {
        Some(b) if u16::from_be_bytes(*b) as usize == expected => Ok(()),
        Some(b) => Err(wrong_column_count(u16::from_be_bytes(*b), expected)),
        None => Err(Error::protocol("DataRow ends inside its column count")),
    }
}

#[cold]
#[inline(never)]
fn wrong_column_count(count: u16, expected: usize) -> Error {
    Error::protocol(format!(
        "DataRow has {count} columns but RowDescription announced {expected}"
    ))
}

/// The length prefix of the column whose prefix starts at `pos`.
#[inline(always)]
fn column_len(body: &[u8], pos: usize) -> Result<i32, Error> {
    match body.get(pos..).and_then(|b| b.first_chunk::<4>()) {
        Some(b) => Ok(i32::from_be_bytes(*b)),
        None => Err(malformed()),
    }
}

#[cold]
fn malformed() -> Error {
    Error::protocol("DataRow does not match its RowDescription")
}

#[cold]
#[inline(never)]
fn no_such_column(idx: &dyn fmt::Display, count: usize) -> Error {
    Error::new(
        ErrorKind::ColumnNotFound,
        format!("no column {idx} in a row of {count} columns"),
    )
}

#[cold]
#[inline(never)]
fn wrong_type(i: usize, column: &Column, rust_type: &'static str) -> Error {
    let ty = column.type_();
    let hint = if ty.is_known() {
        ""
    } else {
        " (its type is not described on this connection yet: call \
         Client::register_type first, or read it with a non-streaming query)"
    };
    Error::new(
        ErrorKind::Decode,
        format!("column {} ({:?}){hint}", i, column.name()),
    )
    .with_source(WrongType {
        pg_type: ty.clone(),
        rust_type,
    })
}

#[cold]
#[inline(never)]
fn undecodable(
    i: usize,
    column: &Column,
    rust_type: &'static str,
    e: pgpipe_types::BoxError,
) -> Error {
    Error::new(
        ErrorKind::Decode,
        format!(
            "column {} ({:?}) of type {} as {rust_type}",
            i,
            column.name(),
            column.type_()
        ),
    )
    .with_source(e)
}

impl fmt::Debug for Row {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut list = f.debug_map();
        for (i, c) in self.columns().iter().enumerate() {
            match self.raw(i) {
                Ok(Some(v)) => list.entry(
                    &c.name(),
                    &format_args!("<{} bytes of {}>", v.len(), c.type_()),
                ),
                Ok(None) => list.entry(&c.name(), &format_args!("NULL")),
                Err(_) => list.entry(&c.name(), &format_args!("<malformed>")),
            };
        }
        list.finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pgpipe_types::Type;

    fn column(name: &str, ty: Type) -> Column {
        Column {
            name: name.into(),
            type_: ty,
            table_oid: None,
            column_id: None,
            type_modifier: -1,
        }
    }

    /// A row of int4 columns; `None` is NULL.
    fn row(values: &[Option<i32>]) -> Row {
        let mut body = (values.len() as u16).to_be_bytes().to_vec();
        for v in values {
            match v {
                Some(v) => {
                    body.extend_from_slice(&4i32.to_be_bytes());
                    body.extend_from_slice(&v.to_be_bytes());
                }
                None => body.extend_from_slice(&(-1i32).to_be_bytes()),
            }
        }
        let columns: Arc<[Column]> = (0..values.len())
            .map(|i| column(&format!("c{i}"), Type::INT4))
            .collect();
        Row::new(columns, Bytes::from(body))
    }

    #[test]
    fn columns_read_in_any_order_with_nulls() {
        let values = [Some(10), None, Some(30), None, Some(50), Some(60)];
        let r = row(&values);
        // Forward, backward, repeated, and jumping: the position hint must
        // never change an answer.
        let order = [0, 1, 2, 3, 4, 5, 5, 4, 0, 3, 2, 5, 1, 1, 0];
        for &i in &order {
            assert_eq!(r.get::<Option<i32>, _>(i), values[i], "column {i}");
        }
        assert_eq!(r.get::<Option<i32>, _>("c4"), Some(50));
        let clone = r.clone();
        assert_eq!(clone.get::<Option<i32>, _>(2), Some(30));
    }

    #[test]
    fn lengths_past_the_body_are_errors_wherever_the_read_starts() {
        let columns: Arc<[Column]> = (0..3)
            .map(|i| column(&format!("c{i}"), Type::INT4))
            .collect();
        // c0 NULL, c1 claims i32::MAX bytes, c2 never arrives.
        let mut body = vec![0, 3];
        body.extend_from_slice(&(-1i32).to_be_bytes());
        body.extend_from_slice(&i32::MAX.to_be_bytes());
        body.extend_from_slice(&[0, 0, 0, 7]);
        let r = Row::new(columns, Bytes::from(body));
        // Skipping over c1 from the start, then from the hint left by c0.
        assert_eq!(
            r.try_get::<i32, _>(2).unwrap_err().kind(),
            ErrorKind::Protocol
        );
        assert_eq!(r.try_get::<Option<i32>, _>(0).unwrap(), None);
        assert_eq!(
            r.try_get::<i32, _>(2).unwrap_err().kind(),
            ErrorKind::Protocol
        );
        assert_eq!(
            r.try_get::<i32, _>(1).unwrap_err().kind(),
            ErrorKind::Protocol
        );
        // The row is still readable where it is well formed.
        assert_eq!(r.try_get::<Option<i32>, _>(0).unwrap(), None);
    }

    #[test]
    fn a_malformed_body_is_an_error_not_a_panic() {
        let columns: Arc<[Column]> = vec![column("a", Type::INT4), column("b", Type::INT4)].into();
        // Declares 100 bytes for the first column.
        let r = Row::new(columns, Bytes::from_static(&[0, 2, 0, 0, 0, 100, 1, 2]));
        assert_eq!(
            r.try_get::<i32, _>(1).unwrap_err().kind(),
            ErrorKind::Protocol
        );
        assert_eq!(
            r.try_get::<i32, _>(0).unwrap_err().kind(),
            ErrorKind::Protocol
        );
    }

    /// DataRow messages of int4 values, one after the other, and where
    /// each body starts and ends.
    fn data_rows(rows: &[&[i32]]) -> (Bytes, Vec<(usize, usize)>) {
        let (mut out, mut spans) = (Vec::new(), Vec::new());
        for values in rows {
            let mut body = (values.len() as u16).to_be_bytes().to_vec();
            for v in *values {
                body.extend_from_slice(&4i32.to_be_bytes());
                body.extend_from_slice(&v.to_be_bytes());
            }
            out.push(b'D');
            out.extend_from_slice(&(body.len() as u32 + 4).to_be_bytes());
            spans.push((out.len(), out.len() + body.len()));
            out.extend_from_slice(&body);
        }
        (Bytes::from(out), spans)
    }

    #[test]
    fn rows_in_one_chunk_read_only_their_own_bytes() {
        let columns: Arc<[Column]> = vec![column("a", Type::INT4), column("b", Type::INT4)].into();
        let (bytes, spans) = data_rows(&[&[1, 2], &[3, 4]]);
        let chunk = Arc::new(RowChunk::new(columns.clone(), bytes.clone()));
        assert!(chunk.is(&bytes, &columns));
        assert!(!chunk.is(&bytes.slice(1..), &columns));
        let rows: Vec<Row> = spans
            .iter()
            .map(|&(start, end)| Row::in_chunk(chunk.clone(), start, end))
            .collect();
        assert_eq!(rows[0].get::<i32, _>("b"), 2);
        assert_eq!(rows[1].get::<i32, _>(0), 3);
        assert_eq!(rows[1].clone().get::<i32, _>("b"), 4);
        assert_eq!(rows[0].columns()[1].name(), "b");

        // Described anew (user-defined types): the row keeps its values.
        let mut described = rows[1].clone();
        let renamed: Arc<[Column]> = vec![column("x", Type::INT4), column("y", Type::INT4)].into();
        described.set_columns(renamed);
        assert_eq!(described.get::<i32, _>("y"), 4);

        // A length that runs past the row's own end is an error even with
        // the next row's bytes right behind it in the chunk.
        let (start, end) = spans[0];
        let mut raw = bytes.to_vec();
        raw[start + 2..start + 6].copy_from_slice(&13i32.to_be_bytes());
        let bytes = Bytes::from(raw);
        let chunk = Arc::new(RowChunk::new(columns, bytes));
        let bad = Row::in_chunk(chunk, start, end);
        assert_eq!(
            bad.try_get::<i32, _>(1).unwrap_err().kind(),
            ErrorKind::Protocol
        );
    }
}
