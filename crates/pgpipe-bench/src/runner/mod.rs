//! Runs one measured interval of one driver: closed loop (each task sends
//! its next request when the previous one is answered) or open loop (each
//! task sends at a constant rate, latency measured from the scheduled time).

use std::sync::Arc;
use std::time::Duration;

use hdrhistogram::Histogram;

use crate::catalog::{DriverKind, PoolMode, Variant, Workload};
mod loops;
pub mod shards;

use loops::{run_child, run_raw, RunSessions};

use crate::catalog::Connected;
use crate::child;
use crate::drivers::pgbench::Pgbench;
use crate::drivers::raw::{RawConn, RawSpec};
use crate::drivers::Op;
use crate::error::BenchError;
use crate::histogram;
use crate::measure::{Costs, CpuOf, LowWater, Probe};
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
    /// Server connections the driver held after the run (`shards` only).
    pub server_connections: Option<u64>,
    /// Live heap bytes the driver holds (`shards` only).
    pub client_heap_bytes: Option<u64>,
    /// CPU of the servers' backends during the run, when the subject
    /// measures it itself (`shards`: every server of its fleet).
    pub server_cpu: Option<Duration>,
    /// The driver's low-water counts over the run (pgpipe's sessions).
    pub low_water: Option<LowWater>,
}

impl RunOutcome {
    /// Operations per second.
    pub fn ops_per_sec(&self) -> f64 {
        self.ops as f64 / self.elapsed.as_secs_f64().max(1e-9)
    }
}

/// A driver connected for one workload variant, ready to run intervals.
#[derive(Debug)]
pub enum Subject {
    /// In-process sessions (one per connection).
    Sessions(Box<dyn RunSessions>),
    /// Raw connections (each driven by one task).
    Raw(Vec<tokio::sync::Mutex<RawConn>>),
    /// pgbench.
    Pgbench(Pgbench),
    /// A pool (pgpipe's or deadpool-postgres) that `tasks` tasks share.
    Pooled {
        /// The pool.
        session: Box<dyn RunSessions>,
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
    /// `shards`: a driver on the shared fleet of throwaway servers.
    Shards(Box<shards::ShardsSubject>),
    /// `magicstack` by a peer of another language: every run is a child
    /// program.
    External {
        /// How to start it.
        command: crate::drivers::external::Command,
        /// The server.
        url: String,
        /// The query.
        query: crate::families::magicstack::MagicQuery,
        /// Connections.
        concurrency: usize,
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
        if variant.shape == Shape::Shards {
            // Its own servers (the fleet bounds its start); `url` is unused.
            let subject = shards::ShardsSubject::connect(
                driver,
                crate::fleet::SHARDS_FLEET,
                variant.total_tasks(),
            );
            return Ok(Subject::Shards(Box::new(subject.await?)));
        }
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
                (DriverKind::Pgbench, _) => Subject::Pgbench(Pgbench::new(url, workload, variant)?),
                (DriverKind::Asyncpg | DriverKind::Pgx, Shape::Magic(query)) => {
                    let fetch = crate::drivers::external::Fetch::Allowed;
                    let command = crate::drivers::external::availability(driver, fetch)
                        .await
                        .map_err(BenchError::new)?;
                    crate::families::magicstack::ensure_setup(url, query).await?;
                    Subject::External {
                        command,
                        url: url.to_string(),
                        query,
                        concurrency: n,
                    }
                }
                (
                    DriverKind::Raw,
                    Shape::Plain | Shape::Streamed | Shape::Replay | Shape::Te(_),
                ) if variant.pool == PoolMode::Dedicated => {
                    let mut conns = Vec::with_capacity(n);
                    for _ in 0..n {
                        let spec = RawSpec::new(workload, variant.shape)?;
                        conns.push(tokio::sync::Mutex::new(
                            RawConn::connect_with(url, spec).await?,
                        ));
                    }
                    Subject::Raw(conns)
                }
                _ => {
                    crate::catalog::connect_sessions(driver, url, workload, variant, Typed).await?
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
                Subject::Sessions(s) => s.run(tasks_per_conn, duration, rate).await,
                Subject::Pooled { session, tasks } => session.run(*tasks, duration, rate).await,
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
                        server_connections: None,
                        client_heap_bytes: None,
                        server_cpu: None,
                        low_water: None,
                    })
                }
                Subject::Child {
                    driver,
                    url,
                    rows,
                    exe,
                } => run_child(exe, *driver, url, *rows).await,
                Subject::Shards(s) => s.run(duration, rate).await,
                Subject::External {
                    command,
                    url,
                    query,
                    concurrency,
                } => {
                    if rate.is_some() {
                        return Err(BenchError::new("a child program has no open-loop mode"));
                    }
                    let r =
                        crate::drivers::external::run(command, url, *query, *concurrency, duration)
                            .await?;
                    Ok(RunOutcome {
                        ops: r.ops,
                        elapsed: Duration::from_secs_f64(r.elapsed_secs),
                        hist: histogram::new_histogram(),
                        costs: Costs {
                            cpu: Duration::from_secs_f64(r.cpu_secs),
                            allocs: None,
                            ctx_switches: None,
                            syscalls: None,
                            worker_parks: None,
                            worker_busy: None,
                        },
                        rows: Some(r.rows),
                        peak_rss: None,
                        server_connections: None,
                        client_heap_bytes: None,
                        server_cpu: None,
                        low_water: None,
                    })
                }
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

    /// Whether the run's own server (the one `--url` names or the
    /// throwaway one) serves this subject: not for the replay server, nor
    /// for `shards`, which has servers of its own.
    pub fn on_main_server(&self) -> bool {
        !matches!(self, Subject::Replayed { .. } | Subject::Shards(_))
    }

    /// The replay server's address, for a `replay` subject.
    pub fn replay_addr(&self) -> Option<std::net::SocketAddr> {
        match self {
            Subject::Replayed { server, .. } => Some(server.addr()),
            _ => None,
        }
    }
}

/// Makes [`Subject`]s of typed sessions.
struct Typed;

impl Connected for Typed {
    type Out = Subject;

    fn sessions<S: Op>(self, sessions: Vec<Arc<S>>) -> Subject {
        Subject::Sessions(Box::new(sessions))
    }

    fn pooled<S: Op>(self, session: Arc<S>, tasks: usize) -> Subject {
        Subject::Pooled {
            session: Box::new(vec![session]),
            tasks,
        }
    }
}
