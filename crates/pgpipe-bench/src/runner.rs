//! Runs one measured interval of one driver: closed loop (each task sends
//! its next request when the previous one is answered) or open loop (each
//! task sends at a constant rate, latency measured from the scheduled time).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use hdrhistogram::Histogram;

use crate::catalog::{DriverKind, PoolMode, Variant, Workload};
use crate::checks;
use crate::child;
use crate::drivers::ozo::OzoSession;
use crate::drivers::pgbench::Pgbench;
use crate::drivers::raw::{RawConn, RawSpec};
use crate::drivers::techempower::TeSession;
use crate::drivers::Session;
use crate::error::BenchError;
use crate::histogram::{self, Schedule};
use crate::measure::{Costs, CpuOf, Probe};
use crate::replay::{self, ReplayServer};
use crate::shape::Shape;

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
    /// Rows the operations returned (when the driver reports them).
    pub rows: Option<u64>,
    /// Peak RSS of the process that did the work (`stream` only).
    pub peak_rss: Option<u64>,
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
    /// `stream`: every run is a child process of the bench binary.
    Child {
        /// The driver the child runs.
        driver: DriverKind,
        /// The server.
        url: String,
        /// Rows per run.
        rows: u64,
        /// The bench binary.
        exe: std::path::PathBuf,
    },
    /// A subject connected to the replay server (kept running with it).
    Replayed {
        /// The subject, connected to the replay server.
        inner: Box<Subject>,
        /// The server (stopped when dropped).
        server: ReplayServer,
    },
}

impl Subject {
    /// Connects `driver` for `variant` of `workload` (for a `replay`
    /// variant: captures the workload's answer, starts a replay server and
    /// connects to it).
    pub async fn connect(
        driver: DriverKind,
        url: &str,
        workload: Workload,
        variant: &Variant,
    ) -> Result<Subject, BenchError> {
        if variant.shape != Shape::Replay {
            return Subject::connect_to(driver, url, workload, variant).await;
        }
        let capture = tokio::time::timeout(GRACE, replay::capture_for(url, workload))
            .await
            .map_err(|_| BenchError::new("replay: capturing timed out"))??;
        let server = ReplayServer::start(capture)?;
        let replay_url = server.url_like(url)?;
        let inner = Subject::connect_to(driver, &replay_url, workload, variant).await?;
        Ok(Subject::Replayed {
            inner: Box::new(inner),
            server,
        })
    }

    async fn connect_to(
        driver: DriverKind,
        url: &str,
        workload: Workload,
        variant: &Variant,
    ) -> Result<Subject, BenchError> {
        let n = variant.connections.max(1);
        let setup = async {
            Ok(match (driver, variant.shape) {
                (_, Shape::Stream { rows }) => Subject::Child {
                    driver,
                    url: url.to_string(),
                    rows,
                    exe: child::bench_exe()?,
                },
                (_, Shape::Ozo(_)) => Subject::Pooled {
                    session: Arc::new(Session::Ozo(
                        OzoSession::connect(driver, url, variant).await?,
                    )),
                    tasks: variant.total_tasks(),
                },
                (d, Shape::Te(_)) if d != DriverKind::Raw => Subject::Sessions(vec![Arc::new(
                    Session::Te(TeSession::connect(driver, url, variant).await?),
                )]),
                (DriverKind::Pgbench, _) => Subject::Pgbench(Pgbench::new(url, workload, variant)?),
                (_, _) if workload == Workload::Pool && variant.pool != PoolMode::Dedicated => {
                    Subject::Pooled {
                        session: Arc::new(Session::connect_pooled(driver, url, variant).await?),
                        tasks: variant.total_tasks(),
                    }
                }
                (DriverKind::Raw, _) => {
                    let mut conns = Vec::with_capacity(n);
                    for _ in 0..n {
                        let spec = RawSpec::new(workload, variant.shape)?;
                        conns.push(tokio::sync::Mutex::new(
                            RawConn::connect_with(url, spec).await?,
                        ));
                    }
                    Subject::Raw(conns)
                }
                (_, _) => {
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
                        rows: None,
                        peak_rss: None,
                    })
                }
                Subject::Child {
                    driver,
                    url,
                    rows,
                    exe,
                } => run_child(exe, *driver, url, *rows).await,
                Subject::Replayed { inner, .. } => {
                    Box::pin(inner.run(tasks_per_conn, duration, rate)).await
                }
            }
        };
        let limit = match self {
            Subject::Child { .. } => child::CHILD_TIMEOUT + GRACE,
            _ => duration + GRACE,
        };
        tokio::time::timeout(limit, fut)
            .await
            .map_err(|_| BenchError::new("run did not finish in time"))?
    }

    /// The replay server's address, for a `replay` subject.
    pub fn replay_addr(&self) -> Option<std::net::SocketAddr> {
        match self {
            Subject::Replayed { server, .. } => Some(server.addr()),
            _ => None,
        }
    }
}

/// One `stream` measurement: a child process streams the rows; an
/// operation is one row.
async fn run_child(
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
        },
        rows: Some(r.rows),
        peak_rss: r.peak_rss_bytes,
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
                let mut rows: u64 = 0;
                match schedule {
                    None => {
                        while !stop.load(Ordering::Relaxed) {
                            let t0 = Instant::now();
                            rows += session.op(checks::key(t, n)).await?;
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
                        rows += session.op(checks::key(t, n)).await?;
                        histogram::record(
                            &mut hist,
                            histogram::corrected_latency(due, Instant::now()),
                        );
                        n += 1;
                    },
                }
                Ok((n, rows, hist))
            }));
        }
    }
    let (ops, rows, hist) = join_all(handles).await?;
    let elapsed = start.elapsed();
    Ok(RunOutcome {
        ops,
        elapsed,
        hist,
        costs: probe.finish(),
        rows: Some(rows),
        peak_rss: None,
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
        rows: None,
        peak_rss: None,
    })
}
