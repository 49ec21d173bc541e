//! Per-connection counters of the driver, and the random tag in its
//! statement names.

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

/// 64 random-enough bits: the standard library's per-process random hasher
/// keys, mixed with a process-wide counter and the time, so that
/// connections of one process and of different processes differ.
pub(super) fn random_tag() -> u64 {
    use std::hash::{BuildHasher, Hasher};
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u64(COUNTER.fetch_add(1, Ordering::Relaxed));
    // Asked once: `getpid` is a system call on every connect otherwise. A
    // forked child keeps its parent's value, and the time below still tells
    // the two apart.
    static PID: std::sync::OnceLock<u32> = std::sync::OnceLock::new();
    h.write_u32(*PID.get_or_init(std::process::id));
    if let Ok(t) = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH) {
        h.write_u128(t.as_nanos());
    }
    h.finish()
}

/// The driver's socket calls: what a bench divides by its operations when
/// one process holds several connections (`/proc/self/io` counts them all).
#[derive(Default)]
pub(crate) struct Counters {
    reads: AtomicU64,
    writes: AtomicU64,
    largest_read: AtomicUsize,
    grouped: AtomicU64,
    sent_again: AtomicU64,
    low_water_raised: AtomicU64,
    low_water_tails: AtomicU64,
}

impl Counters {
    /// A read that returned `n` bytes (0 at end of stream).
    pub(crate) fn read(&self, n: usize) {
        self.reads.fetch_add(1, Ordering::Relaxed);
        self.largest_read.fetch_max(n, Ordering::Relaxed);
    }

    /// A write that the socket accepted.
    pub(crate) fn wrote(&self) {
        self.writes.fetch_add(1, Ordering::Relaxed);
    }

    /// A coalesced group of `members` ended; `again` of them are sent
    /// again on their own Sync.
    pub(crate) fn group(&self, members: usize, again: usize) {
        self.grouped.fetch_add(members as u64, Ordering::Relaxed);
        self.sent_again.fetch_add(again as u64, Ordering::Relaxed);
    }

    /// (statements that shared a Sync, statements sent again) so far.
    pub(crate) fn coalesced(&self) -> (u64, u64) {
        (
            self.grouped.load(Ordering::Relaxed),
            self.sent_again.load(Ordering::Relaxed),
        )
    }

    /// The receive low-water mark went up for a long answer.
    pub(crate) fn low_water_raised(&self) {
        self.low_water_raised.fetch_add(1, Ordering::Relaxed);
    }

    /// The tail wait ran out with the mark up.
    pub(crate) fn low_water_tail(&self) {
        self.low_water_tails.fetch_add(1, Ordering::Relaxed);
    }

    /// (times the low-water mark went up, tail waits that ran out) so far.
    pub(crate) fn low_water(&self) -> (u64, u64) {
        (
            self.low_water_raised.load(Ordering::Relaxed),
            self.low_water_tails.load(Ordering::Relaxed),
        )
    }

    /// (reads, writes, largest read in bytes) so far.
    pub(crate) fn snapshot(&self) -> (u64, u64, usize) {
        (
            self.reads.load(Ordering::Relaxed),
            self.writes.load(Ordering::Relaxed),
            self.largest_read.load(Ordering::Relaxed),
        )
    }
}
