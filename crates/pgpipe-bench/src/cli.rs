//! Command-line arguments and the plan they describe.

use std::path::PathBuf;
use std::time::Duration;

use clap::Parser;

use crate::catalog::{DriverKind, Workload};

/// pgpipe's benchmark tool: pgpipe against tokio-postgres, sqlx,
/// deadpool-postgres, pgbench and a raw protocol floor. Without --url (or DATABASE_URL) it starts a
/// throwaway cluster and runs the quick suite. `pgpipe-bench http --help`:
/// the example service on pgpipe and on tokio-postgres under HTTP load.
#[derive(Debug, Parser, Default)]
#[command(name = "pgpipe-bench", version)]
pub struct Args {
    /// Server to use (fixture tables are created there); default: a throwaway cluster.
    #[arg(long, env = "DATABASE_URL")]
    pub url: Option<String>,
    /// Workloads to run, comma-separated (default: the quick suite, all but
    /// `pool`; with --full, all).
    #[arg(long, value_delimiter = ',')]
    pub workloads: Vec<String>,
    /// Drivers to run, comma-separated (default: all).
    #[arg(long, value_delimiter = ',')]
    pub drivers: Vec<String>,
    /// Seconds per measured round.
    #[arg(long)]
    pub duration: Option<f64>,
    /// Measured rounds per driver (drivers alternate between rounds).
    #[arg(long)]
    pub rounds: Option<u32>,
    /// Warm-up seconds per driver before the rounds.
    #[arg(long)]
    pub warmup: Option<f64>,
    /// Concurrent tasks on one connection for pipeline/unprepared, comma-separated.
    #[arg(long, value_delimiter = ',')]
    pub concurrency: Vec<usize>,
    /// Connections of the multi-connection variant (64 tasks each).
    #[arg(long)]
    pub connections: Option<usize>,
    /// Open loop: constant rate in operations/s (all tasks together);
    /// latency is corrected for coordinated omission.
    #[arg(long)]
    pub rate: Option<f64>,
    /// Write results as JSON here.
    #[arg(long)]
    pub json: Option<PathBuf>,
    /// Write results.md, results.json and one SVG chart per workload into
    /// this directory.
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// The quick suite (the default): short rounds, fewer concurrency levels.
    #[arg(long)]
    pub quick: bool,
    /// The full suite: longer rounds, every concurrency level, ozo's 1..64
    /// connections, 10M stream rows, the replay variants, `pool`.
    #[arg(long, conflicts_with = "quick")]
    pub full: bool,
    /// List workloads and drivers, then exit.
    #[arg(long)]
    pub list: bool,
    /// No progress bar.
    #[arg(long)]
    pub no_progress: bool,
    /// Which server the rows-* workloads read from, comma-separated:
    /// `real` (the PostgreSQL server), `replay` (the in-tool replay server
    /// answering with a captured response). Default: real (quick), real,replay (full).
    #[arg(long, value_delimiter = ',')]
    pub server: Vec<String>,
    /// Alternate a workload's variants round by round too (all of its
    /// variants stay connected at once), so that drift in the machine's
    /// load hits them alike.
    #[arg(long)]
    pub interleave: bool,
    /// Pin the client (this process, its runtime threads and pgbench) to the
    /// first half of the CPUs and a throwaway server to the other half
    /// (sched_setaffinity). With --url only the client is pinned.
    #[arg(long)]
    pub pin: bool,
    /// The tokio runtime every driver runs on: `multi-thread` (the default,
    /// one worker per core) or `current-thread` (one thread, as a
    /// thread-per-core service runs each shard), which takes the cost of
    /// waking tasks across threads out of the per-query CPU. (The `stream`
    /// workload's child processes always run multi-thread.)
    #[arg(long, value_enum, default_value_t = RuntimeFlavor::MultiThread)]
    pub runtime: RuntimeFlavor,
    /// Every driver connects over TLS (verify-full against the testkit's
    /// run-time CA; tokio-postgres through tokio-postgres-rustls, sqlx
    /// with its rustls feature). Starts a TLS cluster; `raw` and `pgbench`
    /// are left out (no TLS in them here), as is the replay server.
    #[arg(long, conflicts_with = "url")]
    pub tls: bool,
    /// Only these variants (labels, comma-separated, e.g. `reuse,pool`).
    #[arg(long, value_delimiter = ',')]
    pub variants: Vec<String>,
    /// Install a `tracing` subscriber for the whole run, at this level:
    /// `off` (none, the default), `info` (installed, pgpipe's DEBUG spans
    /// disabled) or `debug` (every pgpipe operation span recorded). Its
    /// output is discarded: this measures what observability costs.
    #[arg(long, value_enum, default_value_t = TracingLevel::Off)]
    pub tracing: TracingLevel,
    /// Internal: stream rows with this driver and print one JSON line (the
    /// `stream` workload runs each driver in a child process).
    #[arg(long, hide = true)]
    pub stream_child: Option<String>,
    /// Internal: rows for `--stream-child`.
    #[arg(long, hide = true)]
    pub stream_rows: Option<u64>,
}

