//! [`Budget`]: one cap on the connections several pools hold open (a
//! cluster's host pools), so that hosts x pool size cannot add up past it.
//!
//! Every open connection of a pool in the budget holds one of its permits
//! from before its handshake until it is closed (the permit lives in the
//! [`Conn`]). A pool that must open a connection and finds the budget spent
//! closes the longest-idle connection of another pool in the budget to make
//! room, or waits (within its acquire deadline) until one is closed or
//! becomes idle somewhere.

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

use tokio::sync::{Notify, OwnedSemaphorePermit, Semaphore, TryAcquireError};
use tokio::time::Instant;

use super::conn::Conn;
use super::inner::PoolInner;
use super::stats::CloseReason;
use crate::error::ErrorKind;
use crate::Error;

pub(crate) struct Budget {
    limit: usize,
    permits: Arc<Semaphore>,
    /// The pools drawing on the budget, to close their idle connections.
    pools: Mutex<Vec<Weak<PoolInner>>>,
    /// Woken when a connection of a pool in the budget becomes idle (it
    /// may be closed for a waiter).
    idle: Notify,
    peak: AtomicUsize,
    waits: AtomicU64,
    evictions: AtomicU64,
    exhausted: AtomicU64,
}

/// A snapshot of a [`Budget`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct BudgetCounts {
    pub(crate) limit: usize,
    pub(crate) open: usize,
    pub(crate) peak: usize,
    pub(crate) waits: u64,
    pub(crate) evictions: u64,
    pub(crate) exhausted: u64,
}

impl Budget {
    pub(crate) fn new(limit: usize) -> Budget {
        Budget {
            limit,
            permits: Arc::new(Semaphore::new(limit)),
            pools: Mutex::new(Vec::new()),
            idle: Notify::new(),
            peak: AtomicUsize::new(0),
            waits: AtomicU64::new(0),
            evictions: AtomicU64::new(0),
            exhausted: AtomicU64::new(0),
        }
    }

    pub(crate) fn register(&self, pool: &Arc<PoolInner>) {
        let mut pools = self.pools.lock().unwrap_or_else(|e| e.into_inner());
        pools.retain(|p| p.strong_count() > 0);
        pools.push(Arc::downgrade(pool));
    }

    pub(crate) fn counts(&self) -> BudgetCounts {
        BudgetCounts {
            limit: self.limit,
            open: self.open(),
            peak: self.peak.load(Ordering::Relaxed),
            waits: self.waits.load(Ordering::Relaxed),
            evictions: self.evictions.load(Ordering::Relaxed),
            exhausted: self.exhausted.load(Ordering::Relaxed),
        }
    }

    fn open(&self) -> usize {
        self.limit.saturating_sub(self.permits.available_permits())
    }

    fn took(&self, permit: OwnedSemaphorePermit) -> OwnedSemaphorePermit {
        self.peak.fetch_max(self.open(), Ordering::Relaxed);
        permit
    }

    /// A connection of a pool in the budget became idle.
    pub(crate) fn became_idle(&self) {
        self.idle.notify_waiters();
    }

    /// A permit if one is free now (never closing anything for it).
    pub(crate) fn try_take(&self) -> Option<OwnedSemaphorePermit> {
        self.permits
            .clone()
            .try_acquire_owned()
            .ok()
            .map(|p| self.took(p))
    }

    /// A permit for a connection `pool` is about to open: a free one, or
    /// one freed by closing the connection idle longest in any pool of the
    /// budget, or the first one freed before `deadline`.
    pub(crate) async fn take(
        &self,
        pool: &PoolInner,
        start: Instant,
        deadline: Instant,
    ) -> Result<OwnedSemaphorePermit, Error> {
        // A shared-lane connection that falls idle wakes nobody: look
        // again at this pace too.
        const RELOOK: Duration = Duration::from_millis(20);
        let mut waited = false;
        loop {
            // Registered before looking, so an idle push in between wakes us.
            let idle = self.idle.notified();
            tokio::pin!(idle);
            idle.as_mut().enable();
            match self.permits.clone().try_acquire_owned() {
                Ok(p) => return Ok(self.took(p)),
                Err(TryAcquireError::Closed) => return Err(PoolInner::closed_error()),
                Err(TryAcquireError::NoPermits) => {}
            }
            if self.close_longest_idle() {
                // Its place comes back when it is dropped: now for an idle
                // one, after its last answer for a lane one.
                tokio::task::yield_now().await;
                continue;
            }
            if !waited {
                waited = true;
                self.waits.fetch_add(1, Ordering::Relaxed);
            }
            if Instant::now() >= deadline {
                self.exhausted.fetch_add(1, Ordering::Relaxed);
                return Err(Error::new(
                    ErrorKind::Timeout,
                    format!(
                        "the cluster's connection budget is spent: all {} connections are in \
                         use and none was idle to close; waited {:?} (acquire_timeout {:?})",
                        self.limit,
                        start.elapsed(),
                        pool.config.get_acquire_timeout()
                    ),
                ));
            }
            let relook = deadline.min(Instant::now() + RELOOK);
            tokio::select! {
                got = self.permits.clone().acquire_owned() => match got {
                    Ok(p) => return Ok(self.took(p)),
                    Err(_) => return Err(PoolInner::closed_error()),
                },
                _ = &mut idle => {}
                _ = tokio::time::sleep_until(relook) => {}
            }
        }
    }

    /// Closes the connection idle longest in any pool of the budget (in
    /// an idle list, or a shared-lane one with nothing in flight); whether
    /// there was one.
    fn close_longest_idle(&self) -> bool {
        let pools: Vec<Arc<PoolInner>> = self
            .pools
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .iter()
            .filter_map(Weak::upgrade)
            .collect();
        let oldest = pools
            .iter()
            .flat_map(|p| {
                let listed = p.idle().front().map(|c| (c.idle_since, p, false));
                let lane = p.lane.oldest_unused().map(|at| (at, p, true));
                listed.into_iter().chain(lane)
            })
            .min_by_key(|(since, _, _)| *since)
            .map(|(_, p, lane)| (p.clone(), lane));
        let Some((pool, lane)) = oldest else {
            return false;
        };
        let evicted = if lane {
            pool.lane.evict_unused()
        } else {
            let conn: Option<Conn> = pool.idle().pop_front();
            // Closing takes the connection's own lock: not under the
            // list's. Its permit comes back with the drop.
            conn.map(|conn| conn.retire(CloseReason::Idle)).is_some()
        };
        if evicted {
            self.evictions.fetch_add(1, Ordering::Relaxed);
        }
        evicted
    }
}
