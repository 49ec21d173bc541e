//! Streaming results: rows as they arrive, in bounded memory.

use std::future::poll_fn;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use futures_core::Stream;
use pgpipe_proto::backend::{tag, Message};

use crate::driver::Responses;
use crate::driver::Shared;
use crate::error::ErrorKind;
use crate::observe::Op;
use crate::query::Plan;
use crate::query::{Column, Row};
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
/// column type in the catalog. Composite, enum and other user-defined column
/// types are described when this connection already knows them (from
/// [`Client::register_type`](crate::Client::register_type) or an earlier
/// query); otherwise the column carries the bare OID and typed reads of it
/// are refused with an error that says so.
///
/// # Cancel safety
///
/// Dropping the stream before its end is safe: the driver discards the
/// rest of the result and the connection serves the next query correctly.
/// (The server still produces the whole result; for huge results that you
/// may abandon, prefer a cursor or a `LIMIT`.)
pub struct RowStream {
    shared: Arc<Shared>,
    responses: Responses,
    plan: Plan,
    columns: Option<Arc<[Column]>>,
    rows_affected: Option<u64>,
    error: Option<Error>,
    done: bool,
    /// The operation's span: open until the stream ends or is dropped.
    op: Op,
    rows: u64,
}

impl RowStream {
    pub(crate) fn new(shared: Arc<Shared>, responses: Responses, plan: Plan, op: Op) -> RowStream {
        let columns = plan.columns();
        RowStream {
            shared,
            responses,
            plan,
            columns,
            rows_affected: None,
            error: None,
            done: false,
            op,
            rows: 0,
        }
    }

    /// The next row, `None` at the end.
    pub async fn next(&mut self) -> Option<Result<Row, Error>> {
        poll_fn(|cx| self.poll_row(cx)).await
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
        let polled = self.poll_inner(cx);
        match &polled {
            Poll::Ready(Some(Ok(_))) => self.rows += 1,
            Poll::Ready(Some(Err(e))) => {
                self.op.record_times(self.responses.slot());
                self.op.end(Err(e))
            }
            Poll::Ready(None) => {
                self.op.record_times(self.responses.slot());
                self.op.end(Ok(self.rows))
            }
            Poll::Pending => {}
        }
        polled
    }

    fn poll_inner(&mut self, cx: &mut Context<'_>) -> Poll<Option<Result<Row, Error>>> {
        if self.done {
            return Poll::Ready(None);
        }
        loop {
            let (tag, body) = match self.responses.poll_next_raw(cx) {
                Poll::Pending => return Poll::Pending,
                Poll::Ready(Ok(m)) => m,
                Poll::Ready(Err(e)) => {
                    self.done = true;
                    return Poll::Ready(Some(Err(e)));
                }
            };
            if tag == tag::READY_FOR_QUERY {
                self.done = true;
                return Poll::Ready(self.finish().err().map(Err));
            }
            if self.error.is_some() {
                // Only ReadyForQuery matters after an error.
                continue;
            }
            if tag == tag::DATA_ROW {
                match self.columns.as_ref().map(|cols| Row::from_body(cols, body)) {
                    Some(Ok(row)) => return Poll::Ready(Some(Ok(row))),
                    Some(Err(e)) => self.error = Some(e),
                    None => self.error = Some(Error::protocol("DataRow before RowDescription")),
                }
                continue;
            }
            match Message::parse(tag, body) {
                Ok(Message::RowDescription(desc)) => {
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
                Ok(Message::NoData) => self.columns = Some(Arc::from(Vec::new())),
                Ok(Message::CommandComplete(cc)) => {
                    self.rows_affected = Some(cc.rows().unwrap_or(0))
                }
                Ok(Message::ParseComplete)
                | Ok(Message::BindComplete)
                | Ok(Message::CloseComplete)
                | Ok(Message::EmptyQueryResponse)
                | Ok(Message::PortalSuspended) => {}
                Ok(Message::CopyInResponse(_)) => {
                    self.error = Some(crate::copy::copy_in_reached_the_server(&self.shared));
                }
                Ok(Message::ErrorResponse(fields)) => {
                    self.error = Some(Error::from_server(&fields));
                }
                Ok(other) => self.error = Some(Error::unexpected(&other, "in a query response")),
                Err(e) => self.error = Some(Error::protocol(e.to_string())),
            }
        }
    }

    fn finish(&mut self) -> Result<(), Error> {
        let Some(e) = self.error.take() else {
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

impl Drop for RowStream {
    fn drop(&mut self) {
        // Dropped half-read: the span closes now, with the rows read so far.
        self.op.end(Ok(self.rows));
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
