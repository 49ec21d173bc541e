//! `pgpipe-bench http` reads the CPU each answered request cost the
//! service process and the database's backends, for the services it
//! starts against a server on this machine, and says nothing (`-`) where
//! it cannot know (a service it did not start). Real services on a real
//! throwaway cluster; no timing assertions.

mod common;

use clap::Parser;
use pgpipe_bench::http::{self, HttpArgs};

fn args(extra: &[&str]) -> HttpArgs {
    let url = common::url();
    let mut argv = vec![
        "pgpipe-bench http",
        "--url",
        &url,
        "--mix",
        "queries-5",
        "--connections",
        "4",
        "--rounds",
        "2",
        "--duration",
        "0.5",
        "--warmup",
        "0.2",
        "--pool-size",
        "4",
        "--no-progress",
    ];
    argv.extend_from_slice(extra);
    HttpArgs::try_parse_from(argv).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn started_services_report_their_and_the_servers_cpu_per_request() {
    let exe = env!("CARGO_BIN_EXE_pgpipe-bench");
    let report = http::run(args(&[
        "--services",
        "pgpipe,tokio-postgres",
        "--service-exe",
        exe,
    ]))
    .await
    .unwrap();
    assert!(!report.wrong_answers, "{report:?}");
    assert_eq!(report.summaries.len(), 2, "{report:?}");
    for r in &report.runs {
        assert!(r.requests > 0, "{r:?}");
        // Each answer is 5 statements and an HTTP exchange: neither side
        // can have done it for nothing, nor the server have used none.
        let service = r.service_cpu_us.expect("the service's CPU is read");
        let server = r.server_cpu_us.expect("the backends' CPU is read");
        assert!(service > 0.0 && service.is_finite(), "{r:?}");
        assert!(server > 0.0 && server.is_finite(), "{r:?}");
    }
    for s in &report.summaries {
        assert!(s.service_cpu_us.is_some_and(|c| c > 0.0), "{s:?}");
        assert!(s.server_cpu_us.is_some_and(|c| c > 0.0), "{s:?}");
    }
    let table = pgpipe_bench::http::report::table(&report.summaries);
    assert!(table.contains("service CPU us/req"), "{table}");
    assert!(table.contains("db CPU us/req"), "{table}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_service_not_started_here_has_no_cpu_figure() {
    // The first service, run from this tool, listens at an address that is
    // then loaded as an external target.
    let exe = env!("CARGO_BIN_EXE_pgpipe-bench");
    pgpipe_service::schema::ensure(&common::url())
        .await
        .unwrap();
    let mut child = std::process::Command::new(exe)
        .args(["service", "--driver", "pgpipe", "--listen", "127.0.0.1:0"])
        .env("DATABASE_URL", common::url())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let line = tokio::task::spawn_blocking(move || {
        let mut line = String::new();
        std::io::BufRead::read_line(&mut std::io::BufReader::new(stdout), &mut line).unwrap();
        line
    })
    .await
    .unwrap();
    let url = line
        .trim()
        .strip_prefix("listening on ")
        .unwrap()
        .to_owned();
    let target = format!("outside={url}");
    let result = http::run(args(&["--target", &target])).await;
    let _ = child.kill();
    let _ = child.wait();
    let report = result.unwrap();
    assert!(!report.wrong_answers, "{report:?}");
    for r in &report.runs {
        assert!(r.requests > 0, "{r:?}");
        assert_eq!(r.service_cpu_us, None, "{r:?}");
        // The backends are on this machine: their share is still read.
        assert!(r.server_cpu_us.is_some_and(|c| c > 0.0), "{r:?}");
    }
}
