//! How fast a shared lane connection answers while it has work, and the
//! wait a new statement placed on it can expect.
//!
//! Placing by statements in flight alone treats every lane connection as
//! equally fast. At saturation they are not: two of four backends sharing
//! a core with other work answer half as fast for a second at a time, and
//! one statement blocked on a lock stops a connection outright. Counted
//! alone, such a connection kept receiving its share of new requests, and
//! each waited behind its slow pipeline (issue 30: the p99 of a 20-statement
//! request at 64 HTTP connections was twice tokio-postgres with deadpool's,
//! traced to one or two slow lane connections at a time). A statement now
//! goes where the expected wait is shortest: statements ahead times the
//! time per answer, that time measured over the connection's last busy
//! window, and never less than the current window's time over its answers
//! so far plus those in flight (so a stalled connection stops receiving
//! work before its first late answer comes back).
//!
//! Two ways a measure outlived its truth, both seen in a trace of the lane
//! at saturation (one Sync per statement, 64 requests of 20): answers are
//! counted when their caller's task runs, so a connection holding one
//! request shows none for the request's whole life, and taken as at least
//! its age *per answer* it looked 20 times slower than it was; and a
//! connection measured slow once (183 ms per answer, over a window of one
//! answer) got work only when idle, never stayed busy long enough to close
//! a window, and kept that measure for the rest of the run. The lane ran on
//! two of its four connections, 500-1,000 statements deep, while requests
//! on the other two took 3 ms. So the floor counts the statements in
//! flight as if answered now (a lower bound that holds however answers are
//! counted), and a measure expires after [`STALE_US`]. (That evened the
//! load; the per-statement tail, measured before and after, stayed where
//! it was: docs/benchmarks.md, "Issue 30, part 4 again".)
//!
//! Cheap: a statement's end only counts an answer (one atomic add); the
//! clock is read once per placement, which reads it anyway, and a busy
//! window is closed there once it is long enough. Races between workers
//! can lose an answer from a window's count; the estimate stays close, and
//! it only orders connections.

use std::sync::atomic::{AtomicU64, Ordering};

/// A busy window closes (its time per answer counts) at the first
/// placement this long after it began: long against one task's batch of
/// answers taken in one poll and against the scheduler's time slices,
/// short against the second-long slow spells it is there to see. At 64
/// HTTP connections of 20 statements each (`pgpipe-bench http`, closed
/// loop), 3 ms and 100 ms windows left the p99 at 1.2-2x tokio-postgres's;
/// 10 ms and 30 ms brought it to 0.8-1.1x, 30 ms with the lower p99.9.
const WINDOW_US: u64 = 30_000;

/// A measured pace older than this no longer counts: the connection is
/// taken to be as fast as the fastest known one until a new window closes.
/// A connection that is busy keeps closing windows; one that is not (new
/// work avoided it) would otherwise keep a slow spell's measure for good.
/// Four windows: a slow spell of a second or more (the spells seen) keeps
/// being measured while it lasts.
const STALE_US: u64 = 4 * WINDOW_US;

/// A lane connection's pace. Times are microseconds since the lane's
/// epoch (0 stands for "idle", so a window never starts at 0).
#[derive(Default)]
pub(super) struct Pace {
    /// When the current busy window began; 0 while the connection is idle.
    since_us: AtomicU64,
    /// Answers in the current window.
    answers: AtomicU64,
    /// Nanoseconds per answer over the last closed window; 0 until one has
    /// closed.
    per_answer_ns: AtomicU64,
    /// When that window closed.
    measured_us: AtomicU64,
}

/// What placement reads of one connection.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Load {
    /// Statements in flight on it.
    pub(super) in_flight: u64,
    /// Its measured time per answer, if known.
    pub(super) per_answer_ns: Option<u64>,
    /// Time since its current window began over the answers in it plus
    /// the statements in flight: how slow it is at least, were every
    /// statement in flight answered now.
    pub(super) at_least_ns: u64,
}

impl Pace {
    /// A statement was placed on a connection that had none in flight: its
    /// busy window starts now.
    pub(super) fn started(&self, now_us: u64) {
        self.answers.store(0, Ordering::Relaxed);
        self.since_us.store(now_us.max(1), Ordering::Relaxed);
    }

