//! Latency histograms (HdrHistogram, nanoseconds), their percentiles, and
//! the open-loop schedule whose latencies are corrected for coordinated
//! omission (measured from the scheduled send time, as wrk2 does).

use std::time::{Duration, Instant};

use hdrhistogram::Histogram;

/// Highest latency recorded (larger values are clamped): 100 s.
const MAX_NS: u64 = 100_000_000_000;

/// A new empty latency histogram (1 ns .. 100 s, 3 significant digits).
pub fn new_histogram() -> Histogram<u64> {
    Histogram::new_with_bounds(1, MAX_NS, 3).expect("static histogram bounds are valid")
}

/// Records one latency, clamped into the histogram's range.
pub fn record(hist: &mut Histogram<u64>, latency: Duration) {
    let ns = (latency.as_nanos() as u64).clamp(1, MAX_NS);
    // Cannot fail: the value is clamped into range.
    let _ = hist.record(ns);
}

/// The percentiles reported for every run, in microseconds.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct Percentiles {
    /// Median.
    pub p50_us: f64,
    /// 90th percentile.
    pub p90_us: f64,
    /// 99th percentile.
    pub p99_us: f64,
    /// 99.9th percentile.
    pub p999_us: f64,
    /// Largest value.
    pub max_us: f64,
}

fn us(ns: u64) -> f64 {
    ns as f64 / 1000.0
}

/// The reported percentiles of `hist`, or `None` when it is empty.
pub fn percentiles(hist: &Histogram<u64>) -> Option<Percentiles> {
    if hist.is_empty() {
        return None;
    }
    Some(Percentiles {
        p50_us: us(hist.value_at_quantile(0.5)),
        p90_us: us(hist.value_at_quantile(0.9)),
        p99_us: us(hist.value_at_quantile(0.99)),
        p999_us: us(hist.value_at_quantile(0.999)),
        max_us: us(hist.max()),
    })
}

/// The percentile spectrum as wrk2 `-L` prints it: (quantile, microseconds)
/// at 50, 75, 90, 99, 99.9, 99.99, 99.999 and 100 %.
pub fn spectrum(hist: &Histogram<u64>) -> Vec<(f64, f64)> {
    if hist.is_empty() {
        return Vec::new();
    }
    [0.5, 0.75, 0.9, 0.99, 0.999, 0.9999, 0.99999, 1.0]
        .into_iter()
        .map(|q| (q, us(hist.value_at_quantile(q))))
        .collect()
}

/// A constant-rate send schedule (open loop).
#[derive(Debug, Clone, Copy)]
pub struct Schedule {
    /// When the first send is due.
    pub start: Instant,
    /// Time between two sends.
    pub interval: Duration,
}

impl Schedule {
    /// When send number `n` (from 0) is due.
    pub fn due(&self, n: u64) -> Instant {
        self.start + self.interval.mul_f64(n as f64)
    }
}

/// The coordinated-omission-corrected latency of a request due at
/// `scheduled` and completed at `done`: measured from when it should have
/// been sent, so a stall counts against every request it delayed.
pub fn corrected_latency(scheduled: Instant, done: Instant) -> Duration {
    done.saturating_duration_since(scheduled)
}

/// Simulates one open-loop sender (one request in flight) with the given
/// service times: returns each request's corrected latency. Request `i` is
/// due at `i * interval`, starts at the later of that and the previous
/// completion, and takes `service[i]`. Used to test the correction.
pub fn simulate_open_loop(interval: Duration, service: &[Duration]) -> Vec<Duration> {
    let origin = Instant::now();
    let schedule = Schedule {
        start: origin,
        interval,
    };
    let mut free_at = origin;
    service
        .iter()
        .enumerate()
        .map(|(i, s)| {
            let due = schedule.due(i as u64);
            let started = due.max(free_at);
            let done = started + *s;
            free_at = done;
            corrected_latency(due, done)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_of_one_to_hundred() {
        let mut h = new_histogram();
        for v in 1..=100u64 {
            record(&mut h, Duration::from_micros(v));
        }
        let p = percentiles(&h).unwrap();
        // 3 significant digits: 50 us = 50_000 ns lands in a bucket of width 32 ns.
        assert!((p.p50_us - 50.0).abs() < 0.05, "{p:?}");
        assert!((p.p90_us - 90.0).abs() < 0.1, "{p:?}");
        assert!((p.p99_us - 99.0).abs() < 0.1, "{p:?}");
        assert!((p.max_us - 100.0).abs() < 0.1, "{p:?}");
        assert!(percentiles(&new_histogram()).is_none());
    }

    #[test]
    fn coordinated_omission_is_corrected() {
        let ms = Duration::from_millis;
        // Due at 0, 10, 20, 30, 40 ms; the third takes 35 ms, stalling the
        // next two: they start at 55 and 56 ms.
        let lat = simulate_open_loop(ms(10), &[ms(1), ms(1), ms(35), ms(1), ms(1)]);
        assert_eq!(lat, vec![ms(1), ms(1), ms(35), ms(26), ms(17)]);
        let mut h = new_histogram();
        for l in &lat {
            record(&mut h, *l);
        }
        let p = percentiles(&h).unwrap();
        // Naive timing would say the median is 1 ms; corrected it is 17 ms.
        assert!((p.p50_us - 17_000.0).abs() < 20.0, "{p:?}");
        assert!((p.max_us - 35_000.0).abs() < 40.0, "{p:?}");
    }
}
