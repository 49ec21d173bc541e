//! Pool statistics: live gauges and monotonic counters, plus a histogram
//! of acquire times.

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::time::Duration;

/// Buckets of the acquire-time histogram: bucket 0 counts acquires under
/// 1 µs, bucket `i` those in `[2^(i-1), 2^i)` µs, the last one everything
/// from about 9 minutes up.
pub const ACQUIRE_BUCKETS: usize = 31;

/// A snapshot of a pool's state (see [`Pool::stats`](super::Pool::stats)).
///
/// Gauges (`size`, `idle`, `in_use`, `shared`, `waiters`,
/// `shared_waiting`) are read one
/// after the other without a global lock, so under load they may not add
/// up exactly; counters only grow.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct PoolStats {
    /// Open connections: idle, checked out and shared ones (not counting
    /// connections being opened).
    pub size: usize,
    /// Connections waiting in the idle list.
    pub idle: usize,
    /// Connections checked out ([`PooledClient`](super::PooledClient)s alive).
    pub in_use: usize,
    /// Connections serving [`Pool::query`](super::Pool::query) and friends.
    pub shared: usize,
    /// Acquires waiting for a free slot.
    pub waiters: usize,
    /// Tasks waiting for their turn on a full shared lane: with
    /// [`shared_line_at`](super::PoolConfig::shared_line_at) set, every
    /// shared connection already held that many statements, so
    /// [`Pool::query`](super::Pool::query) and friends of a task with none
    /// in flight wait in arrival order instead of joining a pipeline. Always
    /// 0 without a line.
    pub shared_waiting: usize,
    /// The configured `max_size`.
    pub max_size: usize,
    /// Connections opened since the pool was created.
    pub created: u64,
    /// Connections closed because they were broken: closed by the server or
    /// the network, a failed health check, or a failed reset.
    pub closed_broken: u64,
    /// Connections closed after `idle_timeout`.
    pub closed_idle: u64,
    /// Connections closed after `max_lifetime`.
    pub closed_lifetime: u64,
    /// Connections closed because the pool was closed or dropped.
    pub closed_pool: u64,
    /// Acquires that failed (timeout, closed pool, connect error).
    pub acquire_failures: u64,
    /// How long successful acquires took.
    pub acquire_time: AcquireHistogram,
}

/// Counts of acquire durations per power-of-two microsecond bucket.
///
/// ```
/// # fn f(pool: &pgpipe::Pool) {
/// let stats = pool.stats();
/// if let Some(p99) = stats.acquire_time.quantile(0.99) {
///     println!("99% of acquires took less than {p99:?}");
/// }
/// # }
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AcquireHistogram {
    counts: [u64; ACQUIRE_BUCKETS],
}

impl AcquireHistogram {
    /// The count of each bucket (see [`ACQUIRE_BUCKETS`]).
    pub fn counts(&self) -> &[u64; ACQUIRE_BUCKETS] {
        &self.counts
    }

    /// The number of acquires recorded.
    pub fn total(&self) -> u64 {
        self.counts.iter().sum()
    }

    /// The exclusive upper bound of bucket `i` (`None` for the last, open
    /// bucket and for indexes out of range).
    pub fn upper_bound(i: usize) -> Option<Duration> {
        (i + 1 < ACQUIRE_BUCKETS).then(|| Duration::from_micros(1u64 << i))
    }

    /// An upper bound of the `q` quantile (0.0..=1.0): the upper bound of
    /// the bucket it falls into. `None` if nothing was recorded or it falls
    /// into the last, open bucket.
    pub fn quantile(&self, q: f64) -> Option<Duration> {
        let total = self.total();
        if total == 0 {
            return None;
        }
        // The rank of the quantile, at least the first acquire.
        let rank = ((q.clamp(0.0, 1.0) * total as f64).ceil() as u64).max(1);
        let mut seen = 0;
        for (i, &n) in self.counts.iter().enumerate() {
            seen += n;
            if seen >= rank {
                return Self::upper_bound(i);
            }
        }
        None
    }
}

/// The bucket an acquire of `elapsed` falls into.
fn bucket(elapsed: Duration) -> usize {
    let micros = u64::try_from(elapsed.as_micros()).unwrap_or(u64::MAX);
    ((u64::BITS - micros.leading_zeros()) as usize).min(ACQUIRE_BUCKETS - 1)
}

/// Why a connection left the pool.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum CloseReason {
    Broken,
    Idle,
    Lifetime,
    PoolClosed,
}

impl CloseReason {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            CloseReason::Broken => "broken",
            CloseReason::Idle => "idle timeout",
            CloseReason::Lifetime => "max lifetime",
            CloseReason::PoolClosed => "pool closed",
        }
    }
}

