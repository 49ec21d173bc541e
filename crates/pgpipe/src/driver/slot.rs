//! The hand-off of one request's response from the driver to the caller.
//!
//! The driver appends whole backend messages as `Bytes` chunks sliced from
//! its read buffer (no copy, usually one chunk per request per read); the
//! caller parses them in place. A caller that goes away marks the slot
//! abandoned and the driver discards the rest of that response, which is what
//! keeps the connection correct when a query future is dropped mid-way.

use std::collections::VecDeque;
use std::future::poll_fn;
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Poll, Waker};
use std::time::Instant;

use bytes::Bytes;
use tokio::sync::OwnedSemaphorePermit;

use crate::driver::coalesce::{Group, Hold};
use crate::error::ErrorKind;
use crate::observe::{Stamped, Stamps};
use crate::Error;

/// A FIFO of chunks that holds the first one inline: most responses arrive
/// in one chunk, and then no queue is allocated at all.
#[derive(Default)]
struct Chunks {
    head: Option<Bytes>,
    rest: VecDeque<Bytes>,
}

impl Chunks {
    fn push_back(&mut self, chunk: Bytes) {
        if self.head.is_none() && self.rest.is_empty() {
            self.head = Some(chunk);
        } else {
            self.rest.push_back(chunk);
        }
    }

    fn pop_front(&mut self) -> Option<Bytes> {
        self.head.take().or_else(|| self.rest.pop_front())
    }

    fn clear(&mut self) {
        self.head = None;
        self.rest.clear();
    }
}

#[derive(Default)]
struct SlotState {
    chunks: Chunks,
    /// ReadyForQuery was delivered: the response is complete.
    done: bool,
    /// The connection died before the response completed.
    failed: Option<(ErrorKind, String)>,
    /// The receiver is gone; further chunks are dropped.
    abandoned: bool,
    waker: Option<Waker>,
    /// Bytes delivered but not yet taken by the caller.
    buffered: usize,
    /// Set while the driver has stopped reading because this response holds
    /// too much: the caller wakes it once `buffered` drops to `resume_at`.
    driver_waker: Option<Waker>,
    resume_at: usize,
    /// Clock readings of the driver, taken only for a timed slot.
    stamps: Stamps,
    /// Set while this request, sent again after a coalesced neighbour
    /// failed, waits for the others sent again with it: its caller is woken
    /// with theirs (see [`Hold`]).
    hold: Option<Arc<Hold>>,
    /// Encoded while another session held the connection: not sent until
    /// the session ends. Cleared when it is queued for sending; a caller
    /// that gives up meanwhile withdraws it (see [`Slot::withdraw`]).
    held_back: bool,
}

/// One request's response, shared by the driver (producer) and the caller.
#[derive(Default)]
pub(crate) struct Slot {
    state: Mutex<SlotState>,
    /// A place in the bounded request queue, given back when both the driver
    /// and the caller are done with this slot.
    _permit: Option<OwnedSemaphorePermit>,
    /// The caller's span records queue and server time: the driver stamps
    /// this slot's [`Stamps`]. Decided once, when the request is made.
    timed: bool,
    /// Set on the carrier of a coalesced group: the driver collects the
    /// group's response here and splits it per member at its end.
    group: Option<Group>,
}

impl Slot {
    pub(crate) fn new(permit: Option<OwnedSemaphorePermit>) -> Slot {
        Slot {
            state: Mutex::default(),
            _permit: permit,
            timed: crate::observe::request_timing_enabled(),
            group: None,
        }
    }

    /// The carrier of a coalesced group (see [`crate::driver::coalesce`]).
    /// Timed like its members (made in the same caller's task): its stamps
    /// are handed to each member at the group's end.
    pub(crate) fn carrier(group: Group) -> Slot {
        Slot {
            state: Mutex::default(),
            _permit: None,
            timed: crate::observe::request_timing_enabled(),
            group: Some(group),
        }
    }

    /// The group this slot carries, if it is a carrier.
    pub(crate) fn group(&self) -> Option<&Group> {
        self.group.as_ref()
    }

    /// How many requests this slot answers: a carrier, its members.
    pub(crate) fn requests(&self) -> usize {
        self.group.as_ref().map_or(1, Group::len)
    }

