//! Runs one measured interval of one driver: closed loop (each task sends
//! its next request when the previous one is answered) or open loop (each
//! task sends at a constant rate, latency measured from the scheduled time).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use hdrhistogram::Histogram;

use crate::catalog::{DriverKind, PoolMode, Variant, Workload};
use crate::checks;
use crate::drivers::pgbench::Pgbench;
use crate::drivers::raw::RawConn;
use crate::drivers::Session;
use crate::error::BenchError;
use crate::histogram::{self, Schedule};
use crate::measure::{Costs, CpuOf, Probe};

/// Extra time a run may take beyond its duration before it is abandoned.
const GRACE: Duration = Duration::from_secs(30);

/// What one measured interval produced.
#[derive(Debug)]
pub struct RunOutcome {
    /// Operations completed.
    pub ops: u64,
    /// Wall time from start until every task finished.
    pub elapsed: Duration,
    /// Latencies (empty when the driver does not report them).
    pub hist: Histogram<u64>,
    /// Client CPU and allocations.
    pub costs: Costs,
}

impl RunOutcome {
    /// Operations per second.
    pub fn ops_per_sec(&self) -> f64 {
        self.ops as f64 / self.elapsed.as_secs_f64().max(1e-9)
    }
}

/// A driver connected for one workload variant, ready to run intervals.
pub enum Subject {
    /// In-process sessions (one per connection).
    Sessions(Vec<Arc<Session>>),
    /// Raw connections (each driven by one task).
    Raw(Vec<tokio::sync::Mutex<RawConn>>),
    /// pgbench.
    Pgbench(Pgbench),
    /// A pool (pgpipe's or deadpool-postgres) that `tasks` tasks share.
    Pooled {
        /// The pool.
        session: Arc<Session>,
        /// Every task of the variant.
        tasks: usize,
    },
}

impl Subject {
    /// Connects `driver` for `variant` of `workload`.
    pub async fn connect(
        driver: DriverKind,
        url: &str,
        workload: Workload,
        variant: &Variant,
    ) -> Result<Subject, BenchError> {
        let n = variant.connections.max(1);
        let setup = async {
            Ok(match driver {
                DriverKind::Pgbench => Subject::Pgbench(Pgbench::new(url, workload, variant)?),
                _ if workload == Workload::Pool && variant.pool != PoolMode::Dedicated => {
                    Subject::Pooled {
                        session: Arc::new(Session::connect_pooled(driver, url, variant).await?),
                        tasks: variant.total_tasks(),
                    }
                }
                DriverKind::Raw => {
                    let mut conns = Vec::with_capacity(n);
                    for _ in 0..n {
                        conns.push(tokio::sync::Mutex::new(
                            RawConn::connect(url, workload).await?,
                        ));
                    }
                    Subject::Raw(conns)
                }
                _ => {
                    let mut sessions = Vec::with_capacity(n);
                    for _ in 0..n {
                        sessions.push(Arc::new(Session::connect(driver, url, workload).await?));
                    }
                    Subject::Sessions(sessions)
                }
            })
        };
        tokio::time::timeout(GRACE, setup)
            .await
            .map_err(|_| BenchError::new(format!("{driver}: connecting timed out")))?
    }

    /// Runs for `duration` with `tasks_per_conn` tasks per connection;
    /// `rate` (operations/s, all tasks together) selects open loop.
    pub async fn run(
        &self,
        tasks_per_conn: usize,
        duration: Duration,
        rate: Option<f64>,
    ) -> Result<RunOutcome, BenchError> {
        let fut = async {
            match self {
                Subject::Sessions(s) => run_sessions(s, tasks_per_conn, duration, rate).await,
                Subject::Pooled { session, tasks } => {
                    run_sessions(std::slice::from_ref(session), *tasks, duration, rate).await
                }
                Subject::Raw(conns) => {
                    if rate.is_some() {
                        return Err(BenchError::new("raw has no open-loop mode"));
                    }
                    run_raw(conns, tasks_per_conn, duration).await
                }
                Subject::Pgbench(p) => {
                    let probe = Probe::start(CpuOf::Children);
                    let (ops, elapsed) = p.run(duration, rate).await?;
                    Ok(RunOutcome {
                        ops,
                        elapsed,
                        hist: histogram::new_histogram(),
                        costs: probe.finish(),
                    })
                }
            }
        };
        tokio::time::timeout(duration + GRACE, fut)
            .await
            .map_err(|_| BenchError::new("run did not finish in time"))?
    }
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

type TaskResult = Result<(u64, Histogram<u64>), BenchError>;

async fn join_all(
    handles: Vec<tokio::task::JoinHandle<TaskResult>>,
) -> Result<(u64, Histogram<u64>), BenchError> {
    let mut ops = 0;
    let mut hist = histogram::new_histogram();
    let mut first_err = None;
    for h in handles {
        match h.await {
            Ok(Ok((n, h))) => {
                ops += n;
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
        None => Ok((ops, hist)),
    }
}

async fn run_sessions(
    sessions: &[Arc<Session>],
    tasks_per_conn: usize,
    duration: Duration,
    rate: Option<f64>,
) -> Result<RunOutcome, BenchError> {
    let total_tasks = (sessions.len() * tasks_per_conn.max(1)) as u64;
    let mut hists: Vec<Histogram<u64>> = (0..total_tasks)
        .map(|_| histogram::new_histogram())
        .collect();
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
            handles.push(tokio::spawn(async move {
                let mut n: u64 = 0;
                match schedule {
                    None => {
                        while !stop.load(Ordering::Relaxed) {
                            let t0 = Instant::now();
                            session.op(checks::key(t, n)).await?;
                            histogram::record(&mut hist, t0.elapsed());
                            n += 1;
                        }
                    }
                    Some(schedule) => loop {
                        let due = schedule.due(n);
                        if due >= deadline {
                            break;
                        }
                        tokio::time::sleep_until(due.into()).await;
                        session.op(checks::key(t, n)).await?;
                        histogram::record(
                            &mut hist,
                            histogram::corrected_latency(due, Instant::now()),
                        );
                        n += 1;
                    },
                }
                Ok((n, hist))
            }));
        }
    }
    let (ops, hist) = join_all(handles).await?;
    let elapsed = start.elapsed();
    Ok(RunOutcome {
        ops,
        elapsed,
        hist,
        costs: probe.finish(),
    })
}

async fn run_raw(
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
    })
}