/// The subscriber level of `--tracing`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum TracingLevel {
    /// No subscriber.
    #[default]
    Off,
    /// A subscriber at INFO: pgpipe's DEBUG spans are disabled.
    Info,
    /// A subscriber at DEBUG: every pgpipe operation span is recorded.
    Debug,
}

/// The tokio runtime the drivers run on (`--runtime`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum RuntimeFlavor {
    /// `Builder::new_multi_thread`: a worker per core.
    #[default]
    MultiThread,
    /// `Builder::new_current_thread`: everything on one thread.
    CurrentThread,
}

impl RuntimeFlavor {
    /// A runtime of this flavour with I/O and timers enabled.
    pub fn build(self) -> std::io::Result<tokio::runtime::Runtime> {
        let mut builder = match self {
            RuntimeFlavor::MultiThread => tokio::runtime::Builder::new_multi_thread(),
            RuntimeFlavor::CurrentThread => tokio::runtime::Builder::new_current_thread(),
        };
        builder.enable_all().build()
    }
}

/// A validated run description.
#[derive(Debug, Clone)]
pub struct Plan {
    /// The server, when given.
    pub url: Option<String>,
    /// Workloads, in suite order.
    pub workloads: Vec<Workload>,
    /// Drivers, in table order.
    pub drivers: Vec<DriverKind>,
    /// Per measured round.
    pub duration: Duration,
    /// Measured rounds.
    pub rounds: u32,
    /// Warm-up per driver per variant.
    pub warmup: Duration,
    /// Single-connection task counts.
    pub concurrency: Vec<usize>,
    /// Connections of the multi-connection variant (0: none).
    pub connections: usize,
    /// Open-loop rate.
    pub rate: Option<f64>,
    /// JSON path.
    pub json: Option<PathBuf>,
    /// Output directory.
    pub out: Option<PathBuf>,
    /// Quick suite.
    pub quick: bool,
    /// Show a progress bar.
    pub progress: bool,
    /// rows-* against the real server.
    pub real_server: bool,
    /// rows-* against the replay server (a second variant, `replay`).
    pub replay_server: bool,
    /// Rows of the `stream` workload.
    pub stream_rows: u64,
    /// `--variants`: only these labels (empty: all).
    pub variant_filter: Vec<String>,
    /// `--interleave`: a workload's variants alternate round by round.
    pub interleave: bool,
    /// `--pin`: client and server on separate CPUs.
    pub pin: bool,
    /// `--runtime`: the tokio runtime the drivers run on.
    pub runtime: RuntimeFlavor,
    /// `--tls`: every connection over TLS.
    pub tls: bool,
}

fn seconds(v: Option<f64>, default: f64, what: &str) -> Result<Duration, String> {
    let s = v.unwrap_or(default);
    if !(s.is_finite() && s > 0.0 && s <= 86_400.0) {
        return Err(format!(
            "--{what} must be a positive number of seconds, got {s}"
        ));
    }
    Ok(Duration::from_secs_f64(s))
}