    /// Driver side: everything delivered so far, as one buffer (a
    /// carrier's whole response once it is complete).
    pub(crate) fn take_all(&self) -> Bytes {
        let mut st = self.lock();
        st.buffered = 0;
        let first = st.chunks.pop_front().unwrap_or_default();
        match st.chunks.pop_front() {
            None => first,
            Some(second) => {
                let mut all = bytes::BytesMut::from(&first[..]);
                all.extend_from_slice(&second);
                while let Some(next) = st.chunks.pop_front() {
                    all.extend_from_slice(&next);
                }
                all.freeze()
            }
        }
    }

    /// Whether the driver takes clock readings for this request.
    #[inline]
    pub(crate) fn is_timed(&self) -> bool {
        self.timed
    }

    /// Driver side: the request's bytes were taken for the socket write.
    pub(crate) fn stamp_written(&self, at: Instant) {
        self.lock().stamps.written = Some(at);
    }

    /// Driver side: the answer ahead of this one is complete.
    pub(crate) fn stamp_ahead_done(&self, at: Instant) {
        self.lock().stamps.ahead_done = Some(at);
    }

    /// Driver side: this request's ReadyForQuery was read (stamped before
    /// it is delivered, so the caller sees it once it has the answer).
    pub(crate) fn stamp_done(&self, at: Instant) {
        self.lock().stamps.done = Some(at);
    }

    /// The driver's clock readings so far.
    pub(crate) fn stamps(&self) -> Stamps {
        self.lock().stamps
    }

    /// Driver side: a coalesced group's member takes its carrier's
    /// readings (the group ran as one unit on the server).
    pub(crate) fn set_stamps(&self, stamps: Stamps) {
        self.lock().stamps = stamps;
    }

    fn lock(&self) -> MutexGuard<'_, SlotState> {
        // A poisoned slot only means a panic elsewhere while holding it; the
        // data is still a plain queue, so keep going rather than cascade.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Driver side: hands over a run of complete messages; returns how many
    /// bytes this response now holds unread.
    pub(crate) fn deliver(&self, chunk: Bytes, complete: bool) -> usize {
        self.deliver_chunks([chunk], complete)
    }

    /// [`deliver`](Self::deliver) of several runs at once, under one lock
    /// and with one wake (a coalesced member's part and its ReadyForQuery).
    pub(crate) fn deliver_chunks<const N: usize>(
        &self,
        chunks: [Bytes; N],
        complete: bool,
    ) -> usize {
        let (waker, buffered, released) = {
            let mut st = self.lock();
            if !st.abandoned {
                for chunk in chunks {
                    st.buffered += chunk.len();
                    st.chunks.push_back(chunk);
                }
            }
            st.done |= complete;
            if st.hold.is_some() {
                let released = if complete { st.hold.take() } else { None };
                (None, st.buffered, released)
            } else {
                (st.waker.take(), st.buffered, None)
            }
        };
        if let Some(w) = waker {
            w.wake();
        }
        if let Some(hold) = released {
            hold.member_done();
        }
        buffered
    }

    /// Driver side: makes this request's caller wait for `hold` to be
    /// released before it is woken. False if it already waits for another
    /// hold or has ended (then it does not count towards `hold`).
    pub(crate) fn join_hold(&self, hold: &Arc<Hold>) -> bool {
        let mut st = self.lock();
        if st.hold.is_some() || st.done || st.failed.is_some() {
            return false;
        }
        st.hold = Some(hold.clone());
        true
    }

    /// Queue side (under the queue lock): the request waits behind another
    /// session's reservation.
    pub(crate) fn hold_back(&self) {
        self.lock().held_back = true;
    }

    /// Queue side (under the queue lock), when the session it waited for
    /// ends: whether to send the request. False if its caller withdrew it.
    pub(crate) fn release_held(&self) -> bool {
        let mut st = self.lock();
        st.held_back = false;
        st.failed.is_none()
    }

    /// Caller side: gives up a request still held behind another session,
    /// failing it with `kind` and `reason`; it is then never sent. False
    /// if it has already been queued for sending (or has ended).
    pub(crate) fn withdraw(&self, kind: ErrorKind, reason: &str) -> bool {
        let mut st = self.lock();
        if !st.held_back || st.done || st.failed.is_some() {
            return false;
        }
        st.failed = Some((kind, reason.to_owned()));
        true
    }

    /// Wakes the caller, if it waits (its hold was released).
    pub(crate) fn wake_caller(&self) {
        let waker = self.lock().waker.take();
        if let Some(w) = waker {
            w.wake();
        }
    }

