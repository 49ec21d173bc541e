//! `PooledClient`: a connection checked out of a pool.

use std::fmt;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::OwnedSemaphorePermit;

use super::conn::Conn;
use super::inner::PoolInner;
use crate::query::{delegate_queries, ConnRef};
use crate::{Client, Error, Transaction, TransactionBuilder, TransactionStatus};

/// A connection checked out of a [`Pool`](super::Pool) for exclusive use:
/// session state (`SET`, temporary tables, prepared statements) and
/// transactions stay with you until it is dropped.
///
/// It has the query methods of [`Client`] (`query`, `execute`,
/// `query_stream`, `batch`, `prepare`, COPY, ...) and its transactions, and
/// the connection-wide methods that cannot outlive the checkout
/// (`backend_pid`, `parameter`, `transaction_status`, `is_closed`); not the
/// ones that could (`on_notice`, `listen`, `cancel_token`, `close`, handles
/// such as `with_timeout`).
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
pub struct PooledClient {
    client: Client,
    conn: Option<Conn>,
    permit: Option<OwnedSemaphorePermit>,
    pool: Arc<PoolInner>,
    /// Whether the client was reached: then requests may still be in
    /// flight when it is returned, and the pool checks it before reuse.
    touched: AtomicBool,
    /// When it was checked out (for `db.client.connection.use_time`).
    #[cfg(any(feature = "metrics", feature = "opentelemetry"))]
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
            #[cfg(any(feature = "metrics", feature = "opentelemetry"))]
            checked_out: std::time::Instant::now(),
        }
    }

    /// The handle the operations run on; marks the connection as used,
    /// so the pool checks it before handing it out again.
    pub(crate) fn conn(&self) -> &ConnRef {
        // A relaxed store to our own field: nothing next to a query.
        self.touched.store(true, Ordering::Relaxed);
        self.client.conn()
    }

    /// The handle, without marking the connection as used by its holder:
    /// for a pool transaction, which ends its own work before returning it.
    pub(crate) fn session_conn(&self) -> &ConnRef {
        self.client.conn()
    }

    /// The client, for the pool's own single-statement path.
    pub(crate) fn client(&self) -> &Client {
        self.touched.store(true, Ordering::Relaxed);
        &self.client
    }

    delegate_queries!();

    crate::copy::delegate_copy!();

    crate::transaction::delegate_upsert!();

    /// Starts a transaction on this checked-out connection; the guard stays
    /// borrowed until the transaction ends.
    pub async fn transaction(&mut self) -> Result<Transaction<'_>, Error> {
        self.build_transaction().start().await
    }

    /// A [`TransactionBuilder`] for a transaction on this checked-out
    /// connection.
    pub fn build_transaction(&mut self) -> TransactionBuilder<'_> {
        TransactionBuilder::on_conn(self.conn().clone())
    }

    /// The backend process ID serving this connection.
    pub fn backend_pid(&self) -> i32 {
        self.client.backend_pid()
    }

    /// A server parameter (see [`Client::parameter`]).
    pub fn parameter(&self, name: &str) -> Option<String> {
        self.client.parameter(name)
    }

    /// The session's transaction state (see
    /// [`Client::transaction_status`]).
    pub fn transaction_status(&self) -> TransactionStatus {
        self.client.transaction_status()
    }

    /// Whether the connection can no longer run queries.
    pub fn is_closed(&self) -> bool {
        self.client.is_closed()
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

crate::query::impl_generic_client!(PooledClient, own_session);

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
        #[cfg(any(feature = "metrics", feature = "opentelemetry"))]
        super::metrics::returned(
            &self.pool.counters,
            self.pool.gauges(),
            self.checked_out.elapsed(),
        );
    }
}

impl fmt::Debug for PooledClient {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PooledClient")
            .field("client", &self.client)
            .finish()
    }
}
