//! The newer workloads against a testkit cluster: every adapter of ozo,
//! techempower, rows-json and stream returns correct results; the replay
//! server answers real clients with the captured rows; `--out` writes the
//! report and one chart per workload. Short runs: no timing assertions.

mod common;

use std::collections::HashMap;
use std::path::Path;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Duration;

use clap::Parser;
use common::url;
use pgpipe_bench::catalog::connect_boxed;
use pgpipe_bench::catalog::{DriverKind, Workload};
use pgpipe_bench::cli::{Args, Plan};
use pgpipe_bench::drivers::raw::{RawConn, RawSpec};
use pgpipe_bench::families::{ozo, techempower};
use pgpipe_bench::replay::{self, ReplayServer};
use pgpipe_bench::runner::Subject;
use pgpipe_bench::shape::{OzoCase, Shape, TeCase};
use pgpipe_bench::{app, child, fixtures};

const EXE: &str = env!("CARGO_BIN_EXE_pgpipe-bench");

fn plan(argv: &[&str]) -> Plan {
    let args = Args::try_parse_from(std::iter::once("pgpipe-bench").chain(argv.iter().copied()))
        .expect("args");
    Plan::from_args(&args).expect("plan")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ozo_rows_return_correct_results() {
    let url = url();
    let expected = ozo::expected(&url).await.expect("expected");
    assert!(expected.rows > 300, "{expected:?}");
    let drivers = [
        DriverKind::Pgpipe,
        DriverKind::TokioPostgres,
        DriverKind::DeadpoolPostgres,
    ];
    for variant in plan(&["--full"]).variants(Workload::Ozo) {
        // Each row is run by pgpipe and by one of tokio-postgres /
        // deadpool-postgres (its pooled rows).
        let runs: Vec<DriverKind> = drivers
            .into_iter()
            .filter(|d| d.unsupported(Workload::Ozo, &variant).is_none())
            .collect();
        assert_eq!(runs.len(), 2, "{}: {runs:?}", variant.label);
        if variant.connections > 8 {
            continue; // the same code with more connections; keeps the test short
        }
        let Shape::Ozo(case) = variant.shape else {
            panic!("{variant:?}")
        };
        let per_op = match case {
            OzoCase::ComplexRaw | OzoCase::ComplexParsed => expected.rows,
            _ => 1,
        };
        for driver in runs {
            let what = format!("{driver} {}", variant.label);
            let subject = Subject::connect(driver, &url, Workload::Ozo, &variant)
                .await
                .unwrap_or_else(|e| panic!("{what}: {e}"));
            let out = subject
                .run(variant.tasks_per_conn, Duration::from_millis(150), None)
                .await
                .unwrap_or_else(|e| panic!("{what}: {e}"));
            assert!(out.ops > 0, "{what}");
            assert_eq!(out.rows, Some(out.ops * per_op), "{what}");
        }
    }
    // A wrong answer is an error.
    assert!(ozo::check_types(&[], &expected).is_err());
    assert!(ozo::check_count(OzoCase::ComplexRaw, expected.rows - 1, &expected).is_err());
    assert!(ozo::check_simple(&[(2,)]).is_err());
    // The typed struct really holds the columns (int4's row).
    let session = connect_boxed(
        DriverKind::Pgpipe,
        &url,
        Workload::Ozo,
        Shape::Ozo(OzoCase::ComplexParsed),
    )
    .await
    .expect("session");
    assert_eq!(session.op(0).await.expect("op"), expected.rows);
    let client = pgpipe::connect(&url).await.expect("connect");
    let rows = client
        .query(ozo::COMPLEX_SQL, (ozo::TYPMOD, true))
        .await
        .expect("query");
    let int4 = rows
        .iter()
        .map(|r| pgpipe_bench::drivers::pgpipe::ozo::pg_type(r).expect("typed"))
        .find(|t| t.typname == "int4")
        .expect("int4 row");
    assert_eq!(
        (int4.typlen, int4.typbyval, int4.typcategory),
        (4, true, b'N' as i8)
    );
    assert_eq!(int4.typdelim, b',' as i8);
    assert_eq!(int4.typarray, 1007);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn techempower_adapters_return_correct_results() {
    let url = url();
    let setup = fixtures::setup_client(&url).await.expect("setup");
    for (i, variant) in plan(&[]).variants(Workload::Techempower).iter().enumerate() {
        let Shape::Te(case) = variant.shape else {
            panic!("{variant:?}")
        };
        for (j, driver) in [
            DriverKind::Pgpipe,
            DriverKind::TokioPostgres,
            DriverKind::Sqlx,
            DriverKind::XitcaPostgres,
        ]
        .into_iter()
        .enumerate()
        {
            let what = format!("{driver} {}", variant.label);
            let session = connect_boxed(driver, &url, Workload::Techempower, variant.shape)
                .await
                .unwrap_or_else(|e| panic!("{what}: {e}"));
            let key = 7000 + (i * 10 + j) as i32;
            let rows = session
                .op(key)
                .await
                .unwrap_or_else(|e| panic!("{what}: {e}"));
            assert_eq!(
                rows,
                if case == TeCase::Fortunes { 12 } else { 20 },
                "{what}"
            );
            if case == TeCase::Updates {
                // The new numbers are in the table (the last write of a
                // repeated id wins).
                let (ids, numbers) = techempower::randoms(key);
                let want: HashMap<i32, i32> = ids.into_iter().zip(numbers).collect();
                for (id, n) in want {
                    let row = setup
                        .query_one("SELECT randomnumber FROM world WHERE id = $1", &[&id])
                        .await
                        .expect("read back");
                    assert_eq!(row.get::<_, i32>(0), n, "{what}: world {id}");
                }
            }
            // Concurrent tasks through the runner.
            let subject = Subject::connect(driver, &url, Workload::Techempower, variant)
                .await
                .unwrap_or_else(|e| panic!("{what}: {e}"));
            let out = subject
                .run(4, Duration::from_millis(150), None)
                .await
                .unwrap_or_else(|e| panic!("{what}: {e}"));
            assert!(out.ops > 0, "{what}");
        }
    }
    // The raw floor expresses Fortunes and Multiple queries.
    for variant in plan(&[]).variants(Workload::Techempower) {
        let supported = DriverKind::Raw
            .unsupported(Workload::Techempower, &variant)
            .is_none();
        assert_eq!(supported, variant.shape != Shape::Te(TeCase::Updates));
        if !supported {
            continue;
        }
        let spec = RawSpec::new(Workload::Techempower, variant.shape).expect("spec");
        let mut conn = RawConn::connect_with(&url, spec).await.expect("raw");
        let (done, hist) = conn
            .drive(3, 4, Arc::new(AtomicBool::new(true)))
            .await
            .unwrap_or_else(|e| panic!("raw {}: {e}", variant.label));
        assert_eq!((done, hist.len()), (4, 4), "raw {}", variant.label);
    }
    // A wrong answer is an error.
    assert!(techempower::check_worlds(&[1, 2], &[]).is_err());
    assert!(techempower::finish_fortunes(Vec::new()).is_err());
    assert!(techempower::check_updated(&[1, 0]).is_err());
    // 12 fortunes and 10,000 worlds.
    let n: i64 = setup
        .query_one("SELECT count(*) FROM fortune", &[])
        .await
        .expect("count")
        .get(0);
    assert_eq!(n, 12);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stream_adapters_and_child_report_rows_and_rss() {
    let url = url();
    for driver in [
        DriverKind::Pgpipe,
        DriverKind::TokioPostgres,
        DriverKind::Sqlx,
    ] {
        let n = pgpipe_bench::catalog::stream(driver, &url, 20_000)
            .await
            .unwrap_or_else(|e| panic!("{driver}: {e}"));
        assert_eq!(n, 20_000, "{driver}");
    }
    // About 3 MB: past the 1 MiB after which pgpipe raises its low-water
    // mark, which the child reports.
    let report = child::measure(Path::new(EXE), DriverKind::Pgpipe, &url, 100_000)
        .await
        .expect("child");
    assert_eq!(report.rows, 100_000);
    assert!(report.peak_rss_bytes.unwrap_or(0) > 1 << 20, "{report:?}");
    assert!(
        report.low_water.is_some_and(|l| l.raises >= 1),
        "{report:?}"
    );
    let subject = Subject::Child {
        driver: DriverKind::TokioPostgres,
        url: url.clone(),
        rows: 5_000,
        exe: EXE.into(),
    };
    let out = subject
        .run(1, Duration::from_secs(1), None)
        .await
        .expect("child run");
    assert_eq!(out.ops, 5_000);
    assert!(out.peak_rss.is_some());
    // tokio-postgres keeps no such counts: none, not zero.
    assert_eq!(out.low_water, None);
    // A bad driver name fails the child with its message.
    let bad = Subject::Child {
        driver: DriverKind::Raw,
        url,
        rows: 10,
        exe: EXE.into(),
    };
    let e = bad.run(1, Duration::from_secs(1), None).await.unwrap_err();
    assert!(e.to_string().contains("no stream adapter"), "{e}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pgpipe_sessions_report_their_low_water_counts_and_peers_none() {
    let url = url();
    // rows-9col's answer is about 5 MB: past the 1 MiB after which pgpipe
    // raises its receive low-water mark, so every answer raises it.
    let variant = plan(&["--variants", "50k-stream"])
        .variants(Workload::Rows9Col)
        .into_iter()
        .find(|v| v.label == "50k-stream")
        .expect("50k-stream variant");
    for driver in [DriverKind::Pgpipe, DriverKind::TokioPostgres] {
        let subject = Subject::connect(driver, &url, Workload::Rows9Col, &variant)
            .await
            .unwrap_or_else(|e| panic!("{driver}: {e}"));
        let out = subject
            .run(1, Duration::from_millis(300), None)
            .await
            .unwrap_or_else(|e| panic!("{driver}: {e}"));
        assert!(out.ops >= 1, "{driver}");
        match driver {
            DriverKind::Pgpipe => {
                let counts = out.low_water.expect("pgpipe's counts");
                // Counted over the run only: up once per answer, and
                // again at most once after each tail wait.
                assert!(
                    counts.raises >= out.ops && counts.raises <= out.ops + counts.tail_waits,
                    "{counts:?} over {} answers",
                    out.ops
                );
            }
            _ => assert_eq!(out.low_water, None, "{driver}"),
        }
    }
    // The failing pipeline's pgpipe session holds a client too: its row
    // shows counts (zero here: 64 in flight never reach the deep mark),
    // not `-`.
    let failing = plan(&["--variants", "64-fail1%"])
        .variants(Workload::Pipeline)
        .into_iter()
        .find(|v| v.label == "64-fail1%")
        .expect("64-fail1% variant");
    for driver in [DriverKind::Pgpipe, DriverKind::TokioPostgres] {
        let subject = Subject::connect(driver, &url, Workload::Pipeline, &failing)
            .await
            .unwrap_or_else(|e| panic!("{driver} 64-fail1%: {e}"));
        let out = subject
            .run(1, Duration::from_millis(300), None)
            .await
            .unwrap_or_else(|e| panic!("{driver} 64-fail1%: {e}"));
        assert!(out.ops >= 1, "{driver} 64-fail1%");
        match driver {
            DriverKind::Pgpipe => {
                let counts = out.low_water.expect("pgpipe's 64-fail1% counts");
                assert!(counts.raises <= counts.tail_waits + out.ops, "{counts:?}");
            }
            _ => assert_eq!(out.low_water, None, "{driver} 64-fail1%"),
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn replay_server_answers_real_clients_with_the_captured_rows() {
    let url = url();
    for workload in [Workload::Rows1Col, Workload::Rows9Col, Workload::RowsJson] {
        let capture = replay::capture_for(&url, workload).await.expect("capture");
        let server = ReplayServer::start(capture).expect("server");
        let replay_url = server.url_like(&url).expect("url");
        assert!(replay_url.contains(&server.addr().port().to_string()));
        for driver in [
            DriverKind::Pgpipe,
            DriverKind::TokioPostgres,
            DriverKind::Sqlx,
        ] {
            // Collected, then through the driver's row stream.
            for shape in [Shape::Plain, Shape::Streamed] {
                let what = format!("{driver} {workload} {shape:?} on replay");
                let session = connect_boxed(driver, &replay_url, workload, shape)
                    .await
                    .unwrap_or_else(|e| panic!("{what}: {e}"));
                for _ in 0..2 {
                    let rows = session
                        .op(0)
                        .await
                        .unwrap_or_else(|e| panic!("{what}: {e}"));
                    assert_eq!(rows, fixtures::ROWS, "{what}");
                }
            }
        }
        let mut raw = RawConn::connect(&replay_url, workload).await.expect("raw");
        let (done, _) = raw
            .drive(0, 2, Arc::new(AtomicBool::new(true)))
            .await
            .expect("raw drive");
        assert_eq!(done, 2);
        drop(server);
        // Once stopped, nothing answers there.
        assert!(pgpipe::connect(&replay_url).await.is_err());
    }
    // Through the runner's replay variant.
    let variant = plan(&["--server", "replay"])
        .variants(Workload::Rows1Col)
        .remove(0);
    assert_eq!(variant.label, "replay");
    let subject = Subject::connect(DriverKind::Pgpipe, &url, Workload::Rows1Col, &variant)
        .await
        .expect("replay subject");
    assert!(subject.replay_addr().is_some());
    let out = subject
        .run(1, Duration::from_millis(200), None)
        .await
        .expect("replay run");
    assert_eq!(out.rows, Some(out.ops * fixtures::ROWS));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn out_dir_gets_results_and_one_chart_per_workload() {
    let url = url();
    let dir = std::env::temp_dir().join(format!("pgpipe-bench-out-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let dir_arg = dir.display().to_string();
    let p = plan(&[
        "--workloads",
        "latency,techempower",
        "--drivers",
        "pgpipe,tokio-postgres,sqlx,raw",
        "--duration",
        "0.1",
        "--warmup",
        "0.05",
        "--rounds",
        "1",
        "--out",
        &dir_arg,
        "--no-progress",
    ]);
    let report = app::run(&p, &url, false, "test".into(), None)
        .await
        .expect("run");
    let paths = app::write_outputs(&p, &report).expect("write");
    for f in [
        "results.md",
        "results.json",
        "latency.svg",
        "techempower.svg",
    ] {
        assert!(paths.iter().any(|p| p.ends_with(f)), "{f} not in {paths:?}");
    }
    for chart in ["latency.svg", "techempower.svg"] {
        let svg = std::fs::read_to_string(dir.join(chart)).expect("svg");
        assert!(svg.starts_with("<svg") || svg.contains("<svg"), "{chart}");
        for d in ["pgpipe", "tokio-postgres", "sqlx", "raw"] {
            assert!(svg.contains(d), "{chart} does not mention {d}");
        }
        assert!(svg.contains("<rect"), "{chart} has no bars");
    }
    let te_svg = std::fs::read_to_string(dir.join("techempower.svg")).expect("svg");
    for v in ["fortunes", "queries-20", "updates-20"] {
        assert!(te_svg.contains(v), "techempower.svg does not label {v}");
    }
    let md = std::fs::read_to_string(dir.join("results.md")).expect("md");
    assert!(md.contains("techempower.svg"));
    // raw cannot run Updates: shown as `-` with the reason.
    let raw_te = report
        .results
        .iter()
        .find(|r| r.workload == "techempower" && r.variant == "updates-20" && r.driver == "raw")
        .expect("raw row");
    assert!(raw_te.note.is_some() && raw_te.ops_per_sec.is_none());
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn interleaved_variants_each_get_every_round() {
    let url = url();
    let p = plan(&[
        "--workloads",
        "ozo",
        "--variants",
        "reuse,pool",
        "--interleave",
        "--drivers",
        "pgpipe,tokio-postgres,deadpool-postgres",
        "--duration",
        "0.1",
        "--warmup",
        "0.05",
        "--rounds",
        "2",
        "--no-progress",
    ]);
    assert!(p.interleave);
    let report = app::run(&p, &url, false, "test".into(), None)
        .await
        .expect("run");
    let measured: Vec<(String, String, usize)> = report
        .results
        .iter()
        .filter(|r| r.ops_per_sec.is_some())
        .map(|r| (r.variant.clone(), r.driver.clone(), r.rounds.len()))
        .collect();
    assert_eq!(
        measured,
        [
            ("reuse".to_string(), "pgpipe".to_string(), 2),
            ("reuse".to_string(), "tokio-postgres".to_string(), 2),
            ("pool".to_string(), "pgpipe".to_string(), 2),
            ("pool".to_string(), "deadpool-postgres".to_string(), 2),
        ]
    );
}
