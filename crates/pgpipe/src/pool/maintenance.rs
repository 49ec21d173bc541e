//! The pool's life outside checkouts: creating its state with the
//! background maintenance task, which closes idle, expired and broken
//! connections and refills `min_idle`, and closing it.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

use tokio::sync::{Notify, Semaphore};
use tokio::time::Instant;

use super::budget::Budget;
use super::config::PoolConfig;
use super::conn::Conn;
use super::inner::PoolInner;
use super::lane::Lane;
use super::stats::{CloseReason, Counters};
use crate::error::ErrorKind;
use crate::{Config, Error};

impl PoolInner {
    /// Creates the pool state and spawns its maintenance task.
    pub(crate) fn start(
        connect: Config,
        config: PoolConfig,
        budget: Option<Arc<Budget>>,
    ) -> Result<Arc<PoolInner>, Error> {
        config.validate().map_err(Error::from)?;
        let runtime = tokio::runtime::Handle::try_current().map_err(|_| {
            Error::new(
                ErrorKind::InvalidUse,
                "a pool must be created inside a tokio runtime (it spawns a maintenance task)",
            )
        })?;
        let wake = Arc::new(Notify::new());
        let inner = Arc::new(PoolInner {
            slots: Arc::new(Semaphore::new(config.get_max_size())),
            idle: Mutex::new(VecDeque::with_capacity(config.get_max_size())),
            lane: Lane::new(config.get_shared_connections(), config.get_shared_line_at()),
            closed: AtomicBool::new(false),
            counters: Arc::new(Counters::new()),
            wake_maintenance: wake.clone(),
            config,
            connect,
            budget,
        });
        if let Some(budget) = &inner.budget {
            budget.register(&inner);
        }
        #[cfg(any(feature = "metrics", feature = "opentelemetry"))]
        let _ = inner
            .counters
            .name
            .set(super::metrics::pool_name(&inner.connect));
        runtime.spawn(maintain(Arc::downgrade(&inner), wake));
        Ok(inner)
    }

    /// Closes the pool: refuses acquires, closes idle and shared
    /// connections now and checked-out ones when they come back.
    pub(crate) fn close(&self) {
        self.closed.store(true, Ordering::Release);
        self.slots.close();
        let idle: Vec<Conn> = self.idle().drain(..).collect();
        for conn in idle {
            conn.retire(CloseReason::PoolClosed);
        }
        self.lane.clear(CloseReason::PoolClosed);
        self.wake_maintenance.notify_one();
    }

    /// Closes idle connections past their idle timeout (keeping min_idle)
    /// or lifetime, and broken ones; retires shared connections likewise.
    fn reap(&self) {
        let now = Instant::now();
        let idle_timeout = self.config.get_idle_timeout();
        let min_idle = self.config.get_min_idle();
        let mut retired = Vec::new();
        {
            let mut idle = self.idle();
            let mut remaining = idle.len();
            let mut kept = VecDeque::with_capacity(idle.len());
            // Front to back: the longest idle first.
            while let Some(conn) = idle.pop_front() {
                let reason = if conn.client.is_closed() {
                    Some(CloseReason::Broken)
                } else if conn.expired(now) {
                    Some(CloseReason::Lifetime)
                } else if remaining > min_idle
                    && idle_timeout.is_some_and(|t| now.duration_since(conn.idle_since) >= t)
                {
                    Some(CloseReason::Idle)
                } else {
                    None
                };
                match reason {
                    Some(reason) => {
                        conn.set_reason(reason);
                        retired.push(conn);
                        remaining -= 1;
                    }
                    None => kept.push_back(conn),
                }
            }
            *idle = kept;
        }
        // Closing takes each connection's own lock: not under ours.
        drop(retired);
        self.lane.reap(now, idle_timeout);
    }

    /// Opens connections until min_idle are idle, as long as slots are
    /// free (never making an acquirer wait for it).
    async fn fill_min_idle(self: &Arc<Self>) {
        let min_idle = self.config.get_min_idle();
        while !self.is_closed() && self.idle_count() < min_idle {
            let Ok(permit) = self.slots.clone().try_acquire_owned() else {
                return;
            };
            // min_idle never closes another pool's connection for itself.
            let budgeted = match &self.budget {
                Some(budget) => match budget.try_take() {
                    Some(p) => Some(p),
                    None => return,
                },
                None => None,
            };
            let limit = self
                .config
                .get_acquire_timeout()
                .max(Duration::from_secs(1));
            let opening = Instant::now();
            match tokio::time::timeout(limit, self.connect.connect()).await {
                Ok(Ok(client)) => {
                    #[cfg(any(feature = "metrics", feature = "opentelemetry"))]
                    super::metrics::created(&self.counters, opening.elapsed());
                    let _ = opening;
                    self.push_idle(Conn::new(
                        client,
                        &self.config,
                        self.counters.clone(),
                        budgeted,
                    ));
                    drop(permit);
                }
                Ok(Err(e)) => {
                    tracing::debug!(target: "pgpipe::pool", "filling min_idle failed: {e}");
                    return;
                }
                Err(_) => {
                    tracing::debug!(target: "pgpipe::pool", "filling min_idle timed out");
                    return;
                }
            }
        }
    }
}

/// The maintenance loop: reaps, refills min_idle, and exits once the pool
/// is closed or dropped (it holds only a weak reference in between).
async fn maintain(pool: Weak<PoolInner>, wake: Arc<Notify>) {
    let tick = match pool.upgrade() {
        Some(p) => tick(&p.config),
        None => return,
    };
    loop {
        {
            let Some(pool) = pool.upgrade() else { return };
            if pool.is_closed() {
                return;
            }
            pool.reap();
            pool.fill_min_idle().await;
        }
        tokio::select! {
            _ = tokio::time::sleep(tick) => {}
            _ = wake.notified() => {}
        }
    }
}

/// How often maintenance runs: a quarter of the shortest timeout it
/// enforces, between 10 ms and 1 s.
fn tick(config: &PoolConfig) -> Duration {
    [config.get_idle_timeout(), config.get_max_lifetime()]
        .into_iter()
        .flatten()
        .map(|d| d / 4)
        .min()
        .unwrap_or(Duration::from_secs(1))
        .clamp(Duration::from_millis(10), Duration::from_secs(1))
}
