//! Typed binary COPY: rows of Rust values in ([`BinaryCopyWriter`]) and
//! out ([`CopyOutRows`]), checked against the server's column types
//! before any data moves.

use std::collections::VecDeque;
use std::marker::PhantomData;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use bytes::Bytes;
use futures_core::Stream;
use pgpipe_proto::copy_binary::{self, BinaryDecoder};
use pgpipe_proto::frontend::ParamWriter;
use pgpipe_proto::put::PutInline;
use pgpipe_types::{Params, Type};

use super::copy_in::CopyIn;
use super::copy_out::CopyOut;
use super::sql::{column_list, quoted_list};
use crate::error::ErrorKind;
use crate::query::ConnRef;
use crate::query::{encode_error, Column, FromRow, Row};
use crate::Error;

/// Writes rows of Rust values into a table in the binary COPY format,
/// from [`Client::copy_in_rows`](crate::Client::copy_in_rows).
///
/// `T` is a tuple of values (`(i64, &str, Option<f64>)`), or any other
/// [`Params`] list such as `Vec<&(dyn Encode + Sync)>`; each value must fit
/// its column's type, which was taken from the server when the writer was
/// made. A value that does not fit (an `i64` for an `int4` column, a
/// missing value) is one clear error naming the row and column, and the
/// row is not written. Rows are buffered into 64 KiB CopyData messages,
/// so the first bytes go out only after the first rows were checked.
///
/// Like [`CopyIn`], it notices a server error while writing, aborts on drop
/// and has the connection to itself while open.
///
/// ```no_run
/// # async fn f(client: &pgpipe::Client) -> Result<(), pgpipe::Error> {
/// let mut copy = client
///     .copy_in_rows::<(i64, &str)>("mail.message", &["id", "subject"])
///     .await?;
/// copy.write(&(1, "hello")).await?;
/// copy.write(&(2, "again")).await?;
/// assert_eq!(copy.finish().await?, 2);
/// # Ok(()) }
/// ```
pub struct BinaryCopyWriter<T: ?Sized> {
    copy: CopyIn,
    columns: Arc<[Column]>,
    types: Vec<Type>,
    /// Set once a row showed that every row of `T` fits the columns
    /// ([`Params::accepts_all_values`]): later rows skip the check.
    all_fit: bool,
    rows: u64,
    _rows: PhantomData<fn(&T)>,
}

impl<T: Params + ?Sized> BinaryCopyWriter<T> {
    /// Keeps `hold` (a pool's checkout) alive as long as this COPY.
    pub(crate) fn set_hold(&mut self, hold: Option<Box<dyn Send + Sync>>) {
        self.copy.set_hold(hold);
    }

    pub(crate) async fn start(
        client: &ConnRef,
        table: &str,
        columns: &[&str],
        described: Arc<[Column]>,
    ) -> Result<BinaryCopyWriter<T>, Error> {
        if described.len() > i16::MAX as usize {
            return Err(Error::new(
                ErrorKind::InvalidUse,
                format!("a binary COPY row has at most {} columns", i16::MAX),
            ));
        }
        let sql = format!(
            "COPY {table}{} FROM STDIN (FORMAT binary)",
            column_list(columns)?
        );
        let mut copy = CopyIn::start(client, &sql).await?;
        copy_binary::write_header(copy.pending_mut());
        let types = described.iter().map(|c| c.type_().clone()).collect();
        Ok(BinaryCopyWriter {
            copy,
            columns: described,
            types,
            all_fit: false,
            rows: 0,
            _rows: PhantomData,
        })
    }

    /// Writes one row. Checks it against the columns first: on a mismatch
    /// nothing of it is written and the writer stays usable.
    ///
    /// Returns the server's error as soon as it has reported one (see
    /// [`CopyIn::send`]).
    pub async fn write(&mut self, row: &T) -> Result<(), Error> {
        self.encode(row)?;
        if self.copy.chunk_full() {
            self.copy.drain().await?;
        }
        Ok(())
    }

    /// Writes every row of `rows` (see [`write`](Self::write)).
    pub async fn write_all<I>(&mut self, rows: I) -> Result<(), Error>
    where
        I: IntoIterator,
        I::Item: std::borrow::Borrow<T>,
    {
        for row in rows {
            self.write(std::borrow::Borrow::borrow(&row)).await?;
        }
        Ok(())
    }

