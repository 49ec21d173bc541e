//! Rows read in place: the DataRows that have already arrived, walked
//! where they lie in the read buffer, with no per-row allocation, copy or
//! reference count.
//!
//! A [`Row`] owns a reference-counted share of the read buffer and of the
//! column list, so it can outlive the stream; taking and dropping that
//! reference is most of what an owned row costs on a narrow result. A
//! [`RowRef`] borrows both from its [`RowStream`](crate::RowStream)
//! instead, which is what lets a long result be read at the cost of a
//! hand-written decoder.

use std::fmt;
use std::sync::atomic::AtomicU64;
use std::sync::Arc;

use bytes::Bytes;
use pgpipe_proto::backend::tag;
use pgpipe_types::Decode;

use crate::query::row::{check_column_count, locate, read_column, FIRST_COLUMN};
use crate::query::{Column, Row, RowIndex};
use crate::Error;

/// The rows of a [`RowStream`](crate::RowStream) that have already
/// arrived, read in place. Returned by
/// [`RowStream::next_batch`](crate::RowStream::next_batch); an
/// [`Iterator`] of [`RowRef`]s.
///
/// Rows the iteration does not reach stay in the stream: the next
/// `next_batch` (or `next`) starts with them.
///
/// ```no_run
/// # async fn f(client: &pgpipe::Client) -> Result<(), pgpipe::Error> {
/// let mut rows = client.query_stream("SELECT id, subject FROM mail", ()).await?;
/// let mut total = 0i64;
/// while let Some(batch) = rows.next_batch().await {
///     for row in batch? {
///         let id: i64 = row.try_get(0)?;
///         let subject: &str = row.try_get(1)?; // borrowed from the read buffer
///         total += id + subject.len() as i64;
///     }
/// }
/// # Ok(()) }
/// ```
pub struct RowBatch<'a> {
    columns: &'a Arc<[Column]>,
    chunk: &'a Bytes,
    /// Where the next message starts in `chunk`; the stream drops what is
    /// before it at its next poll.
    pos: &'a mut usize,
    /// The stream's row count, for its span.
    rows: &'a mut u64,
}

impl<'a> RowBatch<'a> {
    pub(crate) fn new(
        columns: &'a Arc<[Column]>,
        chunk: &'a Bytes,
        pos: &'a mut usize,
        rows: &'a mut u64,
    ) -> RowBatch<'a> {
        RowBatch {
            columns,
            chunk,
            pos,
            rows,
        }
    }

    /// The result's columns.
    pub fn columns(&self) -> &'a [Column] {
        self.columns
    }
}

/// Whether `rest` starts with a complete DataRow; its body if so.
#[inline]
pub(crate) fn data_row_at(rest: &[u8]) -> Option<&[u8]> {
    let (&[t, a, b, c, d], _) = rest.split_first_chunk::<5>()?;
    let len = u32::from_be_bytes([a, b, c, d]) as usize;
    if t != tag::DATA_ROW || len < 4 {
        return None;
    }
    rest.get(5..1 + len)
}

impl<'a> Iterator for RowBatch<'a> {
    type Item = RowRef<'a>;

    #[inline]
    fn next(&mut self) -> Option<RowRef<'a>> {
        let chunk: &'a [u8] = self.chunk;
        let body = data_row_at(chunk.get(*self.pos..)?)?;
        // A row that does not match the columns is left where it is: the
        // stream's next poll reports it as the protocol error it is.
        check_column_count(body, self.columns.len()).ok()?;
        *self.pos += 5 + body.len();
        *self.rows += 1;
        Some(RowRef {
            columns: self.columns,
            chunk: self.chunk,
            body,
            hint: AtomicU64::new(FIRST_COLUMN),
        })
    }
}

impl fmt::Debug for RowBatch<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RowBatch")
            .field("columns", &self.columns.len())
            .field("unread_bytes", &self.chunk.len().saturating_sub(*self.pos))
            .finish()
    }
}

/// One row of a [`RowBatch`], borrowed from the stream's read buffer.
///
/// Reads work as on [`Row`] (by position or name, checked against the
/// column's type, errors naming the column), and borrowed values (`&str`,
/// `&[u8]`) live as long as the batch, not just the `RowRef`.
/// [`to_row`](RowRef::to_row) makes an owned [`Row`] (for a
/// [`FromRow`](crate::FromRow) type, or to keep it).
pub struct RowRef<'a> {
    columns: &'a Arc<[Column]>,
    chunk: &'a Bytes,
    body: &'a [u8],
    hint: AtomicU64,
}

impl<'a> RowRef<'a> {
    /// The result's columns.
    pub fn columns(&self) -> &'a [Column] {
        self.columns
    }

    /// Number of columns.
    pub fn len(&self) -> usize {
        self.columns.len()
    }

    /// Whether the row has no columns.
    pub fn is_empty(&self) -> bool {
        self.columns.is_empty()
    }

    /// Reads a column, by position or name, as `T`.
    ///
    /// # Panics
    ///
    /// As [`Row::get`]: if the column does not exist, its type does not
    /// convert to `T`, or it is NULL and `T` is not an `Option`. Use
    /// [`try_get`](RowRef::try_get) to handle those as errors.
    #[track_caller]
    pub fn get<T, I>(&self, idx: I) -> T
    where
        T: Decode<'a>,
        I: RowIndex,
    {
        match self.try_get(idx) {
            Ok(v) => v,
            Err(e) => panic!("RowRef::get: {e}"),
        }
    }

    /// Reads a column, by position or name, as `T`; errors name the
    /// column, its PostgreSQL type and the Rust type.
    #[inline]
    pub fn try_get<T, I>(&self, idx: I) -> Result<T, Error>
    where
        T: Decode<'a>,
        I: RowIndex,
    {
        read_column(self.columns, self.body, &self.hint, idx)
    }

    /// The row as an owned [`Row`]: a reference to the same bytes, no copy.
    pub fn to_row(&self) -> Row {
        Row::new(self.columns.clone(), self.chunk.slice_ref(self.body))
    }
}

impl fmt::Debug for RowRef<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut list = f.debug_map();
        for (i, c) in self.columns.iter().enumerate() {
            match locate(self.body, &self.hint, i) {
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
