//! The `Client`: a cheap, cloneable handle that any number of tasks share.
//! It is a front: every operation is a one-line delegation to the
//! connection handle ([`ConnRef`]) that the operations take.

use std::sync::Arc;
use std::time::Duration;

use crate::error::DbError;
use crate::query::ConnRef;
use crate::session::Session;
#[cfg(doc)]
use crate::Statement;
use crate::{CancelToken, TransactionStatus};

mod connect;
mod copy;
mod query;

crate::query::impl_generic_client!(Client, own_session);
mod session;
mod stats;
mod transaction;

pub use connect::{connect, connect_with_driver};
pub use stats::ClientStats;

/// A connection to PostgreSQL.
///
/// Clone it freely and use it from any number of tasks at once: requests
/// from all clones are pipelined on the one connection, each with its own
/// Sync, so a failing query never affects another. The connection is closed
/// (Terminate) when the last clone is dropped or [`close`](Client::close) is
/// called.
///
/// # Cancel safety
///
/// Every future returned by a `Client` method may be dropped at any await
/// point. The request may still run on the server (it may already have been
/// sent), but the connection stays correct: the driver consumes and discards
/// the rest of its response, and the next query gets its own answer.
#[derive(Clone)]
pub struct Client {
    conn: ConnRef,
}

impl Client {
    pub(crate) fn new(shared: Arc<Session>) -> Client {
        Client {
            conn: ConnRef::new(shared),
        }
    }

    /// The handle the operations run on.
    pub(crate) fn conn(&self) -> &ConnRef {
        &self.conn
    }

    pub(crate) fn shared(&self) -> &Arc<Session> {
        self.conn.shared()
    }

    /// A handle on the same connection whose queries time out after
    /// `timeout` (`Duration::ZERO`: never). The default comes from the
    /// `query_timeout` setting.
    ///
    /// On expiry, if the timed-out query is the only request on the
    /// connection, pgpipe holds back new requests, sends a CancelRequest,
    /// and waits up to 2 s for the server to end the query; the caller gets
    /// a timeout error and the connection stays usable, and the cancel can
    /// never hit a later query. If the server does not end it in time, the
    /// connection is closed. If other requests are pipelined on the
    /// connection, a cancel could hit one of them, so none is sent: the
    /// caller gets the timeout error at once and the query's result is
    /// discarded when it arrives.
    ///
    /// Applies to `query`, `query_one`, `query_opt` and `execute`.
    ///
    /// ```no_run
    /// # async fn f(client: &pgpipe::Client) -> Result<(), pgpipe::Error> {
    /// use std::time::Duration;
    /// let err = client
    ///     .with_timeout(Duration::from_millis(200))
    ///     .execute("SELECT pg_sleep(10)", ())
    ///     .await
    ///     .unwrap_err();
    /// assert!(err.is_timeout());
    /// # Ok(()) }
    /// ```
    pub fn with_timeout(&self, timeout: Duration) -> Client {
        Client {
            conn: self
                .conn
                .with_timeout((!timeout.is_zero()).then_some(timeout)),
        }
    }

    /// A handle on the same connection whose statements share a Sync with
    /// the statements of other tasks that the driver writes in the same go
    /// (the `coalesce_sync=on` setting makes it every handle's default).
    ///
    /// PostgreSQL ends an implicit transaction and flushes its output at
    /// every Sync; one Sync for a group of statements lets one connection
    /// run several times as many. Nothing waits for company: a statement
    /// alone in a write goes out as usual, so there is no added latency at
    /// low load. Results reach callers only after the group's
    /// ReadyForQuery, so a write is never reported done before it is
    /// committed.
    ///
    /// A group holds at most 32 statements: with more waiting, the driver
    /// writes several groups at once, and the server runs one while the
    /// client reads the answers of the one before. While statements fail,
    /// groups shrink (to about `sqrt(2 / p)` statements for a failing share
    /// `p`: 14 at 1 %) so that a failure sends fewer neighbours again; they
    /// grow back when failures stop.
    ///
    /// Applies to `query`, `query_one`, `query_opt`, `query_as...` and
    /// `execute` (SQL text or a prepared [`Statement`]). Never coalesced:
    /// transaction control (BEGIN, COMMIT, ROLLBACK, SAVEPOINT...),
    /// SET/RESET, COPY, LISTEN, anything while a
    /// [`Transaction`](crate::Transaction) holds the connection, streams,
    /// batches, portals, and the first execution of SQL text through the
    /// statement cache (its Parse creates a named statement, which must
    /// run once only).
    ///
    /// # The caveat: a statement may run twice
    ///
    /// The statements of a group run in one implicit transaction: if one
    /// fails, its caller gets its error, and every other statement of the
    /// group is sent again transparently: those before it ran and were
    /// rolled back, so each is sent again alone, once; those after it never
    /// ran (the server skipped them), so they are sent again as new
    /// statements that may share a Sync once more (a failure among them
    /// skips, never re-runs, the ones behind it). No statement runs more
    /// than twice. Their transactional
    /// effects happen once; effects that ignore rollback happen again:
    /// `nextval()`/`setval()` advance twice, session advisory locks are taken
    /// twice, `dblink` calls run twice. Send such statements through
    /// [`not_coalesced`](Client::not_coalesced).
    /// A statement refused inside a transaction block (SQLSTATE 25001,
    /// e.g. `VACUUM`) is sent again alone. The callers of a group where a
    /// statement failed, the failed one's included, get their answers
    /// together once the last one sent again has its own.
    ///
    /// Benchmarks note: TechEmpower's rules forbid sharing a Sync between
    /// queries; its workloads keep one Sync per query.
    ///
    /// ```no_run
    /// # async fn f(client: &pgpipe::Client) -> Result<(), pgpipe::Error> {
    /// let fast = client.coalesced();
    /// let (a, b) = tokio::join!(
    ///     fast.execute("INSERT INTO t VALUES ($1)", (1i32,)),
    ///     fast.execute("INSERT INTO t VALUES ($1)", (2i32,)),
    /// );
    /// // Never run twice, whatever its neighbours do:
    /// fast.not_coalesced().query_one("SELECT nextval('s')", ()).await?;
    /// # Ok(()) }
    /// ```
    pub fn coalesced(&self) -> Client {
        Client {
            conn: self.conn.with_coalesce(true),
        }
    }