    fn encode(&mut self, row: &T) -> Result<(), Error> {
        self.copy.ensure_open()?;
        let number = self.rows + 1;
        if row.len() != self.types.len() {
            return Err(Error::new(
                ErrorKind::ColumnCount,
                format!(
                    "row {number} has {} values but the COPY has {} columns ({})",
                    row.len(),
                    self.types.len(),
                    self.column_names()
                ),
            ));
        }
        // Once a row shows that every row of T fits, the rest skip this.
        if !self.all_fit {
            if let Err((index, rust)) = row.check_types(&self.types) {
                let column = &self.columns[index];
                return Err(Error::new(
                    ErrorKind::Encode,
                    format!(
                        "row {number}: a {rust} cannot be written to column \"{}\" of type {}",
                        column.name(),
                        column.type_()
                    ),
                ));
            }
            self.all_fit = row.accepts_all_values(&self.types);
        }
        let buf = self.copy.pending_mut();
        let start = buf.len();
        // Fits: checked against i16::MAX at start.
        buf.put_i16_inline(self.types.len() as i16);
        let mut writer = ParamWriter::copy_tuple(buf);
        if let Err(e) = row.encode(Some(&self.types), &mut writer) {
            buf.truncate(start);
            let column = match &e {
                pgpipe_proto::EncodeError::Parameter { index, .. }
                | pgpipe_proto::EncodeError::ValueTooLarge { index, .. } => self
                    .columns
                    .get(*index)
                    .map(|c| format!(" (column \"{}\")", c.name()))
                    .unwrap_or_default(),
                _ => String::new(),
            };
            return Err(encode_error(e).context(format!("row {number}{column}")));
        }
        self.rows += 1;
        Ok(())
    }

    fn column_names(&self) -> String {
        self.columns
            .iter()
            .map(Column::name)
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// Rows written so far.
    pub fn rows_written(&self) -> u64 {
        self.rows
    }

    /// Bytes handed to the connection so far (0 until the first 64 KiB of
    /// rows are buffered).
    pub fn bytes_sent(&self) -> u64 {
        self.copy.bytes_sent()
    }

    /// The target's columns, as the server described them.
    pub fn columns(&self) -> &[Column] {
        &self.columns
    }

    /// Ends the data and waits for the server: returns the number of rows
    /// copied.
    pub async fn finish(mut self) -> Result<u64, Error> {
        self.copy.ensure_open()?;
        copy_binary::write_trailer(self.copy.pending_mut());
        self.copy.finish().await
    }

    /// Hands the operation's span to the COPY (see [`CopyIn::set_op`]).
    pub(crate) fn set_op(&mut self, op: crate::observe::Op) {
        self.copy.set_op(op);
    }

    /// Aborts the COPY: nothing is copied (see [`CopyIn::abort`]).
    pub async fn abort(self, reason: &str) -> Result<(), Error> {
        self.copy.abort(reason).await
    }
}

impl<T: ?Sized> std::fmt::Debug for BinaryCopyWriter<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BinaryCopyWriter")
            .field("rows", &self.rows)
            .field("copy", &self.copy)
            .finish()
    }
}

/// Rows of a `COPY ... TO STDOUT (FORMAT binary)` decoded into `T` (a
/// tuple or a `#[derive(FromRow)]` struct), from
/// [`Client::copy_out_rows`](crate::Client::copy_out_rows). A [`Stream`];
/// [`next`](Self::next) is the same without a stream-extension trait.
///
/// The columns were described and checked against `T` before the COPY
/// started. Memory stays bounded like [`CopyOut`]'s, and dropping it early
/// is safe.
pub struct CopyOutRows<T: FromRow> {
    out: CopyOut,
    decoder: BinaryDecoder,
    columns: Arc<[Column]>,
    plan: T::Columns,
    ready: VecDeque<Bytes>,
    done: bool,
}

impl<T: FromRow> CopyOutRows<T> {
    /// Keeps `hold` (a pool's checkout) alive as long as this COPY.
    pub(crate) fn set_hold(&mut self, hold: Option<Box<dyn Send + Sync>>) {
        self.out.set_hold(hold);
    }

    pub(crate) async fn start(
        client: &ConnRef,
        query: &str,
        columns: Arc<[Column]>,
    ) -> Result<CopyOutRows<T>, Error> {
        let plan = T::check(&columns)?;
        let out =
            CopyOut::start(client, &format!("COPY ({query}) TO STDOUT (FORMAT binary)")).await?;
        Ok(CopyOutRows {
            out,
            decoder: BinaryDecoder::new(),
            columns,
            plan,
            ready: VecDeque::new(),
            done: false,
        })
    }

