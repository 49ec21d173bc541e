//! Client instructions per operation, for `valgrind --tool=callgrind`,
//! through the bench's own driver code on a current-thread runtime (one
//! thread: the count does not depend on which worker ran what, or how
//! often idle workers woke).
//!
//! - `connect`: the ozo `basic` request (connect, `SELECT 1`, close), N
//!   times in a row.
//! - `fortunes`: the TechEmpower Fortunes read (12 rows into structs, one
//!   added, sorted), N in all from 16 tasks sharing one connection, one
//!   Sync per statement, as `pgpipe-bench --workloads techempower` runs it.
//! - `queries`: TechEmpower `queries` (20 `world` rows by id, issued
//!   together on one connection), N in all from 16 tasks.
//! - `stream`: one row of the `stream` workload (`(int4, text)` rows made
//!   by `generate_series`, read one at a time as each driver streams);
//!   an operation is a row, N rows in one query on a fresh connection.
//!   zero-postgres needs a PostgreSQL 18 cluster (`PGPIPE_PG_VERSION=18`).
//!
//! Wall-clock time on the shared machine is too noisy to see a few
//! microseconds per operation; instruction counts are not. The setup
//! (runtime, connects, prepares, TLS roots) is the same for any N, so the
//! difference between two runs with different N, divided by the
//! difference in N, is the cost of one operation. `scripts/op-ir.sh`
//! runs that.
//!
//! ```text
//! op_ir serve [--tls]      start a throwaway cluster with the bench's
//!                          fixtures, print "URL ROOT" (ROOT: the CA file,
//!                          or "-"), run until stdin closes
//! op_ir run WORKLOAD DRIVER N URL [ROOT]
//!                          WORKLOAD: connect | fortunes | queries | stream
//!                          DRIVER: pgpipe | tokio-postgres, and for
//!                          stream also xitca-postgres | zero-postgres
//! ```

use std::io::Read;
use std::process::ExitCode;
use std::sync::Arc;

use pgpipe_bench::alloc::{allocations, CountingAlloc};
use pgpipe_bench::error::BenchError;
use pgpipe_bench::families::ozo::Expected;
use pgpipe_bench::shape::{OzoCase, TeCase};
use pgpipe_testkit::{AuthRole, Cluster};

#[global_allocator]
static ALLOC: CountingAlloc = CountingAlloc;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let result = match args.as_slice() {
        ["serve"] => serve(false),
        ["serve", "--tls"] => serve(true),
        ["run", workload, driver, n, url] => run(workload, driver, n, url, None),
        ["run", workload, driver, n, url, root] => run(workload, driver, n, url, Some(root)),
        _ => Err(
            "usage: op_ir serve [--tls] | op_ir run connect|fortunes|queries|stream DRIVER N URL [ROOT]"
                .into(),
        ),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("op_ir: {e}");
            ExitCode::FAILURE
        }
    }
}

fn serve(tls: bool) -> Result<(), String> {
    pgpipe_bench::install::ensure_postgres();
    let (cluster, root) = if tls {
        let tls = pgpipe_testkit::TlsCluster::start(true).map_err(|e| e.to_string())?;
        let root = pgpipe_testkit::test_pki()
            .map_err(|e| e.to_string())?
            .root_cert();
        (tls.into_cluster(), root.display().to_string())
    } else {
        (Cluster::start().map_err(|e| e.to_string())?, "-".into())
    };
    let db = cluster
        .create_database("bench")
        .map_err(|e| e.to_string())?;
    let url = db.url(AuthRole::Trust);
    let fixtures = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| e.to_string())?
        .block_on(pgpipe_bench::fixtures::ensure(&url));
    fixtures.map_err(|e| e.to_string())?;
    println!("{url} {root}");
    // Until the caller is done: the cluster stops when dropped.
    let _ = std::io::stdin().read_to_end(&mut Vec::new());
    drop(db);
    drop(cluster);
    Ok(())
}

fn run(workload: &str, driver: &str, n: &str, url: &str, root: Option<&str>) -> Result<(), String> {
    let n: u64 = n.parse().map_err(|e| format!("N: {e}"))?;
    if let Some(root) = root.filter(|r| *r != "-") {
        pgpipe_bench::tls::enable(root.into());
    }
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| e.to_string())?;
    let (before, after) = runtime
        .block_on(async {
            match (workload, driver) {
                ("connect", "pgpipe") => {
                    connects::<pgpipe_bench::drivers::pgpipe::ozo::Conn>(url, n).await
                }
                ("connect", "tokio-postgres") => {
                    connects::<pgpipe_bench::drivers::tokio_postgres::ozo::Conn>(url, n).await
                }
                ("fortunes" | "queries", "pgpipe") => {
                    use pgpipe_bench::drivers::pgpipe::techempower::Conn;
                    let conn = Conn::connect(url, te_case(workload)).await?;
                    shared(Arc::new(conn), n, |c, key| async move { c.op(key).await }).await
                }
                ("fortunes" | "queries", "tokio-postgres") => {
                    use pgpipe_bench::drivers::tokio_postgres::techempower::Conn;
                    let conn = Conn::connect(url, te_case(workload)).await?;
                    shared(Arc::new(conn), n, |c, key| async move { c.op(key).await }).await
                }
                ("stream", driver) => stream(driver, url, n).await,
                _ => Err(BenchError(format!(
                    "unknown workload {workload:?} or driver {driver:?}"
                ))),
            }
        })
        .map_err(|e| e.to_string())?;
    if n > 0 {
        eprintln!(
            "{driver}: {n} operations, {:.1} allocations per operation",
            (after - before) as f64 / n as f64
        );
    }
    Ok(())
}

