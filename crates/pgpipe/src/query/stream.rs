//! Streaming results: rows as they arrive, in bounded memory.

use std::future::poll_fn;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use futures_core::Stream;
use pgpipe_proto::backend::tag;

use crate::driver::Responses;
use crate::error::ErrorKind;
use crate::observe::Op;
use crate::query::row::{check_column_count, RowChunk};
use crate::query::row_batch::data_row_at;
use crate::query::Plan;
use crate::query::{Column, Row, RowBatch};
use crate::query::{Event, Reply};
use crate::session::Session;
use crate::Error;

/// The rows of a query, as they arrive. Returned by
/// [`Client::query_stream`](crate::Client::query_stream).
///
/// Memory stays bounded however large the result: when the consumer is
/// slower than the server, the connection driver stops reading the socket
/// once this response holds about 1 MiB unread (see
/// [`Connection::max_buffered`](crate::Connection::max_buffered)).
///
/// Implements [`Stream`]; [`RowStream::next`] is the same without needing
/// a stream-extension trait.
///
/// # User-defined column types
///
/// Rows are handed out as they arrive, so a stream cannot stop to look up a
/// column type in the catalog after its first rows. Instead, the first
/// stream of an SQL text on a connection describes the statement (one
/// Parse + Describe round trip, and the catalog look-up of any composite,
/// enum or other user-defined column type the connection has not seen)
/// before running it; later streams of the same text find the described
/// columns in the statement cache and pay nothing. With the statement
/// cache turned off, every stream of SQL text pays the describe.
///
/// # Cancel safety
///
/// Dropping the stream before its end is safe: the connection serves the
/// next query correctly. When the stream's query is the only request on
/// the connection and runs outside a transaction, the query is cancelled
/// on the server at once (later requests wait until it has ended, so the
/// cancel cannot hit them); otherwise (other requests pipelined behind it,
/// or inside a transaction, which a cancel would abort) the server
/// produces the rest of the result and the driver discards it.
pub struct RowStream {
    shared: Arc<Session>,
    responses: Responses,
    plan: Plan,
    columns: Option<Arc<[Column]>>,
    /// The chunk in hand with the columns, shared by the rows
    /// [`buffered_row`](Self::buffered_row) hands out of it; let go once
    /// the chunk is used up.
    chunk: Option<Arc<RowChunk>>,
    rows_affected: Option<u64>,
    reply: Reply,
    done: bool,
    /// The operation's span: open until the stream ends or is dropped.
    op: Op,
    rows: u64,
    /// Whether dropping the stream unfinished may cancel its query: not
    /// for a request of a transaction or a held session.
    cancel_on_drop: bool,
    /// What keeps this result's session alive (a pool's checkout): last,
    /// so it is given back after everything above has ended.
    hold: Option<Box<dyn Send + Sync>>,
}

impl RowStream {
    pub(crate) fn new(
        shared: Arc<Session>,
        responses: Responses,
        plan: Plan,
        op: Op,
        cancel_on_drop: bool,
    ) -> RowStream {
        let columns = plan.columns();
        RowStream {
            cancel_on_drop,
            shared,
            responses,
            plan,
            columns,
            chunk: None,
            rows_affected: None,
            reply: Reply::extended(),
            done: false,
            op,
            rows: 0,
            hold: None,
        }
    }

    /// Keeps `hold` (a pool's checkout) alive as long as this stream.
    pub(crate) fn set_hold(&mut self, hold: Option<Box<dyn Send + Sync>>) {
        self.hold = hold;
    }

    /// The next row, `None` at the end.
    pub async fn next(&mut self) -> Option<Result<Row, Error>> {
        poll_fn(|cx| self.poll_row(cx)).await
    }

