//! The connection driver: the one task that owns the socket.
//!
//! Each poll it (1) takes every request queued since the last write together
//! with their response slots, (2) writes until the socket would block,
//! (3) reads as much as the socket has, and (4) routes the complete messages
//! to the slots in FIFO order, one `Bytes` chunk per request per read.
//! Asynchronous messages (notices, parameter changes, notifications) are
//! handled here and never reach a caller.

use std::collections::VecDeque;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use bytes::{Buf, BytesMut};
use pgpipe_proto::backend::{tag, Decoder, Message, TransactionStatus};
use tokio::io::AsyncWrite;
use tokio::time::Sleep;

use crate::driver::coalesce;
use crate::driver::low_water::LowWater;
use crate::driver::queue::{self, Queue};
use crate::driver::Slot;
use crate::driver::Transport;
use crate::driver::{Events, Shared};
use crate::error::{DbError, ErrorKind};
use crate::Error;

/// Bytes the driver asks the socket for at a time: large reads amortise the
/// syscall over many responses. Also the most one read may take, whatever
/// the read buffer's capacity (it grows for large messages and when `bytes`
/// doubles an allocation): backpressure lets a response go past its bound by
/// at most one read, so the read must be bounded too.
pub(crate) const READ_CHUNK: usize = 64 * 1024;

/// The size of a connection's first reads. The read size doubles (up to
/// [`READ_CHUNK`]) each time a read fills it, so a connection that only
/// ever sees short answers never allocates a READ_CHUNK buffer: the
/// startup's buffer serves it, and a connect does not pay for allocating
/// and freeing 64 KiB it never uses. A large result reaches full-size
/// reads after three reads.
const FIRST_READ: usize = 8 * 1024;

/// Default bound on the unread bytes of one response (see
/// [`Connection::max_buffered`]).
pub(crate) const DEFAULT_MAX_BUFFERED: usize = 1 << 20;

/// How long to wait, after Terminate, for the answers to requests sent
/// before it (or for the server to hang up).
const TERMINATE_GRACE: Duration = Duration::from_secs(5);

/// The future that drives one connection. [`connect()`](fn@super::super::connect) spawns it on
/// the current tokio runtime; [`crate::connect_with_driver`] hands it to you
/// to run on an executor of your choice. It completes when the client is
/// closed (all handles dropped or [`crate::Client::close`]) or the connection
/// fails; requests made after that fail with a closed error. After a close
/// it completes once Terminate is written and the answers to requests sent
/// before it have arrived; it does not wait for the server to hang up (the
/// server ends the session on Terminate).
///
/// # Drop behavior
///
/// The connection lives in this future: dropping it before it completes
/// (dropping it unpolled, aborting the task that runs it, or shutting down
/// the runtime that runs it) closes the socket and ends the connection at
/// once. Every request waiting for an answer, every request queued, every
/// transaction or COPY waiting for the connection, and every later request
/// of any [`Client`](crate::Client) handle fails right away with an
/// [`ErrorKind::Closed`] error ([`Error::is_closed`]); nothing waits for a
/// driver that is gone. Whether a statement written before the drop ran
/// on the server is unknown (as when any connection is lost): the server
/// rolls back an open transaction when it sees the socket close.
#[must_use = "the connection does nothing unless it is polled"]
pub struct Connection {
    socket: Box<dyn Transport>,
    /// The stream is TLS (shown by `Debug`).
    tls: bool,
    shared: Arc<Shared>,
    /// Where notices, notifications and parameter changes go.
    events: Arc<dyn Events>,
    decoder: Decoder,
    read_buf: BytesMut,
    /// Bytes asked for per read: from [`FIRST_READ`], doubling while reads
    /// fill it, at most [`READ_CHUNK`].
    read_size: usize,
    out: BytesMut,
    in_flight: VecDeque<Arc<Slot>>,
    /// Most unread bytes one response may hold before reading pauses.
    max_buffered: usize,
    /// The response whose unread bytes paused reading.
    paused_on: Option<Arc<Slot>>,
    /// Set once Terminate is queued: bounds how long we wait for EOF.
    grace: Option<Pin<Box<Sleep>>>,
    /// Our half of the stream is shut down after Terminate (see
    /// [`Connection::shut_down_writes`]).
    writes_closed: bool,
    finished: bool,
    /// The clock reading of the current read, taken on first need: every
    /// timed answer completed by one read shares it (see [`Slot::is_timed`]).
    read_at: Option<Instant>,
    /// The last read found the socket drained (it returned less than it
    /// asked for, or nothing): the server, not this driver, is behind.
    caught_up: bool,
    /// The requests in flight from which new ones gather (see
    /// [`queue::gathers`]): deeper on a multi-thread runtime. Learnt at
    /// the first poll, from the runtime that polls it.
    gather_depth: Option<usize>,
    /// The receive low-water mark for long answers.
    low_water: LowWater,
}

