//! [`ConnRef`]: the handle every operation runs on.

use std::sync::Arc;
use std::time::Duration;

use crate::driver::{SessionId, NO_SESSION};
use crate::session::Session;
use crate::TransactionStatus;

/// One caller's view of a connection: the driver state shared by every
/// handle of the connection, the reservation this caller's requests belong
/// to (a transaction's or a COPY's, or none), its query timeout and whether
/// its statements may share a Sync.
///
/// The operations (queries, COPY, LISTEN, type look-ups, transactions)
/// take this, never a public type: `Client`, `Transaction` and the pool's
/// handles are fronts that hold one and delegate to it. Cloning it clones
/// one `Arc`; the query path only borrows it. The connection is closed
/// (Terminate) when the last handle is dropped.
#[derive(Clone)]
pub(crate) struct ConnRef {
    life: Arc<Life>,
    /// The reservation this handle's requests belong to: set on a
    /// transaction's handle, whose requests go out while other handles'
    /// wait behind the transaction.
    pub(super) session: SessionId,
    /// Client-side timeout of each query made through this handle.
    pub(super) timeout: Option<Duration>,
    /// Whether this handle's statements may share a Sync with their
    /// neighbours (see `Client::coalesced`).
    pub(super) coalesce: bool,
}

/// Shared by every handle of one connection: the last one dropped closes
/// it.
struct Life(Arc<Session>);

impl Drop for Life {
    fn drop(&mut self) {
        self.0.terminate();
    }
}

impl ConnRef {
    /// The first handle of a new connection: outside any reservation, with
    /// the connection's default timeout and coalescing.
    pub(crate) fn new(shared: Arc<Session>) -> ConnRef {
        ConnRef {
            timeout: shared.query_timeout,
            coalesce: shared.coalesce,
            life: Arc::new(Life(shared)),
            session: NO_SESSION,
        }
    }

    /// The driver state shared by every handle of the connection.
    pub(crate) fn shared(&self) -> &Arc<Session> {
        &self.life.0
    }

    /// The client-side query timeout of this handle.
    pub(crate) fn timeout(&self) -> Option<Duration> {
        self.timeout
    }

    /// The reservation this handle's requests belong to.
    pub(crate) fn session(&self) -> SessionId {
        self.session
    }

    /// Whether this handle's statements may share a Sync.
    pub(crate) fn coalesce(&self) -> bool {
        self.coalesce
    }

    /// Whether this handle's requests belong to a reservation that is
    /// still held (an open transaction or COPY).
    pub(crate) fn in_reservation(&self) -> bool {
        self.session != NO_SESSION && self.shared().holds(self.session)
    }

    /// The same handle with another query timeout (`None`: never).
    pub(crate) fn with_timeout(&self, timeout: Option<Duration>) -> ConnRef {
        ConnRef {
            timeout,
            ..self.clone()
        }
    }

    /// The same handle with coalescing on or off.
    pub(crate) fn with_coalesce(&self, coalesce: bool) -> ConnRef {
        ConnRef {
            coalesce,
            ..self.clone()
        }
    }

    /// A handle on the same connection whose requests belong to `session`.
    pub(crate) fn in_session(&self, session: SessionId) -> ConnRef {
        ConnRef {
            session,
            ..self.clone()
        }
    }

    /// The transaction state the server reported with its latest
    /// ReadyForQuery.
    pub(crate) fn transaction_status(&self) -> TransactionStatus {
        self.shared().transaction_status()
    }

    /// Whether the connection can no longer run queries.
    pub(crate) fn is_closed(&self) -> bool {
        self.shared().is_closed()
    }
}
