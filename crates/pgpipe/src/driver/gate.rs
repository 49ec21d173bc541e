//! The write gate: while a cancel request is under way for requests in
//! flight, nothing new is written, so that the cancel can only hit them
//! (a query timeout, a dropped COPY OUT, a dropped transaction).

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

use pgpipe_proto::backend::TransactionStatus;

use crate::driver::queue::Queue;
use crate::driver::reservation::{SessionId, NO_SESSION};
use crate::driver::{Shared, Slot};
use crate::error::ErrorKind;
use crate::Error;

impl Shared {
    /// Closes the write gate if `slot`'s request is the only one queued or
    /// in flight, has been written and has not ended: then a cancel can
    /// only hit it. (One not written yet would wait behind the gate for an
    /// end that cannot come.)
    pub(crate) fn gate_for_cancel(&self, slot: &Slot) -> bool {
        let mut q = self.lock();
        if q.closed.is_some()
            || q.write_gate
            || slot.is_done()
            || self.outstanding.load(Ordering::Relaxed) != 1
            || self.unanswered(&q) != 1
        {
            return false;
        }
        // Held back behind a transaction: not sent, so nothing to cancel
        // (and a cancel would hit the transaction).
        if q.reservation.as_ref().is_some_and(|held| {
            held.deferred_slots
                .iter()
                .any(|s| std::ptr::eq(Arc::as_ptr(s), slot))
        }) {
            return false;
        }
        q.write_gate = true;
        true
    }

    /// Closes the write gate for the cancel of a dropped session (see
    /// `session::cancel_dropped`): if `session` holds
    /// the connection (with [`NO_SESSION`]: nobody holds it, its holder
    /// has it to itself), the server is inside a transaction block (so
    /// the session's BEGIN has been answered: whatever was written before
    /// it has ended), nothing else holds the gate, and something written
    /// is still unanswered.
    pub(crate) fn gate_for_dropped(&self, session: SessionId) -> bool {
        let mut q = self.lock();
        let ours = match &q.reservation {
            Some(held) => held.session == session,
            None => session == NO_SESSION,
        };
        if !ours
            || q.closed.is_some()
            || q.write_gate
            || self.transaction_status() == TransactionStatus::Idle
        {
            return false;
        }
        if self.unanswered(&q) == 0 {
            return false;
        }
        q.write_gate = true;
        true
    }

    /// Requests written to the socket whose answer has not ended: the
    /// outstanding ones that are neither queued nor held behind a session.
    pub(crate) fn written_unanswered(&self) -> usize {
        self.unanswered(&self.lock())
    }

    fn unanswered(&self, q: &Queue) -> usize {
        let queued: usize = q.slots.iter().map(|s| s.requests()).sum();
        let deferred = q.reservation.as_ref().map_or(0, |r| r.deferred_slots.len());
        self.outstanding
            .load(Ordering::Relaxed)
            .saturating_sub(queued + deferred)
    }

    /// A caller whose query timed out gives up its request: if it is still
    /// held behind another session's reservation, it is withdrawn (never
    /// sent, so nothing to cancel) and the error says why; `None` if it
    /// was sent.
    pub(crate) fn withdraw_held(&self, slot: &Slot, limit: Duration) -> Option<Error> {
        let reason = crate::driver::responses::held_error(limit);
        let _q = self.lock();
        slot.withdraw(ErrorKind::Timeout, &reason)
            .then(|| Error::new(ErrorKind::Timeout, reason))
    }

    pub(crate) fn open_gate(&self) {
        let waker = {
            let mut q = self.lock();
            q.write_gate = false;
            q.driver_waker.take()
        };
        if let Some(w) = waker {
            w.wake();
        }
    }
}