/// The connection's state, not its socket, buffers or handlers.
impl std::fmt::Debug for Connection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Connection")
            .field("tls", &self.tls)
            .field("in_flight", &self.in_flight.len())
            .field("max_buffered", &self.max_buffered)
            .field("finished", &self.finished)
            .finish_non_exhaustive()
    }
}

impl Connection {
    /// Sets the most unread bytes one response may hold before the driver
    /// stops reading the socket (default 1 MiB). A slow consumer of a large
    /// result then holds the server back instead of filling memory; other
    /// requests pipelined behind it wait too.
    pub fn max_buffered(&mut self, bytes: usize) {
        self.max_buffered = bytes.max(1);
    }

    /// Whether a long answer (past 1 MiB) may make the driver ask the
    /// kernel to wake it only once 64 KiB of it wait, instead of for every
    /// 8 KiB piece the server sends (`SO_RCVLOWAT`; TCP, also under TLS,
    /// on Linux 4.18 or later; on by default). It cuts the wake-ups of a
    /// long stream about eightfold; the price is that such an answer's
    /// last bytes arrive a little late, when the driver gives up waiting
    /// for 64 KiB: a quarter longer than a 64 KiB batch recently took,
    /// 100 us to 1 ms on Linux's `timerfd` (1-2 ms where tokio's
    /// millisecond timer has to serve). On a connection whose answers
    /// that pass 32 KiB have lately gone on to 512 KiB or more on average,
    /// the mark goes up after an answer's first 32 KiB instead of its
    /// first MiB. On plain TCP such a connection also aims the mark at
    /// the end of its last long answer: an answer of the same size (the
    /// same report read again) wakes the driver with its last byte and
    /// pays no wait.
    ///
    /// The same switch covers deep pipelines: with 128 or more statements
    /// in flight the driver waits until about 16 answers' bytes have
    /// arrived before it reads, instead of being woken for each answer the
    /// server flushes (at 256 in flight: a third of the socket reads and
    /// about two thirds of the client CPU per statement). An answer can
    /// then come up to 15 answers' time later, or up to 1 ms later if the
    /// pipeline goes quiet (once; then the driver reads answer by answer
    /// for the next 128). Turn it off when every answer must arrive the
    /// moment it is sent.
    ///
    /// ```no_run
    /// # async fn f() -> Result<(), pgpipe::Error> {
    /// let (client, mut connection) = pgpipe::connect_with_driver("postgres://localhost/app").await?;
    /// connection.receive_low_water(false);
    /// tokio::spawn(connection);
    /// # drop(client); Ok(()) }
    /// ```
    pub fn receive_low_water(&mut self, on: bool) {
        self.low_water.turn(on, &self.shared.counters);
    }

