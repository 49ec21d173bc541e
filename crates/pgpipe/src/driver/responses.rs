//! The caller's side of the reply hand-off: reading one response from its slot.

use std::future::poll_fn;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::{Buf, Bytes};
use pgpipe_proto::backend::{tag, TransactionStatus};
use tokio::time::Sleep;

use crate::driver::Slot;
use crate::error::ErrorKind;
use crate::Error;

/// Caller side: reads the messages of one response in order.
pub(crate) struct Responses {
    slot: Arc<Slot>,
    current: Bytes,
    /// Bytes at the front of `current` already read in place (by a
    /// `RowBatch`); dropped from `current` at the next poll.
    read_in_place: usize,
    finished: bool,
    /// The transaction status of the final ReadyForQuery.
    status: Option<TransactionStatus>,
    /// Set while the answers to a BEGIN sent in front of this request
    /// (ParseComplete, BindComplete, CommandComplete) are still to be
    /// skipped; an error in their place is the BEGIN's, reported here.
    begin: Option<Arc<AtomicBool>>,
    /// Set when the request was held behind another session: how long it
    /// may wait there (see [`Responses::held_until`]).
    held: Option<Box<Held>>,
}

/// The bound on a request's wait behind another session's reservation.
struct Held {
    deadline: tokio::time::Instant,
    bound: Duration,
    /// Made on the first poll that has to wait (a runtime is there).
    timer: Option<Pin<Box<Sleep>>>,
}

impl Responses {
    pub(crate) fn new(slot: Arc<Slot>) -> Responses {
        Responses {
            slot,
            current: Bytes::new(),
            read_in_place: 0,
            finished: false,
            status: None,
            begin: None,
            held: None,
        }
    }

    /// The request waits behind another session's reservation: if it is
    /// still held there after `bound`, its caller gets an error naming
    /// why and it is never sent.
    pub(crate) fn held_until(&mut self, bound: Duration) {
        self.held = Some(Box::new(Held {
            deadline: tokio::time::Instant::now() + bound,
            bound,
            timer: None,
        }));
    }

