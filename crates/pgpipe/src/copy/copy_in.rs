//! [`CopyIn`]: the writer of a `COPY ... FROM STDIN`.
//!
//! On the wire: Parse + Bind + Execute + Flush of the COPY statement (no
//! Sync: in copy-in mode the server ignores Sync, and a later one must end
//! the request whatever happens), then CopyData messages, then CopyDone
//! (or CopyFail) followed by the one Sync. Whether the server entered
//! copy-in mode, refused the statement, or failed in the middle, that Sync
//! produces exactly one ReadyForQuery, so the connection's FIFO stays
//! aligned.
//!
//! While the COPY runs it has the connection to itself (see
//! [`Shared::reserve_plain`](crate::driver::Shared::reserve_plain)): requests from other handles are queued
//! behind it and go out after CopyDone/CopyFail, never in the middle of the
//! data.

use std::future::poll_fn;
use std::sync::Arc;
use std::task::{Context, Poll};

use pgpipe_proto::backend::tag;
use pgpipe_proto::frontend;

use super::framed::Framed;
use crate::driver::{Request, Responses, SessionId, NO_SESSION};
use crate::error::ErrorKind;
use crate::observe::Op;
use crate::query::{encode_error, ConnRef, Event, Reply};
use crate::session::Session;
use crate::Error;

mod api;

/// Data is sent in CopyData messages of at most this many bytes: large
/// enough to amortise the 5-byte header, small enough that a row larger
/// than it is simply split (the server reassembles the stream).
pub(crate) const COPY_CHUNK: usize = 64 * 1024;

/// The most bytes a writer queues in the connection's write buffer ahead
/// of the socket; beyond it, writing waits for the driver (backpressure).
/// Zero: the writer hands a message over only into an empty write buffer,
/// which is then a buffer swap rather than a copy, while the next message
/// is gathered as the driver writes this one (double buffering). Measured
/// against 256 KiB of write-ahead: a few percent less client CPU per row
/// and no loss of throughput, since the server is the bottleneck.
const WRITE_AHEAD: usize = 0;

/// How the request ends: with CopyDone (commit the data) or CopyFail.
enum End<'a> {
    Done,
    Fail(&'a str),
}

#[derive(Debug)]
enum State {
    /// The server is in copy-in mode, taking data.
    Open,
    /// The server reported an error; the end (Sync) is already sent. The
    /// error is handed out once, then described.
    Failed(Option<Error>, String),
    /// CopyDone or CopyFail is sent.
    Ended,
}

/// The writer of a `COPY ... FROM STDIN`, from
/// [`Client::copy_in`](crate::Client::copy_in).
///
/// Write the data with [`send`](Self::send), [`copy_from`](Self::copy_from)
/// (any [`AsyncRead`](tokio::io::AsyncRead)) or as a
/// [`futures_sink::Sink<Bytes>`], in the format the statement names
/// (text, CSV or binary: pgpipe passes it through unparsed); then
/// [`finish`](Self::finish) returns the number of rows copied. Data is
/// buffered into CopyData messages of 64 KiB and at most 256 KiB is queued
/// ahead of the socket, so a fast producer waits for the network instead
/// of filling memory.
///
/// An error the server reports in the middle (a bad row) is noticed while
/// writing: the next `send` returns it, with the server's CONTEXT (which
/// names the line) kept, and nothing more is sent.
///
/// **Dropping it unfinished aborts the COPY** (CopyFail is queued at once,
/// no await needed): nothing is copied and the connection stays usable.
///
/// While it is open the connection belongs to this COPY: other clones of
/// the client wait and run after it.
///
/// ```no_run
/// # async fn f(client: &pgpipe::Client) -> Result<(), pgpipe::Error> {
/// let mut copy = client.copy_in("COPY mailbox (uid, name) FROM STDIN (FORMAT csv)").await?;
/// copy.send("1,inbox\n2,sent\n").await?;
/// let rows = copy.finish().await?;
/// assert_eq!(rows, 2);
/// # Ok(()) }
/// ```
pub struct CopyIn {
    shared: Arc<Session>,
    responses: Responses,
    /// The reservation this COPY made and must end; `None` inside a
    /// transaction (whose session it runs on).
    own_session: Option<SessionId>,
    /// Data not yet handed to the connection.
    pending: Framed,
    state: State,
    /// Data is handed over once this much is gathered: the chunk size, or
    /// less if the encoder's message limit is lower.
    chunk: usize,
    /// Largest CopyData payload sent whole: a chunk plus the row that
    /// crossed its end, within the encoder's message limit. More (a row
    /// larger than a chunk) is split into messages of one chunk.
    max_whole: usize,
    bytes_sent: u64,
    /// The row count of the finished COPY (for the `Sink` form).
    rows: Option<u64>,
    /// What the answer after CopyDone showed so far (kept across polls).
    end_rows: u64,
    end_error: Option<Error>,
    /// The operation's span: open until the COPY finishes, is aborted or
    /// is dropped.
    op: Op,
    /// What keeps this result's session alive (a pool's checkout): last,
    /// so it is given back after everything above has ended.
    hold: Option<Box<dyn Send + Sync>>,
}

