//! [`CopyOut`]: the data of a `COPY ... TO STDOUT`, as a stream of chunks
//! or an [`AsyncRead`].
//!
//! On the wire: Parse + Bind + Execute, then CopyFail + Sync at once. The
//! server ignores CopyFail outside copy-in mode, so for a COPY TO it is
//! harmless; but if the statement turns out to be a COPY FROM STDIN, it
//! ends that at once instead of leaving the server waiting for data. Either
//! way the one Sync yields exactly one ReadyForQuery. No reservation is
//! needed: the response is an ordinary pipelined one, and the bounded
//! reply hand-off gives backpressure like [`RowStream`](crate::RowStream).

use std::future::poll_fn;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use bytes::{Buf, Bytes};
use futures_core::Stream;
use pgpipe_proto::backend::tag;
use pgpipe_proto::frontend;
use tokio::io::{AsyncRead, ReadBuf};

use crate::driver::{Request, Responses};
use crate::error::ErrorKind;
use crate::observe::Op;
use crate::query::{encode_error, ConnRef, Event, Reply};
use crate::session::Session;
use crate::Error;

/// The output of a `COPY ... TO STDOUT`, from
/// [`Client::copy_out`](crate::Client::copy_out): a [`Stream`] of
/// `Bytes` chunks as the server sends them (for text and CSV, one row per
/// chunk), in whatever format the statement names.
///
/// Memory stays bounded: when the consumer is slow the driver stops
/// reading the socket (see [`Connection::max_buffered`](crate::Connection::max_buffered)).
/// [`into_reader`](Self::into_reader) turns it into an [`AsyncRead`].
///
/// # Cancel safety
///
/// Dropping it before the end is safe and the connection serves the next
/// request correctly. When this COPY is alone on the connection (nothing
/// queued behind it, not inside a transaction), the drop sends the server
/// a cancel request, so a half-read export of gigabytes stops instead of
/// streaming to its end; the driver discards what is still on its way
/// (and the server's "canceling statement" error) up to ReadyForQuery, and
/// holds other requests back until then so that the cancel cannot hit
/// them. Otherwise the driver drains the rest of the data.
///
/// ```no_run
/// # async fn f(client: &pgpipe::Client) -> Result<(), pgpipe::Error> {
/// let mut out = client.copy_out("COPY mailbox TO STDOUT (FORMAT csv, HEADER)").await?;
/// while let Some(chunk) = out.next().await {
///     let chunk = chunk?;
///     // write it somewhere
/// }
/// # Ok(()) }
/// ```
pub struct CopyOut {
    shared: Arc<Session>,
    responses: Responses,
    error: Option<Error>,
    rows: Option<u64>,
    /// Overall format from CopyOutResponse: 0 text, 1 binary.
    format: Option<i8>,
    done: bool,
    /// The operation's span: open until the data ends or the stream is
    /// dropped.
    op: Op,
    /// The first chunk, read by `start` to know the server is streaming.
    first: Option<Bytes>,
    /// Not started inside a transaction: a drop may cancel it (a cancel
    /// would abort the caller's transaction).
    cancel_on_drop: bool,
    /// What keeps this result's session alive (a pool's checkout): last,
    /// so it is given back after everything above has ended.
    hold: Option<Box<dyn Send + Sync>>,
}

impl CopyOut {
    /// Keeps `hold` (a pool's checkout) alive as long as this COPY.
    pub(crate) fn set_hold(&mut self, hold: Option<Box<dyn Send + Sync>>) {
        self.hold = hold;
    }

    pub(crate) async fn start(client: &ConnRef, sql: &str) -> Result<CopyOut, Error> {
        let shared = client.shared().clone();
        let responses = shared
            .send(client.session(), Request::Statement, |enc, buf| {
                enc.parse("", sql, &[], buf).map_err(encode_error)?;
                enc.bind("", "", &[], 0, |_| Ok(()), &[], buf)
                    .map_err(encode_error)?;
                enc.execute("", 0, buf).map_err(encode_error)?;
                enc.copy_fail("pgpipe: copy_out needs COPY ... TO STDOUT", buf)
                    .map_err(encode_error)?;
                frontend::sync(buf);
                Ok(())
            })
            .await?;
        let mut out = CopyOut {
            shared,
            responses,
            error: None,
            rows: None,
            format: None,
            done: false,
            op: Op::none(),
            cancel_on_drop: client.session() == crate::driver::NO_SESSION,
            first: None,
            hold: None,
        };
        // Wait for the server to start streaming (CopyOutResponse and the
        // first data), so that its errors are this call's and a drop knows
        // the COPY is running on the server (see `Drop`).
        match out.next().await {
            Some(Ok(chunk)) => out.first = Some(chunk),
            Some(Err(e)) => return Err(e),
            None => {}
        }
        Ok(out)
    }

    /// Hands the operation's span to this COPY: it stays open until the
    /// data ends or the stream is dropped.
    pub(crate) fn set_op(&mut self, op: Op) {
        self.op = op;
    }

    /// Ends the span with `e` (an error found above this stream, such as a
    /// row that does not decode), unless it has ended already.
    pub(crate) fn op_failed(&mut self, e: &Error) {
        self.op.end(Err(e));
    }

    /// The next chunk of data; `None` at the end.
    pub async fn next(&mut self) -> Option<Result<Bytes, Error>> {
        poll_fn(|cx| self.poll_chunk(cx)).await
    }