/// The tasks sharing one connection in `fortunes` and `queries`, as in the
/// bench's `techempower` workload.
const TASKS: u64 = 16;

fn te_case(workload: &str) -> TeCase {
    if workload == "fortunes" {
        TeCase::Fortunes
    } else {
        TeCase::Queries
    }
}

/// One ozo `basic` request after another; returns the allocation counter
/// before and after the measured ones.
async fn connects<C: OzoConn>(url: &str, n: u64) -> Result<(u64, u64), BenchError> {
    let expected = Expected {
        rows: 0,
        typlen_sum: 0,
        typarray_sum: 0,
    };
    // Sets up and runs one checked request (the warm-up).
    let conn = C::connect(url, expected).await?;
    let before = allocations();
    for _ in 0..n {
        conn.op().await?;
    }
    Ok((before, allocations()))
}

/// `n` operations from [`TASKS`] spawned tasks sharing `conn`, after one
/// warm-up operation.
async fn shared<C, F, Fut>(conn: Arc<C>, n: u64, op: F) -> Result<(u64, u64), BenchError>
where
    C: Send + Sync + 'static,
    F: Fn(Arc<C>, i32) -> Fut + Copy + Send + 'static,
    Fut: std::future::Future<Output = Result<u64, BenchError>> + Send,
{
    op(conn.clone(), 0).await?;
    let before = allocations();
    let tasks: Vec<_> = (0..TASKS)
        .map(|t| {
            let conn = conn.clone();
            let count = n / TASKS + u64::from(t < n % TASKS);
            tokio::spawn(async move {
                for i in 0..count {
                    op(conn.clone(), (t * 1_000_003 + i) as i32).await?;
                }
                Ok::<(), BenchError>(())
            })
        })
        .collect();
    for task in tasks {
        task.await.map_err(|e| BenchError(e.to_string()))??;
    }
    Ok((before, allocations()))
}

/// `n` rows of the `stream` workload through `driver`, each row's values
/// checked as they pass.
async fn stream(driver: &str, url: &str, n: u64) -> Result<(u64, u64), BenchError> {
    use pgpipe_bench::drivers;
    use pgpipe_bench::families::stream::STREAM_SQL;
    let n = i32::try_from(n).map_err(|e| BenchError(format!("N: {e}")))?;
    let mut sum = 0i64;
    let mut bytes = 0usize;
    let each = |g: i32, text: &str| {
        sum += i64::from(g);
        bytes += text.len();
        Ok(())
    };
    let before = allocations();
    match driver {
        "pgpipe" => {
            drivers::pgpipe::stream::stream(url, STREAM_SQL, n, each).await?;
        }
        "tokio-postgres" => {
            drivers::tokio_postgres::stream::stream(url, STREAM_SQL, n, each).await?
        }
        "xitca-postgres" => drivers::xitca::stream(url, STREAM_SQL, n, each).await?,
        "zero-postgres" => drivers::zero::stream(url, STREAM_SQL, n, each).await?,
        other => return Err(BenchError(format!("unknown driver {other:?}"))),
    }
    let after = allocations();
    let n = i64::from(n);
    if sum != n * (n + 1) / 2 {
        return Err(BenchError(format!(
            "stream: sum of g {sum}, expected {}",
            n * (n + 1) / 2
        )));
    }
    std::hint::black_box(bytes);
    Ok((before, after))
}

/// The ozo `basic` connection of either driver.
trait OzoConn: Sized {
    async fn connect(url: &str, expected: Expected) -> Result<Self, BenchError>;
    async fn op(&self) -> Result<(), BenchError>;
}

impl OzoConn for pgpipe_bench::drivers::pgpipe::ozo::Conn {
    async fn connect(url: &str, expected: Expected) -> Result<Self, BenchError> {
        Self::connect(url, OzoCase::Basic, 1, expected).await
    }
    async fn op(&self) -> Result<(), BenchError> {
        self.op().await.map(drop)
    }
}

impl OzoConn for pgpipe_bench::drivers::tokio_postgres::ozo::Conn {
    async fn connect(url: &str, expected: Expected) -> Result<Self, BenchError> {
        Self::connect(url, OzoCase::Basic, 1, expected).await
    }
    async fn op(&self) -> Result<(), BenchError> {
        self.op().await.map(drop)
    }
}