    pub(crate) fn new(
        socket: Box<dyn Transport>,
        tls: bool,
        shared: Arc<Shared>,
        events: Arc<dyn Events>,
        decoder: Decoder,
        read_buf: BytesMut,
        fd: Option<std::os::fd::RawFd>,
    ) -> Connection {
        Connection {
            socket,
            tls,
            shared,
            events,
            decoder,
            read_buf,
            read_size: FIRST_READ,
            out: BytesMut::new(),
            in_flight: VecDeque::new(),
            grace: None,
            writes_closed: false,
            finished: false,
            max_buffered: DEFAULT_MAX_BUFFERED,
            paused_on: None,
            read_at: None,
            caught_up: true,
            gather_depth: None,
            low_water: LowWater::new(fd, !tls),
        }
    }

    /// Takes queued requests; returns whether Terminate has been queued,
    /// and whether it has been handed to the driver too (nothing remains
    /// in the queue's buffer).
    fn take_requests(&mut self, cx: &mut Context<'_>) -> Result<(bool, bool), Error> {
        let mut q = self.shared.lock();
        if let Some((kind, reason)) = &q.abort {
            return Err(Error::new(*kind, reason.clone()));
        }
        match &q.driver_waker {
            Some(w) if w.will_wake(cx.waker()) => {}
            _ => q.driver_waker = Some(cx.waker().clone()),
        }
        if self.out.is_empty() && !q.write_buf.is_empty() && !q.write_gate && !self.gathers(&q) {
            // What we take now is written in one go: a coalesced group
            // ends here.
            q.seal_group();
            // Swap rather than copy: the callers get our empty buffer (with its
            // capacity) and we write theirs.
            std::mem::swap(&mut self.out, &mut q.write_buf);
            q.flush_now = false;
            let first_new = self.in_flight.len();
            self.in_flight.extend(q.slots.drain(..));
            stamp_written(self.in_flight.range(first_new..));
            // A COPY writer waiting for room may go on.
            if let Some(writer) = q.writer_waker.take() {
                writer.wake();
            }
        }
        Ok((q.terminating, q.terminating && q.write_buf.is_empty()))
    }

    /// Whether the queued requests wait for company instead of being
    /// written now (see [`queue::gathers`]).
    fn gathers(&self, q: &Queue) -> bool {
        self.gather_depth
            .is_some_and(|depth| queue::gathers(q, self.in_flight.len(), depth, self.caught_up))
    }

    fn poll_write(&mut self, cx: &mut Context<'_>) -> Result<bool, Error> {
        let mut progress = false;
        while !self.out.is_empty() {
            match Pin::new(&mut self.socket).poll_write(cx, &self.out) {
                Poll::Ready(Ok(0)) => {
                    return Err(Error::io(
                        "writing to the server",
                        std::io::ErrorKind::WriteZero.into(),
                    ))
                }
                Poll::Ready(Ok(n)) => {
                    self.out.advance(n);
                    self.shared.counters.wrote();
                    progress = true;
                }
                Poll::Ready(Err(e)) => return Err(Error::io("writing to the server", e)),
                Poll::Pending => break,
            }
        }
        if self.out.is_empty() {
            // Reset to the start of the allocation so it is reused.
            self.out.clear();
            // TLS may have accepted our bytes but kept records it could not
            // write yet; flushing pushes them out (and registers the waker if
            // the socket is full). A no-op for plain sockets.
            if let Poll::Ready(Err(e)) = Pin::new(&mut self.socket).poll_flush(cx) {
                return Err(Error::io("writing to the server", e));
            }
        }
        Ok(progress)
    }

