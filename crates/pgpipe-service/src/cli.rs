//! The `pgpipe-service` command line (also run by `pgpipe-bench service`).

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::Parser;

use crate::db::{Db, PgpipeDb, TokioPostgresDb};
use crate::profile::Profile;
use crate::router::{self, Limits};
use crate::{schema, shutdown};

/// Which driver serves the requests.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Driver {
    /// pgpipe's `Pool`.
    Pgpipe,
    /// tokio-postgres with deadpool-postgres.
    TokioPostgres,
}

/// pgpipe's example service: the key-value API (`/v0/entity?id=`), the
/// TechEmpower endpoints and a mail inbox over PostgreSQL.
#[derive(Debug, Clone, Parser)]
#[command(name = "pgpipe-service", version)]
pub struct ServiceArgs {
    /// The database.
    #[arg(long, env = "DATABASE_URL")]
    pub url: String,
    /// The driver.
    #[arg(long, value_enum, default_value_t = Driver::Pgpipe)]
    pub driver: Driver,
    /// Largest number of database connections.
    #[arg(long, default_value_t = 16)]
    pub pool_size: usize,
    /// Address to listen on (port 0: any free port; the address is printed
    /// on stdout as `listening on http://ADDR`).
    #[arg(long, default_value = "127.0.0.1:8080")]
    pub listen: String,
    /// Largest request body in bytes (larger: 413).
    #[arg(long, default_value_t = 1 << 20)]
    pub max_body: usize,
    /// Create the tables and fixtures first (idempotent).
    #[arg(long)]
    pub init: bool,
    /// Runtime worker threads (default: one per core).
    #[arg(long)]
    pub workers: Option<usize>,
    /// Write a CPU flame graph (SVG) of this process to this file at
    /// shutdown.
    #[arg(long)]
    pub profile: Option<PathBuf>,
    /// pgpipe driver: statements written in one go share a Sync (one
    /// server transaction per group); `false` gives each its own. Wins
    /// over a `coalesce_sync` in the URL.
    #[arg(
        long,
        env = "PGPIPE_SERVICE_COALESCE_SYNC",
        default_value_t = true,
        action = clap::ArgAction::Set
    )]
    pub coalesce_sync: bool,
}

/// Runs the service until SIGINT/SIGTERM; the exit code says how it went.
pub fn main(args: ServiceArgs) -> ExitCode {
    // A second call (tests) keeps the first subscriber.
    let _ = tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info")),
        )
        .with_writer(std::io::stderr)
        .try_init();
    let mut builder = tokio::runtime::Builder::new_multi_thread();
    if let Some(n) = args.workers {
        builder.worker_threads(n.max(1));
    }
    let runtime = match builder.enable_all().build() {
        Ok(r) => r,
        Err(e) => {
            eprintln!("pgpipe-service: cannot start the runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    let profile = match args.profile.as_deref().map(Profile::start).transpose() {
        Ok(p) => p,
        Err(e) => {
            eprintln!("pgpipe-service: {e}");
            return ExitCode::FAILURE;
        }
    };
    let result = runtime.block_on(run(&args));
    drop(runtime);
    if let Some(p) = profile {
        match p.finish() {
            Ok(path) => tracing::info!("wrote the flame graph to {}", path.display()),
            Err(e) => eprintln!("pgpipe-service: {e}"),
        }
    }
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("pgpipe-service: {e}");
            ExitCode::FAILURE
        }
    }
}

async fn run(args: &ServiceArgs) -> Result<(), String> {
    if args.init {
        schema::ensure(&args.url)
            .await
            .map_err(|e| format!("cannot create the tables: {e}"))?;
    }
    let limits = Limits {
        max_body: args.max_body,
    };
    match args.driver {
        Driver::Pgpipe => {
            let db = PgpipeDb::connect_with(&args.url, args.pool_size, args.coalesce_sync)
                .await
                .map_err(|e| format!("cannot connect: {e}"))?;
            serve(args, db, limits).await
        }
        Driver::TokioPostgres => {
            let db = TokioPostgresDb::connect(&args.url, args.pool_size)
                .await
                .map_err(|e| format!("cannot connect: {e}"))?;
            serve(args, db, limits).await
        }
    }
}

async fn serve<D: Db>(args: &ServiceArgs, db: D, limits: Limits) -> Result<(), String> {
    let listener = tokio::net::TcpListener::bind(&args.listen)
        .await
        .map_err(|e| format!("cannot listen on {}: {e}", args.listen))?;
    let addr = listener
        .local_addr()
        .map_err(|e| format!("cannot read the listening address: {e}"))?;
    tracing::info!(driver = db.name(), %addr, "serving");
    // The line `pgpipe-bench http` waits for.
    let mut out = std::io::stdout();
    let _ = writeln!(out, "listening on http://{addr}");
    let _ = out.flush();
    let app = router::router(db.clone(), limits);
    shutdown::serve(listener, app, shutdown::signal(), db)
        .await
        .map_err(|e| format!("serving failed: {e}"))
}
