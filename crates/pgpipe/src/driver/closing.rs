//! How a connection stops taking requests: Terminate, an abort on a
//! protocol error, and failing what was never written.

use std::sync::atomic::Ordering;
use std::sync::Arc;

use pgpipe_proto::frontend;

use crate::driver::queue::Queue;
use crate::driver::{Shared, Slot};
use crate::Error;

impl Shared {
    /// Why the connection takes no more requests, as an error.
    pub(super) fn closed_error(&self) -> Error {
        let reason = self
            .lock()
            .closed
            .clone()
            .unwrap_or_else(|| "the connection is closed".into());
        Error::closed().context(reason)
    }

    /// Every slot still waiting to be written (the queue and requests
    /// deferred behind a session), for the driver failing them all; ends any
    /// reservation, waking whoever waits for one.
    pub(crate) fn drain_unsent(&self, q: &mut Queue) -> Vec<Arc<Slot>> {
        let mut out: Vec<Arc<Slot>> = q.slots.drain(..).collect();
        if let Some(held) = q.reservation.take() {
            out.extend(held.deferred_slots);
        }
        if let Some(writer) = q.writer_waker.take() {
            writer.wake();
        }
        self.released.notify_waiters();
        out
    }

    /// Queues Terminate; later requests fail as closed.
    pub(crate) fn terminate(&self) {
        let waker = {
            let mut q = self.lock();
            if q.closed.is_some() {
                return;
            }
            q.closed = Some("the client was closed".into());
            self.closed_flag.store(true, Ordering::Release);
            q.terminating = true;
            q.seal_group();
            frontend::terminate(&mut q.write_buf);
            q.flush_now = true;
            q.driver_waker.take()
        };
        if let Some(w) = waker {
            w.wake();
        }
    }

    /// The error to hand a caller whose response went wrong: a protocol
    /// error also closes the connection, whose state can't be trusted.
    pub(crate) fn request_failed(&self, e: Error) -> Error {
        if e.kind() == crate::ErrorKind::Protocol {
            self.abort(e)
        } else {
            e
        }
    }

    /// Closes the connection because the server broke the protocol; returns
    /// the error for the caller that noticed.
    pub(crate) fn abort(&self, error: Error) -> Error {
        let waker = {
            let mut q = self.lock();
            q.abort
                .get_or_insert_with(|| (error.kind(), error.to_string()));
            q.closed.get_or_insert_with(|| error.to_string());
            self.closed_flag.store(true, Ordering::Release);
            q.driver_waker.take()
        };
        if let Some(w) = waker {
            w.wake();
        }
        error
    }

    /// The driver is gone: wake everyone waiting for a queue place.
    pub(crate) fn close_queue(&self) {
        self.permits.close();
    }

    /// Lock-free: the pool asks this on every statement.
    pub(crate) fn is_closed(&self) -> bool {
        self.closed_flag.load(Ordering::Acquire)
    }

    /// Records why the connection takes no more requests (first reason wins).
    pub(crate) fn mark_closed(&self, q: &mut Queue, reason: impl FnOnce() -> String) {
        q.closed.get_or_insert_with(reason);
        self.closed_flag.store(true, Ordering::Release);
    }
}
