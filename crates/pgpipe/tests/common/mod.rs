//! Shared helpers for the integration tests: one throwaway cluster per test
//! binary (pgpipe-testkit), one fresh database per test, and a bound on
//! every test so nothing can hang CI.
#![allow(dead_code)]

pub mod invariants;
pub mod lane;
pub mod spans;
pub mod values;

use std::future::Future;
use std::pin::pin;
use std::task::Context;
use std::time::Duration;

use pgpipe_testkit::{AuthRole, Cluster, TestDatabase};

/// Every test body runs under this bound.
pub const TEST_TIMEOUT: Duration = Duration::from_secs(60);

pub fn cluster() -> &'static Cluster {
    match Cluster::shared() {
        Ok(c) => c,
        Err(e) => panic!("cannot start the test cluster: {e}"),
    }
}

/// The major version of the test run's server (`PGPIPE_PG_VERSION`, 15 by
/// default), for the few checks that differ between versions.
pub fn server_major() -> u32 {
    cluster().major_version()
}

pub fn database(hint: &str) -> TestDatabase {
    cluster()
        .create_database(hint)
        .unwrap_or_else(|e| panic!("cannot create a test database: {e}"))
}

pub async fn connect(db: &TestDatabase) -> pgpipe::Client {
    pgpipe::connect(&db.url(AuthRole::Trust))
        .await
        .unwrap_or_else(|e| panic!("connect failed: {e}"))
}

/// Runs a test body with a time bound: a hang fails the test instead of CI.
pub async fn bounded<F: Future>(f: F) -> F::Output {
    tokio::time::timeout(TEST_TIMEOUT, f)
        .await
        .expect("test exceeded its time bound")
}

/// Polls `fut` `polls` times (yielding to the runtime in between, so the
/// connection's driver makes progress), then drops it; `Some` if it
/// completed first.
pub async fn poll_then_drop<F: Future>(fut: F, polls: u64) -> Option<F::Output> {
    let mut fut = pin!(fut);
    for _ in 0..polls {
        // A fresh context per poll: one held across the yield would make
        // this future !Send.
        let polled = fut
            .as_mut()
            .poll(&mut Context::from_waker(std::task::Waker::noop()));
        if let std::task::Poll::Ready(out) = polled {
            return Some(out);
        }
        tokio::task::yield_now().await;
    }
    None
}

/// Waits (bounded) until `check` returns true, polling every 10 ms.
pub async fn eventually<F, Fut>(what: &str, mut check: F)
where
    F: FnMut() -> Fut,
    Fut: Future<Output = bool>,
{
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    while !check().await {
        assert!(
            tokio::time::Instant::now() < deadline,
            "timed out waiting until {what}"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// Waits (bounded, as [`eventually`]) until backend `pid` has no session
/// on the server any more, as `observer` sees it in `pg_stat_activity`;
/// `what` names the wait in the failure.
pub async fn backend_gone(observer: &pgpipe::Client, pid: i32, what: &str) {
    eventually(what, || async {
        observer
            .query_opt("SELECT 1 FROM pg_stat_activity WHERE pid = $1", (pid,))
            .await
            .unwrap()
            .is_none()
    })
    .await
}

/// The server's view of backend `pid`: its state and current query
/// (empty strings when it has none).
pub async fn backend_activity(observer: &pgpipe::Client, pid: i32) -> (String, String) {
    let row = observer
        .query_one(
            "SELECT coalesce(state, ''), coalesce(query, '') FROM pg_stat_activity WHERE pid = $1",
            (pid,),
        )
        .await
        .unwrap();
    (row.get(0), row.get(1))
}
