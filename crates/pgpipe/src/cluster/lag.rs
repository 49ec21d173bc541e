//! A replica's lag in time, from replay positions: the primary's probed
//! positions over time, and the first one a replica has not replayed.

use std::collections::VecDeque;
use std::time::Duration;

use pgpipe_types::PgLsn;
use tokio::time::Instant;

use super::position::reached;

/// How many of the primary's positions are kept (at the default probe
/// interval, several minutes' worth).
const SAMPLES: usize = 1024;

/// The primary's WAL positions as its probes saw them, oldest first.
#[derive(Debug, Default)]
pub(crate) struct History {
    samples: VecDeque<(Instant, PgLsn)>,
}

impl History {
    /// Records the primary at `position` at `at`; a position that did not
    /// move adds nothing (the first time it was seen there is what counts).
    pub(crate) fn record(&mut self, at: Instant, position: PgLsn) {
        if let Some((_, last)) = self.samples.back() {
            if *last >= position {
                return;
            }
        }
        if self.samples.len() == SAMPLES {
            self.samples.pop_front();
        }
        self.samples.push_back((at, position));
    }

    /// The primary moved on (a failover): positions of the old one say
    /// nothing about the new one's replicas.
    pub(crate) fn clear(&mut self) {
        self.samples.clear();
    }

    /// How far behind a replica that replayed up to `replayed` is: the
    /// time since the primary was first seen at a position the replica has
    /// not reached (zero if it has reached every one). Measured at probe
    /// granularity: the true lag is at most one probe interval more.
    /// `None` when it is behind every position kept (older than the
    /// history: treat as beyond any bound).
    pub(crate) fn lag(&self, replayed: PgLsn, wal_block: u64, now: Instant) -> Option<Duration> {
        let first_missing = self
            .samples
            .iter()
            .position(|(_, lsn)| !reached(replayed, *lsn, wal_block));
        match first_missing {
            None => Some(Duration::ZERO),
            Some(0) if self.samples.len() == SAMPLES => None,
            Some(i) => Some(now.saturating_duration_since(self.samples[i].0)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lag_is_the_age_of_the_first_position_not_replayed() {
        let t0 = Instant::now();
        let s = Duration::from_secs;
        let mut h = History::default();
        h.record(t0, PgLsn::new(100));
        h.record(t0 + s(1), PgLsn::new(200));
        h.record(t0 + s(2), PgLsn::new(200));
        h.record(t0 + s(3), PgLsn::new(300));
        let now = t0 + s(10);
        assert_eq!(h.lag(PgLsn::new(300), 8192, now), Some(Duration::ZERO));
        assert_eq!(h.lag(PgLsn::new(250), 8192, now), Some(s(7)));
        assert_eq!(h.lag(PgLsn::new(150), 8192, now), Some(s(9)));
        assert_eq!(h.lag(PgLsn::new(50), 8192, now), Some(s(10)));
        h.clear();
        assert_eq!(h.lag(PgLsn::new(50), 8192, now), Some(Duration::ZERO));
    }
}