impl Plan {
    /// Validates `args`; errors name the valid choices.
    pub fn from_args(args: &Args) -> Result<Plan, String> {
        let quick = !args.full;
        let workloads = if args.workloads.is_empty() {
            if quick {
                Workload::QUICK.to_vec()
            } else {
                Workload::ALL.to_vec()
            }
        } else {
            args.workloads
                .iter()
                .map(|w| Workload::parse(w.trim()))
                .collect::<Result<_, _>>()?
        };
        let drivers = if args.drivers.is_empty() && args.tls {
            DriverKind::ALL
                .into_iter()
                .filter(|d| crate::tls::supports(*d))
                .collect()
        } else if args.drivers.is_empty() {
            DriverKind::ALL.to_vec()
        } else {
            args.drivers
                .iter()
                .map(|d| DriverKind::parse(d.trim()))
                .collect::<Result<_, _>>()?
        };
        let concurrency = if args.concurrency.is_empty() {
            if quick {
                vec![64, 256]
            } else {
                vec![1, 16, 64, 256]
            }
        } else {
            args.concurrency.clone()
        };
        if concurrency.iter().any(|&c| c == 0 || c > 4096) {
            return Err("--concurrency values must be between 1 and 4096".into());
        }
        let connections = args.connections.unwrap_or(2);
        if connections > 64 {
            return Err("--connections must be at most 64".into());
        }
        if let Some(r) = args.rate {
            if !(r.is_finite() && r > 0.0) {
                return Err(format!(
                    "--rate must be a positive number of operations/s, got {r}"
                ));
            }
        }
        let rounds = args.rounds.unwrap_or(if quick { 3 } else { 5 });
        if rounds == 0 || rounds > 1000 {
            return Err("--rounds must be between 1 and 1000".into());
        }
        let (mut real_server, mut replay_server) = (true, !quick);
        if !args.server.is_empty() {
            real_server = false;
            replay_server = false;
            for s in &args.server {
                match s.trim() {
                    "real" => real_server = true,
                    "replay" => replay_server = true,
                    other => {
                        return Err(format!(
                            "unknown server {other:?}; valid servers: real, replay"
                        ))
                    }
                }
            }
        }
        let stream_rows = args
            .stream_rows
            .unwrap_or(if quick { 1_000_000 } else { 10_000_000 });
        if stream_rows == 0 || stream_rows > 1_000_000_000 {
            return Err("--stream-rows must be between 1 and 1e9".into());
        }
        let mut plan = Plan {
            url: args.url.clone().filter(|u| !u.trim().is_empty()),
            workloads,
            drivers,
            duration: seconds(args.duration, if quick { 1.0 } else { 5.0 }, "duration")?,
            rounds,
            warmup: seconds(args.warmup, if quick { 0.5 } else { 3.0 }, "warmup")?,
            concurrency,
            connections,
            rate: args.rate,
            json: args.json.clone(),
            out: args.out.clone(),
            quick,
            progress: !args.no_progress,
            real_server,
            replay_server,
            stream_rows,
            variant_filter: Vec::new(),
            interleave: args.interleave,
            pin: args.pin,
            runtime: args.runtime,
            tls: args.tls,
        };
        if plan.tls {
            if let Some(d) = plan.drivers.iter().find(|d| !crate::tls::supports(**d)) {
                return Err(format!("--tls: {d} cannot connect over TLS here"));
            }
            plan.replay_server = false;
        }
        let known: Vec<String> = plan
            .workloads
            .iter()
            .flat_map(|&w| plan.all_variants(w))
            .map(|v| v.label)
            .collect();
        for label in &args.variants {
            let label = label.trim().to_string();
            if !known.contains(&label) {
                return Err(format!(
                    "unknown variant {label:?} for these workloads; valid variants: {}",
                    known.join(", ")
                ));
            }
            plan.variant_filter.push(label);
        }
        if args.drivers.is_empty() {
            // By default, only the drivers that can run something planned
            // (deadpool-postgres: the pool workload; sqlx, raw and pgbench
            // are not measured there).
            let runs = |d: DriverKind, p: &Plan| {
                p.workloads
                    .iter()
                    .any(|&w| p.variants(w).iter().any(|v| d.unsupported(w, v).is_none()))
            };
            let drivers = plan.drivers.clone();
            plan.drivers = drivers.into_iter().filter(|&d| runs(d, &plan)).collect();
        }
        Ok(plan)
    }
}

