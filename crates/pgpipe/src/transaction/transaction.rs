//! [`Transaction`]: a transaction (or a savepoint inside one) that can only
//! be used while it is open.

use std::fmt;
use std::marker::PhantomData;

use tracing::Instrument;

use crate::driver::{Request, SessionEnd};
use crate::error::ErrorKind;
use crate::query::{delegate_queries, ConnRef};
use crate::Error;

use super::builder::already_in_transaction;
use crate::query::control::{
    encode_control, expired, read_control, read_control_value, send_control, Ended,
};

/// An open transaction, or a savepoint inside one (a nested
/// transaction).
///
/// It has the query methods of [`Client`](crate::Client) (`query`,
/// `query_one`, `query_as`, `execute`, `query_stream`, `batch`, `prepare`,
/// `bind_portal`, `simple_query`, COPY, `upsert_rows`), all running inside
/// the transaction, and its own life cycle; nothing connection-wide (no
/// `close`, no nested `build_transaction`). [`commit`](Self::commit) and
/// [`rollback`](Self::rollback) consume it, so a finished transaction
/// cannot be used by mistake.
///
/// - **BEGIN costs no round trip**: it is sent in front of the first
///   statement and shares that statement's Sync; if BEGIN fails, the
///   statement is skipped by the server (it never runs outside the
///   transaction) and reports BEGIN's error. A transaction in which nothing
///   ran sends nothing at all.
/// - **Dropped = rolled back now**: a transaction dropped without
///   `commit` (an early return, a `?`, a panic unwinding, a future
///   cancelled at any await point) queues ROLLBACK in the connection's
///   write buffer at once; no await is needed, the connection's driver
///   sends it, and the server ends the transaction (releasing its locks)
///   within one round trip. Statements pipelined before the drop still get
///   their answers. If one of its statements is still running on the
///   server (a `tokio::time::timeout` fired during a long query), a cancel
///   request is sent for it first, so the ROLLBACK does not wait for the
///   statement to end: the locks go within a round trip or two, whatever
///   the statement's length. The connection is reserved for the
///   transaction and nothing else is sent until the cancelled statements
///   have ended, so the cancel can only hit the transaction's own work. A nested transaction dropped this way rolls back to its
///   savepoint and releases it.
/// - **Failed transactions**: once a statement has failed, the server
///   refuses everything but a rollback; pgpipe refuses further statements
///   itself with [`ErrorKind::TransactionAborted`], without a round trip.
///   [`commit`](Self::commit) of a failed transaction returns
///   [`ErrorKind::RolledBack`].
/// - **Unknown outcome**: if the connection is lost while COMMIT is in
///   flight, or COMMIT gets no answer within the query timeout (a slow
///   commit-time trigger, a stalled server), `commit` returns
///   [`ErrorKind::OutcomeUnknown`] ([`Error::is_outcome_unknown`]): the
///   transaction may or may not have been committed. On a timeout the
///   connection is closed (a pool discards it).
/// - **Bounded**: COMMIT, ROLLBACK and the savepoint statements wait at
///   most the query timeout (`query_timeout`, or
///   [`Client::with_timeout`](crate::Client::with_timeout)); a ROLLBACK or
///   savepoint statement that runs out of it returns
///   [`ErrorKind::Timeout`] and closes the connection, which ends the
///   transaction on the server without committing it.
///
/// ```no_run
/// # async fn f(client: &mut pgpipe::Client) -> Result<(), pgpipe::Error> {
/// let mut tx = client.transaction().await?;
/// tx.execute("INSERT INTO mailbox (uid) VALUES ($1)", (7i64,)).await?;
/// {
///     let sp = tx.savepoint("copy_messages").await?;
///     if sp.execute("INSERT INTO message SELECT * FROM staging", ()).await.is_err() {
///         sp.rollback().await?; // the mailbox row stays
///     } else {
///         sp.commit().await?;
///     }
/// }
/// tx.commit().await?;
/// # Ok(()) }
/// ```
pub struct Transaction<'a> {
    /// A handle whose requests belong to this transaction's session.
    conn: ConnRef,
    /// The savepoint of a nested transaction (quoted); `None` at the top.
    savepoint: Option<String>,
    /// 0 at the top, 1 for a savepoint inside it, and so on.
    depth: u32,
    /// Committed, rolled back, or its end is queued: nothing to do on drop.
    finished: bool,
    /// What a pool transaction holds until it ends (its checkout).
    guard: Option<Box<dyn Send + Sync>>,
    /// A nested transaction borrows its parent mutably, so the parent can't
    /// be used (or ended) while it is open: nesting can't be confused.
    _parent: PhantomData<&'a mut ()>,
}