    /// The number of rows copied, once the stream has ended.
    pub fn rows(&self) -> Option<u64> {
        self.rows
    }

    /// Whether the data is in the binary format (known after the first
    /// chunk).
    pub fn is_binary(&self) -> Option<bool> {
        self.format.map(|f| f == 1)
    }

    /// An [`AsyncRead`] over the data (errors become `std::io::Error`s
    /// wrapping the [`Error`]).
    pub fn into_reader(self) -> CopyOutReader {
        CopyOutReader {
            stream: self,
            current: Bytes::new(),
        }
    }

    pub(crate) fn poll_chunk(
        &mut self,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Bytes, Error>>> {
        let polled = self.poll_chunk_untraced(cx);
        match &polled {
            Poll::Ready(None) => self.op.end(Ok(self.rows.unwrap_or(0))),
            Poll::Ready(Some(Err(e))) => self.op.end(Err(e)),
            _ => {}
        }
        polled
    }

    fn poll_chunk_untraced(&mut self, cx: &mut Context<'_>) -> Poll<Option<Result<Bytes, Error>>> {
        if let Some(first) = self.first.take() {
            return Poll::Ready(Some(Ok(first)));
        }
        if self.done {
            return Poll::Ready(None);
        }
        // The run of CopyData already in hand, without a round through
        // the response reader each: a COPY's rows arrive hundreds to a read.
        if self.error.is_none() {
            if let Some(body) = self.responses.next_buffered(tag::COPY_DATA) {
                return Poll::Ready(Some(Ok(body)));
            }
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
            match tag {
                tag::COPY_DATA if self.error.is_none() => return Poll::Ready(Some(Ok(body))),
                tag::READY_FOR_QUERY => {
                    self.done = true;
                    return Poll::Ready(
                        self.error
                            .take()
                            .map(|e| Err(self.shared.request_failed(e))),
                    );
                }
                _ if self.error.is_some() => {}
                _ => {
                    let mut reply = Reply::without_bind();
                    match reply.event(tag, body) {
                        Event::Complete { rows, .. } => self.rows = Some(rows),
                        Event::CopyOut(r) => self.format = Some(r.format()),
                        Event::CopyDone | Event::Step | Event::CopyIn => {}
                        Event::Failed => {
                            self.error = reply.take_error().map(|e| {
                                if self.format.is_none() && is_our_copy_fail(&e) {
                                    Error::new(
                                        ErrorKind::InvalidUse,
                                        "copy_out needs COPY ... TO STDOUT; this statement is a \
                                         COPY FROM STDIN (use copy_in)",
                                    )
                                } else {
                                    e
                                }
                            });
                        }
                        Event::Columns(_) | Event::Row(_) | Event::NoRows => {
                            self.error = Some(Error::new(
                                ErrorKind::InvalidUse,
                                "copy_out needs a COPY ... TO STDOUT statement; the server ran \
                                 something else",
                            ));
                        }
                        other => {
                            reply.unexpected_event(other, "during COPY TO STDOUT");
                            self.error = reply.take_error();
                        }
                    }
                }
            }
        }
    }
}

impl Drop for CopyOut {
    fn drop(&mut self) {
        // Dropped before the end: the span closes now (the server's row
        // count is known only at the end).
        self.op.end(Ok(self.rows.unwrap_or(0)));
        // `format` is set: the server answered CopyOutResponse, so it is
        // running this COPY (or has just finished it).
        if self.done || !self.cancel_on_drop || self.format.is_none() {
            return;
        }
        // Race-free only when this COPY is the one request queued or in
        // flight, in an implicit transaction (see `query::cancel_abandoned`);
        // otherwise the driver drains the rest. Decided now, before the
        // caller can queue anything else. The Responses are dropped right
        // after this (abandoned: the driver discards the data, and the 57014
        // error the cancel causes, up to ReadyForQuery).
        crate::query::cancel_abandoned(&self.shared, self.responses.slot());
    }
}

/// Whether an error is the server's answer to the CopyFail we sent.
fn is_our_copy_fail(e: &Error) -> bool {
    e.as_db_error()
        .is_some_and(|db| db.message().contains("pgpipe: copy_out needs"))
}

impl Stream for CopyOut {
    type Item = Result<Bytes, Error>;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        self.get_mut().poll_chunk(cx)
    }
}

impl std::fmt::Debug for CopyOut {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CopyOut")
            .field("rows", &self.rows)
            .field("done", &self.done)
            .finish()
    }
}

/// [`CopyOut`] as an [`AsyncRead`], from [`CopyOut::into_reader`].
/// Dropping it early is safe, like dropping the stream.
#[derive(Debug)]
pub struct CopyOutReader {
    stream: CopyOut,
    current: Bytes,
}

impl CopyOutReader {
    /// The number of rows copied, once all data has been read.
    pub fn rows(&self) -> Option<u64> {
        self.stream.rows()
    }
}

impl AsyncRead for CopyOutReader {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let this = self.get_mut();
        while this.current.is_empty() {
            match this.stream.poll_chunk(cx) {
                Poll::Pending => return Poll::Pending,
                Poll::Ready(None) => return Poll::Ready(Ok(())),
                Poll::Ready(Some(Err(e))) => return Poll::Ready(Err(std::io::Error::other(e))),
                Poll::Ready(Some(Ok(chunk))) => this.current = chunk,
            }
        }
        let n = this.current.len().min(buf.remaining());
        buf.put_slice(&this.current[..n]);
        this.current.advance(n);
        Poll::Ready(Ok(()))
    }
}
