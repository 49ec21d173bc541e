//! `PooledClient`: a connection checked out of a pool.

use std::fmt;
use std::ops::Deref;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::OwnedSemaphorePermit;

use super::inner::{Conn, PoolInner};
use crate::Client;

/// A connection checked out of a [`Pool`](super::Pool) for exclusive use:
/// session state (`SET`, temporary tables, prepared statements) and
/// transactions stay with you until it is dropped.
///
/// It dereferences to [`Client`], so every query method is available.
/// Dropping it returns the connection to the pool, also when a query on it
/// was cancelled mid-flight. A transaction left open or failed (a `BEGIN`
/// run by hand, say) is rolled back at once, not at the next checkout, and
/// requests still in flight are waited for first; until then nobody else
/// gets the connection. Inside such a transaction, a statement still
/// running when the guard is dropped is cancelled first (it would be
/// rolled back anyway), so its locks go at once. A connection whose
/// rollback fails is closed.
///
/// Session settings other than the transaction (`SET`, temporary tables,
/// prepared statements, `LISTEN`) are *not* reset: undo them yourself, or
/// use `SET LOCAL` inside a transaction.
///
/// Don't keep clones of the [`Client`] past the guard: once returned, the
/// connection belongs to the next user.
pub struct PooledClient {
    client: Client,
    conn: Option<Conn>,
    permit: Option<OwnedSemaphorePermit>,
    pool: Arc<PoolInner>,
    /// Whether the client was reached: then requests may still be in
    /// flight when it is returned, and the pool checks it before reuse.
    touched: AtomicBool,
    /// When it was checked out (for `db.client.connection.use_time`).
    #[cfg(feature = "metrics")]
    checked_out: std::time::Instant,
}

impl PooledClient {
    pub(crate) fn new(conn: Conn, permit: OwnedSemaphorePermit, pool: Arc<PoolInner>) -> Self {
        pool.counters
            .in_use
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        PooledClient {
            client: conn.client.clone(),
            conn: Some(conn),
            permit: Some(permit),
            pool,
            touched: AtomicBool::new(false),
            #[cfg(feature = "metrics")]
            checked_out: std::time::Instant::now(),
        }
    }

    /// The client (same as dereferencing).
    pub fn client(&self) -> &Client {
        self
    }

    /// The client, without marking the connection as used by its holder:
    /// for a pool transaction, which ends its own work before returning it.
    pub(crate) fn session_client(&self) -> &Client {
        &self.client
    }

    /// How long ago the pool opened this connection.
    pub fn age(&self) -> Duration {
        self.conn.as_ref().map(Conn::age).unwrap_or_default()
    }

    /// Declares that nothing is in flight and no transaction is open (the
    /// pool's own single-statement path, after the statement completed):
    /// the connection can be handed out again without a check.
    pub(crate) fn mark_settled(&self) {
        self.touched.store(false, Ordering::Relaxed);
    }
}

impl Deref for PooledClient {
    type Target = Client;

    fn deref(&self) -> &Client {
        // A relaxed store to our own field: nothing next to a query.
        self.touched.store(true, Ordering::Relaxed);
        &self.client
    }
}

impl AsRef<Client> for PooledClient {
    fn as_ref(&self) -> &Client {
        self
    }
}

impl Drop for PooledClient {
    fn drop(&mut self) {
        self.pool
            .counters
            .in_use
            .fetch_sub(1, std::sync::atomic::Ordering::Relaxed);
        if let (Some(conn), Some(permit)) = (self.conn.take(), self.permit.take()) {
            self.pool
                .release(conn, permit, self.touched.load(Ordering::Relaxed));
        }
        #[cfg(feature = "metrics")]
        self.pool.returned_metrics(self.checked_out.elapsed());
    }
}

impl fmt::Debug for PooledClient {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PooledClient")
            .field("client", &self.client)
            .finish()
    }
}