impl Transaction<'_> {
    /// Reserves `conn`'s connection for a new transaction.
    pub(crate) async fn start<'a>(
        conn: ConnRef,
        guard: Option<Box<dyn Send + Sync>>,
        begin: String,
    ) -> Result<Transaction<'a>, Error> {
        if conn.in_reservation() {
            return Err(already_in_transaction());
        }
        let reserving = conn.shared().reserve(begin.into_boxed_str());
        let session = match conn.timeout() {
            None => reserving.await?,
            Some(limit) => tokio::time::timeout(limit, reserving).await.map_err(|_| {
                Error::new(
                    ErrorKind::Timeout,
                    format!("waited {limit:?} for another transaction on this connection to end"),
                )
            })??,
        };
        Ok(Transaction {
            conn: conn.in_session(session),
            savepoint: None,
            depth: 0,
            finished: false,
            guard,
            _parent: PhantomData,
        })
    }

    /// How deeply this transaction is nested: 0 for a transaction, 1 for a
    /// savepoint in it, and so on.
    pub fn depth(&self) -> u32 {
        self.depth
    }

    /// A plain transaction (`BEGIN`) on `conn`'s connection, for helpers
    /// that need one of their own (`upsert_rows`).
    pub(crate) async fn begin(conn: &ConnRef) -> Result<Transaction<'static>, Error> {
        Transaction::start(conn.clone(), None, "BEGIN".to_owned()).await
    }

    /// The handle the operations run on, inside this transaction.
    pub(crate) fn conn(&self) -> &ConnRef {
        &self.conn
    }

    delegate_queries!();

    crate::copy::delegate_copy!();

    super::delegate_upsert!();

    /// The transaction state the server reported last: in a transaction,
    /// or in a failed one (see
    /// [`Client::transaction_status`](crate::Client::transaction_status)).
    pub fn transaction_status(&self) -> crate::TransactionStatus {
        self.conn.transaction_status()
    }

    /// The backend process ID serving this transaction (for
    /// `pg_stat_activity`, `pg_locks`, ...).
    pub fn backend_pid(&self) -> i32 {
        self.conn.shared().process_id
    }

    /// Starts a nested transaction at a savepoint named `name` (quoted as
    /// an identifier, so any name is safe). Its `commit` releases the
    /// savepoint; its `rollback`, or dropping it, rolls back to the
    /// savepoint (keeping this transaction's earlier work) and releases it.
    ///
    /// One round trip (SAVEPOINT is answered before this returns).
    /// Cancel safe: if dropped before it completes, the savepoint may exist
    /// on the server but is harmless (it ends with the transaction).
    pub async fn savepoint(&mut self, name: &str) -> Result<Transaction<'_>, Error> {
        let quoted = crate::sql::quote_ident("savepoint", name)?;
        let mut responses = send_control(&self.conn, &[&format!("SAVEPOINT {quoted}")]).await?;
        read_control(self.conn.shared(), &mut responses, self.conn.timeout()).await?;
        Ok(Transaction {
            conn: self.conn.clone(),
            savepoint: Some(quoted),
            depth: self.depth + 1,
            finished: false,
            guard: None,
            _parent: PhantomData,
        })
    }

    /// A nested transaction at a savepoint named after its depth
    /// (`pgpipe_savepoint_1`, ...). See [`savepoint`](Self::savepoint).
    pub async fn transaction(&mut self) -> Result<Transaction<'_>, Error> {
        let name = format!("pgpipe_savepoint_{}", self.depth + 1);
        self.savepoint(&name).await
    }

    /// Commits: COMMIT, or RELEASE SAVEPOINT for a nested transaction.
    ///
    /// # Errors
    ///
    /// - [`ErrorKind::RolledBack`]: the transaction had failed, and the
    ///   server answered COMMIT with ROLLBACK; nothing was committed.
    /// - [`ErrorKind::Db`]: COMMIT itself failed (a deferred constraint, a
    ///   serialization failure); the transaction was rolled back.
    /// - [`ErrorKind::OutcomeUnknown`]: the connection was lost while
    ///   COMMIT was in flight, or COMMIT got no answer within the query
    ///   timeout (the connection is then closed); it may or may not have
    ///   been committed.
    ///
    /// Cancel safe: once COMMIT is queued, dropping this future does not
    /// stop it; before that, the drop rolls the transaction back.
    pub async fn commit(mut self) -> Result<(), Error> {
        let op = crate::observe::Op::start("commit", Some(self.conn.shared()), None);
        let ended = self.commit_untraced().instrument(op.span().clone()).await;
        op.finish(&ended, |_| 0);
        ended
    }

    async fn commit_untraced(&mut self) -> Result<(), Error> {
        match self.savepoint.clone() {
            Some(name) => {
                let release = format!("RELEASE SAVEPOINT {name}");
                self.end_nested(&[&release]).await
            }
            None => self.end_top(&["COMMIT"]).await.map(drop),
        }
    }

    /// Commits, and returns the server's WAL insert position right after
    /// the commit (`pg_current_wal_insert_lsn()`): at or after the commit
    /// record, so a standby that has replayed up to it has the
    /// transaction. The position's `SELECT` goes out with COMMIT under one
    /// Sync: no extra round trip. It runs only if COMMIT succeeded.
    ///
    /// This is what a read-your-writes token is made of (see
    /// `pgpipe::cluster::commit_with_token`).
    ///
    /// ```no_run
    /// # async fn f(pool: &pgpipe::Pool) -> Result<(), pgpipe::Error> {
    /// let tx = pool.transaction().await?;
    /// tx.execute("INSERT INTO mailbox (uid) VALUES ($1)", (7i64,)).await?;
    /// let lsn = tx.commit_with_lsn().await?;
    /// println!("committed at or before {lsn}");
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// As [`commit`](Self::commit); also [`ErrorKind::InvalidUse`] for a
    /// nested transaction (its changes are committed by its parent), and
    /// [`ErrorKind::Protocol`] if the position did not come back. A
    /// transaction in which nothing ran commits nothing and is refused
    /// with [`ErrorKind::InvalidUse`] too: there is no write to wait for.
    ///
    /// Cancel safe (like [`commit`](Self::commit)).
    pub async fn commit_with_lsn(self) -> Result<pgpipe_types::PgLsn, Error> {
        let value = self
            .commit_then("commit_with_lsn", "SELECT pg_current_wal_insert_lsn()")
            .await?;
        std::str::from_utf8(&value)
            .ok()
            .and_then(|text| text.parse().ok())
            .ok_or_else(|| Error::protocol("the WAL position after COMMIT is not a pg_lsn"))
    }

    /// COMMIT and `select` (one row, one column) in the same round trip:
    /// the column's text. The errors of [`commit_with_lsn`](Self::commit_with_lsn),
    /// which names itself `what` in them.
    pub(crate) async fn commit_then(
        mut self,
        what: &str,
        select: &str,
    ) -> Result<bytes::Bytes, Error> {
        if self.savepoint.is_some() {
            // Dropping rolls the savepoint back: say so rather than commit.
            return Err(Error::new(
                ErrorKind::InvalidUse,
                format!("{what} on a nested transaction: its parent commits its changes"),
            ));
        }
        let op = crate::observe::Op::start("commit", Some(self.conn.shared()), None);
        let ended = self
            .end_top(&["COMMIT", select])
            .instrument(op.span().clone())
            .await;
        op.finish(&ended, |_| 0);
        ended?.ok_or_else(|| {
            Error::new(
                ErrorKind::InvalidUse,
                format!("{what}: nothing ran in the transaction, so nothing was committed"),
            )
        })
    }

    /// Rolls back: ROLLBACK, or ROLLBACK TO SAVEPOINT and RELEASE SAVEPOINT
    /// for a nested transaction (whose parent goes on).
    ///
    /// Cancel safe (like [`commit`](Self::commit)).
    pub async fn rollback(mut self) -> Result<(), Error> {
        let op = crate::observe::Op::start("rollback", Some(self.conn.shared()), None);
        let ended = self.rollback_untraced().instrument(op.span().clone()).await;
        op.finish(&ended, |_| 0);
        ended
    }

    async fn rollback_untraced(&mut self) -> Result<(), Error> {
        match self.savepoint.clone() {
            Some(name) => {
                let to = format!("ROLLBACK TO SAVEPOINT {name}");
                let release = format!("RELEASE SAVEPOINT {name}");
                self.end_nested(&[&to, &release]).await
            }
            None => self.end_top(&["ROLLBACK"]).await.map(drop),
        }
    }

    /// Ends the transaction with `statements` (COMMIT or ROLLBACK, maybe
    /// followed by a statement whose first value is returned). `None`
    /// when nothing was sent (no transaction existed on the server).
    async fn end_top(&mut self, statements: &[&str]) -> Result<Option<bytes::Bytes>, Error> {
        let sql = statements[0];
        let shared = self.conn.shared().clone();
        let permit = shared.permit().await?;
        let session = self.conn.session();
        // From here on nothing awaits until the end is queued: a drop
        // either rolls back (before) or leaves the queued end to run.
        self.finished = true;
        let queued = shared.end_session(session, Some(permit), |enc, buf| {
            encode_control(enc, statements, buf)
        });
        let committing = sql == "COMMIT";
        let mut responses = match queued {
            Ok(SessionEnd::Sent(r)) => r,
            // BEGIN never left: no transaction exists on the server.
            Ok(SessionEnd::NeverBegun | SessionEnd::NotHeld) => return Ok(None),
            Ok(SessionEnd::BeginFailed) if committing => {
                return Err(Error::new(
                    ErrorKind::RolledBack,
                    "the transaction's BEGIN failed: nothing was committed",
                ))
            }
            Ok(SessionEnd::BeginFailed) => return Ok(None),
            Err(e) => return Err(e.context(format!("{sql} was not sent"))),
        };
        let limit = self.conn.timeout();
        match read_control_value(&shared, &mut responses, limit).await {
            Ok((Ended::Done, value)) => Ok(value),
            Ok((Ended::RolledBack, _)) if committing => Err(Error::new(
                ErrorKind::RolledBack,
                "COMMIT was answered with ROLLBACK: the transaction had failed, nothing was \
                 committed",
            )),
            Ok((Ended::RolledBack, _)) => Ok(None),
            // The query timeout ran out first: COMMIT may still complete on
            // the server (or may have, its answer in flight), and the
            // connection is closed.
            Err(e) if committing && expired(&e) => Err(Error::new(
                ErrorKind::OutcomeUnknown,
                format!(
                    "COMMIT got no answer within the query timeout ({:?}): the transaction may \
                     or may not have been committed; the connection was closed",
                    limit.unwrap_or_default()
                ),
            )
            .with_source(e)),
            // Nothing was committed: the server rolls back what the closed
            // connection left open.
            Err(e) if expired(&e) => {
                Err(e.context(format!("{sql}: the transaction was not committed")))
            }
            // The connection ended while COMMIT was in flight: either the
            // transport broke, or the server sent a FATAL error (57P01 when
            // the backend is terminated) and closed it. Either way nobody
            // can say whether the COMMIT took effect.
            Err(e)
                if committing
                    && (matches!(e.kind(), ErrorKind::Closed | ErrorKind::Io)
                        || ends_the_session(&e)
                        || shared.is_closed()) =>
            {
                Err(Error::new(
                    ErrorKind::OutcomeUnknown,
                    "the connection was lost while COMMIT was in flight: the transaction may \
                     or may not have been committed",
                )
                .with_source(e))
            }
            Err(e) => Err(e),
        }
    }

    async fn end_nested(&mut self, statements: &[&str]) -> Result<(), Error> {
        let shared = self.conn.shared().clone();
        let permit = shared.permit().await?;
        let (mut responses, ()) = shared.send_cached(
            self.conn.session(),
            Request::Control,
            Some(permit),
            |enc, buf, _| encode_control(enc, statements, buf),
        )?;
        self.finished = true;
        read_control(&shared, &mut responses, self.conn.timeout())
            .await
            .map(drop)
    }
}

