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
use std::task::{Poll, Waker};

use bytes::{Buf, Bytes};
use tokio::sync::OwnedSemaphorePermit;
use pgpipe_proto::backend::tag;

use crate::error::ErrorKind;
use crate::Error;

#[derive(Default)]
struct SlotState {
    chunks: VecDeque<Bytes>,
    /// ReadyForQuery was delivered: the response is complete.
    done: bool,
    /// The connection died before the response completed.
    failed: Option<(ErrorKind, String)>,
    /// The receiver is gone; further chunks are dropped.
    abandoned: bool,
    waker: Option<Waker>,
}

/// One request's response, shared by the driver (producer) and the caller.
#[derive(Default)]
pub(crate) struct Slot {
    state: Mutex<SlotState>,
    /// A place in the bounded request queue, given back when both the driver
    /// and the caller are done with this slot.
    _permit: Option<OwnedSemaphorePermit>,
}

impl Slot {
    pub(crate) fn new(permit: Option<OwnedSemaphorePermit>) -> Slot {
        Slot {
            state: Mutex::default(),
            _permit: permit,
        }
    }

    fn lock(&self) -> MutexGuard<'_, SlotState> {
        // A poisoned slot only means a panic elsewhere while holding it; the
        // data is still a plain queue, so keep going rather than cascade.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Driver side: hands over a run of complete messages.
    pub(crate) fn deliver(&self, chunk: Bytes, complete: bool) {
        let waker = {
            let mut st = self.lock();
            if !st.abandoned {
                st.chunks.push_back(chunk);
            }
            st.done |= complete;
            st.waker.take()
        };
        if let Some(w) = waker {
            w.wake();
        }
    }

    /// Driver side: the connection is gone; wake the caller with the reason.
    pub(crate) fn fail(&self, kind: ErrorKind, reason: &str) {
        let waker = {
            let mut st = self.lock();
            if st.done {
                return;
            }
            st.failed = Some((kind, reason.to_owned()));
            st.waker.take()
        };
        if let Some(w) = waker {
            w.wake();
        }
    }
}

/// Caller side: reads the messages of one response in order.
pub(crate) struct Responses {
    slot: Arc<Slot>,
    current: Bytes,
    finished: bool,
    /// The transaction status byte of the final ReadyForQuery.
    status: u8,
}

impl Responses {
    pub(crate) fn new(slot: Arc<Slot>) -> Responses {
        Responses {
            slot,
            current: Bytes::new(),
            finished: false,
            status: 0,
        }
    }

    /// The next message as its type byte and unparsed body.
    pub(crate) async fn next_raw(&mut self) -> Result<(u8, Bytes), Error> {
        if self.current.is_empty() {
            if self.finished {
                return Err(Error::protocol("read past the end of a response (internal error)"));
            }
            self.current = poll_fn(|cx| {
                let mut st = self.slot.lock();
                if let Some(chunk) = st.chunks.pop_front() {
                    return Poll::Ready(Ok(chunk));
                }
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
                Poll::Pending
            })
            .await?;
        }
        // The driver framed these messages with the same decoder, so the
        // header is present and the length fits; check anyway, never panic.
        if self.current.len() < 5 {
            return Err(Error::protocol("truncated message in a response chunk"));
        }
        let tag = self.current[0];
        let len = u32::from_be_bytes([self.current[1], self.current[2], self.current[3], self.current[4]])
            as usize;
        if len < 4 || self.current.len() < 1 + len {
            return Err(Error::protocol("truncated message in a response chunk"));
        }
        let mut msg = self.current.split_to(1 + len);
        msg.advance(5);
        if tag == tag::READY_FOR_QUERY {
            self.finished = true;
            self.status = msg.first().copied().unwrap_or(0);
        }
        Ok((tag, msg))
    }

}

impl Responses {
    /// Whether the session was outside any transaction block when this
    /// response ended (ReadyForQuery status `I`).
    pub(crate) fn ended_idle(&self) -> bool {
        self.finished && self.status == b'I'
    }
}

impl Drop for Responses {
    fn drop(&mut self) {
        if !self.finished {
            let mut st = self.slot.lock();
            st.abandoned = true;
            st.chunks.clear();
            st.waker = None;
        }
    }
}