    /// A handle whose statements each end with their own Sync (the
    /// default): the opt-out from [`coalesced`](Client::coalesced) for
    /// statements that must not run twice.
    pub fn not_coalesced(&self) -> Client {
        Client {
            conn: self.conn.with_coalesce(false),
        }
    }

    /// Whether this handle's statements may share a Sync (see
    /// [`coalesced`](Client::coalesced)).
    pub fn is_coalesced(&self) -> bool {
        self.conn.coalesce()
    }

    /// A token that cancels what this connection is running, from anywhere.
    pub fn cancel_token(&self) -> CancelToken {
        self.shared().cancel.clone()
    }

    /// Sets a callback for notices (NoticeResponse: warnings, `RAISE NOTICE`,
    /// ...). Notices are also logged through `tracing` under the target
    /// `pgpipe::notice`.
    pub fn on_notice(&self, handler: impl Fn(&DbError) + Send + Sync + 'static) {
        *self
            .shared()
            .notice_handler
            .write()
            .unwrap_or_else(|e| e.into_inner()) = Some(Arc::new(handler));
    }

    /// The current value of a server parameter reported by ParameterStatus
    /// (`server_version`, `TimeZone`, `client_encoding`, `application_name`,
    /// `is_superuser`, ...).
    pub fn parameter(&self, name: &str) -> Option<String> {
        self.shared().parameter(name)
    }

    /// The backend process ID serving this connection.
    pub fn backend_pid(&self) -> i32 {
        self.shared().process_id
    }

    /// The transaction state the server reported with its latest
    /// ReadyForQuery: whether the session is idle, inside a transaction
    /// block, or inside a failed one. With requests in flight this is the
    /// state after the latest answered one.
    pub fn transaction_status(&self) -> TransactionStatus {
        self.conn.transaction_status()
    }

    /// Requests sent or queued on this connection whose answer has not
    /// fully arrived yet (including ones whose futures were dropped).
    pub fn pending_requests(&self) -> usize {
        self.shared().outstanding()
    }

    /// Whether the connection can no longer run queries.
    pub fn is_closed(&self) -> bool {
        self.conn.is_closed()
    }

    /// Closes the connection (sends Terminate) for every clone of this
    /// client. Requests already sent still get their answers; later ones fail
    /// with a closed error.
    pub fn close(&self) {
        self.shared().terminate();
    }

    #[doc(hidden)]
    pub fn secret_key(&self) -> i32 {
        self.shared().secret_key
    }
}

impl std::fmt::Debug for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Client")
            .field("backend_pid", &self.backend_pid())
            .field("closed", &self.is_closed())
            .finish()
    }
}

#[cfg(test)]
mod future_size {
    use super::*;

    /// The size of the future `f` returns, without a connection to call it.
    fn size_of_future<Fut>(_: fn(&'static Client) -> Fut) -> usize {
        std::mem::size_of::<Fut>()
    }

    /// Every query starts by moving its future into place, and a future
    /// that holds its cold paths inline (catalog lookups, the cancel
    /// connection) or its operation twice is copied in full each time: at
    /// 7 KiB it cost a coalesced point select 13 % of its client CPU.
    #[test]
    fn a_query_future_stays_small() {
        const LIMIT: usize = 1536;
        let sizes = [
            ("query", size_of_future(|c| c.query("SELECT $1", &(1i32,)))),
            (
                "query_one",
                size_of_future(|c| c.query_one("SELECT $1", (1i32,))),
            ),
            (
                "execute",
                size_of_future(|c| c.execute("SELECT $1", (1i32,))),
            ),
        ];
        for (method, size) in sizes {
            assert!(
                size <= LIMIT,
                "{method}'s future is {size} bytes (limit {LIMIT})"
            );
        }
    }
}