/// The pool's live counters, updated with relaxed atomics (they are
/// statistics, nothing synchronizes through them).
#[derive(Debug)]
pub(crate) struct Counters {
    pub(crate) size: AtomicUsize,
    pub(crate) in_use: AtomicUsize,
    pub(crate) waiters: AtomicUsize,
    created: AtomicU64,
    closed_broken: AtomicU64,
    closed_idle: AtomicU64,
    closed_lifetime: AtomicU64,
    closed_pool: AtomicU64,
    acquire_failures: AtomicU64,
    acquire_time: [AtomicU64; ACQUIRE_BUCKETS],
    /// The pool's name in metrics (`host:port/dbname`), set at start.
    #[cfg_attr(
        not(any(feature = "metrics", feature = "opentelemetry")),
        allow(dead_code)
    )]
    pub(crate) name: std::sync::OnceLock<String>,
    /// What the pool last reported to OpenTelemetry.
    #[cfg(any(feature = "metrics", feature = "opentelemetry"))]
    pub(crate) series: crate::observe::record::PoolSeries,
}

impl Counters {
    pub(crate) fn new() -> Counters {
        Counters {
            size: AtomicUsize::new(0),
            in_use: AtomicUsize::new(0),
            waiters: AtomicUsize::new(0),
            created: AtomicU64::new(0),
            closed_broken: AtomicU64::new(0),
            closed_idle: AtomicU64::new(0),
            closed_lifetime: AtomicU64::new(0),
            closed_pool: AtomicU64::new(0),
            acquire_failures: AtomicU64::new(0),
            acquire_time: std::array::from_fn(|_| AtomicU64::new(0)),
            name: std::sync::OnceLock::new(),
            #[cfg(any(feature = "metrics", feature = "opentelemetry"))]
            series: Default::default(),
        }
    }

    pub(crate) fn opened(&self) {
        self.size.fetch_add(1, Ordering::Relaxed);
        self.created.fetch_add(1, Ordering::Relaxed);
    }

    pub(crate) fn closed(&self, reason: CloseReason) {
        self.size.fetch_sub(1, Ordering::Relaxed);
        let counter = match reason {
            CloseReason::Broken => &self.closed_broken,
            CloseReason::Idle => &self.closed_idle,
            CloseReason::Lifetime => &self.closed_lifetime,
            CloseReason::PoolClosed => &self.closed_pool,
        };
        counter.fetch_add(1, Ordering::Relaxed);
    }

    pub(crate) fn acquired(&self, elapsed: Duration) {
        self.acquire_time[bucket(elapsed)].fetch_add(1, Ordering::Relaxed);
    }

    pub(crate) fn acquire_failed(&self) {
        self.acquire_failures.fetch_add(1, Ordering::Relaxed);
    }

    pub(crate) fn snapshot(
        &self,
        idle: usize,
        (shared, shared_waiting): (usize, usize),
        max_size: usize,
    ) -> PoolStats {
        let load = |c: &AtomicU64| c.load(Ordering::Relaxed);
        PoolStats {
            size: self.size.load(Ordering::Relaxed),
            idle,
            in_use: self.in_use.load(Ordering::Relaxed),
            shared,
            waiters: self.waiters.load(Ordering::Relaxed),
            shared_waiting,
            max_size,
            created: load(&self.created),
            closed_broken: load(&self.closed_broken),
            closed_idle: load(&self.closed_idle),
            closed_lifetime: load(&self.closed_lifetime),
            closed_pool: load(&self.closed_pool),
            acquire_failures: load(&self.acquire_failures),
            acquire_time: AcquireHistogram {
                counts: std::array::from_fn(|i| load(&self.acquire_time[i])),
            },
        }
    }
}

/// Counts a waiter for as long as it lives (dropped when the wait ends or
/// is cancelled).
pub(crate) struct Waiting<'a>(&'a AtomicUsize);

impl<'a> Waiting<'a> {
    pub(crate) fn new(waiters: &'a AtomicUsize) -> Waiting<'a> {
        waiters.fetch_add(1, Ordering::Relaxed);
        Waiting(waiters)
    }
}

impl Drop for Waiting<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_are_powers_of_two_microseconds() {
        assert_eq!(bucket(Duration::ZERO), 0);
        assert_eq!(bucket(Duration::from_nanos(999)), 0);
        assert_eq!(bucket(Duration::from_micros(1)), 1);
        assert_eq!(bucket(Duration::from_micros(3)), 2);
        assert_eq!(bucket(Duration::from_micros(4)), 3);
        assert_eq!(bucket(Duration::from_secs(100_000)), ACQUIRE_BUCKETS - 1);
        assert_eq!(
            AcquireHistogram::upper_bound(2),
            Some(Duration::from_micros(4))
        );
        assert_eq!(AcquireHistogram::upper_bound(ACQUIRE_BUCKETS - 1), None);

        let c = Counters::new();
        for _ in 0..99 {
            c.acquired(Duration::from_micros(3));
        }
        c.acquired(Duration::from_millis(1));
        let h = c.snapshot(0, (0, 0), 1).acquire_time;
        assert_eq!(h.total(), 100);
        assert_eq!(h.quantile(0.5), Some(Duration::from_micros(4)));
        assert_eq!(h.quantile(1.0), Some(Duration::from_micros(1024)));
    }
}
