//! The pool's shared state: the slot semaphore, the idle list, checkout
//! and return (creation, closing and the background maintenance task are in
//! `maintenance.rs`).
//!
//! Accounting. `slots` has `max_size` permits. A permit is held by every
//! connection that is checked out, shared, being opened or being checked;
//! idle connections hold none. An acquirer first takes a permit (FIFO, so
//! waiters are served in order), then pops an idle connection or, if there
//! is none, opens one. A connection is only ever opened by a permit holder
//! that found the idle list empty, and a connection only enters the idle
//! list by leaving a permit holder, so open connections never outnumber
//! `max_size`. On return the connection is pushed to the idle list before
//! its permit is released, so the waiter that the release wakes finds it.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use tokio::sync::{oneshot, Notify, OwnedSemaphorePermit, Semaphore, TryAcquireError};
use tokio::time::Instant;

use super::budget::Budget;
use super::config::PoolConfig;
use super::conn::Conn;
use super::lane::Lane;
use super::stats::{CloseReason, Counters, Waiting};
use crate::driver::NO_SESSION;
use crate::error::ErrorKind;
use crate::{Client, Config, Error, TransactionStatus};

pub(crate) struct PoolInner {
    pub(crate) config: PoolConfig,
    pub(super) connect: Config,
    pub(super) slots: Arc<Semaphore>,
    /// Most recently returned at the back: checkouts take from the back
    /// (warm connections, fewer health checks, and the surplus at the front
    /// ages out through idle_timeout).
    pub(super) idle: Mutex<VecDeque<Conn>>,
    pub(crate) lane: Lane,
    pub(super) closed: AtomicBool,
    pub(crate) counters: Arc<Counters>,
    /// Wakes the maintenance task early (a connection was lost and
    /// min_idle needs a refill, or the pool closed).
    pub(super) wake_maintenance: Arc<Notify>,
    /// A connection cap shared with other pools (a cluster's host pools).
    pub(crate) budget: Option<Arc<Budget>>,
}

impl PoolInner {
    /// When an acquire starting at `start` gives up. A timeout too large to
    /// represent means "practically never".
    pub(crate) fn acquire_deadline(&self, start: Instant) -> Instant {
        start
            .checked_add(self.config.get_acquire_timeout())
            .unwrap_or_else(|| start + Duration::from_secs(100 * 365 * 24 * 3600))
    }

    pub(super) fn idle(&self) -> MutexGuard<'_, VecDeque<Conn>> {
        // The list stays consistent even if a holder panicked.
        self.idle.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The sizes the metrics gauges report.
    #[cfg(any(feature = "metrics", feature = "opentelemetry"))]
    pub(crate) fn gauges(&self) -> super::metrics::Gauges {
        super::metrics::Gauges {
            idle: self.idle_count(),
            max_size: self.config.get_max_size(),
            min_idle: self.config.get_min_idle(),
        }
    }

    pub(crate) fn idle_count(&self) -> usize {
        self.idle().len()
    }

    pub(crate) fn is_closed(&self) -> bool {
        self.closed.load(Ordering::Acquire)
    }

    pub(crate) fn closed_error() -> Error {
        Error::new(ErrorKind::Closed, "the pool is closed")
    }

    /// Takes a slot and a connection for it, all within `deadline`.
    ///
    /// Cancel safe: a dropped acquire gives its permit back; a connection
    /// being opened for it goes to the idle list when ready; one being
    /// checked goes back to the idle list, marked to be checked again.
    pub(crate) async fn acquire(
        self: &Arc<Self>,
        start: Instant,
        deadline: Instant,
    ) -> Result<(Conn, OwnedSemaphorePermit), Error> {
        if self.is_closed() {
            return Err(Self::closed_error());
        }
        let permit = match self.slots.clone().try_acquire_owned() {
            Ok(p) => p,
            Err(TryAcquireError::Closed) => return Err(Self::closed_error()),
            Err(TryAcquireError::NoPermits) => {
                let _waiting = Waiting::new(&self.counters.waiters);
                match tokio::time::timeout_at(deadline, self.slots.clone().acquire_owned()).await {
                    Ok(Ok(p)) => p,
                    Ok(Err(_)) => return Err(Self::closed_error()),
                    Err(_) => return Err(self.exhausted(start)),
                }
            }
        };
        if self.is_closed() {
            return Err(Self::closed_error());
        }
        loop {
            let popped = self.idle().pop_back();
            let Some(conn) = popped else {
                let conn = self.open(permit, start, deadline).await?;
                return Ok(conn);
            };
            if conn.client.is_closed() {
                conn.retire(CloseReason::Broken);
                self.wake_maintenance.notify_one();
                continue;
            }
            let now = Instant::now();
            if conn.expired(now) {
                conn.retire(CloseReason::Lifetime);
                continue;
            }
            let stale = self
                .config
                .get_health_check_after()
                .is_some_and(|after| now.duration_since(conn.idle_since) >= after);
            if !conn.verify && !stale {
                return Ok((conn, permit));
            }
            let mut checking = Checking {
                conn: Some(conn),
                pool: self,
            };
            let client = match &checking.conn {
                Some(c) => c.client.clone(),
                None => continue,
            };
            match tokio::time::timeout_at(deadline, verify(&client)).await {
                Ok(Ok(())) => {
                    if let Some(mut conn) = checking.conn.take() {
                        conn.verify = false;
                        return Ok((conn, permit));
                    }
                }
                Ok(Err(e)) => {
                    if let Some(conn) = checking.conn.take() {
                        tracing::debug!(
                            target: "pgpipe::pool",
                            backend_pid = conn.client.backend_pid(),
                            "pool connection failed its check: {e}"
                        );
                        conn.retire(CloseReason::Broken);
                        self.wake_maintenance.notify_one();
                    }
                }
                Err(_) => {
                    // A connection that does not answer a ping within the
                    // whole acquire budget is not worth handing to anyone.
                    if let Some(conn) = checking.conn.take() {
                        conn.retire(CloseReason::Broken);
                        self.wake_maintenance.notify_one();
                    }
                    return Err(Error::new(
                        ErrorKind::Timeout,
                        format!(
                            "acquiring a pool connection timed out after {:?} while checking \
                             a connection (acquire_timeout {:?})",
                            start.elapsed(),
                            self.config.get_acquire_timeout()
                        ),
                    ));
                }
            }
        }
    }