/// The `--list` text.
pub fn list_text() -> String {
    let mut s = String::from("workloads:\n");
    for w in Workload::ALL {
        s.push_str(&format!("  {:<12} {}\n", w.name(), w.description()));
    }
    s.push_str("drivers:\n");
    for d in DriverKind::ALL {
        s.push_str(&format!("  {}\n", d.name()));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan(argv: &[&str]) -> Result<Plan, String> {
        let args =
            Args::try_parse_from(std::iter::once("pgpipe-bench").chain(argv.iter().copied()))
                .map_err(|e| e.to_string())?;
        Plan::from_args(&args)
    }

    #[test]
    fn unknown_names_list_the_valid_ones() {
        let e = plan(&["--workloads", "latency,nope"]).unwrap_err();
        assert!(e.contains("unknown workload \"nope\""), "{e}");
        for w in Workload::ALL {
            assert!(e.contains(w.name()), "{e}");
        }
        let e = plan(&["--drivers", "pgpipe,diesel"]).unwrap_err();
        assert!(e.contains("unknown driver \"diesel\""), "{e}");
        for d in DriverKind::ALL {
            assert!(e.contains(d.name()), "{e}");
        }
    }

    #[test]
    fn tls_keeps_the_drivers_that_can_and_refuses_the_others() {
        let p = plan(&["--tls", "--workloads", "pipeline"]).unwrap();
        assert!(p.tls && !p.replay_server);
        assert_eq!(
            p.drivers,
            [
                DriverKind::Pgpipe,
                DriverKind::TokioPostgres,
                DriverKind::Sqlx
            ]
        );
        let e = plan(&["--tls", "--drivers", "pgpipe,raw"]).unwrap_err();
        assert!(e.contains("--tls: raw cannot connect over TLS"), "{e}");
        assert!(plan(&["--tls", "--url", "postgres://h/d"]).is_err());
        assert!(!plan(&[]).unwrap().tls);
    }

    #[test]
    fn magicstack_has_a_variant_per_query_and_its_four_drivers() {
        use crate::families::magicstack::MagicQuery;
        use crate::shape::Shape;
        let p = plan(&["--workloads", "magicstack"]).unwrap();
        let variants = p.variants(Workload::Magicstack);
        let labels: Vec<&str> = variants.iter().map(|v| v.label.as_str()).collect();
        assert_eq!(
            labels,
            [
                "pg_type",
                "generate_series",
                "large_object",
                "arrays",
                "copyfrom",
                "batch",
                "oneplusone"
            ]
        );
        for v in &variants {
            assert_eq!((v.connections, v.tasks_per_conn), (10, 1), "{}", v.label);
            assert_eq!(v.shape, Shape::Magic(MagicQuery::parse(&v.label).unwrap()));
        }
        // By default, only the drivers that run it.
        assert_eq!(
            p.drivers,
            [
                DriverKind::Pgpipe,
                DriverKind::TokioPostgres,
                DriverKind::Asyncpg,
                DriverKind::Pgx
            ]
        );
        assert!(DriverKind::Sqlx
            .unsupported(Workload::Magicstack, &variants[0])
            .is_some());
        // The external peers run nothing else.
        let pipeline = &plan(&["--workloads", "pipeline"])
            .unwrap()
            .variants(Workload::Pipeline)[0];
        for d in [DriverKind::Asyncpg, DriverKind::Pgx] {
            assert!(d.is_external());
            assert!(d.unsupported(Workload::Pipeline, pipeline).is_some());
            assert_eq!(DriverKind::parse(d.name()), Ok(d));
        }
        assert!(!Workload::QUICK.contains(&Workload::Magicstack));
        assert_eq!(Workload::parse("magicstack"), Ok(Workload::Magicstack));
        let e = plan(&["--workloads", "magicstack", "--variants", "nope"]).unwrap_err();
        assert!(e.contains("oneplusone"), "{e}");
    }

    #[test]
    fn bad_numbers_are_errors() {
        assert!(plan(&["--duration", "-1"]).is_err());
        assert!(plan(&["--rate", "0"]).is_err());
        assert!(plan(&["--concurrency", "0"]).is_err());
        assert!(plan(&["--rounds", "x"]).is_err());
    }

    #[test]
    fn defaults_are_the_quick_suite() {
        let p = plan(&[]).unwrap();
        assert!(p.quick);
        assert_eq!(p.rounds, 3);
        assert_eq!(p.workloads, Workload::QUICK.to_vec());
        assert!(!p.workloads.contains(&Workload::Pool));
        // deadpool-postgres runs ozo's pooled rows.
        assert!(p.drivers.contains(&DriverKind::DeadpoolPostgres));
        assert!(p.real_server && !p.replay_server);
        let rows: Vec<String> = p
            .variants(Workload::RowsJson)
            .into_iter()
            .map(|v| v.label)
            .collect();
        assert_eq!(rows, ["50k", "50k-stream"]);
        let both = plan(&["--server", "real,replay"]).unwrap();
        let rows: Vec<String> = both
            .variants(Workload::Rows1Col)
            .into_iter()
            .map(|v| v.label)
            .collect();
        assert_eq!(rows, ["50k", "50k-stream", "replay"]);
        assert!(plan(&["--server", "fake"]).is_err());
        assert_eq!(p.runtime, RuntimeFlavor::MultiThread);
        let current = plan(&["--runtime", "current-thread"]).unwrap();
        assert_eq!(current.runtime, RuntimeFlavor::CurrentThread);
        let rt = current.runtime.build().expect("a current-thread runtime");
        assert_eq!(
            rt.handle().runtime_flavor(),
            tokio::runtime::RuntimeFlavor::CurrentThread
        );
        assert!(plan(&["--runtime", "green-threads"]).is_err());
        let some = plan(&["--workloads", "ozo", "--variants", "reuse,pool"]).unwrap();
        let labels: Vec<String> = some
            .variants(Workload::Ozo)
            .into_iter()
            .map(|v| v.label)
            .collect();
        assert_eq!(labels, ["reuse", "pool"]);
        let e = plan(&["--workloads", "ozo", "--variants", "nope"]).unwrap_err();
        assert!(e.contains("complex-raw-1"), "{e}");
        let ozo: Vec<String> = plan(&["--full"])
            .unwrap()
            .variants(Workload::Ozo)
            .into_iter()
            .map(|v| v.label)
            .collect();
        assert_eq!(ozo.len(), 4 + 2 * 7);
        assert_eq!(
            &ozo[..5],
            ["basic", "reuse", "pool", "parsed", "complex-raw-1"]
        );
        assert!(ozo.contains(&"complex-parsed-64".to_string()));
        let pool_only = plan(&["--workloads", "pool"]).unwrap();
        assert_eq!(
            pool_only.drivers,
            [
                DriverKind::Pgpipe,
                DriverKind::PgpipeCoalesced,
                DriverKind::TokioPostgres,
                DriverKind::DeadpoolPostgres
            ]
        );
        let full = plan(&["--full"]).unwrap();
        assert!(full.workloads.contains(&Workload::Pool));
        let pool: Vec<(String, usize)> = p
            .variants(Workload::Pool)
            .into_iter()
            .map(|v| (v.label.clone(), v.total_tasks()))
            .collect();
        assert_eq!(
            pool,
            [
                ("64-dedicated".to_string(), 64),
                ("64-pool1".to_string(), 64),
                ("256x8-dedicated".to_string(), 256),
                ("256x8".to_string(), 256),
                ("256x8-line64".to_string(), 256),
                ("256x8-get".to_string(), 256),
                ("64x8-tx".to_string(), 64),
            ]
        );
        let labels: Vec<String> = p
            .variants(Workload::Pipeline)
            .into_iter()
            .map(|v| v.label)
            .collect();
        assert_eq!(labels, ["64", "256", "64-fail1%", "2conn"]);
    }
}
