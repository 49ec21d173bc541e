//! A statement abandoned by its caller (its future dropped, a stream or a
//! COPY OUT dropped before the end) is cancelled on the server when that
//! is race-free, so it stops holding the server and the connection at once
//! instead of running to its end while the driver discards its output.
//!
//! A cancel request hits whatever the backend runs when it arrives, so it
//! is sent only when it cannot hit anyone else: the abandoned request is
//! the only one written or queued on the connection, outside any
//! transaction (an abandoned statement inside one is left to finish: its
//! transaction is still the caller's, and a cancel would abort it), and the
//! write gate holds every later request back until the abandoned one has
//! ended. Otherwise the driver drains the rest of its reply, as before.

use std::sync::Arc;
use std::time::Duration;

use crate::driver::{Slot, NO_SESSION};
use crate::error::ErrorKind;
use crate::query::ConnRef;
use crate::session::Session;
use crate::{Error, TransactionStatus};

/// How long the abandoned statement may take to end after the first
/// cancel before the connection, whose state is then unknown, is closed.
const GRACE: Duration = Duration::from_secs(10);

/// The cancel is sent again this often until the statement ends: one that
/// reaches the backend between two protocol messages (before Execute, say)
/// is ignored by the server.
const RESEND: Duration = Duration::from_secs(1);

/// Cancels the request of `slot` on the server if it is abandoned
/// unfinished and the cancel is race-free (see the module's text).
/// Returns whether a cancel was started. Does nothing outside a tokio
/// runtime.
pub(crate) fn cancel_abandoned(shared: &Arc<Session>, slot: &Arc<Slot>) -> bool {
    if slot.is_done() || shared.transaction_status() != TransactionStatus::Idle {
        return false;
    }
    let Ok(runtime) = tokio::runtime::Handle::try_current() else {
        return false;
    };
    if !shared.gate_for_cancel(slot) {
        return false;
    }
    let gate = OpenGateOnDrop(shared.clone());
    let slot = slot.clone();
    runtime.spawn(async move {
        let shared = &gate.0;
        let ended = tokio::time::timeout(GRACE, async {
            loop {
                // A failed cancel (the server unreachable) is retried until
                // GRACE; the connection is given up after it.
                let _ = shared.cancel.cancel().await;
                if tokio::time::timeout(RESEND, slot.wait_done()).await.is_ok() {
                    return;
                }
            }
        })
        .await;
        if ended.is_err() {
            // A late cancel could hit the next request: give up the
            // connection (requests held behind the gate fail as closed,
            // never sent).
            shared.abort(Error::new(
                ErrorKind::Closed,
                "an abandoned statement did not end after a cancel; connection closed",
            ));
        }
    });
    true
}

/// Held while a request's reply is awaited: dropped armed (the caller's
/// future was dropped before the reply ended), it cancels the request as
/// [`cancel_abandoned`] does. Requests of a transaction or a held session
/// are never armed.
pub(crate) struct CancelIfAbandoned<'a> {
    // Borrowed: the caller's `ConnRef` outlives the wait, so only the slot
    // (which the reply reader borrows mutably meanwhile) costs a clone.
    shared: &'a Arc<Session>,
    slot: Arc<Slot>,
    armed: bool,
}

impl<'a> CancelIfAbandoned<'a> {
    pub(crate) fn new(conn: &'a ConnRef, slot: &Arc<Slot>) -> CancelIfAbandoned<'a> {
        CancelIfAbandoned {
            shared: conn.shared(),
            slot: slot.clone(),
            armed: conn.session() == NO_SESSION,
        }
    }

    /// The reply was read to its end (or the caller handles the rest).
    pub(crate) fn disarm(&mut self) {
        self.armed = false;
    }
}

impl Drop for CancelIfAbandoned<'_> {
    fn drop(&mut self) {
        if self.armed {
            cancel_abandoned(self.shared, &self.slot);
        }
    }
}

/// Reopens the write gate however the cancel ends (even if the runtime
/// drops its task unpolled).
struct OpenGateOnDrop(Arc<Session>);

impl Drop for OpenGateOnDrop {
    fn drop(&mut self) {
        self.0.open_gate();
    }
}