    /// Hands the operation's span to the COPY (see [`CopyOut::set_op`]).
    pub(crate) fn set_op(&mut self, op: crate::observe::Op) {
        self.out.set_op(op);
    }

    /// The next row; `None` at the end.
    pub async fn next(&mut self) -> Option<Result<T, Error>> {
        std::future::poll_fn(|cx| self.poll_row(cx)).await
    }

    /// Reads every remaining row.
    pub async fn collect(mut self) -> Result<Vec<T>, Error> {
        let mut out = Vec::new();
        while let Some(row) = self.next().await {
            out.push(row?);
        }
        Ok(out)
    }

    /// The number of rows the server copied, once the stream has ended.
    pub fn rows(&self) -> Option<u64> {
        self.out.rows()
    }

    /// The columns, as the server described them.
    pub fn columns(&self) -> &[Column] {
        &self.columns
    }

    fn poll_row(&mut self, cx: &mut Context<'_>) -> Poll<Option<Result<T, Error>>> {
        let polled = self.poll_row_untraced(cx);
        if let Poll::Ready(Some(Err(e))) = &polled {
            // A row that does not decode fails the operation too (unless
            // its span ended already, with the data).
            self.out.op_failed(e);
        }
        polled
    }

    fn poll_row_untraced(&mut self, cx: &mut Context<'_>) -> Poll<Option<Result<T, Error>>> {
        loop {
            if let Some(body) = self.ready.pop_front() {
                let decoded =
                    Row::from_body(&self.columns, body).and_then(|row| T::decode(&row, &self.plan));
                return Poll::Ready(Some(decoded));
            }
            if self.done {
                return Poll::Ready(None);
            }
            match self.out.poll_chunk(cx) {
                Poll::Pending => return Poll::Pending,
                Poll::Ready(Some(Err(e))) => {
                    self.done = true;
                    return Poll::Ready(Some(Err(e)));
                }
                Poll::Ready(Some(Ok(chunk))) => {
                    let ready = &mut self.ready;
                    if let Err(e) = self.decoder.feed(chunk, |tuple| {
                        ready.push_back(tuple);
                        Ok::<(), ()>(())
                    }) {
                        self.done = true;
                        return Poll::Ready(Some(Err(Error::protocol(e.to_string()))));
                    }
                }
                Poll::Ready(None) => {
                    self.done = true;
                    if let Err(e) = self.decoder.finish() {
                        return Poll::Ready(Some(Err(Error::protocol(e.to_string()))));
                    }
                }
            }
        }
    }
}

impl<T: FromRow> Stream for CopyOutRows<T>
where
    T::Columns: Unpin,
{
    type Item = Result<T, Error>;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        self.get_mut().poll_row(cx)
    }
}

impl<T: FromRow> std::fmt::Debug for CopyOutRows<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CopyOutRows")
            .field("columns", &self.columns)
            .field("done", &self.done)
            .finish()
    }
}

/// The columns `SELECT cols FROM table` describes: the target of a typed
/// COPY, from the connection's cache or one Describe round trip.
pub(crate) async fn describe_target(
    client: &ConnRef,
    table: &str,
    columns: &[&str],
) -> Result<Arc<[Column]>, Error> {
    let select = if columns.is_empty() {
        format!("SELECT * FROM {table}")
    } else {
        format!("SELECT {} FROM {table}", quoted_list(columns)?)
    };
    let shared = client.shared();
    if let Some(hit) = shared
        .copy_targets
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .get(&select)
    {
        return Ok(hit.clone());
    }
    let described = describe_query(client, &select).await?;
    shared
        .copy_targets
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .insert(select, described.clone());
    Ok(described)
}

/// Forgets the cached description of `table`'s columns (after a COPY into
/// it failed: the table may have changed).
pub(crate) fn forget_targets(client: &ConnRef) {
    client
        .shared()
        .copy_targets
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .clear();
}

/// The result columns of `query`, user-defined types looked up.
pub(crate) async fn describe_query(client: &ConnRef, query: &str) -> Result<Arc<[Column]>, Error> {
    let statement = client.prepare(query).await?;
    Ok(statement.shared_columns().clone())
}