    /// Reads once; Ok(None) if the socket has nothing, Ok(Some(0)) on EOF.
    /// Sets `caught_up`: whether the read drained the socket (it returned
    /// less than it asked for, or nothing).
    ///
    /// At most `read_size` (so at most READ_CHUNK) bytes per read: the read
    /// buffer's spare capacity can be far larger (BytesMut doubles its
    /// storage when it grows in place), and one read of all of it could
    /// take several megabytes from the kernel past the backpressure bound,
    /// which is only checked between reads.
    fn poll_read(&mut self, cx: &mut Context<'_>) -> Result<Option<usize>, Error> {
        let size = self.read_size;
        if self.read_buf.capacity() - self.read_buf.len() < size / 4 {
            self.read_buf.reserve(size);
        }
        let asked = size.min(self.read_buf.capacity() - self.read_buf.len());
        // `limit`: never more than `size` in one read, however much spare
        // capacity the buffer has (see READ_CHUNK).
        let mut window = bytes::BufMut::limit(&mut self.read_buf, size);
        match tokio_util::io::poll_read_buf(Pin::new(&mut self.socket), cx, &mut window) {
            Poll::Ready(Ok(n)) => {
                self.shared.counters.read(n);
                self.caught_up = n < asked;
                if n >= size {
                    self.read_size = (size * 2).min(READ_CHUNK);
                }
                Ok(Some(n))
            }
            Poll::Ready(Err(e)) => Err(Error::io("reading from the server", e)),
            Poll::Pending => {
                self.caught_up = true;
                Ok(None)
            }
        }
    }

    /// Routes every complete message in the read buffer.
    fn route(&mut self) -> Result<(), Error> {
        self.read_at = None;
        // Bytes at the front of read_buf that belong to the front request and
        // are not delivered yet.
        let mut run = 0usize;
        loop {
            let header = match self
                .decoder
                .header(&self.read_buf[run..])
                .map_err(|e| Error::protocol(e.to_string()))?
            {
                Some(h) => h,
                None => break,
            };
            if tag::name(header.tag).is_none() {
                return Err(Error::protocol(format!(
                    "unknown message type 0x{:02x} ({:?}) from the server",
                    header.tag, header.tag as char
                )));
            }
            if self.read_buf.len() - run < header.total_len {
                // Make room for the whole message so the next read can finish it.
                self.read_buf
                    .reserve(header.total_len - (self.read_buf.len() - run));
                break;
            }
            match header.tag {
                tag::NOTICE_RESPONSE | tag::PARAMETER_STATUS | tag::NOTIFICATION_RESPONSE => {
                    self.deliver(run, false)?;
                    run = 0;
                    let mut msg = self.read_buf.split_to(header.total_len);
                    msg.advance(5);
                    self.handle_async(header.tag, msg.freeze())?;
                }
                tag::READY_FOR_QUERY => {
                    // The status byte follows the 5-byte header; the length
                    // was framed, so it is there (get() keeps that unchecked
                    // assumption from ever panicking).
                    if let Some(status) = self
                        .read_buf
                        .get(run + 5)
                        .and_then(|&b| TransactionStatus::from_byte(b))
                    {
                        self.shared.set_transaction_status(status);
                    }
                    run += header.total_len;
                    self.deliver(run, true)?;
                    run = 0;
                }
                tag::ERROR_RESPONSE if self.in_flight.is_empty() => {
                    // An error nobody asked for: the server is about to close
                    // the connection (admin shutdown, idle timeout...).
                    let mut msg = self.read_buf.split_to(header.total_len);
                    msg.advance(5);
                    let reason = match Message::parse(tag::ERROR_RESPONSE, msg.freeze()) {
                        Ok(Message::ErrorResponse(fields)) => match DbError::parse(&fields) {
                            Ok(db) => format!("the server closed the connection: {db}"),
                            Err(e) => format!("the server sent a malformed error: {e}"),
                        },
                        _ => "the server sent a malformed error".to_owned(),
                    };
                    let shared = self.shared.clone();
                    shared.mark_closed(&mut shared.lock(), || reason);
                }
                _ => run += header.total_len,
            }
        }
        self.deliver(run, false)
    }