crate::query::impl_generic_client!(Transaction<'_>, own_session);

impl Drop for Transaction<'_> {
    fn drop(&mut self) {
        if self.finished {
            return;
        }
        let shared = self.conn.shared();
        // Queued now, sent by the driver: no await, no runtime needed. If
        // the connection is closed, the server has ended the transaction.
        let _ = match &self.savepoint {
            None => {
                // A statement still running would hold the ROLLBACK (and
                // the locks) back until it ends: cancel it first.
                crate::session::cancel_dropped(shared, self.conn.session());
                shared
                    .end_session(self.conn.session(), None, |enc, buf| {
                        encode_control(enc, &["ROLLBACK"], buf)
                    })
                    .map(drop)
            }
            Some(name) => {
                let to = format!("ROLLBACK TO SAVEPOINT {name}");
                let release = format!("RELEASE SAVEPOINT {name}");
                shared.send_detached(self.conn.session(), |enc, buf| {
                    encode_control(enc, &[&to, &release], buf)
                })
            }
        };
    }
}

impl fmt::Debug for Transaction<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Transaction")
            .field("backend_pid", &self.conn.shared().process_id)
            .field("depth", &self.depth)
            .field("savepoint", &self.savepoint)
            .field("pooled", &self.guard.is_some())
            .finish()
    }
}

/// A FATAL or PANIC error: the server ends the session after sending it.
/// The reply reader reports it rather than the closed socket that follows
/// (it says more), and the driver may not have seen the close yet.
fn ends_the_session(e: &Error) -> bool {
    e.as_db_error().is_some_and(|db| {
        let severity = db.severity_nonlocalized().unwrap_or(db.severity());
        matches!(severity, "FATAL" | "PANIC")
    })
}
