//! `pgpipe-bench`: see `--help` and docs/benchmarks.md.

use std::process::ExitCode;

use clap::Parser;
use pgpipe_bench::alloc::CountingAlloc;
use pgpipe_bench::cli::{self, Args, Plan};
use pgpipe_bench::{app, child, output, pin};
use pgpipe_testkit::{AuthRole, Cluster};

#[global_allocator]
static GLOBAL: CountingAlloc = CountingAlloc;

fn main() -> ExitCode {
    // Subcommands: `http` (the HTTP load tool) and `service` (the example
    // service, which `http` starts as child processes).
    let argv: Vec<String> = std::env::args().collect();
    match argv.get(1).map(String::as_str) {
        Some("http") => return pgpipe_bench::http::main(&argv[1..]),
        Some("service") => {
            return pgpipe_service::cli::main(pgpipe_service::cli::ServiceArgs::parse_from(
                &argv[1..],
            ))
        }
        _ => {}
    }
    let args = Args::parse();
    if args.list {
        print!("{}", cli::list_text());
        return ExitCode::SUCCESS;
    }
    if let Some(driver) = &args.stream_child {
        return stream_child(driver, &args);
    }
    let plan = match Plan::from_args(&args) {
        Ok(p) => p,
        Err(e) => {
            eprintln!("pgpipe-bench: {e}");
            return ExitCode::from(2);
        }
    };
    let command = std::env::args().collect::<Vec<_>>().join(" ");
    eprintln!("{}", pgpipe_bench::observe::install(args.tracing));
    // Without a URL: a throwaway cluster (stopped on drop) and a database in it.
    let mut cluster = None;
    let mut database = None;
    let url = match &plan.url {
        Some(u) => u.clone(),
        None => {
            eprintln!("no --url / DATABASE_URL: starting a throwaway cluster");
            pgpipe_bench::install::ensure_postgres();
            let started = if plan.tls {
                start_tls_cluster()
            } else {
                Cluster::start()
            };
            let c = match started {
                Ok(c) => c,
                Err(e) => {
                    eprintln!("pgpipe-bench: cannot start a cluster: {e}");
                    return ExitCode::FAILURE;
                }
            };
            let db = match c.create_database("bench") {
                Ok(db) => db,
                Err(e) => {
                    eprintln!("pgpipe-bench: cannot create the database: {e}");
                    return ExitCode::FAILURE;
                }
            };
            let url = db.url(AuthRole::Trust);
            database = Some(db);
            cluster = Some(c);
            url
        }
    };
    // Before the runtime starts, so that its threads inherit the mask.
    let pinning = if plan.pin {
        match pin(cluster.as_ref()) {
            Ok(p) => {
                eprintln!("{}", p.describe());
                Some(p.describe())
            }
            Err(e) => {
                eprintln!("pgpipe-bench: {e}");
                return ExitCode::FAILURE;
            }
        }
    } else {
        None
    };
    // After the cluster started (counters follow new processes) and before
    // the runtime's threads start (and new threads).
    pgpipe_bench::syscalls::start();
    if let Some(why) = pgpipe_bench::syscalls::unavailable() {
        eprintln!("note: the rw syscalls/op column shows '-': {why}");
    }
    let runtime = match plan.runtime.build() {
        Ok(r) => r,
        Err(e) => {
            eprintln!("pgpipe-bench: cannot start the runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    let result = runtime.block_on(app::run(&plan, &url, cluster.is_some(), command, pinning));
    drop(runtime);
    let code = match result {
        Ok(report) => {
            println!("{}", output::table::render(&report.results));
            match app::write_outputs(&plan, &report) {
                Ok(paths) => {
                    for p in paths {
                        println!("wrote {p}");
                    }
                    ExitCode::SUCCESS
                }
                Err(e) => {
                    eprintln!("pgpipe-bench: {e}");
                    ExitCode::FAILURE
                }
            }
        }
        Err(e) => {
            eprintln!("pgpipe-bench: {e}");
            ExitCode::FAILURE
        }
    };
    drop(database);
    drop(cluster);
    code
}

/// `--tls`: a cluster with `ssl=on` and the testkit's run-time CA, whose
/// root certificate every driver then verifies against.
fn start_tls_cluster() -> Result<Cluster, pgpipe_testkit::TestkitError> {
    let tls = pgpipe_testkit::TlsCluster::start(true)?;
    let root = pgpipe_testkit::test_pki()?.root_cert();
    pgpipe_bench::tls::enable(root);
    eprintln!("--tls: ssl=on cluster; drivers connect with verify-full");
    Ok(tls.into_cluster())
}

/// `--stream-child DRIVER`: stream rows, print one JSON line (see `child`).
fn stream_child(driver: &str, args: &Args) -> ExitCode {
    let (Some(url), Some(rows)) = (&args.url, args.stream_rows) else {
        eprintln!("pgpipe-bench: --stream-child needs --url and --stream-rows");
        return ExitCode::from(2);
    };
    let runtime = match args.runtime.build() {
        Ok(r) => r,
        Err(e) => {
            eprintln!("pgpipe-bench: cannot start the runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    match runtime.block_on(child::run_child(driver, url, rows)) {
        Ok(report) => match serde_json::to_string(&report) {
            Ok(line) => {
                println!("{line}");
                ExitCode::SUCCESS
            }
            Err(e) => {
                eprintln!("pgpipe-bench: {e}");
                ExitCode::FAILURE
            }
        },
        Err(e) => {
            eprintln!("pgpipe-bench: {e}");
            ExitCode::FAILURE
        }
    }
}

/// `--pin`: the client on the first half of the CPUs, a throwaway cluster
/// on the rest.
fn pin(cluster: Option<&Cluster>) -> Result<pin::Pinning, pgpipe_bench::error::BenchError> {
    let (client, server) = pin::split(&pin::available_cpus()?)?;
    let server = match cluster.and_then(Cluster::dir) {
        Some(root) => {
            pin::pin_cluster(root, &server)?;
            server
        }
        None => Vec::new(),
    };
    pin::pin_process(std::process::id(), &client)?;
    Ok(pin::Pinning { client, server })
}
