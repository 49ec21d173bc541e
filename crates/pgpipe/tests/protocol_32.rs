//! Protocol 3.2 against the test run's server when it speaks 3.0 only
//! (PostgreSQL 17 and older; 15 by default): asked for 3.2, it answers
//! NegotiateProtocolVersion and the session runs at 3.0 (cancel included);
//! with min_protocol_version=3.2 the connection fails clearly. With
//! `PGPIPE_PG_VERSION=18` the refusal is not expected: server_versions.rs
//! tests 3.2 against 18 and the downgrade against every older major.

mod common;

use std::time::Duration;

use common::{bounded, cluster, database};
use pgpipe::{ErrorKind, SqlState};
use pgpipe_testkit::AuthRole;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_3_0_server_downgrades_a_3_2_request() {
    bounded(async {
        let db = database("protocol_32");
        let url = format!("{}?max_protocol_version=3.2", db.url(AuthRole::Trust));
        let client = pgpipe::connect(&url).await.expect("downgraded to 3.0");
        let row = client.query_one("SELECT 41::int4 + 1", ()).await.unwrap();
        assert_eq!(row.get::<i32, _>(0), 42);
        // The 4-byte key of 3.0 still cancels.
        let token = client.cancel_token();
        // Cancel until the statement ends: a cancel that arrives before the
        // statement started is a no-op, so no fixed delay can be too short
        // on a loaded machine.
        let done = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let canceller = tokio::spawn({
            let done = done.clone();
            async move {
                let mut result = Ok(());
                while !done.load(std::sync::atomic::Ordering::SeqCst) {
                    tokio::time::sleep(Duration::from_millis(100)).await;
                    result = token.cancel().await;
                }
                result
            }
        });
        let e = client
            .execute("SELECT pg_sleep(30)", ())
            .await
            .expect_err("cancelled");
        done.store(true, std::sync::atomic::Ordering::SeqCst);
        assert_eq!(e.code(), Some(&SqlState::QUERY_CANCELED), "{e}");
        canceller.await.unwrap().expect("cancel");
        // `latest` is 3.2 as well.
        let url = format!("{}?max_protocol_version=latest", db.url(AuthRole::Trust));
        pgpipe::connect(&url).await.expect("latest");
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn min_protocol_version_3_2_fails_against_postgresql_15() {
    bounded(async {
        let db = database("protocol_32_min");
        let url = format!("{}?min_protocol_version=3.2", db.url(AuthRole::Trust));
        let major = cluster().major_version();
        if major >= 18 {
            pgpipe::connect(&url)
                .await
                .unwrap_or_else(|e| panic!("PostgreSQL {major} speaks 3.2: {e}"));
            eprintln!("PostgreSQL {major} speaks 3.2: the refusal is tested on older majors (server_versions.rs)");
        } else {
            let e = pgpipe::connect(&url).await.expect_err("server speaks 3.0");
        assert_eq!(e.kind(), ErrorKind::Unsupported, "{e}");
        assert!(
            e.to_string()
                    .contains("supports protocol 3.0 at most, but min_protocol_version is 3.2"),
                "{e}"
            );
        }
        // min above max is a configuration error.
        let url = format!(
            "{}?min_protocol_version=3.2&max_protocol_version=3.0",
            db.url(AuthRole::Trust)
        );
        let e = pgpipe::connect(&url).await.expect_err("min > max");
        assert_eq!(e.kind(), ErrorKind::Config, "{e}");
    })
    .await;
}