    /// Driver side: whether to stop reading the socket because this response
    /// holds more than `limit` unread bytes. If so, the caller wakes the
    /// driver when it has taken enough.
    pub(crate) fn should_pause(&self, limit: usize, driver: &Waker) -> bool {
        if self.group.is_some() {
            // Nobody reads a carrier before its end: pausing would stall.
            // Its members are statements whose callers collect every row
            // anyway, so this holds no more than they will.
            return false;
        }
        let mut st = self.lock();
        // A held caller is not woken to read until its hold is released:
        // pausing for it would stall (held requests are plain statements,
        // collected whole anyway, like a carrier's members).
        if st.abandoned || st.buffered <= limit || st.hold.is_some() {
            return false;
        }
        st.resume_at = limit / 2;
        match &st.driver_waker {
            Some(w) if w.will_wake(driver) => {}
            _ => st.driver_waker = Some(driver.clone()),
        }
        true
    }

    pub(crate) fn is_done(&self) -> bool {
        let st = self.lock();
        st.done || st.failed.is_some()
    }

    /// Resolves once the response has ended (ReadyForQuery or connection
    /// failure), whether or not anyone reads it.
    pub(crate) async fn wait_done(&self) {
        poll_fn(|cx| {
            let mut st = self.lock();
            if st.done || st.failed.is_some() {
                return Poll::Ready(());
            }
            st.waker = Some(cx.waker().clone());
            Poll::Pending
        })
        .await
    }

    /// Driver side: the connection is gone; wake the caller with the reason
    /// (a carrier: every member's caller).
    pub(crate) fn fail(&self, kind: ErrorKind, reason: &str) {
        if let Some(group) = &self.group {
            for member in group.slots() {
                member.fail(kind, reason);
            }
        }
        let (waker, released) = {
            let mut st = self.lock();
            if st.done {
                return;
            }
            st.failed = Some((kind, reason.to_owned()));
            (st.waker.take(), st.hold.take())
        };
        if let Some(w) = waker {
            w.wake();
        }
        if let Some(hold) = released {
            hold.member_done();
        }
    }

    /// Caller side: the next chunk of the response, waking a driver that
    /// paused reading once enough has been consumed; pending (keeping
    /// `cx`'s waker) until one arrives.
    pub(super) fn poll_take_chunk(&self, cx: &mut Context<'_>) -> Poll<Result<Bytes, Error>> {
        let (chunk, driver) = {
            let mut st = self.lock();
            match st.chunks.pop_front() {
                Some(chunk) => {
                    st.buffered -= chunk.len();
                    let driver = if st.buffered <= st.resume_at {
                        st.driver_waker.take()
                    } else {
                        None
                    };
                    (chunk, driver)
                }
                None => {
                    if let Some((kind, reason)) = &st.failed {
                        return Poll::Ready(Err(Error::new(*kind, reason.clone())));
                    }
                    if st.done {
                        return Poll::Ready(Err(Error::protocol(
                            "response ended without ReadyForQuery (internal error)",
                        )));
                    }
                    match &st.waker {
                        Some(w) if w.will_wake(cx.waker()) => {}
                        _ => st.waker = Some(cx.waker().clone()),
                    }
                    return Poll::Pending;
                }
            }
        };
        if let Some(driver) = driver {
            driver.wake();
        }
        Poll::Ready(Ok(chunk))
    }

    /// Caller side: nobody will read the rest of the response; the driver
    /// discards it (and, if paused on it, goes on).
    pub(super) fn abandon(&self) {
        let driver = {
            let mut st = self.lock();
            st.abandoned = true;
            st.chunks.clear();
            st.buffered = 0;
            st.waker = None;
            st.driver_waker.take()
        };
        // A paused driver must go on draining what nobody will read.
        if let Some(driver) = driver {
            driver.wake();
        }
    }
}

impl Stamped for Slot {
    fn stamps(&self) -> Stamps {
        Slot::stamps(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunks_stay_in_order() {
        let mut q = Chunks::default();
        q.push_back(Bytes::from_static(b"a"));
        q.push_back(Bytes::from_static(b"b"));
        assert_eq!(q.pop_front().as_deref(), Some(&b"a"[..]));
        q.push_back(Bytes::from_static(b"c"));
        assert_eq!(q.pop_front().as_deref(), Some(&b"b"[..]));
        assert_eq!(q.pop_front().as_deref(), Some(&b"c"[..]));
        assert_eq!(q.pop_front(), None);
        q.push_back(Bytes::from_static(b"d"));
        q.clear();
        assert_eq!(q.pop_front(), None);
    }
}
