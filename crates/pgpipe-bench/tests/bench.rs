//! End-to-end checks against a testkit cluster: fixtures, every driver
//! adapter's results, and the JSON report. Short: no timing assertions.

use std::sync::atomic::AtomicBool;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use pgpipe_bench::catalog::connect_boxed;
use pgpipe_bench::catalog::{DriverKind, Variant, Workload};
use pgpipe_bench::cli::{Args, Plan};
use pgpipe_bench::drivers::raw::RawConn;
use pgpipe_bench::runner::Subject;
use pgpipe_bench::shape::Shape;
use pgpipe_bench::{app, checks, fixtures, output};
use pgpipe_testkit::{AuthRole, Cluster, TestDatabase};

/// One fixture database for the whole binary (filling it takes seconds).
fn database() -> &'static TestDatabase {
    static DB: OnceLock<TestDatabase> = OnceLock::new();
    DB.get_or_init(|| {
        let cluster = Cluster::shared().expect("test cluster");
        let db = cluster.create_database("bench").expect("database");
        let url = db.url(AuthRole::Trust);
        // Outside any runtime of the calling test.
        std::thread::spawn(move || {
            let rt = tokio::runtime::Runtime::new().expect("runtime");
            let report = rt.block_on(fixtures::ensure(&url)).expect("fixtures");
            assert_eq!(
                report.filled.len(),
                7,
                "a new database gets every table filled"
            );
        })
        .join()
        .expect("fixture thread");
        db
    })
}

