//! The HTTP load tool against an in-process test server that stalls for
//! 200 ms once: the open-loop (constant-rate) run reports the requests that
//! were due during the stall with the time they waited (coordinated
//! omission corrected); a closed-loop run sees one slow request.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use bytes::Bytes;
use http_body_util::Full;
use hyper::service::service_fn;
use hyper::Response;
use hyper_util::rt::TokioIo;
use pgpipe_bench::http::load::{self, LoadSpec, Mode};
use pgpipe_bench::http::mix::Mix;

const STALL: Duration = Duration::from_millis(200);
const STALL_AT: u64 = 100;
const SLOW: Duration = Duration::from_millis(100);

/// The stall's start and end, as the server saw them.
type Window = Arc<Mutex<Option<(Instant, Instant)>>>;

/// Answers `Hello, World!`; request number STALL_AT waits STALL first.
async fn stalling_server() -> (SocketAddr, Window) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let count = Arc::new(AtomicU64::new(0));
    let window: Window = Arc::new(Mutex::new(None));
    let w = window.clone();
    tokio::spawn(async move {
        loop {
            let Ok((stream, _)) = listener.accept().await else {
                return;
            };
            let (count, w) = (count.clone(), w.clone());
            tokio::spawn(async move {
                let svc = service_fn(move |_req| {
                    let (count, w) = (count.clone(), w.clone());
                    async move {
                        if count.fetch_add(1, Ordering::SeqCst) == STALL_AT {
                            let start = Instant::now();
                            tokio::time::sleep(STALL).await;
                            *w.lock().unwrap() = Some((start, Instant::now()));
                        }
                        Ok::<_, Infallible>(Response::new(Full::new(Bytes::from_static(
                            b"Hello, World!",
                        ))))
                    }
                });
                let _ = hyper::server::conn::http1::Builder::new()
                    .serve_connection(TokioIo::new(stream), svc)
                    .await;
            });
        }
    });
    (addr, window)
}

fn spec(addr: SocketAddr, mode: Mode, duration: Duration) -> LoadSpec {
    LoadSpec {
        addr,
        mix: Arc::new(Mix::Plaintext),
        connections: 1,
        duration,
        mode,
        check_every: 1,
        seed: 1,
    }
}

fn slow_count(h: &hdrhistogram::Histogram<u64>) -> u64 {
    h.count_between(SLOW.as_nanos() as u64, 100_000_000_000)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn open_loop_counts_the_requests_a_stall_held_back() {
    tokio::time::timeout(Duration::from_secs(60), async {
        let (addr, window) = stalling_server().await;
        let rate = 500.0;
        let run = load::run(&spec(
            addr,
            Mode::Open { rate },
            Duration::from_millis(1200),
        ))
        .await;
        assert_eq!(
            (run.errors, run.wrong, run.not_sent),
            (0, 0, 0),
            "{:?}",
            run.first_error
        );
        // Every request due in the window was sent and timed.
        assert_eq!(run.requests, 600);
        let (stall_start, stall_end) = window.lock().unwrap().expect("the server stalled");
        // Requests due from the stall's start until SLOW before its end
        // could not be sent before it ended: each waited at least SLOW.
        let held_back = (0..600u64)
            .map(|n| run.start + Duration::from_secs_f64(n as f64 / rate))
            .filter(|&due| due >= stall_start && due + SLOW <= stall_end)
            .count() as u64;
        assert!(
            held_back >= 20,
            "the stall fell outside the run: {held_back}"
        );
        let corrected = slow_count(&run.corrected);
        assert!(
            corrected >= held_back,
            "corrected spectrum has {corrected} requests >= {SLOW:?}, {held_back} were held back"
        );
        // Timed from their actual send, they look fast: only the stalled
        // request itself (and any scheduling hiccup) is slow.
        let uncorrected = slow_count(&run.uncorrected);
        assert!(uncorrected < corrected, "{uncorrected} vs {corrected}");
        assert!(run.corrected.max() >= STALL.as_nanos() as u64);

        // Closed loop against a fresh server: the stall is one slow request.
        let (addr, window) = stalling_server().await;
        let closed = load::run(&spec(addr, Mode::Closed, Duration::from_millis(1200))).await;
        assert_eq!(closed.errors, 0, "{:?}", closed.first_error);
        assert!(
            window.lock().unwrap().is_some(),
            "the closed loop reached the stall"
        );
        assert!(closed.corrected.max() >= STALL.as_nanos() as u64);
        let closed_slow = slow_count(&closed.corrected);
        assert!(
            closed_slow < held_back,
            "closed loop: {closed_slow} slow requests, open loop: {corrected}"
        );
    })
    .await
    .expect("test exceeded its time bound");
}
