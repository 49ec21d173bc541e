//! `pgpipe-bench http --saturate`: a closed-loop saturation step (every
//! connection sends its next request as soon as the previous one is
//! answered, as `wrk -c` does) runs before the constant-rate step, and both
//! are reported with p50/p99/p99.9. Against an in-process server, so no
//! database is needed; no timing assertions.

use std::convert::Infallible;
use std::net::SocketAddr;

use bytes::Bytes;
use clap::Parser;
use http_body_util::Full;
use hyper::service::service_fn;
use hyper::Response;
use hyper_util::rt::TokioIo;
use pgpipe_bench::http::{self, HttpArgs};

/// Answers `Hello, World!` to every request.
async fn hello_server() -> SocketAddr {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            tokio::spawn(async move {
                let svc = service_fn(|_req| async {
                    Ok::<_, Infallible>(Response::new(Full::new(Bytes::from_static(
                        b"Hello, World!",
                    ))))
                });
                let _ = hyper::server::conn::http1::Builder::new()
                    .serve_connection(TokioIo::new(stream), svc)
                    .await;
            });
        }
    });
    addr
}

fn args(addr: SocketAddr, extra: &[&str]) -> HttpArgs {
    let target = format!("hello=http://{addr}");
    let mut argv = vec![
        "pgpipe-bench http",
        "--target",
        &target,
        "--mix",
        "plaintext",
        "--connections",
        "4",
        "--rounds",
        "2",
        "--duration",
        "0.3",
        "--warmup",
        "0.1",
        "--no-progress",
    ];
    argv.extend_from_slice(extra);
    HttpArgs::try_parse_from(argv).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn saturate_runs_a_closed_loop_step_before_the_constant_rate() {
    let addr = hello_server().await;
    let report = http::run(args(addr, &["--saturate", "--rate", "100"]))
        .await
        .unwrap();
    assert!(!report.wrong_answers, "{report:?}");
    let rates: Vec<Option<f64>> = report.summaries.iter().map(|s| s.rate).collect();
    assert_eq!(rates, [None, Some(100.0)], "{report:?}");
    // (An open-loop request still due when a round ends counts as an
    // error, so only the closed loop must have none on a loaded machine.)
    assert_eq!(report.summaries[0].errors, 0, "{report:?}");
    for s in &report.summaries {
        assert_eq!(s.rounds, 2, "{s:?}");
        assert!(s.achieved_rps > 0.0, "{s:?}");
        assert!(
            0.0 < s.p50_us && s.p50_us <= s.p99_us && s.p99_us <= s.p999_us,
            "{s:?}"
        );
    }
    // Two rounds of each step, closed loop first.
    let order: Vec<Option<f64>> = report.runs.iter().map(|r| r.rate).collect();
    assert_eq!(order, [None, None, Some(100.0), Some(100.0)], "{report:?}");

    // Without --saturate, only the constant-rate step runs.
    let report = http::run(args(addr, &["--rate", "100"])).await.unwrap();
    let rates: Vec<Option<f64>> = report.summaries.iter().map(|s| s.rate).collect();
    assert_eq!(rates, [Some(100.0)], "{report:?}");
}
