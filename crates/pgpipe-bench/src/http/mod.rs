//! `pgpipe-bench http`: the example service (crates/pgpipe-service) on
//! pgpipe and on tokio-postgres, loaded over HTTP/1.1 keep-alive on
//! loopback, closed loop or at a constant rate (wrk2 `-R`, coordinated
//! omission corrected), with full latency spectra (wrk2 `-L`), a rate
//! sweep, request mixes, checked answers, a results table, JSON, SVG
//! charts and flame graphs of the services. See docs/benchmarks.md.

pub mod charts;
pub mod client;
pub mod cpu;
pub mod load;
pub mod mix;
mod output;
pub mod report;
pub mod services;

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use clap::Parser;
use hdrhistogram::Histogram;
use indicatif::{ProgressBar, ProgressStyle};
use pgpipe_testkit::{AuthRole, Cluster};

use load::{LoadSpec, Mode};
use mix::Mix;
pub use output::{markdown_summaries, markdown_verdicts};
use output::{print, write_outputs};
use report::{RunRecord, Summary, Verdict};
use services::{ServiceOptions, Target};

/// Load the example service on pgpipe and on tokio-postgres side by side.
/// Without --url and --target it starts a throwaway cluster and both
/// services itself.
#[derive(Debug, Clone, Parser)]
#[command(name = "pgpipe-bench http")]
pub struct HttpArgs {
    /// Database for the started services (default: a throwaway cluster).
    #[arg(long, env = "DATABASE_URL")]
    pub url: Option<String>,
    /// Services to start, comma-separated: pgpipe (statements sharing
    /// Syncs, the service's default), pgpipe-per-statement (one Sync per
    /// statement, as tokio-postgres), tokio-postgres (with deadpool).
    #[arg(long, value_delimiter = ',', default_value = "pgpipe,tokio-postgres")]
    pub services: Vec<String>,
    /// An already running service instead: NAME=http://HOST:PORT (repeatable).
    #[arg(long = "target")]
    pub targets: Vec<String>,
    /// Mixes, comma-separated: kv, db, queries-N, fortunes, updates-N, mail,
    /// plaintext, json.
    #[arg(long, value_delimiter = ',', default_value = "db")]
    pub mix: Vec<String>,
    /// kv mix: percent GET.
    #[arg(long, default_value_t = 80)]
    pub kv_get: u32,
    /// kv mix: percent PUT.
    #[arg(long, default_value_t = 20)]
    pub kv_put: u32,
    /// kv mix: percent DELETE.
    #[arg(long, default_value_t = 0)]
    pub kv_delete: u32,
    /// kv mix: key space.
    #[arg(long, default_value_t = 10_000)]
    pub keys: u64,
    /// kv mix: value size in bytes.
    #[arg(long, default_value_t = 256)]
    pub value_size: usize,
    /// Keep-alive connections (one request in flight each).
    #[arg(long, default_value_t = 32)]
    pub connections: usize,
    /// Seconds per measured run.
    #[arg(long, default_value_t = 2.0)]
    pub duration: f64,
    /// Warm-up seconds per service and mix (closed loop).
    #[arg(long, default_value_t = 1.0)]
    pub warmup: f64,
    /// Runs per service at each rate (services alternate; medians reported).
    #[arg(long, default_value_t = 3)]
    pub rounds: u32,
    /// Open loop at this constant rate (requests/s); without it: closed loop.
    #[arg(long)]
    pub rate: Option<f64>,
    /// Sweep these rates (comma-separated, ascending): the highest rate
    /// each service sustains (no errors, p99 within --p99-bound-ms), then
    /// both at half of tokio-postgres's highest.
    #[arg(long, value_delimiter = ',')]
    pub sweep: Vec<f64>,
    /// With --sweep (or --rate): first a closed-loop saturation run, as
    /// `wrk -c<connections>` does: every connection sends its next request
    /// as soon as the previous one is answered, for --duration. Without
    /// --sweep and --rate that is what runs anyway.
    #[arg(long)]
    pub saturate: bool,
    /// The sweep's p99 bound in milliseconds.
    #[arg(long, default_value_t = 10.0)]
    pub p99_bound_ms: f64,
    /// Print the full latency spectrum of every (mix, service, rate), as
    /// wrk2 -L does.
    #[arg(long)]
    pub latency: bool,
    /// Write the results as JSON here.
    #[arg(long)]
    pub json: Option<PathBuf>,
    /// Write results.md, results.json and SVG charts into this directory.
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Write a CPU flame graph of each started service into this directory
    /// (`<service>-flame.svg`).
    #[arg(long)]
    pub profile: Option<PathBuf>,
    /// Run the services from this program (pgpipe-service, or a
    /// pgpipe-bench, which runs them as `pgpipe-bench service`) instead of
    /// the pgpipe-service beside this one, or this one.
    #[arg(long)]
    pub service_exe: Option<PathBuf>,
    /// Database pool size of each started service.
    #[arg(long, default_value_t = 16)]
    pub pool_size: usize,
    /// Runtime worker threads of each started service (default: one per core).
    #[arg(long)]
    pub workers: Option<usize>,
    /// Check the body of every N-th answer (statuses: all).
    #[arg(long, default_value_t = 8)]
    pub check_every: u64,
    /// No progress bar.
    #[arg(long)]
    pub no_progress: bool,
}

