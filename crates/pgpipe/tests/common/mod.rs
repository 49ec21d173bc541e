//! Shared helpers for the integration tests: one throwaway cluster per test
//! binary (pgpipe-testkit), one fresh database per test, and a bound on
//! every test so nothing can hang CI.
#![allow(dead_code)]

pub mod spans;
pub mod values;

use std::future::Future;
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