    /// Called when the caller would wait: ends a wait behind another
    /// session that has outlasted its bound.
    #[cold]
    fn poll_held(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Error>> {
        let Some(held) = &mut self.held else {
            return Poll::Pending;
        };
        if tokio::runtime::Handle::try_current().is_err() {
            // No timer without a runtime: wait unbounded, as before.
            return Poll::Pending;
        }
        let timer = held
            .timer
            .get_or_insert_with(|| Box::pin(tokio::time::sleep_until(held.deadline)));
        if timer.as_mut().poll(cx).is_pending() {
            return Poll::Pending;
        }
        let bound = held.bound;
        self.held = None;
        let reason = held_error(bound);
        if self.slot.withdraw(ErrorKind::Timeout, &reason) {
            return Poll::Ready(Err(Error::new(ErrorKind::Timeout, reason)));
        }
        // Sent meanwhile: its answer follows, like any other.
        Poll::Pending
    }

    /// A BEGIN went out in front of this request, under the same Sync: its
    /// answers are skipped; if it failed, its error is this request's (the
    /// server skipped the request) and `failed` is set.
    pub(crate) fn begin_in_front(&mut self, failed: Arc<AtomicBool>) {
        self.begin = Some(failed);
    }

    /// The next message as its type byte and unparsed body.
    pub(crate) async fn next_raw(&mut self) -> Result<(u8, Bytes), Error> {
        poll_fn(|cx| self.poll_next_raw(cx)).await
    }

    /// Poll form of [`next_raw`](Self::next_raw), for streams.
    pub(crate) fn poll_next_raw(
        &mut self,
        cx: &mut Context<'_>,
    ) -> Poll<Result<(u8, Bytes), Error>> {
        loop {
            let (tag, body) = match self.poll_message(cx) {
                Poll::Ready(Ok(m)) => m,
                other => return other,
            };
            let Some(failed) = &self.begin else {
                return Poll::Ready(Ok((tag, body)));
            };
            match tag {
                tag::PARSE_COMPLETE | tag::BIND_COMPLETE => {}
                tag::COMMAND_COMPLETE => self.begin = None,
                _ => {
                    if tag == tag::ERROR_RESPONSE {
                        failed.store(true, Ordering::Relaxed);
                    }
                    self.begin = None;
                    return Poll::Ready(Ok((tag, body)));
                }
            }
        }
    }

    /// Makes sure a chunk of messages is in hand: takes the next one the
    /// driver delivered, or registers the waker.
    pub(crate) fn poll_fill(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Error>> {
        let polled = self.poll_chunk(cx);
        if polled.is_pending() && self.held.is_some() {
            return self.poll_held(cx);
        }
        polled
    }

    fn poll_chunk(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Error>> {
        if self.read_in_place > 0 {
            let n = std::mem::take(&mut self.read_in_place).min(self.current.len());
            self.current.advance(n);
        }
        if !self.current.is_empty() {
            return Poll::Ready(Ok(()));
        }
        if self.finished {
            return Poll::Ready(Err(Error::protocol(
                "read past the end of a response (internal error)",
            )));
        }
        let chunk = match self.slot.poll_take_chunk(cx) {
            Poll::Ready(Ok(chunk)) => chunk,
            Poll::Ready(Err(e)) => return Poll::Ready(Err(e)),
            Poll::Pending => return Poll::Pending,
        };
        self.current = chunk;
        Poll::Ready(Ok(()))
    }

    /// The chunk in hand and the read position in it, for reading a run
    /// of DataRows in place without splitting each off (see `RowBatch`);
    /// the position moves past what was read and the next poll drops it.
    /// `None` while a BEGIN's answers are still to be skipped: those go
    /// through [`poll_next_raw`](Self::poll_next_raw).
    pub(crate) fn in_place(&mut self) -> Option<(&Bytes, &mut usize)> {
        if self.begin.is_some() {
            return None;
        }
        Some((&self.current, &mut self.read_in_place))
    }

    fn poll_message(&mut self, cx: &mut Context<'_>) -> Poll<Result<(u8, Bytes), Error>> {
        match self.poll_fill(cx) {
            Poll::Ready(Ok(())) => {}
            Poll::Ready(Err(e)) => return Poll::Ready(Err(e)),
            Poll::Pending => return Poll::Pending,
        }
        // The driver framed these messages with the same decoder, so the
        // header is present and the length fits; check anyway, never panic.
        if self.current.len() < 5 {
            return Poll::Ready(Err(Error::protocol(
                "truncated message in a response chunk",
            )));
        }
        let tag = self.current[0];
        let len = u32::from_be_bytes([
            self.current[1],
            self.current[2],
            self.current[3],
            self.current[4],
        ]) as usize;
        if len < 4 || self.current.len() < 1 + len {
            return Poll::Ready(Err(Error::protocol(
                "truncated message in a response chunk",
            )));
        }
        let mut msg = self.current.split_to(1 + len);
        msg.advance(5);
        if tag == tag::READY_FOR_QUERY {
            self.finished = true;
            self.status = msg.first().and_then(|&b| TransactionStatus::from_byte(b));
        }
        Poll::Ready(Ok((tag, msg)))
    }
}

impl Responses {
    pub(crate) fn slot(&self) -> &Arc<Slot> {
        &self.slot
    }

    /// Whether the session was outside any transaction block when this
    /// response ended (ReadyForQuery status `I`).
    pub(crate) fn ended_idle(&self) -> bool {
        self.finished && self.status == Some(TransactionStatus::Idle)
    }
}

impl Drop for Responses {
    fn drop(&mut self) {
        if !self.finished {
            self.slot.abandon();
        }
    }
}

/// Why a request held behind another session's reservation gave up, and
/// what to do instead.
pub(crate) fn held_error(bound: Duration) -> String {
    format!(
        "this request waited {bound:?} without being sent: a transaction (or COPY) holds \
         the connection, and requests of other handles of the same connection run only \
         after it ends. Inside the transaction, run the statement on the Transaction; for \
         concurrent work, use a Pool (or another connection). This wait is bounded by the \
         query timeout, or 30 s without one"
    )
}