    /// A statement gave up waiting in the shared lane's line: every shared
    /// connection stayed full (see `admission`) for `acquire_timeout`.
    pub(crate) fn line_timed_out(&self, start: Instant) -> Error {
        Error::new(
            ErrorKind::Timeout,
            format!(
                "shared lane full: every one of its {} connections held {} or more \
                 statements and earlier callers waited ahead; waited {:?} (acquire_timeout {:?})",
                self.lane.len(),
                self.lane.line_depth(),
                start.elapsed(),
                self.config.get_acquire_timeout(),
            ),
        )
    }

    pub(crate) fn exhausted(&self, start: Instant) -> Error {
        Error::new(
            ErrorKind::Timeout,
            format!(
                "pool exhausted: all {} connections are in use (size {}, {} waiting); \
                 waited {:?} (acquire_timeout {:?})",
                self.config.get_max_size(),
                self.counters.size.load(Ordering::Relaxed),
                self.counters.waiters.load(Ordering::Relaxed),
                start.elapsed(),
                self.config.get_acquire_timeout(),
            ),
        )
    }

    /// Opens a connection for a permit holder. The handshake runs in its
    /// own task, which owns the permit: if the acquirer goes away (timeout,
    /// cancellation) the connection still finishes opening and goes to the
    /// idle list instead of being wasted, and the slot stays counted until
    /// then.
    async fn open(
        self: &Arc<Self>,
        permit: OwnedSemaphorePermit,
        start: Instant,
        deadline: Instant,
    ) -> Result<(Conn, OwnedSemaphorePermit), Error> {
        let budgeted = match &self.budget {
            Some(budget) => Some(budget.take(self, start, deadline).await?),
            None => None,
        };
        let (tx, rx) = oneshot::channel();
        let pool = self.clone();
        tokio::spawn(async move {
            let opening = Instant::now();
            let result = pool.connect.connect().await;
            #[cfg(any(feature = "metrics", feature = "opentelemetry"))]
            super::metrics::created(&pool.counters, opening.elapsed());
            let _ = opening;
            let sent = match result {
                Ok(client) => {
                    let conn = Conn::new(client, &pool.config, pool.counters.clone(), budgeted);
                    tx.send(Ok((conn, permit)))
                }
                Err(e) => {
                    tracing::debug!(target: "pgpipe::pool", "opening a pool connection failed: {e}");
                    tx.send(Err(e))
                }
            };
            if let Err(Ok((conn, permit))) = sent {
                pool.push_idle(conn);
                drop(permit);
            }
        });
        match tokio::time::timeout_at(deadline, rx).await {
            Ok(Ok(result)) => result,
            Ok(Err(_)) => Err(Error::new(
                ErrorKind::Connect,
                "the task opening a pool connection ended without an answer",
            )),
            Err(_) => Err(Error::new(
                ErrorKind::Timeout,
                format!(
                    "acquiring a pool connection timed out after {:?} while opening a new \
                     connection (acquire_timeout {:?})",
                    start.elapsed(),
                    self.config.get_acquire_timeout()
                ),
            )),
        }
    }

    /// Puts a connection in the idle list, or closes it if the pool is
    /// closed. Checked under the list's lock so that `close` cannot miss it.
    pub(super) fn push_idle(&self, conn: Conn) {
        let mut idle = self.idle();
        if self.is_closed() {
            drop(idle);
            conn.retire(CloseReason::PoolClosed);
        } else {
            idle.push_back(conn);
            drop(idle);
            if let Some(budget) = &self.budget {
                budget.became_idle();
            }
        }
    }

