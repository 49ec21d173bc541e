//! Cancelling the work of a dropped transaction (or pool guard): its
//! ROLLBACK would otherwise wait behind the statement still running, and
//! its locks would outlive the drop by that statement's remaining time.

use std::sync::Arc;
use std::time::Duration;

use crate::driver::SessionId;
use crate::error::ErrorKind;
use crate::session::Session;
use crate::Error;

/// How long the dropped session's statements may take to end after the
/// first cancel, before the connection is given up.
const GRACE: Duration = Duration::from_secs(10);

/// A cancel is sent again this often while they have not ended: a cancel
/// that reaches the backend between two statements (reading the next one)
/// is ignored by the server.
const RESEND: Duration = Duration::from_secs(1);

/// How often the end of the written statements is checked: only while a
/// dropped session's cancel is under way, never on a query's path.
const CHECK: Duration = Duration::from_millis(5);

/// For a session that is being dropped inside a transaction block on the
/// server (`session`'s reservation, or with [`NO_SESSION`] a connection
/// its holder has to itself, like a pool guard): closes the write gate and
/// cancels what it has written and not seen answered, so that the
/// ROLLBACK queued next runs at once instead of after the statement.
///
/// Nothing is sent meanwhile (the ROLLBACK and anything queued after it
/// wait behind the gate), so the cancel can only hit the session's own
/// statements, which the rollback undoes anyway; the gate reopens once
/// they have all ended. Call it before queueing the ROLLBACK. Does nothing
/// outside a tokio runtime, when nothing is in flight, or when the
/// transaction's BEGIN has not been answered yet (the server may still be
/// running someone else's statement).
///
/// [`NO_SESSION`]: crate::driver::NO_SESSION
pub(crate) fn cancel_dropped(shared: &Arc<Session>, session: SessionId) {
    let Ok(runtime) = tokio::runtime::Handle::try_current() else {
        return;
    };
    if !shared.gate_for_dropped(session) {
        return;
    }
    let gate = OpenGateOnDrop(shared.clone());
    runtime.spawn(async move {
        let shared = &gate.0;
        let ended = tokio::time::timeout(GRACE, async {
            loop {
                // A failed cancel (the server unreachable) is retried
                // until GRACE; the connection is given up after it.
                let _ = shared.cancel.cancel().await;
                let answered = tokio::time::timeout(RESEND, async {
                    while shared.written_unanswered() > 0 {
                        tokio::time::sleep(CHECK).await;
                    }
                })
                .await;
                if answered.is_ok() {
                    return;
                }
            }
        })
        .await;
        if ended.is_err() {
            // The statements did not end: their state is unknown, and a
            // late cancel could hit the next user's. Requests queued
            // behind the gate fail as closed, never sent.
            shared.abort(Error::new(
                ErrorKind::Closed,
                "a dropped transaction's statement did not end after a cancel; connection closed",
            ));
        }
    });
}

/// Reopens the write gate however the cancel ends (even if the runtime
/// drops its task unpolled).
struct OpenGateOnDrop(Arc<Session>);

impl Drop for OpenGateOnDrop {
    fn drop(&mut self) {
        self.0.open_gate();
    }
}
