//! Client instructions per connect, for `valgrind --tool=callgrind`: the
//! ozo `basic` request (connect, `SELECT 1`, close) through the bench's own
//! driver code, N times, on a current-thread runtime (one thread: the
//! count does not depend on which worker ran what, or how often idle
//! workers woke).
//!
//! Wall-clock time on the shared machine is too noisy to see a few
//! microseconds per connect; instruction counts are not. The setup
//! (runtime, first connect, TLS roots) is the same for any N, so the
//! difference between two runs with different N, divided by the
//! difference in N, is the cost of one connect. `scripts/connect-ir.sh`
//! runs that.
//!
//! ```text
//! connect_ir serve [--tls]      start a throwaway cluster, print "URL ROOT"
//!                               (ROOT: the CA file, or "-"), run until stdin closes
//! connect_ir run DRIVER N URL [ROOT]
//!                               DRIVER: pgpipe | tokio-postgres
//! ```

use std::io::Read;
use std::process::ExitCode;

use pgpipe_bench::alloc::{allocations, CountingAlloc};
use pgpipe_bench::families::ozo::Expected;
use pgpipe_bench::shape::OzoCase;
use pgpipe_testkit::{AuthRole, Cluster};

#[global_allocator]
static ALLOC: CountingAlloc = CountingAlloc;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let result = match args.as_slice() {
        ["serve"] => serve(false),
        ["serve", "--tls"] => serve(true),
        ["run", driver, n, url] => run(driver, n, url, None),
        ["run", driver, n, url, root] => run(driver, n, url, Some(root)),
        _ => Err("usage: connect_ir serve [--tls] | connect_ir run DRIVER N URL [ROOT]".into()),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("connect_ir: {e}");
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
    println!("{} {root}", db.url(AuthRole::Trust));
    // Until the caller is done: the cluster stops when dropped.
    let _ = std::io::stdin().read_to_end(&mut Vec::new());
    drop(db);
    drop(cluster);
    Ok(())
}

fn run(driver: &str, n: &str, url: &str, root: Option<&str>) -> Result<(), String> {
    let n: u64 = n.parse().map_err(|e| format!("N: {e}"))?;
    if let Some(root) = root.filter(|r| *r != "-") {
        pgpipe_bench::tls::enable(root.into());
    }
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| e.to_string())?;
    let expected = Expected {
        rows: 0,
        typlen_sum: 0,
        typarray_sum: 0,
    };
    let (before, after) = runtime.block_on(async {
        match driver {
            "pgpipe" => {
                use pgpipe_bench::drivers::pgpipe::ozo::Conn;
                // Sets up and runs one checked request (the warm-up).
                let conn = Conn::connect(url, OzoCase::Basic, 1, expected)
                    .await
                    .map_err(|e| e.to_string())?;
                let before = allocations();
                for _ in 0..n {
                    conn.op().await.map_err(|e| e.to_string())?;
                }
                Ok((before, allocations()))
            }
            "tokio-postgres" => {
                use pgpipe_bench::drivers::tokio_postgres::ozo::Conn;
                let conn = Conn::connect(url, OzoCase::Basic, 1, expected)
                    .await
                    .map_err(|e| e.to_string())?;
                let before = allocations();
                for _ in 0..n {
                    conn.op().await.map_err(|e| e.to_string())?;
                }
                Ok((before, allocations()))
            }
            other => Err(format!("unknown driver {other:?}")),
        }
    })?;
    if n > 0 {
        eprintln!(
            "{driver}: {n} connects, {:.1} allocations per connect",
            (after - before) as f64 / n as f64
        );
    }
    Ok(())
}
