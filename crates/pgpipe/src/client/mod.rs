//! The `Client`: a cheap, cloneable handle that any number of tasks share.

use std::sync::Arc;

use pgpipe_proto::frontend::{self, Target};
use pgpipe_types::{Params, Type};

use crate::driver::Slot;
use crate::driver::{Request, SessionId, NO_SESSION};
use crate::error::{DbError, ErrorKind, SqlState};
use crate::observe::{self, sql_of};
use crate::query::Batch;
use crate::query::FromRow;
use crate::query::RowStream;
use crate::query::Statement;
use crate::query::{
    encode_error, read_response, send_query, send_query_with, Plan, StatementRef, ToStatement,
};
use crate::query::{read_simple, SimpleQueryMessage};
use crate::query::{Column, Event, Reply, Row};
use crate::session::Session;
use crate::types::Resolved;
use crate::Error;
use crate::{CancelToken, TransactionStatus};
use std::time::Duration;
use tracing::Instrument;

struct Inner {
    shared: Arc<Session>,
}

/// What running one statement gave besides its rows.
struct Ran {
    affected: u64,
    /// The result's columns as the response described them.
    columns: Option<Arc<[Column]>>,
    /// The same columns with user-defined types looked up, when some were
    /// not known while the rows arrived.
    described: Option<Arc<[Column]>>,
}

/// Counters of one connection (see [`Client::stats`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct ClientStats {
    /// The most response bytes that were ever delivered by the driver but
    /// not yet taken by the caller, for any one request: what backpressure
    /// bounds.
    pub peak_buffered_bytes: usize,
    /// Notifications that arrived while nobody subscribed
    /// ([`Client::notifications`], [`Client::listen`]): counted and dropped.
    pub notifications_dropped: u64,
    /// Reads from the socket that returned data (or end of stream).
    pub socket_reads: u64,
    /// Writes to the socket that the kernel accepted.
    pub socket_writes: u64,
    /// The most bytes one socket read returned: at most 64 KiB, which is
    /// what bounds how far a response may go past its backpressure limit.
    pub largest_read_bytes: usize,
    /// Statements that shared a Sync with others (coalesced groups; see
    /// [`Client::coalesced`]).
    pub coalesced_statements: u64,
    /// Statements of coalesced groups sent again on their own Sync after a
    /// neighbour failed (or because they were refused with 25001).
    pub coalesced_sent_again: u64,
}

impl Drop for Inner {
    fn drop(&mut self) {
        self.shared.terminate();
    }
}

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
    inner: Arc<Inner>,
    /// Client-side timeout of each query made through this handle.
    timeout: Option<Duration>,
    /// The reservation this handle's requests belong to: set on a
    /// transaction's handle, whose requests go out while other handles'
    /// wait behind the transaction.
    session: SessionId,
    /// Whether this handle's statements may share a Sync with their
    /// neighbours (see [`coalesced`](Client::coalesced)).
    coalesce: bool,
}

