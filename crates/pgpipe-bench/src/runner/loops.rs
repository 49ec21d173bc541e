//! The measurement loops: in-process sessions (closed or open loop), the
//! raw floor's connections, and `stream`'s child processes.

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use hdrhistogram::Histogram;

use super::RunOutcome;
use crate::catalog::DriverKind;
use crate::checks;
use crate::child;
use crate::drivers::raw::RawConn;
use crate::drivers::Op;
use crate::error::BenchError;
use crate::histogram::{self, Schedule};
use crate::measure::{Costs, CpuOf, LowWater, Probe};

/// One `stream` measurement: a child process streams the rows; an
/// operation is one row.
pub(super) async fn run_child(
    exe: &std::path::Path,
    driver: DriverKind,
    url: &str,
    rows: u64,
) -> Result<RunOutcome, BenchError> {
    let r = child::measure(exe, driver, url, rows).await?;
    Ok(RunOutcome {
        ops: r.rows,
        elapsed: Duration::from_secs_f64(r.secs.max(1e-9)),
        hist: histogram::new_histogram(),
        costs: Costs {
            cpu: Duration::from_secs_f64(r.cpu_secs.max(0.0)),
            allocs: Some(r.allocs),
            ctx_switches: r.ctx_switches,
            syscalls: r.syscalls,
            worker_parks: r.worker_parks,
            worker_busy: r.worker_busy_secs.map(Duration::from_secs_f64),
        },
        rows: Some(r.rows),
        peak_rss: r.peak_rss_bytes,
        server_connections: None,
        client_heap_bytes: None,
        server_cpu: None,
        low_water: r.low_water,
    })
}

fn stop_after(duration: Duration) -> Arc<AtomicBool> {
    let stop = Arc::new(AtomicBool::new(false));
    let s = stop.clone();
    tokio::spawn(async move {
        tokio::time::sleep(duration).await;
        s.store(true, Ordering::Relaxed);
    });
    stop
}

type TaskResult = Result<(u64, u64, Histogram<u64>), BenchError>;

async fn join_all(
    handles: Vec<tokio::task::JoinHandle<TaskResult>>,
) -> Result<(u64, u64, Histogram<u64>), BenchError> {
    let mut ops = 0;
    let mut rows = 0;
    let mut hist = histogram::new_histogram();
    let mut first_err = None;
    for h in handles {
        match h.await {
            Ok(Ok((n, r, h))) => {
                ops += n;
                rows += r;
                // Same bounds: cannot fail.
                let _ = hist.add(&h);
            }
            Ok(Err(e)) => {
                first_err.get_or_insert(e);
            }
            Err(e) => {
                first_err.get_or_insert(BenchError::new(format!("task failed: {e}")));
            }
        }
    }
    match first_err {
        Some(e) => Err(e),
        None => Ok((ops, rows, hist)),
    }
}

/// In-process sessions of one adapter type, type-erased once per subject:
/// the loop inside is compiled per type, so each operation is a direct call.
pub trait RunSessions: std::fmt::Debug + Send + Sync {
    /// Runs `tasks_per_conn` tasks on each session for `duration` (closed
    /// loop) or at `rate` operations/s in all (open loop).
    fn run(
        &self,
        tasks_per_conn: usize,
        duration: Duration,
        rate: Option<f64>,
    ) -> Pin<Box<dyn Future<Output = Result<RunOutcome, BenchError>> + Send + '_>>;
}

impl<S: Op> RunSessions for Vec<Arc<S>> {
    fn run(
        &self,
        tasks_per_conn: usize,
        duration: Duration,
        rate: Option<f64>,
    ) -> Pin<Box<dyn Future<Output = Result<RunOutcome, BenchError>> + Send + '_>> {
        Box::pin(run_sessions(self, tasks_per_conn, duration, rate))
    }
}

async fn run_sessions<S: Op>(
    sessions: &[Arc<S>],
    tasks_per_conn: usize,
    duration: Duration,
    rate: Option<f64>,
) -> Result<RunOutcome, BenchError> {
    let total_tasks = (sessions.len() * tasks_per_conn.max(1)) as u64;
    let mut hists: Vec<Histogram<u64>> = (0..total_tasks)
        .map(|_| histogram::new_histogram())
        .collect();
    let low_water = || LowWater::total(sessions.iter().map(|s| s.low_water()));
    let low_water_before = low_water();
    let probe = Probe::start(CpuOf::SelfProcess);
    let start = Instant::now();
    let stop = stop_after(duration);
    let deadline = start + duration;
    let mut handles = Vec::with_capacity(total_tasks as usize);
    let mut task = 0usize;
    for session in sessions {
        for _ in 0..tasks_per_conn.max(1) {
            let session = session.clone();
            let stop = stop.clone();
            let mut hist = hists.pop().unwrap_or_else(histogram::new_histogram);
            let t = task;
            task += 1;
            let schedule = rate.map(|r| {
                let interval = Duration::from_secs_f64(total_tasks as f64 / r.max(1e-6));
                Schedule {
                    start: start + interval.mul_f64(t as f64 / total_tasks as f64),
                    interval,
                }
            });
            let per_call = session.ops_per_call();
            handles.push(tokio::spawn(async move {
                let mut n: u64 = 0;
                let mut rows: u64 = 0;
                match schedule {
                    None => {
                        while !stop.load(Ordering::Relaxed) {
                            let t0 = Instant::now();
                            rows += session.op(checks::key(t, n)).await?;
                            histogram::record(&mut hist, t0.elapsed());
                            n += per_call;
                        }
                    }
                    Some(schedule) => loop {
                        let due = schedule.due(n);
                        if due >= deadline {
                            break;
                        }
                        tokio::time::sleep_until(due.into()).await;
                        rows += session.op(checks::key(t, n)).await?;
                        histogram::record(
                            &mut hist,
                            histogram::corrected_latency(due, Instant::now()),
                        );
                        n += per_call;
                    },
                }
                Ok((n, rows, hist))
            }));
        }
    }
    let (ops, rows, hist) = join_all(handles).await?;
    let elapsed = start.elapsed();
    let costs = probe.finish();
    Ok(RunOutcome {
        ops,
        elapsed,
        hist,
        costs,
        rows: Some(rows),
        peak_rss: None,
        server_connections: None,
        client_heap_bytes: None,
        server_cpu: None,
        low_water: low_water()
            .zip(low_water_before)
            .map(|(now, before)| now.since(before)),
    })
}

pub(super) async fn run_raw(
    conns: &[tokio::sync::Mutex<RawConn>],
    tasks_per_conn: usize,
    duration: Duration,
) -> Result<RunOutcome, BenchError> {
    let probe = Probe::start(CpuOf::SelfProcess);
    let start = Instant::now();
    let stop = stop_after(duration);
    let runs = conns.iter().enumerate().map(|(i, c)| {
        let stop = stop.clone();
        async move {
            let mut conn = c.lock().await;
            conn.drive(i, tasks_per_conn, stop).await
        }
    });
    let results = futures_util::future::join_all(runs).await;
    let mut ops = 0;
    let mut hist = histogram::new_histogram();
    for r in results {
        let (n, h) = r?;
        ops += n;
        let _ = hist.add(&h);
    }
    let elapsed = start.elapsed();
    Ok(RunOutcome {
        ops,
        elapsed,
        hist,
        costs: probe.finish(),
        rows: None,
        peak_rss: None,
        server_connections: None,
        client_heap_bytes: None,
        server_cpu: None,
        low_water: None,
    })
}