/// Everything a run produced.
#[derive(Debug, Default, serde::Serialize)]
pub struct HttpReport {
    /// The command line.
    pub command: String,
    /// Every measured run.
    pub runs: Vec<RunRecord>,
    /// Medians per (mix, service, rate).
    pub summaries: Vec<Summary>,
    /// The sweep's verdicts.
    pub verdicts: Vec<Verdict>,
    /// Whether some answer was wrong (status or body).
    pub wrong_answers: bool,
}

type Key = (String, String, Option<u64>);

struct Runner {
    args: HttpArgs,
    targets: Vec<Target>,
    report: HttpReport,
    spectra: BTreeMap<Key, Histogram<u64>>,
    bar: ProgressBar,
    cpu: cpu::CpuWatch,
}

fn secs(v: f64, what: &str) -> Result<Duration, String> {
    if v.is_finite() && v > 0.0 && v <= 3600.0 {
        Ok(Duration::from_secs_f64(v))
    } else {
        Err(format!(
            "--{what} must be between 0 and 3600 seconds, got {v}"
        ))
    }
}

/// `pgpipe-bench http ARGS`: `argv[0]` is `http`.
pub fn main(argv: &[String]) -> ExitCode {
    let args = match HttpArgs::try_parse_from(argv) {
        Ok(a) => a,
        Err(e) => {
            let _ = e.print();
            return if e.use_stderr() {
                ExitCode::from(2)
            } else {
                ExitCode::SUCCESS
            };
        }
    };
    // Without a database or targets: a throwaway cluster.
    let mut cluster = None;
    let mut database = None;
    let mut args = args;
    if args.url.is_none() && args.targets.is_empty() {
        eprintln!("no --url / DATABASE_URL: starting a throwaway cluster");
        crate::install::ensure_postgres();
        match Cluster::start().and_then(|c| Ok((c.create_database("http")?, c))) {
            Ok((db, c)) => {
                args.url = Some(db.url(AuthRole::Trust));
                database = Some(db);
                cluster = Some(c);
            }
            Err(e) => {
                eprintln!("pgpipe-bench http: cannot start a cluster: {e}");
                return ExitCode::FAILURE;
            }
        }
    }
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(r) => r,
        Err(e) => {
            eprintln!("pgpipe-bench http: cannot start the runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    let result = runtime.block_on(run(args));
    drop(runtime);
    drop(database);
    drop(cluster);
    match result {
        Ok(report) if !report.wrong_answers => ExitCode::SUCCESS,
        Ok(_) => {
            eprintln!("pgpipe-bench http: some answers were wrong (see the errors column)");
            ExitCode::FAILURE
        }
        Err(e) => {
            eprintln!("pgpipe-bench http: {e}");
            ExitCode::FAILURE
        }
    }
}

/// Runs what `args` describe and prints the results.
pub async fn run(args: HttpArgs) -> Result<HttpReport, String> {
    let mixes: Vec<Mix> = args
        .mix
        .iter()
        .map(|m| {
            Mix::parse(
                m.trim(),
                (args.kv_get, args.kv_put, args.kv_delete),
                args.keys,
                args.value_size,
            )
        })
        .collect::<Result<_, _>>()?;
    secs(args.duration, "duration")?;
    secs(args.warmup, "warmup")?;
    if args.rounds == 0 || args.connections == 0 {
        return Err("--rounds and --connections must be at least 1".into());
    }
    if let Some(r) = args.rate {
        if !(r.is_finite() && r > 0.0) {
            return Err(format!("--rate must be positive, got {r}"));
        }
    }
    if args.sweep.iter().any(|r| !(r.is_finite() && *r > 0.0))
        || args.sweep.windows(2).any(|w| w[0] >= w[1])
    {
        return Err("--sweep rates must be positive and ascending".into());
    }
    let mut targets = Vec::new();
    for t in &args.targets {
        let (name, url) = t
            .split_once('=')
            .ok_or_else(|| format!("--target {t:?}: want NAME=http://HOST:PORT"))?;
        targets.push(Target::external(name, url)?);
    }
    if targets.is_empty() {
        let url = args.url.clone().ok_or("no --url")?;
        pgpipe_service::schema::ensure(&url)
            .await
            .map_err(|e| format!("cannot create the service's tables: {e}"))?;
        if let Some(dir) = &args.profile {
            std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        }
        let opts = ServiceOptions {
            url,
            pool_size: args.pool_size,
            workers: args.workers,
            profile_dir: args.profile.clone(),
            exe: args.service_exe.clone(),
        };
        for s in &args.services {
            let s = s.trim();
            if !services::NAMES.contains(&s) {
                return Err(format!(
                    "unknown service {s:?}; valid: {}",
                    services::NAMES.join(", ")
                ));
            }
            eprintln!("starting the {s} service");
            targets.push(Target::start(s, &opts).await?);
        }
    }
    let bar = if args.no_progress {
        ProgressBar::hidden()
    } else {
        let bar = ProgressBar::new(0);
        bar.set_style(
            ProgressStyle::with_template("{elapsed_precise} [{bar:30}] {pos}/{len} {msg}")
                .unwrap_or_else(|_| ProgressStyle::default_bar()),
        );
        bar
    };
    let cpu = cpu::CpuWatch::new(args.url.as_deref()).await;
    let mut runner = Runner {
        cpu,
        report: HttpReport {
            command: std::env::args().collect::<Vec<_>>().join(" "),
            ..HttpReport::default()
        },
        args,
        targets,
        spectra: BTreeMap::new(),
        bar,
    };
    for mix in mixes {
        runner.mix(mix).await?;
    }
    runner.bar.finish_and_clear();
    let Runner {
        args,
        mut targets,
        report,
        spectra,
        ..
    } = runner;
    for t in &mut targets {
        if let Err(e) = t.stop() {
            eprintln!("pgpipe-bench http: {e}");
        }
    }
    print(&args, &report, &spectra);
    write_outputs(&args, &report, &spectra)?;
    if let Some(dir) = &args.profile {
        for t in &targets {
            println!("wrote {}", services::flame_path(dir, &t.name).display());
        }
    }
    Ok(report)
}

impl Runner {
    fn spec(&self, t: usize, mix: &Arc<Mix>, mode: Mode, duration: f64, seed: u64) -> LoadSpec {
        LoadSpec {
            addr: self.targets[t].addr,
            mix: mix.clone(),
            connections: self.args.connections,
            duration: Duration::from_secs_f64(duration),
            mode,
            check_every: self.args.check_every,
            seed,
        }
    }

    async fn mix(&mut self, mix: Mix) -> Result<(), String> {
        if let Mix::Kv {
            keys, value_size, ..
        } = mix
        {
            self.bar
                .set_message(format!("{}: loading {keys} keys", mix.name()));
            services::preload_kv(self.targets[0].addr, keys, value_size).await?;
        }
        let mix = Arc::new(mix);
        for t in 0..self.targets.len() {
            self.bar.set_message(format!(
                "{}: warming up {}",
                mix.name(),
                self.targets[t].name
            ));
            let spec = self.spec(t, &mix, Mode::Closed, self.args.warmup, 7);
            let o = load::run(&spec).await;
            if o.wrong > 0 {
                self.report.wrong_answers = true;
                return Err(format!(
                    "{} answered {} wrongly during warm-up: {}",
                    self.targets[t].name,
                    mix.name(),
                    o.first_error.unwrap_or_default()
                ));
            }
        }
        let all: Vec<usize> = (0..self.targets.len()).collect();
        let open_loop = self.args.rate.is_some() || !self.args.sweep.is_empty();
        if self.args.saturate && open_loop {
            self.step(&mix, Mode::Closed, &all).await;
        }
        if self.args.sweep.is_empty() {
            let mode = self
                .args
                .rate
                .map_or(Mode::Closed, |rate| Mode::Open { rate });
            self.step(&mix, mode, &all).await;
            return Ok(());
        }
        let mut alive: Vec<usize> = (0..self.targets.len()).collect();
        let mut highest: Vec<Option<f64>> = vec![None; self.targets.len()];
        for &rate in &self.args.sweep.clone() {
            if alive.is_empty() {
                break;
            }
            let sums = self.step(&mix, Mode::Open { rate }, &alive).await;
            alive.retain(|&t| {
                let ok = sums
                    .iter()
                    .find(|s| s.service == self.targets[t].name)
                    .and_then(|s| s.sustained)
                    .unwrap_or(false);
                if ok {
                    highest[t] = Some(rate);
                }
                ok
            });
        }
        let base = self
            .targets
            .iter()
            .position(|t| t.name == "tokio-postgres")
            .and_then(|t| highest[t]);
        for (t, h) in highest.iter().enumerate() {
            self.report.verdicts.push(Verdict {
                mix: mix.name(),
                service: self.targets[t].name.clone(),
                highest_rate: *h,
                vs_tokio_postgres: match (h, base) {
                    (Some(h), Some(b)) => Some(h / b),
                    _ => None,
                },
            });
        }
        // Both at half of the baseline's highest rate (or of the lowest
        // highest), for the p99 comparison at a comfortable load.
        let half = base.or_else(|| highest.iter().flatten().copied().reduce(f64::min));
        if let Some(h) = half {
            self.step(&mix, Mode::Open { rate: h / 2.0 }, &all).await;
        }
        Ok(())
    }

    /// `rounds` runs of each of `which` at `mode`, services alternating;
    /// returns the summaries.
    async fn step(&mut self, mix: &Arc<Mix>, mode: Mode, which: &[usize]) -> Vec<Summary> {
        let rate = match mode {
            Mode::Open { rate } => Some(rate),
            Mode::Closed => None,
        };
        self.bar
            .inc_length(self.args.rounds as u64 * which.len() as u64);
        let mut records: Vec<RunRecord> = Vec::new();
        for round in 1..=self.args.rounds {
            for &t in which {
                let name = self.targets[t].name.clone();
                self.bar.set_message(format!(
                    "{} {name} {} round {round}",
                    mix.name(),
                    rate.map_or("closed".into(), |r| format!("{r:.0}/s"))
                ));
                let spec = self.spec(t, mix, mode, self.args.duration, round as u64);
                let mark = self.cpu.mark(self.targets[t].pid()).await;
                let o = load::run(&spec).await;
                let cpu = self.cpu.per_request(mark, o.requests).await;
                if o.wrong > 0 {
                    self.report.wrong_answers = true;
                }
                let key = (mix.name(), name.clone(), rate.map(|r| r as u64));
                let hist = self
                    .spectra
                    .entry(key)
                    .or_insert_with(crate::histogram::new_histogram);
                let _ = hist.add(&o.corrected);
                records.push(report::record(&mix.name(), &name, rate, round, &o, cpu));
                self.bar.inc(1);
            }
        }
        let bound = self.args.p99_bound_ms * 1000.0;
        let mut sums = Vec::new();
        for &t in which {
            let mine: Vec<&RunRecord> = records
                .iter()
                .filter(|r| r.service == self.targets[t].name)
                .collect();
            if !mine.is_empty() {
                sums.push(report::summarize(&mine, bound));
            }
        }
        self.report.runs.extend(records);
        self.report.summaries.extend(sums.iter().cloned());
        sums
    }
}
