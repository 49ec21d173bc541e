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

    /// The next message if it is a DataRow already in hand, without a
    /// poll: a large result arrives in chunks of many rows, and a reader
    /// that takes each through [`poll_next_raw`](Self::poll_next_raw) pays
    /// a future's round per row. `None` for anything else (another message,
    /// a chunk used up, a BEGIN's answers still to skip, a malformed
    /// header): those go through `poll_next_raw`, which also reports the
    /// malformed ones.
    #[inline]
    pub(crate) fn next_buffered_row(&mut self) -> Option<Bytes> {
        self.next_buffered(tag::DATA_ROW)
    }

    /// The next message's body if it has type `tag` and is already in
    /// hand, without a poll (see [`next_buffered_row`](Self::next_buffered_row));
    /// a COPY's CopyData runs are read the same way. Never a
    /// ReadyForQuery: that ends the response and goes through
    /// `poll_next_raw`.
    #[inline]
    pub(crate) fn next_buffered(&mut self, tag: u8) -> Option<Bytes> {
        if self.begin.is_some() || self.read_in_place > 0 || tag == tag::READY_FOR_QUERY {
            return None;
        }
        let header = self.current.get(..5)?;
        if header[0] != tag {
            return None;
        }
        let len = u32::from_be_bytes([header[1], header[2], header[3], header[4]]) as usize;
        if len < 4 || self.current.len() < 1 + len {
            return None;
        }
        let mut msg = self.current.split_to(1 + len);
        msg.advance(5);
        Some(msg)
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

#[cfg(test)]
mod tests {
    use std::task::Waker;

    use super::*;

    fn message(tag: u8, body: &[u8]) -> Vec<u8> {
        let mut m = vec![tag];
        m.extend_from_slice(&(body.len() as u32 + 4).to_be_bytes());
        m.extend_from_slice(body);
        m
    }

    fn responses_of(bytes: Vec<u8>) -> Responses {
        let slot = Arc::new(Slot::new(None));
        slot.deliver(Bytes::from(bytes), true);
        Responses::new(slot)
    }

    fn next(r: &mut Responses) -> (u8, Bytes) {
        let mut cx = Context::from_waker(Waker::noop());
        match r.poll_next_raw(&mut cx) {
            Poll::Ready(Ok(m)) => m,
            other => panic!("expected a message, got {:?}", other.map(|r| r.err())),
        }
    }

    /// The run of DataRows in hand is read without a poll, in order, and
    /// the first other message is left for `poll_next_raw`.
    #[test]
    fn buffered_rows_stop_at_the_first_other_message() {
        let mut bytes = message(tag::BIND_COMPLETE, b"");
        for row in [b"r1", b"r2", b"r3"] {
            bytes.extend(message(tag::DATA_ROW, row));
        }
        bytes.extend(message(tag::COMMAND_COMPLETE, b"SELECT 3\0"));
        bytes.extend(message(tag::READY_FOR_QUERY, b"I"));
        let mut r = responses_of(bytes);
        // Nothing taken yet: no chunk is in hand.
        assert_eq!(r.next_buffered_row(), None);
        assert_eq!(next(&mut r).0, tag::BIND_COMPLETE);
        assert_eq!(r.next_buffered_row().as_deref(), Some(&b"r1"[..]));
        assert_eq!(r.next_buffered_row().as_deref(), Some(&b"r2"[..]));
        assert_eq!(r.next_buffered_row().as_deref(), Some(&b"r3"[..]));
        assert_eq!(r.next_buffered_row(), None);
        assert_eq!(
            next(&mut r),
            (tag::COMMAND_COMPLETE, Bytes::from_static(b"SELECT 3\0"))
        );
        assert_eq!(next(&mut r).0, tag::READY_FOR_QUERY);
        assert!(r.ended_idle());
    }

    /// A DataRow whose length runs past the chunk is not taken here, so
    /// `poll_next_raw` reports it as the protocol error it is.
    #[test]
    fn a_truncated_row_is_left_for_the_checked_path() {
        let mut bytes = message(tag::BIND_COMPLETE, b"");
        bytes.extend(message(tag::DATA_ROW, b"ok"));
        bytes.extend([tag::DATA_ROW, 0, 0, 0, 40, 1, 2]);
        let mut r = responses_of(bytes);
        next(&mut r);
        assert_eq!(r.next_buffered_row().as_deref(), Some(&b"ok"[..]));
        assert_eq!(r.next_buffered_row(), None);
        let mut cx = Context::from_waker(Waker::noop());
        match r.poll_next_raw(&mut cx) {
            Poll::Ready(Err(e)) => assert!(e.to_string().contains("truncated"), "{e}"),
            other => panic!(
                "expected the truncation error, got {:?}",
                other.map(|r| r.ok())
            ),
        }
    }

    /// A COPY's CopyData run is read the same way; ReadyForQuery never is
    /// (it ends the response, which only `poll_next_raw` records).
    #[test]
    fn buffered_copy_data_stops_at_copy_done_and_never_takes_ready() {
        let mut bytes = message(tag::COPY_OUT_RESPONSE, b"\0\0\0");
        for line in [b"1\n", b"2\n"] {
            bytes.extend(message(tag::COPY_DATA, line));
        }
        bytes.extend(message(tag::COPY_DONE, b""));
        bytes.extend(message(tag::READY_FOR_QUERY, b"I"));
        let mut r = responses_of(bytes);
        assert_eq!(next(&mut r).0, tag::COPY_OUT_RESPONSE);
        assert_eq!(r.next_buffered(tag::DATA_ROW), None);
        assert_eq!(
            r.next_buffered(tag::COPY_DATA).as_deref(),
            Some(&b"1\n"[..])
        );
        assert_eq!(
            r.next_buffered(tag::COPY_DATA).as_deref(),
            Some(&b"2\n"[..])
        );
        assert_eq!(r.next_buffered(tag::COPY_DATA), None);
        assert_eq!(next(&mut r).0, tag::COPY_DONE);
        assert_eq!(r.next_buffered(tag::READY_FOR_QUERY), None);
        assert!(!r.ended_idle());
        assert_eq!(next(&mut r).0, tag::READY_FOR_QUERY);
        assert!(r.ended_idle());
    }

    /// While a BEGIN's answers in front are still to be skipped, rows go
    /// through `poll_next_raw`, which skips them in order.
    #[test]
    fn no_buffered_rows_while_a_begin_is_skipped() {
        let mut bytes = message(tag::PARSE_COMPLETE, b"");
        bytes.extend(message(tag::DATA_ROW, b"r1"));
        let mut r = responses_of(bytes);
        r.begin_in_front(Arc::new(AtomicBool::new(false)));
        let mut cx = Context::from_waker(Waker::noop());
        assert!(r.poll_fill(&mut cx).is_ready());
        assert_eq!(r.next_buffered_row(), None);
    }
}