    /// A statement on this connection ended, `left` still in flight. An
    /// idle connection's window is dropped: its time includes no work.
    pub(super) fn answered(&self, left: usize) {
        if left == 0 {
            self.since_us.store(0, Ordering::Relaxed);
        } else {
            self.answers.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// What placement needs, `in_flight` read by the caller; closes the
    /// busy window if it is long enough and has answers.
    pub(super) fn load(&self, in_flight: usize, now_us: u64) -> Load {
        let since = self.since_us.load(Ordering::Relaxed);
        let mut at_least_ns = 0;
        if since != 0 && in_flight != 0 {
            let answers = self.answers.load(Ordering::Relaxed);
            let elapsed_ns = now_us.saturating_sub(since).saturating_mul(1000);
            at_least_ns = elapsed_ns / (answers + in_flight as u64);
            // One closer per window: the one that moves its start.
            if answers > 0
                && elapsed_ns >= WINDOW_US * 1000
                && self
                    .since_us
                    .compare_exchange(since, now_us.max(1), Ordering::Relaxed, Ordering::Relaxed)
                    .is_ok()
            {
                self.answers.fetch_sub(answers, Ordering::Relaxed);
                self.per_answer_ns
                    .store(elapsed_ns / answers, Ordering::Relaxed);
                self.measured_us.store(now_us, Ordering::Relaxed);
                at_least_ns = 0;
            }
        }
        let per_answer_ns = self.per_answer_ns.load(Ordering::Relaxed);
        let fresh = now_us.saturating_sub(self.measured_us.load(Ordering::Relaxed)) <= STALE_US;
        Load {
            in_flight: in_flight as u64,
            per_answer_ns: (per_answer_ns > 0 && fresh).then_some(per_answer_ns),
            at_least_ns,
        }
    }
}

/// The index of the connection where a new statement waits least: an idle
/// one if there is any (the first), else the lowest statements ahead times
/// time per answer. A connection whose pace is not known yet is taken to
/// be as fast as the fastest known one (with none known, placement is by
/// statements in flight). Ties go to the first. Takes the loads twice
/// (no allocation per statement).
pub(super) fn quickest(loads: impl Iterator<Item = Load> + Clone) -> Option<usize> {
    let fastest = loads
        .clone()
        .filter_map(|l| l.per_answer_ns)
        .min()
        .unwrap_or(1);
    loads
        .enumerate()
        .min_by_key(|(_, l)| {
            let per_answer = l.per_answer_ns.unwrap_or(fastest).max(l.at_least_ns).max(1);
            l.in_flight.saturating_mul(per_answer)
        })
        .map(|(i, _)| i)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn load(in_flight: u64, per_answer_ns: Option<u64>, at_least_ns: u64) -> Load {
        Load {
            in_flight,
            per_answer_ns,
            at_least_ns,
        }
    }

    #[test]
    fn an_idle_connection_wins_and_ties_go_to_the_first() {
        let loads = [
            load(3, Some(10), 0),
            load(0, Some(1_000), 0),
            load(0, None, 0),
        ];
        assert_eq!(quickest(loads.into_iter()), Some(1));
        assert_eq!(
            quickest([load(2, None, 0), load(2, None, 0)].into_iter()),
            Some(0)
        );
        assert_eq!(quickest(std::iter::empty()), None);
    }

    #[test]
    fn without_known_paces_the_least_loaded_wins() {
        let loads = [load(5, None, 0), load(2, None, 0), load(4, None, 0)];
        assert_eq!(quickest(loads.into_iter()), Some(1));
    }

    #[test]
    fn a_slower_connection_loses_even_with_fewer_in_flight() {
        // 200 statements at 10 us each wait 2 ms; 150 at 20 us wait 3 ms.
        let loads = [load(150, Some(20_000), 0), load(200, Some(10_000), 0)];
        assert_eq!(quickest(loads.into_iter()), Some(1));
        // It wins again once its pipeline is short enough.
        let loads = [load(90, Some(20_000), 0), load(200, Some(10_000), 0)];
        assert_eq!(quickest(loads.into_iter()), Some(0));
    }

    #[test]
    fn an_unknown_pace_counts_as_the_fastest_known() {
        // A new connection (no window closed yet) with 3 in flight against
        // one of 4 at the fastest pace.
        let loads = [load(4, Some(10_000), 0), load(3, None, 0)];
        assert_eq!(quickest(loads.into_iter()), Some(1));
    }

    #[test]
    fn a_stalled_connection_stops_getting_work() {
        // One statement blocked for a second against 40 answering in 100 us.
        let loads = [
            load(1, Some(50_000), 1_000_000_000),
            load(40, Some(100_000), 0),
        ];
        assert_eq!(quickest(loads.into_iter()), Some(1));
    }

    #[test]
    fn a_placement_closes_a_long_enough_window_and_sets_the_pace() {
        let pace = Pace::default();
        pace.started(1_000);
        for _ in 0..40 {
            pace.answered(100);
        }
        // 20 ms in: too short to close.
        let early = pace.load(100, 21_000);
        assert_eq!(early.per_answer_ns, None);
        // At least 20 ms over the 40 answered and the 100 in flight.
        assert_eq!(early.at_least_ns, 20_000_000 / 140);
        // 30 ms in: 30 ms over 40 answers.
        let closed = pace.load(100, 31_000);
        assert_eq!(closed.per_answer_ns, Some(750_000));
        // The next window starts where this one closed.
        assert_eq!(pace.load(100, 31_300).at_least_ns, 300_000 / 100);
    }

    #[test]
    fn a_window_without_answers_does_not_close() {
        let pace = Pace::default();
        pace.started(1);
        let load = pace.load(3, 50_001);
        assert_eq!(load.per_answer_ns, None);
        assert_eq!(load.at_least_ns, 50_000_000 / 3);
    }

    #[test]
    fn an_idle_connection_drops_its_window() {
        let pace = Pace::default();
        pace.started(1);
        pace.answered(1);
        pace.answered(0);
        // Idle: nothing is waiting, so nothing bounds it from below, and
        // the idle time is not taken for slowness.
        assert_eq!(pace.load(0, 90_000).at_least_ns, 0);
        pace.started(90_000);
        pace.answered(1);
        let load = pace.load(1, 120_000);
        assert_eq!(load.per_answer_ns, Some(30_000_000));
    }

    #[test]
    fn the_wait_without_an_answer_bounds_the_pace_from_below() {
        let pace = Pace::default();
        pace.started(10);
        pace.answered(1);
        pace.answered(1);
        // 2 answers early on, then nothing for a while: the window closed
        // at 30 ms, and 970 ms later no answer has come. The measure has
        // expired by then; the floor is what keeps the connection avoided.
        assert_eq!(pace.load(1, 30_010).per_answer_ns, Some(15_000_000));
        let load = pace.load(1, 1_000_010);
        assert_eq!(load.at_least_ns, 970_000_000);
        assert_eq!(load.per_answer_ns, None);
        let busy = load_of(400, Some(100_000), 0);
        assert_eq!(quickest([load, busy].into_iter()), Some(1));
    }

    fn load_of(in_flight: u64, per_answer_ns: Option<u64>, at_least_ns: u64) -> Load {
        load(in_flight, per_answer_ns, at_least_ns)
    }

    #[test]
    fn one_request_whose_answers_are_counted_together_is_not_taken_for_slow() {
        // One caller's 20 statements, 5 ms in: their answers are counted
        // when that caller's task runs, so none is counted yet. Taken as
        // 5 ms per answer it would wait 100 ms; at least it is 5 ms.
        let pace = Pace::default();
        pace.started(1_000);
        let one_request = pace.load(20, 6_000);
        assert_eq!(one_request.at_least_ns, 5_000_000 / 20);
        // A connection 500 deep at 30 us per answer waits 15 ms.
        let deep = load_of(500, Some(30_000), 0);
        assert_eq!(quickest([deep, one_request].into_iter()), Some(1));
    }

    #[test]
    fn a_slow_measure_expires_when_the_connection_is_not_kept_busy() {
        // One answer in 183 ms: the window closes with a slow measure.
        let pace = Pace::default();
        pace.started(1);
        pace.answered(19);
        assert_eq!(pace.load(19, 183_001).per_answer_ns, Some(183_000_000));
        // Avoided since, it only ever holds one request for a few ms at a
        // time and never closes another window.
        pace.answered(0);
        for start in [200_000, 250_000, 300_000] {
            pace.started(start);
            pace.answered(0);
        }
        let fresh = pace.load(0, 183_001 + STALE_US);
        assert_eq!(fresh.per_answer_ns, Some(183_000_000));
        let expired = pace.load(20, 183_002 + STALE_US);
        assert_eq!(expired.per_answer_ns, None);
        // Unknown counts as the fastest known: 20 statements against 500.
        let deep = load_of(500, Some(30_000), 0);
        assert_eq!(quickest([deep, expired].into_iter()), Some(1));
    }
}