impl Client {
    pub(crate) fn new(shared: Arc<Session>) -> Client {
        Client {
            timeout: shared.query_timeout,
            coalesce: shared.coalesce,
            inner: Arc::new(Inner { shared }),
            session: NO_SESSION,
        }
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
            inner: self.inner.clone(),
            timeout: (!timeout.is_zero()).then_some(timeout),
            session: self.session,
            coalesce: self.coalesce,
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
            coalesce: true,
            ..self.clone()
        }
    }

    /// A handle whose statements each end with their own Sync (the
    /// default): the opt-out from [`coalesced`](Client::coalesced) for
    /// statements that must not run twice.
    pub fn not_coalesced(&self) -> Client {
        Client {
            coalesce: false,
            ..self.clone()
        }
    }

    /// Whether this handle's statements may share a Sync (see
    /// [`coalesced`](Client::coalesced)).
    pub fn is_coalesced(&self) -> bool {
        self.coalesce
    }

    /// A token that cancels what this connection is running, from anywhere.
    pub fn cancel_token(&self) -> CancelToken {
        self.shared().cancel.clone()
    }

    pub(crate) fn shared(&self) -> &Arc<Session> {
        &self.inner.shared
    }

    /// The client-side query timeout of this handle.
    pub(crate) fn timeout(&self) -> Option<Duration> {
        self.timeout
    }

    /// The reservation this handle's requests belong to.
    pub(crate) fn session(&self) -> SessionId {
        self.session
    }

    /// A handle on the same connection whose requests belong to `session`.
    pub(crate) fn in_session(&self, session: SessionId) -> Client {
        Client {
            inner: self.inner.clone(),
            timeout: self.timeout,
            session,
            coalesce: self.coalesce,
        }
    }

    /// Runs a statement and returns all its rows.
    ///
    /// `statement` is SQL text or a [`Statement`]; `params` is a tuple of
    /// values (`(id, "name")`, or `()` for none) or a slice. SQL text costs
    /// one round trip: parameter types come from the Rust values, results
    /// come back in binary.
    ///
    /// ```no_run
    /// # async fn f(client: &pgpipe::Client) -> Result<(), pgpipe::Error> {
    /// let rows = client
    ///     .query("SELECT id, email FROM users WHERE id > $1 ORDER BY id", (10i64,))
    ///     .await?;
    /// for row in &rows {
    ///     let id: i64 = row.get("id");
    ///     let email: Option<&str> = row.get("email");
    /// }
    /// # Ok(()) }
    /// ```
    ///
    /// Cancel safe (see [`Client`]).
    pub async fn query<S, P>(&self, statement: &S, params: P) -> Result<Vec<Row>, Error>
    where
        S: ToStatement + ?Sized,
        P: Params,
    {
        let mut rows = Vec::new();
        let ran = self
            .run_traced(statement, &params, |row| rows.push(row))
            .await?;
        if let Some(columns) = ran.described {
            for row in &mut rows {
                row.set_columns(columns.clone());
            }
        }
        Ok(rows)
    }

    /// Runs a statement and reads every row into `T` (a tuple, or a struct
    /// with `#[derive(FromRow)]`). The result's columns are checked against
    /// `T` once, before any row is decoded: a missing column, a wrong column
    /// count or a type `T` cannot hold is one error naming the column, its
    /// PostgreSQL type and the Rust type.
    ///
    /// ```no_run
    /// # async fn f(client: &pgpipe::Client) -> Result<(), pgpipe::Error> {
    /// let pairs: Vec<(i32, String)> = client
    ///     .query_as("SELECT id, name FROM users WHERE id < $1", (10i32,))
    ///     .await?;
    /// # Ok(()) }
    /// ```
    ///
    /// Cancel safe (see [`Client`]).
    pub async fn query_as<T, S, P>(&self, statement: &S, params: P) -> Result<Vec<T>, Error>
    where
        T: FromRow,
        S: ToStatement + ?Sized,
        P: Params,
    {
        // Rows are decoded as they arrive, while their bytes are still in
        // the cache; the check runs on the first row's columns, before any
        // decode. Only when a column type still needs a catalog lookup are
        // the rows held until the lookup is done.
        let mut out = Vec::new();
        let mut held = Vec::new();
        let mut plan: Option<Result<T::Columns, Error>> = None;
        let mut failed: Option<Error> = None;
        let ran = self
            .run_traced(statement, &params, |row| {
                if failed.is_some() {
                    return;
                }
                if plan.is_none()
                    && held.is_empty()
                    && row.columns().iter().all(|c| c.type_().is_known())
                {
                    plan = Some(T::check(row.columns()));
                }
                match &plan {
                    Some(Ok(columns)) => match T::decode(&row, columns) {
                        Ok(value) => out.push(value),
                        Err(e) => failed = Some(e),
                    },
                    Some(Err(_)) => {}
                    None => held.push(row),
                }
            })
            .await?;
        match (plan, failed) {
            (Some(Err(e)), _) | (_, Some(e)) => return Err(e),
            (Some(Ok(_)), None) => return Ok(out),
            (None, None) => {}
        }
        // No row checked yet: an empty result (still checked, so a mistake
        // shows before the first row ever arrives) or rows held for a lookup.
        let Some(columns) = ran.described.or(ran.columns) else {
            return Ok(Vec::new());
        };
        let plan = T::check(&columns)?;
        held.iter_mut()
            .map(|row| {
                row.set_columns(columns.clone());
                T::decode(row, &plan)
            })
            .collect()
    }

    /// [`query_as`](Self::query_as) for a statement that must return exactly
    /// one row (see [`query_one`](Self::query_one)).
    ///
    /// Cancel safe (see [`Client`]).
    pub async fn query_one_as<T, S, P>(&self, statement: &S, params: P) -> Result<T, Error>
    where
        T: FromRow,
        S: ToStatement + ?Sized,
        P: Params,
    {
        let mut rows = self.query_as::<T, S, P>(statement, params).await?;
        match rows.len() {
            1 => Ok(rows.remove(0)),
            n => Err(Error::new(
                ErrorKind::RowCount,
                format!("query_one_as: expected exactly one row, the query returned {n}"),
            )),
        }
    }

    /// [`query_as`](Self::query_as) for a statement that returns at most one
    /// row (see [`query_opt`](Self::query_opt)).
    ///
    /// Cancel safe (see [`Client`]).
    pub async fn query_opt_as<T, S, P>(&self, statement: &S, params: P) -> Result<Option<T>, Error>
    where
        T: FromRow,
        S: ToStatement + ?Sized,
        P: Params,
    {
        let mut rows = self.query_as::<T, S, P>(statement, params).await?;
        match rows.len() {
            0 => Ok(None),
            1 => Ok(rows.pop()),
            n => Err(Error::new(
                ErrorKind::RowCount,
                format!("query_opt_as: expected at most one row, the query returned {n}"),
            )),
        }
    }

    /// Runs a statement and streams its rows as they arrive, in bounded
    /// memory (see [`RowStream`]).
    ///
    /// ```no_run
    /// # async fn f(client: &pgpipe::Client) -> Result<(), pgpipe::Error> {
    /// let mut rows = client.query_stream("SELECT id FROM events WHERE day = $1", ("2026-11-22",)).await?;
    /// while let Some(row) = rows.next().await {
    ///     let id: i64 = row?.get(0);
    /// }
    /// # Ok(()) }
    /// ```
    ///
    /// Cancel safe, and the stream may be dropped half-read (see [`RowStream`]).
    pub async fn query_stream<S, P>(&self, statement: &S, params: P) -> Result<RowStream, Error>
    where
        S: ToStatement + ?Sized,
        P: Params,
    {
        let st = statement.to_statement();
        let op = observe::Op::start("query_stream", Some(self.shared()), sql_of(&st));
        let sent = async {
            let permit = self.shared().permit().await?;
            send_query(self.shared(), self.session, permit, st, &params)
        };
        match sent.instrument(op.span().clone()).await {
            Ok((responses, plan)) => Ok(RowStream::new(self.shared().clone(), responses, plan, op)),
            Err(e) => Err(op.failed(e)),
        }
    }

    /// Counters of this connection, for monitoring and tests.
    pub fn stats(&self) -> ClientStats {
        let (socket_reads, socket_writes, largest_read_bytes) = self.shared().counters.snapshot();
        let (coalesced_statements, coalesced_sent_again) = self.shared().counters.coalesced();
        ClientStats {
            coalesced_statements,
            coalesced_sent_again,
            peak_buffered_bytes: self.shared().peak_buffered(),
            notifications_dropped: self
                .shared()
                .notifications
                .dropped
                .load(std::sync::atomic::Ordering::Relaxed),
            socket_reads,
            socket_writes,
            largest_read_bytes,
        }
    }

    /// Runs a statement that must return exactly one row.
    ///
    /// Zero rows or more than one is an error of kind
    /// [`ErrorKind::RowCount`] that says how many came back.
    ///
    /// Cancel safe (see [`Client`]).
    pub async fn query_one<S, P>(&self, statement: &S, params: P) -> Result<Row, Error>
    where
        S: ToStatement + ?Sized,
        P: Params,
    {
        match self.query_first(statement, params).await? {
            (Some(row), 1) => Ok(row),
            (_, n) => Err(Error::new(
                ErrorKind::RowCount,
                format!("query_one: expected exactly one row, the query returned {n}"),
            )),
        }
    }

    /// [`query`](Self::query) that keeps only the first row, and counts
    /// them all: no vector for the one row `query_one`/`query_opt` want.
    async fn query_first<S, P>(
        &self,
        statement: &S,
        params: P,
    ) -> Result<(Option<Row>, usize), Error>
    where
        S: ToStatement + ?Sized,
        P: Params,
    {
        let (mut first, mut count) = (None, 0usize);
        let ran = self
            .run_traced(statement, &params, |row| {
                count += 1;
                if first.is_none() {
                    first = Some(row);
                }
            })
            .await?;
        if let (Some(columns), Some(row)) = (ran.described, first.as_mut()) {
            row.set_columns(columns);
        }
        Ok((first, count))
    }

    /// Runs a statement that returns at most one row.
    ///
    /// More than one row is an error of kind [`ErrorKind::RowCount`].
    ///
    /// Cancel safe (see [`Client`]).
    pub async fn query_opt<S, P>(&self, statement: &S, params: P) -> Result<Option<Row>, Error>
    where
        S: ToStatement + ?Sized,
        P: Params,
    {
        match self.query_first(statement, params).await? {
            (row, 0 | 1) => Ok(row),
            (_, n) => Err(Error::new(
                ErrorKind::RowCount,
                format!("query_opt: expected at most one row, the query returned {n}"),
            )),
        }
    }

    /// Runs a statement and returns the number of rows it affected (for
    /// INSERT, UPDATE, DELETE, MERGE, COPY) or returned (SELECT); 0 for
    /// other commands. Rows it returns are discarded without being decoded.
    ///
    /// ```no_run
    /// # async fn f(client: &pgpipe::Client) -> Result<(), pgpipe::Error> {
    /// let n = client.execute("UPDATE users SET active = $1 WHERE id < $2", (false, 100i64)).await?;
    /// # Ok(()) }
    /// ```
    ///
    /// Cancel safe (see [`Client`]).
    pub async fn execute<S, P>(&self, statement: &S, params: P) -> Result<u64, Error>
    where
        S: ToStatement + ?Sized,
        P: Params,
    {
        let st = statement.to_statement();
        let run = self.run(st, &params, false, drop);
        let ran = observe::traced(
            "execute",
            Some(self.shared()),
            sql_of(&st),
            |r| r.affected,
            run,
        );
        Ok(ran.await?.affected)
    }

    /// Sends one statement and reads its response, keeping the statement
    /// cache in step: a statement that failed to parse is forgotten, and one
    /// that went stale (0A000 after DDL changed its result type, 26000 after
    /// DISCARD ALL) is forgotten and retried once, but only outside a
    /// transaction block: inside one the transaction is already aborted.
    ///
    /// Named parameter types are looked up first; with `describe`, so are
    /// user-defined column types (after the response is read: the lookup
    /// runs on this same connection).
    /// [`run`](Self::run) with describing on, under the `query` operation
    /// span: what every row-returning query method runs.
    async fn run_traced<S, P>(
        &self,
        statement: &S,
        params: &P,
        on_row: impl FnMut(Row),
    ) -> Result<Ran, Error>
    where
        S: ToStatement + ?Sized,
        P: Params + ?Sized,
    {
        let st = statement.to_statement();
        let run = self.run(st, params, true, on_row);
        observe::traced(
            "query",
            Some(self.shared()),
            sql_of(&st),
            |r| r.affected,
            run,
        )
        .await
    }

    async fn run<P: Params + ?Sized>(
        &self,
        statement: StatementRef<'_>,
        params: &P,
        describe: bool,
        mut on_row: impl FnMut(Row),
    ) -> Result<Ran, Error> {
        let named = params.has_named_types() && matches!(statement, StatementRef::Sql(_));
        let mut retried = false;
        loop {
            let ran = if named {
                // Cold paths are boxed: inline, their futures would make
                // every query's future kilobytes larger, and it is moved
                // (copied) on each call.
                let types = Box::pin(self.resolve_params(params)).await?;
                let resolved = Resolved {
                    params,
                    types: &types,
                };
                self.run_resolved(statement, &resolved, describe, &mut on_row)
                    .await
            } else {
                self.run_resolved(statement, params, describe, &mut on_row)
                    .await
            };
            match &ran {
                // 42704/42804 are also plain user mistakes; they only point at
                // a stale registry when this statement sent described types.
                Err(e) if (named && type_gone(e)) || cache_lookup_failed(e) => {
                    // A type we described may have been dropped and
                    // recreated under a new OID: look it up again, and retry
                    // once if nothing of the failed attempt can have stuck.
                    self.shared().types.clear();
                    if named
                        && !retried
                        && self.session == NO_SESSION
                        && self.transaction_status() == TransactionStatus::Idle
                    {
                        retried = true;
                        continue;
                    }
                }
                _ => {}
            }
            return ran;
        }
    }

    async fn run_resolved<P: Params + ?Sized>(
        &self,
        statement: StatementRef<'_>,
        params: &P,
        describe: bool,
        mut on_row: impl FnMut(Row),
    ) -> Result<Ran, Error> {
        let mut retried = false;
        loop {
            let timing = observe::Timing::start();
            let permit = self.shared().permit().await?;
            let (mut responses, plan) = send_query_with(
                self.shared(),
                self.session,
                permit,
                statement,
                params,
                self.coalesce && self.session == NO_SESSION,
            )?;
            let timing = timing.sent(self.shared());
            let reading = read_response(self.shared(), &mut responses, plan.columns(), &mut on_row);
            let outcome = match self.timeout {
                None => reading.await,
                Some(limit) => match tokio::time::timeout(limit, reading).await {
                    Ok(outcome) => outcome,
                    Err(_) => {
                        let slot = responses.slot().clone();
                        drop(responses);
                        return Err(Box::pin(self.cancel_timed_out(&slot, limit)).await);
                    }
                },
            };
            timing.answered(responses.slot());
            let mut described = None;
            if let (true, Ok(_), Some(columns)) = (describe, &outcome.result, &outcome.columns) {
                described = Box::pin(self.resolve_columns(columns)).await?;
            }
            let stale = self.learn(
                &plan,
                outcome.result.as_ref().err(),
                outcome.parsed,
                described.as_ref().or(outcome.columns.as_ref()),
            );
            if let (Some(d), Plan::Cached { name, .. }) = (&described, &plan) {
                self.shared().with_cache(|c| c.set_columns(name, d));
            }
            // Never inside a transaction: it is aborted, and a statement that
            // carried BEGIN may have failed for the BEGIN's sake.
            if stale && !retried && responses.ended_idle() && self.session == NO_SESSION {
                retried = true;
                continue;
            }
            return outcome.result.map(|affected| Ran {
                affected,
                columns: outcome.columns,
                described,
            });
        }
    }

    /// Cancels a timed-out request so that the cancel cannot hit another
    /// one (see [`with_timeout`](Self::with_timeout)); returns the error for
    /// the caller.
    async fn cancel_timed_out(&self, slot: &Slot, limit: Duration) -> Error {
        const GRACE: Duration = Duration::from_secs(2);
        let timeout = Error::new(
            ErrorKind::Timeout,
            format!("the query timed out after {limit:?}"),
        );
        let shared = self.shared();
        if let Some(held) = shared.withdraw_held(slot, limit) {
            return held;
        }
        if !shared.gate_for_cancel(slot) {
            return timeout.context("not cancelled: other requests share the connection");
        }
        // Reopened however this ends, even if this future is dropped.
        let _gate = GateGuard(shared);
        let ended = tokio::time::timeout(GRACE, async {
            let cancelled = shared.cancel.cancel().await;
            slot.wait_done().await;
            cancelled
        })
        .await;
        match ended {
            Ok(Ok(())) => timeout,
            Ok(Err(e)) => timeout.context(format!("cancelling failed ({e})")),
            Err(_) => {
                // The server did not end the query: its state is unknown, and a
                // late cancel could still hit the next query. Give up the connection.
                // The requests queued behind it were never sent: Closed
                // (safe to retry elsewhere), not a protocol violation.
                shared.abort(Error::new(
                    ErrorKind::Closed,
                    "the server did not end a timed-out query after a cancel; connection closed",
                ));
                timeout.context("the server did not answer the cancel; the connection was closed")
            }
        }
    }

    /// Keeps the statement cache in step with what a response showed: adds
    /// the columns of a newly described statement, forgets one that failed
    /// to parse or went stale. Returns whether it was stale, or failed only
    /// for a column without binary output (worth a retry).
    pub(crate) fn learn(
        &self,
        plan: &Plan,
        error: Option<&Error>,
        parsed: bool,
        described: Option<&Arc<[Column]>>,
    ) -> bool {
        let Plan::Cached {
            name,
            columns,
            parses,
        } = plan
        else {
            return false;
        };
        match error {
            None => {
                if let (None, Some(described)) = (columns, described) {
                    self.shared().with_cache(|c| c.set_columns(name, described));
                }
                false
            }
            Some(e) => {
                if let (None, Some(described), true) = (columns, described, no_binary_output(e)) {
                    // A result column of a type without binary output (such
                    // as aclitem): now that the columns are known, the next
                    // Bind asks for text for it. Worth one retry.
                    self.shared().with_cache(|c| c.set_columns(name, described));
                    return true;
                }
                let stale = e.code() == Some(&SqlState::FEATURE_NOT_SUPPORTED)
                    || e.code() == Some(&SqlState::INVALID_SQL_STATEMENT_NAME);
                if stale || (*parses && !parsed) {
                    self.shared().with_cache(|c| c.remove(name));
                }
                stale
            }
        }
    }

    /// Starts a [`Batch`]: statements sent in one write, results in order.
    pub fn batch(&self) -> Batch<'_> {
        Batch::new(self)
    }

    /// Prepares a named statement on the server, letting the server infer
    /// every parameter type. See [`prepare_typed`](Self::prepare_typed).
    ///
    /// Cancel safe (see [`Client`]).
    pub async fn prepare(&self, sql: &str) -> Result<Statement, Error> {
        self.prepare_typed(sql, &[]).await
    }

    /// Prepares a named statement, declaring the types of the first
    /// `types.len()` parameters. The returned [`Statement`] knows its
    /// parameter and column types, so values are checked before they are
    /// sent. The statement is closed on the server when dropped.
    ///
    /// ```no_run
    /// # async fn f(client: &pgpipe::Client) -> Result<(), pgpipe::Error> {
    /// let stmt = client.prepare("SELECT name FROM users WHERE id = $1").await?;
    /// let row = client.query_one(&stmt, (7i32,)).await?;
    /// # Ok(()) }
    /// ```
    ///
    /// Cancel safe (see [`Client`]).
    pub async fn prepare_typed(&self, sql: &str, types: &[Type]) -> Result<Statement, Error> {
        let prepare = self.prepare_untraced(sql, types);
        observe::traced("prepare", Some(self.shared()), Some(sql), |_| 0, prepare).await
    }

    async fn prepare_untraced(&self, sql: &str, types: &[Type]) -> Result<Statement, Error> {
        let name = self.shared().next_statement_name();
        let oids: Vec<u32> = types.iter().map(Type::oid).collect();
        let mut responses = self
            .shared()
            .send(self.session, Request::Statement, |enc, buf| {
                enc.parse(&name, sql, &oids, buf).map_err(encode_error)?;
                enc.describe(Target::Statement, &name, buf)
                    .map_err(encode_error)?;
                frontend::sync(buf);
                Ok(())
            })
            .await?;
        let mut params = Vec::new();
        let mut columns: Arc<[Column]> = Arc::from(Vec::new());
        let mut reply = Reply::without_bind();
        loop {
            let (tag, body) = responses.next_raw().await.map_err(|e| reply.cut_short(e))?;
            match reply.event(tag, body) {
                Event::Ready => break,
                Event::Step | Event::NoRows | Event::Failed => {}
                Event::Params(desc) => params = desc.types().map(Type::from_oid).collect(),
                Event::Columns(desc) => {
                    columns = desc
                        .fields()
                        .map(|f| Column::from_field(&f, &self.shared().types))
                        .collect();
                }
                other => reply.unexpected_event(other, "while preparing"),
            }
        }
        if let Some(e) = reply.take_error() {
            return Err(self.shared().request_failed(e));
        }
        // Describe user-defined parameter and column types now, so values
        // are checked and encoded against their real types.
        let statement = Statement::new(name, sql.to_owned(), Vec::new(), columns, self.shared());
        let unknown: Vec<u32> = params
            .iter()
            .map(Type::oid)
            .filter(|&oid| !self.shared().types.knows(oid))
            .collect();
        if !unknown.is_empty() {
            self.describe_types(&unknown).await?;
        }
        let params = params
            .iter()
            .map(|t| self.shared().types.get(t.oid()))
            .collect();
        let columns = match self.resolve_columns(statement.columns()).await? {
            Some(described) => described,
            None => statement.shared_columns().clone(),
        };
        Ok(statement.with_types(params, columns))
    }

    /// Runs SQL text through the simple-query protocol: several statements
    /// separated by `;` are allowed, no parameters, every value comes back
    /// as text. Execution stops at the first failing statement; unless the
    /// text has explicit transaction control, the statements run in one
    /// implicit transaction. A `COPY ... FROM STDIN` in any of the
    /// statements is refused before anything is sent (use
    /// [`Client::copy_in`]): requests pipelined behind it would otherwise
    /// be read by the server as COPY data.
    ///
    /// ```no_run
    /// # async fn f(client: &pgpipe::Client) -> Result<(), pgpipe::Error> {
    /// use pgpipe::SimpleQueryMessage;
    /// for msg in client.simple_query("SELECT 1 AS one; SELECT 'two'").await? {
    ///     if let SimpleQueryMessage::Row(row) = msg {
    ///         println!("{:?}", row.get(0));
    ///     }
    /// }
    /// # Ok(()) }
    /// ```
    ///
    /// Cancel safe (see [`Client`]).
    pub async fn simple_query(&self, sql: &str) -> Result<Vec<SimpleQueryMessage>, Error> {
        let run = async {
            // Refused before anything is sent: once in copy-in mode the
            // server would read the requests pipelined behind this one as
            // COPY data and drop the connection.
            if crate::sql::any_copy_from_stdin(sql) {
                return Err(crate::copy::copy_from_stdin_refused());
            }
            self.flush_begin().await?;
            let mut responses = self
                .shared()
                .send(self.session, Request::Simple, |enc, buf| {
                    enc.query(sql, buf).map_err(encode_error)
                })
                .await?;
            read_simple(self.shared(), &mut responses).await
        };
        observe::traced(
            "simple_query",
            Some(self.shared()),
            Some(sql),
            |m| simple_rows(m),
            run,
        )
        .await
    }

    /// Runs SQL text (several statements allowed) and discards any rows:
    /// for schema set-up, migrations and the like.
    ///
    /// Cancel safe (see [`Client`]).
    pub async fn batch_execute(&self, sql: &str) -> Result<(), Error> {
        self.simple_query(sql).await.map(drop)
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
        self.shared().transaction_status()
    }

    /// Requests sent or queued on this connection whose answer has not
    /// fully arrived yet (including ones whose futures were dropped).
    pub fn pending_requests(&self) -> usize {
        self.shared().outstanding()
    }

    /// Whether the connection can no longer run queries.
    pub fn is_closed(&self) -> bool {
        self.shared().is_closed()
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

/// The rows a simple query returned, for its span.
fn simple_rows(messages: &[SimpleQueryMessage]) -> u64 {
    let rows = messages
        .iter()
        .filter(|m| matches!(m, SimpleQueryMessage::Row(_)));
    rows.count() as u64
}

/// Reopens the write gate closed for a cancel.
struct GateGuard<'a>(&'a Session);

impl Drop for GateGuard<'_> {
    fn drop(&mut self) {
        self.0.open_gate();
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

/// Whether the server rejected a type OID it no longer has (or a value
/// whose embedded type OID no longer matches): the registry may be stale.
fn type_gone(e: &Error) -> bool {
    e.code() == Some(&SqlState::UNDEFINED_OBJECT)
        || e.code() == Some(&SqlState::DATATYPE_MISMATCH)
        || cache_lookup_failed(e)
}

/// The server met a type OID that no longer exists ("cache lookup failed
/// for type"): a statement or value still refers to a dropped type.
fn cache_lookup_failed(e: &Error) -> bool {
    e.code() == Some(&SqlState::INTERNAL_ERROR)
        && e.as_db_error()
            .is_some_and(|db| db.message().starts_with("cache lookup failed for type"))
}

/// The server could not send a result column in binary ("no binary
/// output function available for type aclitem").
fn no_binary_output(e: &Error) -> bool {
    e.code() == Some(&SqlState::UNDEFINED_FUNCTION)
        && e.as_db_error()
            .is_some_and(|db| db.message().starts_with("no binary output function"))
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
