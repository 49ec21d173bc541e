//! The load engines. Closed loop: each connection sends its next request
//! when the previous answer is in. Open loop (wrk2 `-R`): requests are due
//! at a constant rate, spread over the connections (each keeps one request
//! in flight, as wrk2's do); a request that is sent late because its
//! connection was still busy is timed from when it was *due*, so a stall
//! counts against every request it held back (coordinated omission
//! corrected). The uncorrected times (from the actual send) are kept too,
//! to show the difference.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use hdrhistogram::Histogram;

use super::client::Conn;
use super::mix::{Mix, Rng};
use crate::histogram::{new_histogram, record};

/// How requests are paced.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Mode {
    /// Back to back on every connection.
    Closed,
    /// A constant total rate in requests/s.
    Open {
        /// Requests per second, all connections together.
        rate: f64,
    },
}

/// One run's description.
#[derive(Debug, Clone)]
pub struct LoadSpec {
    /// The service.
    pub addr: SocketAddr,
    /// What to send.
    pub mix: Arc<Mix>,
    /// Keep-alive connections.
    pub connections: usize,
    /// How long requests are sent (open loop: requests due in this window).
    pub duration: Duration,
    /// Pacing.
    pub mode: Mode,
    /// Check the body of every N-th answer (statuses are always checked).
    pub check_every: u64,
    /// Seed of the request sequence.
    pub seed: u64,
}

/// An open-loop run stops sending this long after its window: requests
/// still unsent then count as errors (the service fell hopelessly behind).
pub const GRACE: Duration = Duration::from_secs(5);

/// What one run measured.
#[derive(Debug)]
pub struct Outcome {
    /// Latencies from each request's due time (closed loop: its send).
    pub corrected: Histogram<u64>,
    /// Latencies from each request's actual send.
    pub uncorrected: Histogram<u64>,
    /// Answers received (wrong ones included).
    pub requests: u64,
    /// Wrong or failed answers.
    pub errors: u64,
    /// Of those, answers that came back wrong (status or body): the service
    /// is broken, not just slow.
    pub wrong: u64,
    /// Open loop: requests never sent (behind by more than [`GRACE`]).
    pub not_sent: u64,
    /// The first error, for the report.
    pub first_error: Option<String>,
    /// When the schedule started (request `n` of connection `k` was due at
    /// `start + (n * connections + k) / rate`).
    pub start: Instant,
    /// From the start until the last answer.
    pub elapsed: Duration,
}

impl Outcome {
    /// Answers per second over the run.
    pub fn achieved_rps(&self) -> f64 {
        self.requests as f64 / self.elapsed.as_secs_f64().max(1e-9)
    }

    fn merge(&mut self, other: Outcome) {
        // Same bounds: cannot fail.
        let _ = self.corrected.add(&other.corrected);
        let _ = self.uncorrected.add(&other.uncorrected);
        self.requests += other.requests;
        self.errors += other.errors;
        self.wrong += other.wrong;
        self.not_sent += other.not_sent;
        if self.first_error.is_none() {
            self.first_error = other.first_error;
        }
    }

    fn empty(start: Instant) -> Outcome {
        Outcome {
            corrected: new_histogram(),
            uncorrected: new_histogram(),
            requests: 0,
            errors: 0,
            wrong: 0,
            not_sent: 0,
            first_error: None,
            start,
            elapsed: Duration::ZERO,
        }
    }
}

/// Runs `spec` to the end.
pub async fn run(spec: &LoadSpec) -> Outcome {
    let connections = spec.connections.max(1);
    // Connections open before the clock starts.
    let mut conns = Vec::with_capacity(connections);
    for _ in 0..connections {
        conns.push(Conn::new(spec.addr));
    }
    let start = Instant::now() + Duration::from_millis(5);
    let mut tasks = Vec::with_capacity(connections);
    for (k, conn) in conns.into_iter().enumerate() {
        let spec = spec.clone();
        tasks.push(tokio::spawn(async move {
            one_connection(&spec, conn, k, start).await
        }));
    }
    let mut total = Outcome::empty(start);
    for t in tasks {
        match t.await {
            Ok(o) => total.merge(o),
            Err(e) => {
                total.errors += 1;
                total
                    .first_error
                    .get_or_insert(format!("load task failed: {e}"));
            }
        }
    }
    total.elapsed = start
        .elapsed()
        .min(spec.duration + GRACE)
        .max(spec.duration);
    total
}

async fn one_connection(spec: &LoadSpec, mut conn: Conn, k: usize, start: Instant) -> Outcome {
    let mut out = Outcome::empty(start);
    let mut rng = Rng::new(spec.seed ^ ((k as u64) << 32));
    let end = start + spec.duration;
    let connections = spec.connections.max(1);
    let mut n: u64 = 0;
    loop {
        let due = match spec.mode {
            Mode::Closed => {
                let now = Instant::now();
                if now >= end {
                    break;
                }
                now
            }
            Mode::Open { rate } => {
                let due = start
                    + Duration::from_secs_f64((n as f64 * connections as f64 + k as f64) / rate);
                if due >= end {
                    break;
                }
                let now = Instant::now();
                if now > end + GRACE {
                    let left = (end - due).as_secs_f64() * rate / connections as f64;
                    out.not_sent += left.ceil() as u64;
                    out.first_error.get_or_insert_with(|| {
                        format!("requests still unsent {GRACE:?} after the run: the service fell behind")
                    });
                    break;
                }
                if due > now {
                    tokio::time::sleep_until(due.into()).await;
                }
                due
            }
        };
        let (req, expect) = spec.mix.next(&mut rng);
        let sent = Instant::now();
        let result = conn.send(&req).await;
        let done = Instant::now();
        record(&mut out.corrected, done.saturating_duration_since(due));
        record(&mut out.uncorrected, done.saturating_duration_since(sent));
        out.requests += 1;
        let checked = match result {
            Ok((status, body)) => {
                let sample = spec.check_every <= 1 || n.is_multiple_of(spec.check_every);
                let checked = spec.mix.check(expect, status, &body, sample);
                if checked.is_err() {
                    out.wrong += 1;
                }
                checked
            }
            Err(e) => Err(e),
        };
        if let Err(e) = checked {
            out.errors += 1;
            out.first_error
                .get_or_insert_with(|| format!("{} {}: {e}", req.method, req.path));
        }
        n += 1;
    }
    out
}