impl CopyIn {
    /// Keeps `hold` (a pool's checkout) alive as long as this COPY.
    pub(crate) fn set_hold(&mut self, hold: Option<Box<dyn Send + Sync>>) {
        self.hold = hold;
    }

    /// Sends the COPY statement on `client`'s connection and waits until
    /// the server is ready for data.
    pub(crate) async fn start(client: &ConnRef, sql: &str) -> Result<CopyIn, Error> {
        let shared = client.shared().clone();
        let (session, own_session) = if client.session() != NO_SESSION
            && shared.holds(client.session())
        {
            (client.session(), None)
        } else {
            let reserving = shared.reserve_plain();
            let session = match client.timeout() {
                None => reserving.await?,
                Some(limit) => tokio::time::timeout(limit, reserving).await.map_err(|_| {
                    Error::new(
                        ErrorKind::Timeout,
                        format!(
                            "waited {limit:?} for a transaction or COPY on this connection to end"
                        ),
                    )
                })??,
            };
            (session, Some(session))
        };
        // Ends the reservation if sending fails or this future is dropped
        // before the writer exists (the writer's own Drop takes over).
        let mut release = ReleaseOnDrop {
            shared: &shared,
            session: own_session,
        };
        let responses = shared
            .send(session, Request::Statement, |enc, buf| {
                enc.parse("", sql, &[], buf).map_err(encode_error)?;
                enc.bind("", "", &[], 0, |_| Ok(()), &[], buf)
                    .map_err(encode_error)?;
                enc.execute("", 0, buf).map_err(encode_error)?;
                frontend::flush(buf);
                Ok(())
            })
            .await?;
        release.session = None;
        drop(release);
        let max_data = shared.encoder.max_message_len().saturating_sub(4);
        let chunk = COPY_CHUNK.min(max_data).max(1);
        let max_whole = (2 * COPY_CHUNK).min(max_data).max(1);
        let mut writer = CopyIn {
            shared,
            responses,
            own_session,
            pending: Framed::new(),
            state: State::Open,
            chunk,
            max_whole,
            bytes_sent: 0,
            rows: None,
            end_rows: 0,
            end_error: None,
            op: Op::none(),
            hold: None,
        };
        writer.wait_ready().await?;
        Ok(writer)
    }

    /// Reads the server's answer to the COPY statement: CopyInResponse,
    /// or why there is none.
    async fn wait_ready(&mut self) -> Result<(), Error> {
        let (tag, body) = loop {
            match self.responses.next_raw().await {
                Ok((tag::PARSE_COMPLETE | tag::BIND_COMPLETE, _)) => {}
                Ok(m) => break m,
                Err(e) => {
                    self.state = State::Ended;
                    return Err(e);
                }
            }
        };
        let mut reply = Reply::without_bind();
        let error = match reply.event(tag, body) {
            Event::CopyIn => return Ok(()),
            Event::Failed => reply
                .take_error()
                .unwrap_or_else(|| Error::protocol("a failed COPY reply without its error")),
            Event::CopyOut(_) => Error::new(
                ErrorKind::InvalidUse,
                "copy_in needs COPY ... FROM STDIN; this statement is a COPY TO STDOUT (use copy_out)",
            ),
            _ => Error::new(
                ErrorKind::InvalidUse,
                "copy_in needs a COPY ... FROM STDIN statement; the server ran something else",
            ),
        };
        // Not in copy mode (or the statement failed): the Sync still ends
        // the request; read its answer so the error is complete.
        self.end(End::Fail("pgpipe: not a COPY FROM STDIN"))?;
        let _ = self.read_to_end().await;
        Err(self.shared.request_failed(error))
    }