    fn deliver(&mut self, len: usize, complete: bool) -> Result<(), Error> {
        if len == 0 {
            return Ok(());
        }
        self.low_water
            .delivered(len, complete, &self.shared.counters);
        let chunk = self.read_buf.split_to(len).freeze();
        let Some(slot) = self.in_flight.front().cloned() else {
            return Err(Error::protocol(format!(
                "the server sent a message (type {:?}) while no request was waiting",
                chunk.first().map(|&b| b as char).unwrap_or('?')
            )));
        };
        if complete {
            self.in_flight.pop_front();
            let next = self.in_flight.front().filter(|s| s.is_timed());
            if slot.is_timed() || next.is_some() {
                let now = *self.read_at.get_or_insert_with(Instant::now);
                if slot.is_timed() {
                    slot.stamp_done(now);
                }
                if let Some(next) = next {
                    next.stamp_ahead_done(now);
                }
            }
            if let Some(group) = slot.group() {
                // A coalesced group's end: split it per member (nobody
                // waits on the carrier itself).
                slot.deliver(chunk, true);
                let mut settled = coalesce::settle(group, slot.take_all())?;
                self.shared.finished(settled.delivered());
                let resent = settled.again.len() + settled.rejoin.len();
                self.shared
                    .counters
                    .group(settled.delivered() + resent, resent);
                self.shared
                    .group_size
                    .record(settled.delivered() + resent, resent > 0);
                let sent_now = self.shared.send_again(
                    std::mem::take(&mut settled.again),
                    std::mem::take(&mut settled.rejoin),
                );
                // Before any member can have its answer: those sent again
                // only get theirs after this driver reads on, the others
                // in `hand_over`.
                if sent_now {
                    settled.hold_together();
                }
                settled.hand_over(slot.is_timed().then(|| slot.stamps()));
                return Ok(());
            }
            // Counted as finished before the caller is woken: a caller that
            // saw its answer must never see its own request still pending
            // (the pool decides on that count whether to settle a returned
            // connection).
            self.shared.finished(1);
        }
        let buffered = slot.deliver(chunk, complete);
        self.shared.record_buffered(buffered);
        if buffered > self.max_buffered {
            self.paused_on = Some(slot);
        }
        Ok(())
    }

    fn handle_async(&mut self, tag: u8, body: bytes::Bytes) -> Result<(), Error> {
        let msg = Message::parse(tag, body).map_err(|e| Error::protocol(e.to_string()))?;
        match msg {
            Message::NoticeResponse(fields) => match DbError::parse(&fields) {
                Ok(notice) => self.events.notice(&notice),
                Err(e) => tracing::warn!(target: "pgpipe::notice", "malformed notice: {e}"),
            },
            Message::ParameterStatus(p) => self.events.parameter(p.name(), p.value()),
            Message::NotificationResponse(n) => self.events.notification(&n),
            _ => {}
        }
        Ok(())
    }

    fn fail_all(&mut self, kind: ErrorKind, reason: &str) {
        let queued: Vec<_> = {
            let mut q = self.shared.lock();
            self.shared.mark_closed(&mut q, || reason.to_owned());
            q.write_buf.clear();
            coalesce::reset(&mut q.group);
            self.shared.drain_unsent(&mut q)
        };
        let mut n = 0;
        for slot in self.in_flight.drain(..).chain(queued) {
            n += slot.requests();
            slot.fail(kind, reason);
        }
        self.shared.finished(n);
        self.shared.close_queue();
        self.events.closed(kind, reason);
    }

    /// Once Terminate is written, shuts our half of the stream down (TLS:
    /// close_notify first, a clean TLS close, so the server does not log an
    /// unexpected EOF), as libpq and tokio-postgres end a session by
    /// closing first. Reading goes on until the requests sent before
    /// Terminate are answered (see [`Connection::closed_cleanly`]). Our FIN
    /// going first also moves the kernel work of the teardown's last steps
    /// (the server's FIN, its acknowledgement, the TIME_WAIT entry) into
    /// the server's close: over loopback the kernel runs a segment's
    /// delivery in the process that sends it, and this process used to
    /// send the last FIN. Best effort: the server hangs up after Terminate
    /// anyway, so a failure here changes nothing.
    fn shut_down_writes(&mut self, cx: &mut Context<'_>) {
        if !self.writes_closed && Pin::new(&mut self.socket).poll_shutdown(cx).is_ready() {
            self.writes_closed = true;
        }
    }

