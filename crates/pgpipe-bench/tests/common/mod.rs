//! The fixture database shared by the tests of one test binary.

use std::sync::OnceLock;

use pgpipe_bench::fixtures;
use pgpipe_testkit::{AuthRole, Cluster, TestDatabase};

/// One fixture database for the whole binary (filling it takes seconds).
pub fn database() -> &'static TestDatabase {
    static DB: OnceLock<TestDatabase> = OnceLock::new();
    DB.get_or_init(|| {
        let cluster = Cluster::shared().expect("test cluster");
        let db = cluster.create_database("bench").expect("database");
        let url = db.url(AuthRole::Trust);
        // Outside any runtime of the calling test.
        std::thread::spawn(move || {
            let rt = tokio::runtime::Runtime::new().expect("runtime");
            rt.block_on(fixtures::ensure(&url)).expect("fixtures");
        })
        .join()
        .expect("fixture thread");
        db
    })
}

/// Its trust URL.
pub fn url() -> String {
    database().url(AuthRole::Trust)
}