    /// Hands the operation's span to this COPY: it stays open until the
    /// COPY ends.
    pub(crate) fn set_op(&mut self, op: Op) {
        self.op = op;
    }

    /// Buffered data, as an error if the COPY is over.
    #[inline]
    fn check_open(&mut self) -> Result<(), Error> {
        match &mut self.state {
            State::Open => Ok(()),
            State::Failed(error, message) => Err(error.take().unwrap_or_else(|| {
                Error::new(
                    ErrorKind::InvalidUse,
                    format!("the COPY already failed: {message}"),
                )
            })),
            State::Ended => Err(Error::new(
                ErrorKind::InvalidUse,
                "the COPY is already finished",
            )),
        }
    }

    /// Notices an error the server sent while we write. Only ErrorResponse
    /// can come in copy-in mode (notices go through the driver).
    fn poll_server(&mut self, cx: &mut Context<'_>) -> Result<(), Error> {
        let (tag, body) = match self.responses.poll_next_raw(cx) {
            Poll::Pending => return Ok(()),
            Poll::Ready(Ok(m)) => m,
            Poll::Ready(Err(e)) => {
                self.state = State::Ended;
                return Err(e);
            }
        };
        let mut reply = Reply::without_bind();
        match reply.event(tag, body) {
            Event::Failed => {}
            other => reply.unexpected_event(other, "during COPY FROM STDIN"),
        }
        let error = self.shared.request_failed(
            reply
                .take_error()
                .unwrap_or_else(|| Error::protocol("a failed COPY reply without its error")),
        );
        // Stop here: the Sync makes the server answer, and the connection
        // goes back to the others.
        self.pending.reset();
        let _ = self.end(End::Fail("pgpipe: the server reported an error"));
        let message = error.to_string();
        self.state = State::Failed(None, message);
        Err(error)
    }

    /// Frames pending data into CopyData messages while the write buffer
    /// has room; with `all`, until nothing is pending (else a partial
    /// chunk may wait for more data).
    fn poll_drain(&mut self, cx: &mut Context<'_>, all: bool) -> Poll<Result<(), Error>> {
        let drained = self.poll_drain_untraced(cx, all);
        if let Poll::Ready(Err(e)) = &drained {
            // The first failure ends the span; later calls on a failed
            // COPY repeat it and change nothing.
            self.op.end(Err(e));
        }
        drained
    }

    fn poll_drain_untraced(&mut self, cx: &mut Context<'_>, all: bool) -> Poll<Result<(), Error>> {
        if let Err(e) = self.check_open() {
            return Poll::Ready(Err(e));
        }
        if let Err(e) = self.poll_server(cx) {
            return Poll::Ready(Err(e));
        }
        while self.pending.data_len() >= self.chunk || (all && self.pending.data_len() > 0) {
            match self.shared.poll_write_room(cx, WRITE_AHEAD) {
                Poll::Pending => return Poll::Pending,
                Poll::Ready(Err(e)) => {
                    self.state = State::Ended;
                    return Poll::Ready(Err(e));
                }
                Poll::Ready(Ok(())) => {}
            }
            let n = self.pending.data_len();
            if n <= self.max_whole {
                // The usual case: everything gathered is one message, and
                // its buffer is handed over as it is.
                self.shared.send_message(self.pending.frame_all())?;
                self.pending.reset();
                self.bytes_sent += n as u64;
            } else {
                // A row larger than a chunk: one chunk per message.
                let piece = self.pending.data(self.chunk);
                self.shared
                    .send_unrouted(|enc, buf| enc.copy_data(piece, buf).map_err(encode_error))?;
                self.pending.consume(self.chunk);
                self.bytes_sent += self.chunk as u64;
            }
        }
        Poll::Ready(Ok(()))
    }