fn url() -> String {
    database().url(AuthRole::Trust)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fixtures_are_idempotent() {
    let url = url();
    let again = fixtures::ensure(&url).await.expect("ensure again");
    assert!(again.filled.is_empty(), "{again:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn session_drivers_return_correct_results() {
    let url = url();
    for driver in [
        DriverKind::Pgpipe,
        DriverKind::TokioPostgres,
        DriverKind::Sqlx,
    ] {
        for workload in Workload::ALL
            .into_iter()
            .filter(|w| w.is_point() || w.is_rows())
        {
            // rows-* also through each driver's row stream.
            let shapes: &[Shape] = if workload.is_rows() {
                &[Shape::Plain, Shape::Streamed]
            } else {
                &[Shape::Plain]
            };
            for &shape in shapes {
                let what = format!("{driver} {workload} {shape:?}");
                let session = connect_boxed(driver, &url, workload, shape)
                    .await
                    .unwrap_or_else(|e| panic!("{what}: {e}"));
                let n = if workload.is_point() { 5 } else { 1 };
                for i in 0..n {
                    let rows = session
                        .op(checks::key(0, i))
                        .await
                        .unwrap_or_else(|e| panic!("{what}: {e}"));
                    assert_eq!(rows, workload.rows_per_op(), "{what}");
                }
            }
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pool_drivers_return_correct_results() {
    use pgpipe_bench::catalog::PoolMode;
    use pgpipe_bench::drivers::pgpipe::pool::PgpipePool;
    use pgpipe_bench::drivers::tokio_postgres::deadpool::Deadpool;
    use pgpipe_bench::families::pool::PooledOp;
    let url = url();
    // Every pooled session of every pool variant, through the runner's path.
    let plan = Plan::from_args(&Args::default()).expect("plan");
    for variant in plan.variants(Workload::Pool) {
        for driver in [
            DriverKind::Pgpipe,
            DriverKind::DeadpoolPostgres,
            DriverKind::TokioPostgres,
        ] {
            if driver.unsupported(Workload::Pool, &variant).is_some() {
                continue;
            }
            let subject = Subject::connect(driver, &url, Workload::Pool, &variant)
                .await
                .unwrap_or_else(|e| panic!("{driver} {}: {e}", variant.label));
            let pooled = variant.pool != PoolMode::Dedicated;
            assert_eq!(
                matches!(subject, Subject::Pooled { .. }),
                pooled,
                "{driver} {}",
                variant.label
            );
        }
    }
    // The adapters directly: a handful of checked point selects each,
    // sequential and concurrent.
    let shared = PgpipePool::connect(&url, 2, (Some(1), None), PooledOp::Shared)
        .await
        .expect("pgpipe pool (shared)");
    let checkout = PgpipePool::connect(&url, 2, (None, None), PooledOp::Checkout)
        .await
        .expect("pgpipe pool (checkout)");
    let dead = Deadpool::connect(&url, 2, false)
        .await
        .expect("deadpool-postgres");
    // The transaction variant of both: UPDATE + point select, committed.
    let tx = PgpipePool::connect(&url, 2, (None, None), PooledOp::Transaction)
        .await
        .expect("pgpipe pool (transaction)");
    let dead_tx = Deadpool::connect(&url, 2, true)
        .await
        .expect("deadpool-postgres (transaction)");
    for i in 0..5 {
        let k = checks::key(1, i);
        assert_eq!(shared.op(k).await.expect("shared op"), 1);
        assert_eq!(checkout.op(k).await.expect("checkout op"), 1);
        assert_eq!(dead.op(k).await.expect("deadpool op"), 1);
        assert_eq!(tx.op(k).await.expect("transaction op"), 1);
        assert_eq!(dead_tx.op(k).await.expect("deadpool transaction op"), 1);
    }
    assert!(tx.op(0).await.is_err(), "an UPDATE of no row is caught");
    assert!(dead_tx.op(0).await.is_err());
    let keys: Vec<i32> = (0..16).map(|i| checks::key(2, i)).collect();
    let (shared_ref, checkout_ref, dead_ref) = (&shared, &checkout, &dead);
    let ops = keys.iter().map(|&k| async move {
        shared_ref.op(k).await?;
        checkout_ref.op(k).await?;
        dead_ref.op(k).await
    });
    for r in futures_util::future::join_all(ops).await {
        assert_eq!(r.expect("concurrent op"), 1);
    }
    // A wrong answer is caught: key 0 does not exist (ids start at 1).
    assert!(shared.op(0).await.is_err());
    assert!(dead.op(0).await.is_err());
    // The shared path stayed within its lane and the pool's size.
    let stats = shared.pool().stats();
    assert_eq!(stats.acquire_failures, 0, "{stats:?}");
    assert!(stats.shared <= 1 && stats.size <= 2, "{stats:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn raw_driver_returns_correct_results() {
    let url = url();
    for workload in Workload::ALL
        .into_iter()
        .filter(|w| w.is_point() || w.is_rows())
    {
        let mut conn = RawConn::connect(&url, workload)
            .await
            .unwrap_or_else(|e| panic!("raw {workload}: {e}"));
        // Stop already set: sends `outstanding` requests, checks and drains them.
        let outstanding = if workload.is_point() { 8 } else { 1 };
        let (done, hist) = conn
            .drive(0, outstanding, Arc::new(AtomicBool::new(true)))
            .await
            .unwrap_or_else(|e| panic!("raw {workload}: {e}"));
        assert_eq!(done, outstanding as u64);
        assert_eq!(hist.len(), outstanding as u64);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_wrong_answer_is_an_error() {
    assert!(checks::point(5, 5, 15).is_ok());
    assert!(checks::point(5, 6, 18).is_err());
    assert!(checks::point(5, 5, 16).is_err());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pgbench_runs_point_selects() {
    if std::process::Command::new("pgbench")
        .arg("--version")
        .output()
        .is_err()
    {
        eprintln!("pgbench not installed: skipped");
        return;
    }
    let url = url();
    let variant = Variant::single(4);
    let subject = Subject::connect(DriverKind::Pgbench, &url, Workload::Pipeline, &variant)
        .await
        .expect("pgbench setup");
    let out = subject
        .run(4, Duration::from_secs(1), None)
        .await
        .expect("pgbench run");
    assert!(out.ops > 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pgbench_rows_get_server_cpu() {
    use clap::Parser;
    if std::process::Command::new("pgbench")
        .arg("--version")
        .output()
        .is_err()
    {
        eprintln!("pgbench not installed: skipped");
        return;
    }
    let url = url();
    let args = Args::try_parse_from([
        "pgpipe-bench",
        "--workloads",
        "pipeline",
        "--drivers",
        "pgbench",
        "--duration",
        "0.5",
        "--warmup",
        "0.1",
        "--rounds",
        "1",
        "--concurrency",
        "4",
        "--no-progress",
    ])
    .expect("args");
    let plan = Plan::from_args(&args).expect("plan");
    let report = app::run(&plan, &url, false, "test".into(), None)
        .await
        .expect("run");
    let row = report
        .results
        .iter()
        .find(|r| r.driver == "pgbench" && r.status == pgpipe_bench::results::Status::Ok)
        .expect("a pgbench row");
    assert!(row.server_cpu_us_per_op.is_some_and(|s| s > 0.0), "{row:?}");
    assert!(
        row.system_cpu_us_per_op >= row.server_cpu_us_per_op,
        "{row:?}"
    );
    assert!(row.ctx_switches_per_op.is_some(), "{row:?}");
    // pgbench is another process: its syscalls are not the bench's.
    assert_eq!(row.syscalls_per_op, None);
}

#[test]
fn json_report_has_the_schema_fields() {
    // As main does: the cluster first (its processes are not the client's),
    // then the syscall counters, then the runtime, whose threads they follow.
    let url = url();
    pgpipe_bench::syscalls::start();
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime")
        .block_on(json_report_has_the_schema_fields_on(url));
}

async fn json_report_has_the_schema_fields_on(url: String) {
    use clap::Parser;
    let args = Args::try_parse_from([
        "pgpipe-bench",
        "--workloads",
        "latency,pipeline",
        "--drivers",
        "pgpipe,raw,tokio-postgres",
        "--duration",
        "0.2",
        "--warmup",
        "0.1",
        "--rounds",
        "2",
        "--concurrency",
        "4",
        "--connections",
        "2",
        // Not 64-fail1%, which raw does not run: every row here is `ok`.
        "--variants",
        "1,4,2conn",
        "--no-progress",
    ])
    .expect("args");
    let plan = Plan::from_args(&args).expect("plan");
    let report = app::run(&plan, &url, false, "test".into(), None)
        .await
        .expect("run");
    let text = output::json::to_string(&report).expect("json");
    let v: serde_json::Value = serde_json::from_str(&text).expect("parses");
    let machine = &v["machine"];
    for f in [
        "cpu_model",
        "cores",
        "memory_bytes",
        "kernel",
        "postgres_version",
        "git_commit",
    ] {
        assert!(machine.get(f).is_some(), "machine.{f} missing: {machine}");
    }
    assert!(machine["postgres_version"].is_string());
    let results = v["results"].as_array().expect("results array");
    let unavailable = pgpipe_bench::syscalls::unavailable();
    if let Some(why) = &unavailable {
        // SAFETY: geteuid has no preconditions.
        let root = unsafe { libc::geteuid() } == 0;
        assert!(
            !(root && std::path::Path::new("/sys/kernel/tracing/events/syscalls").is_dir()),
            "syscall counters did not open as root with tracefs mounted: {why}"
        );
        eprintln!("syscall counting unavailable, checking the null path: {why}");
    }
    // latency (1) + pipeline (4, 2conn) variants x 3 drivers.
    assert_eq!(results.len(), 9, "{results:?}");
    for r in results {
        for f in [
            "workload",
            "variant",
            "driver",
            "ops_per_sec",
            "client_cpu_us_per_op",
            "p50_us",
            "p99_us",
            "p999_us",
            "rounds",
            "peak_rss_bytes",
            "allocs_per_op",
        ] {
            assert!(r.get(f).is_some(), "{f} missing in {r}");
        }
        assert_eq!(r["status"], "ok", "{r}");
        assert_eq!(r["rounds"].as_array().map(Vec::len), Some(2));
        assert!(r["ops_per_sec"].as_f64().unwrap_or(0.0) > 0.0);
        assert!(r["peak_rss_bytes"].is_null());
        // Whole-system accounting: the testkit's server runs here, so its
        // backends' CPU is visible; socket calls are counted by kernel
        // tracepoints.
        let client = r["client_cpu_us_per_op"].as_f64().expect("client cpu");
        let server = r["server_cpu_us_per_op"].as_f64();
        let system = r["system_cpu_us_per_op"].as_f64();
        assert!(server.is_some_and(|s| s >= 0.0), "server cpu in {r}");
        // Two rounds: the median of the sums is the sum of the medians.
        let expected = client + server.unwrap_or(0.0);
        assert!(
            system.is_some_and(|s| (s - expected).abs() <= 1e-6 * expected.max(1.0)),
            "system cpu in {r}"
        );
        assert!(r["ctx_switches_per_op"].as_f64().is_some(), "{r}");
        // pgpipe's own low-water counts: a figure for pgpipe (short
        // answers, so no raise is needed), none for the others.
        for f in ["low_water_raises_per_op", "low_water_tail_waits_per_op"] {
            if r["driver"] == "pgpipe" {
                assert!(r[f].as_f64().is_some_and(|x| x >= 0.0), "{f} in {r}");
            } else {
                assert!(r[f].is_null(), "{f} in {r}");
            }
        }
        // The runtime's workers: every in-process driver polls tasks, and
        // one statement at a time leaves the workers nothing to do while
        // the server works, so they park about once per statement.
        assert!(
            r["worker_busy_us_per_op"].as_f64().is_some_and(|b| b > 0.0),
            "{r}"
        );
        let latency = r["workload"] == "latency";
        assert!(
            r["worker_parks_per_op"]
                .as_f64()
                .is_some_and(|p| if latency { p > 0.5 } else { p >= 0.0 }),
            "{r}"
        );
        // One statement at a time (`latency`) costs at least a send and a
        // receive each; pipelines share them. Where the kernel counters
        // cannot open (no tracefs, no root), the figure must be null, not 0.
        match &unavailable {
            None => {
                let least = if r["workload"] == "latency" { 1.5 } else { 0.0 };
                assert!(
                    r["syscalls_per_op"].as_f64().is_some_and(|s| s > least),
                    "{r}"
                );
            }
            Some(_) => assert!(r["syscalls_per_op"].is_null(), "{r}"),
        }
    }
    let tp = results
        .iter()
        .find(|r| r["driver"] == "tokio-postgres")
        .expect("tokio-postgres row");
    assert!((tp["ratio_vs_tokio_postgres"].as_f64().unwrap_or(0.0) - 1.0).abs() < 1e-9);
    let table = output::table::render(&report.results);
    assert!(table.contains("2conn"));
    let column = |name: &str| {
        output::table::HEADERS
            .iter()
            .position(|h| *h == name)
            .unwrap_or_else(|| panic!("no {name} column"))
    };
    let (syscalls, parks) = (column("rw syscalls/op"), column("parks/op"));
    let tails = column("tails/op");
    for row in &report.results {
        let cells = output::table::cells(row);
        assert_eq!(cells.len(), output::table::HEADERS.len());
        if unavailable.is_some() {
            assert_eq!(cells[syscalls], "-", "{cells:?}");
        }
        assert_ne!(cells[parks], "-", "{cells:?}");
        assert_eq!(cells[tails] == "-", row.driver != "pgpipe", "{cells:?}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn batch_sessions_check_every_row_of_every_statement() {
    use pgpipe_bench::drivers::{pgpipe, tokio_postgres, DynOp};
    use pgpipe_bench::families::batch::nth_key;
    let url = url();
    for driver in [DriverKind::Pgpipe, DriverKind::TokioPostgres] {
        for size in [1, 16, 64] {
            let session: Box<dyn DynOp> = match driver {
                DriverKind::Pgpipe => pgpipe::batch::Batch::connect(&url, size)
                    .await
                    .map(|s| Box::new(s) as Box<dyn DynOp>),
                _ => tokio_postgres::batch::Batch::connect(&url, size)
                    .await
                    .map(|s| Box::new(s) as Box<dyn DynOp>),
            }
            .unwrap_or_else(|e| panic!("{driver} {size}: {e}"));
            assert_eq!(session.ops_per_call(), size as u64);
            // Keys that wrap around the end of the table.
            for key in [1, 9_990] {
                let rows = session
                    .op(key)
                    .await
                    .unwrap_or_else(|e| panic!("{driver} {size} {key}: {e}"));
                assert_eq!(rows, size as u64, "{driver} {size}");
            }
        }
    }
    assert_eq!(nth_key(10_000, 1), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn batch_workload_counts_one_operation_per_select() {
    use clap::Parser;
    let pgbench = std::process::Command::new("pgbench")
        .arg("--version")
        .output()
        .is_ok();
    let drivers = if pgbench {
        "pgpipe,tokio-postgres,pgbench,sqlx"
    } else {
        "pgpipe,tokio-postgres,sqlx"
    };
    let url = url();
    let args = Args::try_parse_from([
        "pgpipe-bench",
        "--workloads",
        "batch",
        "--variants",
        "16",
        "--drivers",
        drivers,
        "--duration",
        "0.5",
        "--warmup",
        "0.1",
        "--rounds",
        "1",
        "--no-progress",
    ])
    .expect("args");
    let plan = Plan::from_args(&args).expect("plan");
    let report = app::run(&plan, &url, false, "test".into(), None)
        .await
        .expect("run");
    for driver in ["pgpipe", "tokio-postgres"] {
        let row = report
            .results
            .iter()
            .find(|r| r.driver == driver && r.workload == "batch")
            .unwrap_or_else(|| panic!("no {driver} row: {:?}", report.results));
        assert_eq!(row.status, pgpipe_bench::results::Status::Ok, "{row:?}");
        // Every select of a batch is an operation, and each returned a row.
        assert!(row.ops_per_sec.is_some_and(|o| o > 0.0), "{row:?}");
        assert_eq!(row.rows_per_op, 1, "{row:?}");
    }
    if pgbench {
        let row = report
            .results
            .iter()
            .find(|r| r.driver == "pgbench")
            .expect("a pgbench row");
        assert_eq!(row.status, pgpipe_bench::results::Status::Ok, "{row:?}");
    }
    // sqlx has no batch: a skipped row that says why.
    let sqlx = report
        .results
        .iter()
        .find(|r| r.driver == "sqlx")
        .expect("a sqlx row");
    assert_ne!(sqlx.status, pgpipe_bench::results::Status::Ok, "{sqlx:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn failing_pipeline_checks_rows_and_errors_on_every_driver() {
    use pgpipe_bench::drivers::{pgpipe, tokio_postgres, DynOp};
    use pgpipe_bench::families::failing::fails;
    let url = url();
    for driver in [
        DriverKind::Pgpipe,
        DriverKind::PgpipeCoalesced,
        DriverKind::TokioPostgres,
    ] {
        let session: Arc<dyn DynOp> = match driver {
            DriverKind::TokioPostgres => tokio_postgres::failing::Failing::connect(&url)
                .await
                .map(|s| Arc::new(s) as Arc<dyn DynOp>),
            _ => pgpipe::failing::Failing::connect(&url, driver == DriverKind::PgpipeCoalesced)
                .await
                .map(|s| Arc::new(s) as Arc<dyn DynOp>),
        }
        .unwrap_or_else(|e| panic!("{driver}: {e}"));
        // 200 keys at once, two of them failing, so that coalesced groups
        // form around the failures.
        let tasks: Vec<_> = (1..=200)
            .map(|key| {
                let s = session.clone();
                tokio::spawn(async move { (key, s.op(key).await) })
            })
            .collect();
        for t in tasks {
            let (key, r) = t.await.unwrap();
            let rows = r.unwrap_or_else(|e| panic!("{driver} {key}: {e}"));
            assert_eq!(rows, u64::from(!fails(key)), "{driver} {key}");
        }
    }
}