    /// The rows that have already arrived, read in place: an iterator of
    /// borrowed [`RowRef`](crate::RowRef)s over the read buffer, `None` at the end.
    ///
    /// This is the cheapest way to read a long result: a [`Row`] from
    /// [`next`](Self::next) holds a reference-counted share of its chunk
    /// of the buffer (with the column list), which is most of what an
    /// owned row costs on a narrow result; a `RowRef` borrows both. Waits only when no row is
    /// in hand, and each batch holds at least one row. The two ways of
    /// reading can be mixed: rows a batch's iteration does not reach come
    /// next. See [`RowBatch`] for an example.
    pub async fn next_batch(&mut self) -> Option<Result<RowBatch<'_>, Error>> {
        match poll_fn(|cx| self.poll_batch(cx)).await? {
            Err(e) => Some(Err(e)),
            Ok(()) => {
                let columns = self.columns.as_ref()?;
                let (chunk, pos) = self.responses.in_place()?;
                Some(Ok(RowBatch::new(columns, chunk, pos, &mut self.rows)))
            }
        }
    }

    /// The row count of CommandComplete, once the stream has ended.
    pub fn rows_affected(&self) -> Option<u64> {
        self.rows_affected
    }

    /// The result's columns, once known (after the first poll at the latest).
    pub fn columns(&self) -> Option<&[Column]> {
        self.columns.as_deref()
    }

    fn poll_row(&mut self, cx: &mut Context<'_>) -> Poll<Option<Result<Row, Error>>> {
        if let Some(row) = self.buffered_row() {
            self.rows += 1;
            return Poll::Ready(Some(Ok(row)));
        }
        // The chunk is used up (or the next message is no row): its rows
        // keep it alive as long as they need it, the stream no longer.
        self.chunk = None;
        let polled = self.poll_inner(cx);
        match &polled {
            Poll::Ready(Some(Ok(_))) => self.rows += 1,
            Poll::Ready(Some(Err(e))) => self.record_end(Some(e)),
            Poll::Ready(None) => self.record_end(None),
            Poll::Pending => {}
        }
        polled
    }

    /// The next row if it is a DataRow already in hand: a large result
    /// arrives in chunks of hundreds of rows, and taking each through
    /// [`poll_step`](Self::poll_step) cost a round through the response
    /// reader per row. Anything else (another message, a chunk used up,
    /// an error already recorded, a row that does not fit the columns) is
    /// left where it is for the checked path, which reports a malformed
    /// row as `poll_step` does.
    ///
    /// The row is read in place, as [`next_batch`](Self::next_batch)
    /// reads, and refers to the chunk it lies in: all rows of a chunk
    /// share one [`RowChunk`] (made when the chunk's first row is taken
    /// here), so a row costs one reference count, not a `Bytes` share and
    /// an `Arc` of the columns.
    #[inline]
    fn buffered_row(&mut self) -> Option<Row> {
        if self.done || self.reply.error().is_some() {
            return None;
        }
        let columns = self.columns.as_ref()?;
        let (bytes, pos) = self.responses.in_place()?;
        let start = *pos;
        let body = bytes.get(start..).and_then(data_row_at)?;
        check_column_count(body, columns.len()).ok()?;
        let end = start + 5 + body.len();
        *pos = end;
        if !matches!(&self.chunk, Some(c) if c.is(bytes, columns)) {
            self.chunk = Some(Arc::new(RowChunk::new(columns.clone(), bytes.clone())));
        }
        let chunk = self.chunk.clone()?;
        Some(Row::in_chunk(chunk, start + 5, end))
    }

    /// Closes the span: the stream has ended, with `failed` or not.
    fn record_end(&mut self, failed: Option<&Error>) {
        self.op.record_times(self.responses.slot());
        match failed {
            Some(e) => self.op.end(Err(e)),
            None => self.op.end(Ok(self.rows)),
        }
    }

    fn poll_inner(&mut self, cx: &mut Context<'_>) -> Poll<Option<Result<Row, Error>>> {
        loop {
            match self.poll_step(cx) {
                Poll::Pending => return Poll::Pending,
                Poll::Ready(Step::Continue) => {}
                Poll::Ready(Step::Row(row)) => return Poll::Ready(Some(Ok(row))),
                Poll::Ready(Step::End(end)) => return Poll::Ready(end.map(Err)),
            }
        }
    }

    /// Handles one message of the response.
    fn poll_step(&mut self, cx: &mut Context<'_>) -> Poll<Step> {
        if self.done {
            return Poll::Ready(Step::End(None));
        }
        let (tag, body) = match self.responses.poll_next_raw(cx) {
            Poll::Pending => return Poll::Pending,
            Poll::Ready(Ok(m)) => m,
            Poll::Ready(Err(e)) => {
                self.done = true;
                return Poll::Ready(Step::End(Some(self.reply.cut_short(e))));
            }
        };
        if tag == tag::READY_FOR_QUERY {
            self.done = true;
            return Poll::Ready(Step::End(self.finish().err()));
        }
        if self.reply.error().is_some() {
            // Only ReadyForQuery matters after an error.
            return Poll::Ready(Step::Continue);
        }
        if tag == tag::DATA_ROW {
            match self.columns.as_ref().map(|cols| Row::from_body(cols, body)) {
                Some(Ok(row)) => return Poll::Ready(Step::Row(row)),
                Some(Err(e)) => self.reply.fail(e),
                None => self
                    .reply
                    .fail(Error::protocol("DataRow before RowDescription")),
            }
            return Poll::Ready(Step::Continue);
        }
        match self.reply.event(tag, body) {
            Event::Columns(desc) => {
                let cols: Arc<[Column]> = desc
                    .fields()
                    .map(|f| Column::from_field(&f, &self.shared.types))
                    .collect();
                if let Plan::Cached {
                    name,
                    columns: None,
                    ..
                } = &self.plan
                {
                    self.shared.with_cache(|c| c.set_columns(name, &cols));
                }
                self.columns = Some(cols);
            }
            Event::NoRows => self.columns = Some(Arc::from(Vec::new())),
            Event::Complete { rows, .. } => self.rows_affected = Some(rows),
            Event::Step | Event::Empty | Event::Suspended | Event::Failed => {}
            Event::CopyIn => {
                self.reply
                    .fail(super::refuse::copy_in_reached_the_server(&self.shared));
            }
            // Both are handled above, before the reader.
            Event::Row(_) | Event::Ready => {}
            Event::CopyOut(_) | Event::CopyData | Event::CopyDone => {
                self.reply.fail(Error::new(
                    ErrorKind::Unsupported,
                    "COPY TO STDOUT is not supported through query methods yet",
                ));
            }
            Event::Params(_) => self.reply.fail(Error::protocol(
                "unexpected ParameterDescription in a query response",
            )),
            Event::Other(other) => self.reply.unexpected(&other, "in a query response"),
        }
        Poll::Ready(Step::Continue)
    }

    /// Ready when the stream's next message is a DataRow that can be read
    /// in place, or at the end (`None`) or an error. Messages before it
    /// are handled as [`next`](Self::next) handles them.
    fn poll_batch(&mut self, cx: &mut Context<'_>) -> Poll<Option<Result<(), Error>>> {
        loop {
            if !self.done && self.reply.error().is_none() {
                if let Some(cols) = &self.columns {
                    match self.responses.poll_fill(cx) {
                        Poll::Pending => return Poll::Pending,
                        // The ordinary step below reports it.
                        Poll::Ready(Err(_)) => {}
                        Poll::Ready(Ok(())) => {
                            if let Some((chunk, pos)) = self.responses.in_place() {
                                let fits = chunk
                                    .get(*pos..)
                                    .and_then(data_row_at)
                                    .is_some_and(|b| check_column_count(b, cols.len()).is_ok());
                                if fits {
                                    return Poll::Ready(Some(Ok(())));
                                }
                            }
                        }
                    }
                }
            }
            let step = match self.poll_step(cx) {
                Poll::Pending => return Poll::Pending,
                Poll::Ready(step) => step,
            };
            let end = match step {
                Step::Continue => continue,
                Step::End(end) => end,
                // Only when a malformed server sends a DataRow among a
                // BEGIN's answers: the batch cannot hold an owned row.
                Step::Row(_) => {
                    self.done = true;
                    Some(self.shared.abort(Error::protocol(
                        "DataRow in the answers to the BEGIN sent in front of the query",
                    )))
                }
            };
            self.record_end(end.as_ref());
            return Poll::Ready(end.map(Err));
        }
    }

    fn finish(&mut self) -> Result<(), Error> {
        let Some(e) = self.reply.take_error() else {
            return Ok(());
        };
        if let Plan::Cached { name, .. } = &self.plan {
            // Stale or unparsable: the next call starts afresh (a stream
            // cannot retry transparently once rows may have been seen).
            self.shared.with_cache(|c| c.remove(name));
        }
        if e.kind() == ErrorKind::Protocol {
            return Err(self.shared.abort(e));
        }
        Err(e)
    }
}

/// What one message of the response did.
enum Step {
    /// A row for the caller.
    Row(Row),
    /// Nothing for the caller yet.
    Continue,
    /// The stream's end: `None`, or its error.
    End(Option<Error>),
}

impl Drop for RowStream {
    fn drop(&mut self) {
        // Dropped half-read: the span closes now, with the rows read so far.
        self.op.end(Ok(self.rows));
        if !self.done && self.cancel_on_drop {
            crate::query::cancel_abandoned(&self.shared, self.responses.slot());
        }
        #[cfg(feature = "metrics")]
        crate::observe::metrics::peak_buffered(self.shared.peak_buffered());
    }
}

impl Stream for RowStream {
    type Item = Result<Row, Error>;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        self.get_mut().poll_row(cx)
    }
}

impl std::fmt::Debug for RowStream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RowStream")
            .field("columns", &self.columns)
            .field("done", &self.done)
            .finish()
    }
}