    fn poll_finish(&mut self, cx: &mut Context<'_>) -> Poll<Result<u64, Error>> {
        let finished = self.poll_finish_untraced(cx);
        if let Poll::Ready(result) = &finished {
            self.op.end(result.as_ref().copied());
        }
        finished
    }

    fn poll_finish_untraced(&mut self, cx: &mut Context<'_>) -> Poll<Result<u64, Error>> {
        if let Some(rows) = self.rows {
            return Poll::Ready(Ok(rows));
        }
        if matches!(self.state, State::Open) {
            match self.poll_drain(cx, true) {
                Poll::Pending => return Poll::Pending,
                Poll::Ready(Err(e)) => return Poll::Ready(Err(e)),
                Poll::Ready(Ok(())) => {}
            }
            self.end(End::Done)?;
        } else if let State::Failed(..) = self.state {
            return Poll::Ready(Err(self.check_open().unwrap_err()));
        }
        let rows = match self.poll_read_to_end(cx) {
            Poll::Pending => return Poll::Pending,
            Poll::Ready(r) => r?,
        };
        self.rows = Some(rows);
        Poll::Ready(Ok(rows))
    }

    /// Queues CopyDone or CopyFail, then the Sync, and lets the requests
    /// that waited behind this COPY go.
    fn end(&mut self, how: End<'_>) -> Result<(), Error> {
        if matches!(self.state, State::Ended | State::Failed(..)) {
            return Ok(());
        }
        self.state = State::Ended;
        let sent = self.shared.send_unrouted(|enc, buf| {
            match how {
                End::Done => frontend::copy_done(buf),
                End::Fail(reason) => enc.copy_fail(reason, buf).map_err(encode_error)?,
            }
            frontend::sync(buf);
            Ok(())
        });
        if let Some(session) = self.own_session.take() {
            self.shared.release(session);
        }
        sent
    }

    async fn read_to_end(&mut self) -> Result<u64, Error> {
        poll_fn(|cx| self.poll_read_to_end(cx)).await
    }

    /// Reads the answer after CopyDone/CopyFail: the row count, or the
    /// first error.
    fn poll_read_to_end(&mut self, cx: &mut Context<'_>) -> Poll<Result<u64, Error>> {
        let error = &mut self.end_error;
        loop {
            let (tag, body) = match self.responses.poll_next_raw(cx) {
                Poll::Pending => return Poll::Pending,
                Poll::Ready(Ok(m)) => m,
                Poll::Ready(Err(e)) => return Poll::Ready(Err(e)),
            };
            let mut reply = Reply::without_bind();
            match reply.event(tag, body) {
                Event::Ready => break,
                Event::Complete { rows, .. } => self.end_rows = rows,
                Event::Failed => {
                    if let Some(e) = reply.take_error() {
                        error.get_or_insert(e);
                    }
                }
                // After a refused statement, whatever it produced
                // (rows of a SELECT, a COPY TO's data) is skipped.
                _ => {}
            }
        }
        Poll::Ready(match self.end_error.take() {
            Some(e) => Err(self.shared.request_failed(e)),
            None => Ok(self.end_rows),
        })
    }
}

impl Drop for CopyIn {
    fn drop(&mut self) {
        // Unfinished: abort at once, so the server rolls the COPY back and
        // the connection goes on (the driver discards the answer).
        let _ = self.end(End::Fail("pgpipe: the COPY writer was dropped unfinished"));
        // Nothing of an unfinished COPY is kept.
        self.op.end(Ok(0));
    }
}

/// Ends a reservation if the COPY never got going.
struct ReleaseOnDrop<'a> {
    shared: &'a Session,
    session: Option<SessionId>,
}

impl Drop for ReleaseOnDrop<'_> {
    fn drop(&mut self) {
        if let Some(session) = self.session {
            self.shared.release(session);
        }
    }
}