    /// Takes back a checked-out connection. `touched`: its user reached the
    /// client, so requests may still be in flight.
    ///
    /// A connection left inside a transaction (or with requests in flight
    /// that may leave one) is settled at once, not at its next checkout: a
    /// task holding it (and its slot) waits for what is in flight, rolls
    /// back an open or failed transaction, and only then returns it to the
    /// idle list; one whose rollback fails is closed. Until then the
    /// server session would keep its locks.
    pub(crate) fn release(
        self: &Arc<Self>,
        mut conn: Conn,
        permit: OwnedSemaphorePermit,
        touched: bool,
    ) {
        if conn.client.is_closed() {
            conn.retire(CloseReason::Broken);
            self.wake_maintenance.notify_one();
        } else if conn.expired(Instant::now()) {
            conn.retire(CloseReason::Lifetime);
            self.wake_maintenance.notify_one();
        } else if (touched && conn.client.pending_requests() > 0)
            || conn.client.transaction_status() != TransactionStatus::Idle
        {
            match tokio::runtime::Handle::try_current() {
                Ok(runtime) => {
                    // Inside a transaction block its holder left, a
                    // statement still running would hold the rollback
                    // (and the locks) back until it ends: cancel it.
                    crate::session::cancel_dropped(conn.client.shared(), NO_SESSION);
                    let pool = self.clone();
                    runtime.spawn(async move { pool.settle(conn, permit).await });
                    return;
                }
                Err(_) => {
                    // No runtime to settle it on: the next checkout checks it.
                    conn.verify = true;
                    conn.idle_since = Instant::now();
                    self.push_idle(conn);
                }
            }
        } else {
            conn.idle_since = Instant::now();
            self.push_idle(conn);
        }
        // Only now: the waiter this wakes must find the connection idle.
        drop(permit);
    }

    /// Rolls back what a returned connection left open, then makes it idle
    /// (or closes it). Bounded by the acquire timeout.
    async fn settle(&self, mut conn: Conn, permit: OwnedSemaphorePermit) {
        let limit = self
            .config
            .get_acquire_timeout()
            .max(Duration::from_secs(1));
        match tokio::time::timeout(limit, verify(&conn.client)).await {
            Ok(Ok(())) => {
                conn.verify = false;
                conn.idle_since = Instant::now();
                self.push_idle(conn);
            }
            Ok(Err(e)) => {
                tracing::debug!(
                    target: "pgpipe::pool",
                    backend_pid = conn.client.backend_pid(),
                    "rolling back a returned connection failed: {e}"
                );
                conn.retire(CloseReason::Broken);
                self.wake_maintenance.notify_one();
            }
            Err(_) => {
                conn.retire(CloseReason::Broken);
                self.wake_maintenance.notify_one();
            }
        }
        drop(permit);
    }

    /// Adds a connection to the shared lane in the background (one growth
    /// at a time), through an ordinary acquire: it queues behind earlier
    /// acquirers and is bounded by the acquire timeout.
    pub(crate) fn grow_lane(self: &Arc<Self>) {
        if !self.lane.start_growing() {
            return;
        }
        let pool = self.clone();
        tokio::spawn(async move {
            let start = Instant::now();
            match pool.acquire(start, pool.acquire_deadline(start)).await {
                Ok((conn, permit)) => {
                    if let Err(refused) = pool.lane.push(conn, permit, || pool.is_closed()) {
                        let (conn, permit) = *refused;
                        pool.release(conn, permit, false);
                    }
                }
                Err(e) => {
                    tracing::debug!(target: "pgpipe::pool", "adding a shared connection failed: {e}")
                }
            }
            pool.lane.done_growing();
        });
    }
}

/// A connection being checked during an acquire; if the acquire is dropped
/// mid-check, the connection goes back to the idle list, still marked to
/// be checked (the check's request may still be in flight).
struct Checking<'a> {
    conn: Option<Conn>,
    pool: &'a PoolInner,
}

impl Drop for Checking<'_> {
    fn drop(&mut self) {
        if let Some(mut conn) = self.conn.take() {
            conn.verify = true;
            self.pool.push_idle(conn);
        }
    }
}

/// Makes sure a connection is alive and outside any transaction. With
/// requests in flight the status is not final: an empty query, answered
/// after all of them, makes it so (and a ROLLBACK then only goes out when a
/// transaction is really open, never drawing a "no transaction" warning).
async fn verify(client: &Client) -> Result<(), Error> {
    if client.pending_requests() > 0 || client.transaction_status() == TransactionStatus::Idle {
        client.simple_query("").await?;
    }
    if client.transaction_status() != TransactionStatus::Idle {
        client.simple_query("ROLLBACK").await?;
    }
    if client.transaction_status() != TransactionStatus::Idle {
        return Err(Error::new(
            ErrorKind::InvalidUse,
            "the connection is still inside a transaction after ROLLBACK",
        ));
    }
    Ok(())
}
