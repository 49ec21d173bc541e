//! The execution engine's core: one statement sent and its response read,
//! with the statement cache kept in step, stale statements and types
//! retried once, and a timed-out statement cancelled without hitting
//! another.

use std::sync::Arc;
use std::time::Duration;

use pgpipe_types::Params;

use super::abandon::CancelIfAbandoned;
use super::catalog::Resolved;
use super::conn::ConnRef;
use super::{read_response, send_query_with, Column, Plan, Row, StatementRef, ToStatement};
use crate::driver::{Slot, NO_SESSION};
use crate::error::{ErrorKind, SqlState};
use crate::observe;
use crate::query::sql_of;
use crate::session::Session;
use crate::{Error, TransactionStatus};

/// What running one statement gave besides its rows.
pub(crate) struct Ran {
    pub(crate) affected: u64,
    /// The result's columns as the response described them.
    pub(crate) columns: Option<Arc<[Column]>>,
    /// The same columns with user-defined types looked up, when some were
    /// not known while the rows arrived.
    pub(crate) described: Option<Arc<[Column]>>,
}

impl ConnRef {
    /// [`run`](Self::run) with describing on, under the `query` operation
    /// span: what every row-returning query method runs.
    pub(crate) async fn run_traced<S, P>(
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

    /// Sends one statement and reads its response, keeping the statement
    /// cache in step: a statement that failed to parse is forgotten, and one
    /// that went stale (0A000 after DDL changed its result type, 26000 after
    /// DISCARD ALL) is forgotten and retried once, but only outside a
    /// transaction block: inside one the transaction is already aborted.
    ///
    /// Named parameter types are looked up first; with `describe`, so are
    /// user-defined column types (after the response is read: the lookup
    /// runs on this same connection).
    pub(crate) async fn run<P: Params + ?Sized>(
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
                self.run_typed(statement, &resolved, describe, &mut on_row)
                    .await
            } else {
                self.run_typed(statement, params, describe, &mut on_row)
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

    /// [`run_resolved`](Self::run_resolved), after learning the server's
    /// parameter types when a value needs them to be encoded (see
    /// `server_types`); a prepared statement carries its own.
    async fn run_typed<P: Params + ?Sized>(
        &self,
        statement: StatementRef<'_>,
        params: &P,
        describe: bool,
        on_row: impl FnMut(Row),
    ) -> Result<Ran, Error> {
        match statement {
            StatementRef::Sql(sql) if params.needs_server_types() => {
                // Boxed: a cold path for pgpipe's own types, kept out of
                // every query's future.
                Box::pin(self.run_described(sql, params, describe, on_row)).await
            }
            _ => self.run_resolved(statement, params, describe, on_row).await,
        }
    }

    async fn run_described<P: Params + ?Sized>(
        &self,
        sql: &str,
        params: &P,
        describe: bool,
        on_row: impl FnMut(Row),
    ) -> Result<Ran, Error> {
        let described = self.describe_params(sql, params).await?;
        let ran = self
            .run_resolved(StatementRef::Sql(sql), &described, describe, on_row)
            .await;
        described.remember(self, sql);
        ran
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
            // Cancels the statement on the server if this future is dropped
            // before the reply ends (see `abandon`).
            let mut abandoned = CancelIfAbandoned::new(self, responses.slot());
            let reading = read_response(self.shared(), &mut responses, plan.columns(), &mut on_row);
            let outcome = match self.timeout {
                None => reading.await,
                Some(limit) => match tokio::time::timeout(limit, reading).await {
                    Ok(outcome) => outcome,
                    Err(_) => {
                        abandoned.disarm();
                        let slot = responses.slot().clone();
                        drop(responses);
                        return Err(Box::pin(self.cancel_timed_out(&slot, limit)).await);
                    }
                },
            };
            abandoned.disarm();
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
    /// one (see [`Client::with_timeout`](crate::Client::with_timeout));
    /// returns the error for the caller.
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
}

/// Reopens the write gate closed for a cancel.
struct GateGuard<'a>(&'a Session);

impl Drop for GateGuard<'_> {
    fn drop(&mut self) {
        self.0.open_gate();
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