    /// After Terminate (all of it handed over): whether the session is
    /// over for this side, so the driver ends without waiting for the
    /// server to hang up, as tokio-postgres's does. Terminate and our FIN
    /// are written, every request sent before them is answered, and the
    /// last read found the socket empty (nothing unread, so closing sends
    /// no reset). The server ends the session on Terminate whether or not
    /// we wait; waiting only cost a wake-up per connection (the server's
    /// FIN usually arrives while this runtime is busy with the next one).
    fn closed_cleanly(&self) -> bool {
        self.writes_closed && self.out.is_empty() && self.in_flight.is_empty()
    }

    fn poll_inner(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Error>> {
        loop {
            let (terminating, handed_over) = self.take_requests(cx)?;
            if terminating && self.grace.is_none() {
                self.grace = Some(Box::pin(tokio::time::sleep(TERMINATE_GRACE)));
            }
            let wrote = self.poll_write(cx)?;
            if handed_over && self.out.is_empty() {
                self.shut_down_writes(cx);
            }
            if let Some(slot) = &self.paused_on {
                // Backpressure: a slow consumer holds enough; leave the rest
                // in the kernel (and the server) until it catches up.
                if slot.should_pause(self.max_buffered, cx.waker()) {
                    if wrote {
                        continue;
                    }
                    return Poll::Pending;
                }
                self.paused_on = None;
            }
            let got = self.poll_read(cx)?;
            let read = match got {
                Some(0) => {
                    if terminating && self.out.is_empty() {
                        return Poll::Ready(Ok(()));
                    }
                    let reason = self
                        .shared
                        .lock()
                        .closed
                        .clone()
                        .unwrap_or_else(|| "the server closed the connection".to_owned());
                    return Poll::Ready(Err(Error::closed().context(reason)));
                }
                Some(n) => {
                    self.route()?;
                    self.low_water.routed(self.read_buf.len());
                    self.low_water.read_something(n, &self.shared.counters);
                    true
                }
                None if handed_over && self.closed_cleanly() => return Poll::Ready(Ok(())),
                None => false,
            };
            if !wrote && !read {
                self.low_water
                    .depth(self.in_flight.len(), &self.shared.counters);
                self.low_water.aim_at_end(&self.shared.counters);
                if self.low_water.poll_tail(cx, &self.shared.counters) {
                    continue;
                }
                if let Some(grace) = &mut self.grace {
                    if grace.as_mut().poll(cx).is_ready() {
                        return Poll::Ready(Ok(()));
                    }
                }
                return Poll::Pending;
            }
        }
    }
}

impl Drop for Connection {
    fn drop(&mut self) {
        if !self.finished {
            // Dropped mid-way (its task aborted, its runtime shut down):
            // nobody will poll again, so nothing may wait for us.
            self.finished = true;
            self.fail_all(
                ErrorKind::Closed,
                "the connection's driver was dropped (its task was aborted or its runtime shut down)",
            );
        }
    }
}

impl Future for Connection {
    type Output = Result<(), Error>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.get_mut();
        if this.finished {
            return Poll::Ready(Ok(()));
        }
        if this.gather_depth.is_none() {
            this.gather_depth = Some(queue::gather_depth());
        }
        let result = match this.poll_inner(cx) {
            Poll::Pending => return Poll::Pending,
            Poll::Ready(r) => r,
        };
        this.finished = true;
        let (kind, reason) = match &result {
            Ok(()) => (ErrorKind::Closed, "the client was closed".to_owned()),
            Err(e) => (e.kind(), e.to_string()),
        };
        this.fail_all(kind, &reason);
        Poll::Ready(result)
    }
}

/// Stamps the write time of the timed requests among `slots` (just taken
/// for the socket write): one clock read for the batch, none if no slot is
/// timed.
fn stamp_written<'a>(slots: impl Iterator<Item = &'a Arc<Slot>>) {
    let mut now = None;
    for slot in slots.filter(|s| s.is_timed()) {
        slot.stamp_written(*now.get_or_insert_with(Instant::now));
    }
}
