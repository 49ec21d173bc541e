//! Issue 30's newest peers, xitca-postgres and zero-postgres, end to end:
//! every workload they run returns checked rows from a real server
//! (PostgreSQL 18 for zero-postgres, which speaks protocol 3.2 only), and
//! a workload they cannot run shows `-` with the reason. Short: one
//! operation each, no timing assertions.

mod common;

use clap::Parser;
use pgpipe_bench::catalog::{connect_boxed, DriverKind, Workload};
use pgpipe_bench::cli::{Args, Plan};
use pgpipe_bench::results::Status;
use pgpipe_bench::shape::{OzoCase, Shape, TeCase};
use pgpipe_bench::{app, checks, fixtures};
use pgpipe_testkit::{version_available, AuthRole, Cluster};

const PEERS: [DriverKind; 2] = [DriverKind::XitcaPostgres, DriverKind::ZeroPostgres];

/// Every workload of `driver` against `url`: point selects, each `rows-*`
/// read collected and streamed, TechEmpower's three shapes, ozo's
/// connection per request and reused connection, and a short `stream`.
async fn runs_its_workloads(driver: DriverKind, url: &str) {
    for workload in [
        Workload::Latency,
        Workload::Pipeline,
        Workload::Rows1Col,
        Workload::Rows9Col,
        Workload::RowsJson,
        Workload::Rows60Ts,
    ] {
        let shapes: &[Shape] = if workload.is_rows() {
            &[Shape::Plain, Shape::Streamed]
        } else {
            &[Shape::Plain]
        };
        for &shape in shapes {
            let what = format!("{driver} {workload} {shape:?}");
            let session = connect_boxed(driver, url, workload, shape)
                .await
                .unwrap_or_else(|e| panic!("{what}: {e}"));
            for i in 0..2 {
                let rows = session
                    .op(checks::key(0, i))
                    .await
                    .unwrap_or_else(|e| panic!("{what}: {e}"));
                assert_eq!(rows, workload.rows_per_op(), "{what}");
            }
        }
    }
    for (i, case) in [TeCase::Fortunes, TeCase::Queries, TeCase::Updates]
        .into_iter()
        .enumerate()
    {
        let what = format!("{driver} techempower {case:?}");
        let session = connect_boxed(driver, url, Workload::Techempower, Shape::Te(case))
            .await
            .unwrap_or_else(|e| panic!("{what}: {e}"));
        let rows = session
            .op(3_000 + i as i32)
            .await
            .unwrap_or_else(|e| panic!("{what}: {e}"));
        assert_eq!(
            rows,
            if case == TeCase::Fortunes { 12 } else { 20 },
            "{what}"
        );
    }
    for case in [OzoCase::Basic, OzoCase::Reuse] {
        let what = format!("{driver} ozo {case:?}");
        let session = connect_boxed(driver, url, Workload::Ozo, Shape::Ozo(case))
            .await
            .unwrap_or_else(|e| panic!("{what}: {e}"));
        for _ in 0..2 {
            let rows = session
                .op(0)
                .await
                .unwrap_or_else(|e| panic!("{what}: {e}"));
            assert_eq!(rows, 1, "{what}");
        }
    }
    let rows = pgpipe_bench::catalog::stream(driver, url, 10_000)
        .await
        .unwrap_or_else(|e| panic!("{driver} stream: {e}"));
    assert_eq!(rows, 10_000, "{driver} stream");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn xitca_postgres_runs_its_workloads_on_the_test_server() {
    runs_its_workloads(DriverKind::XitcaPostgres, &common::url()).await;
}

#[test]
fn both_peers_run_their_workloads_on_postgresql_18() {
    match version_available(18) {
        Ok(true) => {}
        Ok(false) => {
            eprintln!(
                "skipped: PostgreSQL 18 is not installed \
                 (scripts/ensure-postgres-versions.sh 18 installs it)"
            );
            return;
        }
        Err(e) => panic!("{e}"),
    }
    let cluster = Cluster::start_version(18).expect("PostgreSQL 18");
    let db = cluster.create_database("peers").expect("database");
    let url = db.url(AuthRole::Trust);
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    rt.block_on(async {
        fixtures::ensure(&url).await.expect("fixtures");
        assert_eq!(fixtures::server_major(&url).await, Some(18));
        for driver in PEERS {
            runs_its_workloads(driver, &url).await;
        }
    });
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn what_a_peer_cannot_run_shows_a_dash_with_the_reason() {
    let url = common::url();
    let args = Args::try_parse_from([
        "pgpipe-bench",
        "--workloads",
        "latency,techempower,copy",
        "--drivers",
        "xitca-postgres,zero-postgres",
        "--duration",
        "0.2",
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
    let major = fixtures::server_major(&url).await.expect("server version");
    let row = |driver: &str, workload: &str| {
        report
            .results
            .iter()
            .find(|r| r.driver == driver && r.workload == workload)
            .unwrap_or_else(|| panic!("no {driver} {workload} row: {:?}", report.results))
    };
    // Not adapted: `-` with why, whatever the server.
    for (driver, workload) in [("xitca-postgres", "copy"), ("zero-postgres", "copy")] {
        let r = row(driver, workload);
        assert_eq!(r.status, Status::Unsupported, "{r:?}");
        assert!(
            r.note.as_deref().unwrap_or("").contains("not written yet"),
            "{r:?}"
        );
    }
    // xitca-postgres runs TechEmpower's shapes on any server.
    let te = row("xitca-postgres", "techempower");
    assert_eq!(te.status, Status::Ok, "{te:?}");
    // xitca-postgres runs point selects on any server.
    let xitca = row("xitca-postgres", "latency");
    assert_eq!(xitca.status, Status::Ok, "{xitca:?}");
    assert!(xitca.ops_per_sec.unwrap_or(0.0) > 0.0, "{xitca:?}");
    // zero-postgres runs them only on 18+; below, `-` and the reason.
    let zero = row("zero-postgres", "latency");
    if major < 18 {
        assert_eq!(zero.status, Status::Unsupported, "{zero:?}");
        let note = zero.note.as_deref().unwrap_or("");
        assert!(
            note.contains("protocol 3.2") && note.contains(&format!("is {major}")),
            "{note}"
        );
    } else {
        assert_eq!(zero.status, Status::Ok, "{zero:?}");
    }
}
