//! One pooled connection ([`Conn`]) and what the pool knows about it: its
//! age, its lifetime, whether it must be checked before reuse, and why it
//! closes.

use std::hash::{BuildHasher, Hasher};
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::OwnedSemaphorePermit;
use tokio::time::Instant;

use super::config::PoolConfig;
use super::stats::{CloseReason, Counters};
use crate::Client;

/// One pooled connection and what the pool knows about it. Dropping it
/// closes the connection (for every clone of its client) and counts why.
pub(crate) struct Conn {
    pub(crate) client: Client,
    created: Instant,
    /// When max_lifetime (with jitter) retires it.
    retire_at: Option<Instant>,
    pub(crate) idle_since: Instant,
    /// Its last user may have left requests in flight or a transaction
    /// open: check (and reset) it before anyone else gets it.
    pub(crate) verify: bool,
    /// A `CloseReason` as u8, set before the drop that closes it; atomic
    /// because shared connections are retired through an `Arc`.
    reason: AtomicU8,
    counters: Arc<Counters>,
    /// Its place in a connection budget shared with other pools (a
    /// cluster's), given back when it closes (after `Drop::drop`).
    _budget: Option<OwnedSemaphorePermit>,
}

impl Conn {
    pub(crate) fn new(
        client: Client,
        config: &PoolConfig,
        counters: Arc<Counters>,
        budget: Option<OwnedSemaphorePermit>,
    ) -> Conn {
        let now = Instant::now();
        counters.opened();
        tracing::debug!(
            target: "pgpipe::pool",
            backend_pid = client.backend_pid(),
            "pool connection opened"
        );
        Conn {
            client,
            created: now,
            retire_at: config.get_max_lifetime().map(|l| now + jitter(l)),
            idle_since: now,
            verify: false,
            reason: AtomicU8::new(CloseReason::PoolClosed as u8),
            counters,
            _budget: budget,
        }
    }

    pub(crate) fn age(&self) -> Duration {
        self.created.elapsed()
    }

    pub(crate) fn expired(&self, now: Instant) -> bool {
        self.retire_at.is_some_and(|at| now >= at)
    }

    /// Marks why it will be closed when dropped.
    pub(crate) fn set_reason(&self, reason: CloseReason) {
        self.reason.store(reason as u8, Ordering::Relaxed);
    }

    /// Closes it now, for `reason`.
    pub(crate) fn retire(self, reason: CloseReason) {
        self.set_reason(reason);
    }
}

impl Drop for Conn {
    fn drop(&mut self) {
        let reason = match self.reason.load(Ordering::Relaxed) {
            r if r == CloseReason::Broken as u8 => CloseReason::Broken,
            r if r == CloseReason::Idle as u8 => CloseReason::Idle,
            r if r == CloseReason::Lifetime as u8 => CloseReason::Lifetime,
            _ => CloseReason::PoolClosed,
        };
        // Requests already sent still get their answers; Terminate follows.
        self.client.close();
        self.counters.closed(reason);
        tracing::debug!(
            target: "pgpipe::pool",
            backend_pid = self.client.backend_pid(),
            reason = reason.as_str(),
            age_ms = self.created.elapsed().as_millis() as u64,
            "pool connection closed"
        );
    }
}

/// `d` give or take up to 10%, so that connections opened together do not
/// all reach their lifetime at once.
fn jitter(d: Duration) -> Duration {
    // RandomState is seeded randomly per process and varies per instance:
    // enough randomness for spreading timers, without a dependency.
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u64(d.as_nanos() as u64);
    let r = (h.finish() % 2001) as f64 / 10_000.0 - 0.1;
    d.mul_f64(1.0 + r)
}
