//! Query timeouts and cancellation.

mod common;

use std::time::{Duration, Instant};

use common::{bounded, connect, database};
use pgpipe::SqlState;
use pgpipe_testkit::AuthRole;

async fn backend_state(observer: &pgpipe::Client, pid: i32) -> String {
    observer
        .query_one(
            "SELECT coalesce(state, '') || ':' || query FROM pg_stat_activity WHERE pid = $1",
            (pid,),
        )
        .await
        .unwrap()
        .get::<String, _>(0)
}

#[tokio::test]
async fn a_timed_out_query_is_cancelled_on_the_server_and_the_connection_lives_on() {
    bounded(async {
        let db = database("timeout");
        let observer = connect(&db).await;
        let client = connect(&db).await;
        let started = Instant::now();
        let err = client
            .with_timeout(Duration::from_millis(200))
            .execute("SELECT pg_sleep(10)", ())
            .await
            .unwrap_err();
        assert!(err.is_timeout(), "{err}");
        assert!(
            started.elapsed() < Duration::from_secs(3),
            "took {:?}",
            started.elapsed()
        );
        // Really cancelled: the backend is idle again, not sleeping.
        let state = backend_state(&observer, client.backend_pid()).await;
        assert!(
            state.starts_with("idle:"),
            "backend state after the timeout: {state}"
        );
        // And the connection answers the next query correctly.
        let v: i32 = client.query_one("SELECT 5::int4", ()).await.unwrap().get(0);
        assert_eq!(v, 5);
        assert!(!client.is_closed());
    })
    .await
}

#[tokio::test]
async fn the_default_timeout_comes_from_the_connection_string() {
    bounded(async {
        let db = database("timeout_default");
        let client = pgpipe::connect(&format!("{}?query_timeout=150", db.url(AuthRole::Trust)))
            .await
            .unwrap();
        let err = client.query("SELECT pg_sleep(5)", ()).await.unwrap_err();
        assert!(err.is_timeout(), "{err}");
        // A handle without a timeout waits as long as it takes.
        let unbounded = client.with_timeout(Duration::ZERO);
        unbounded.execute("SELECT pg_sleep(0.3)", ()).await.unwrap();
    })
    .await
}

#[tokio::test]
async fn a_cancel_token_cancels_the_running_query() {
    bounded(async {
        let db = database("cancel_token");
        let client = connect(&db).await;
        let token = client.cancel_token();
        let canceller = tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(200)).await;
            token.cancel().await
        });
        let err = client.execute("SELECT pg_sleep(10)", ()).await.unwrap_err();
        assert_eq!(err.code(), Some(&SqlState::QUERY_CANCELED), "{err}");
        canceller.await.unwrap().unwrap();
        assert_eq!(
            client
                .query_one("SELECT 1::int4", ())
                .await
                .unwrap()
                .get::<i32, _>(0),
            1
        );
    })
    .await
}

#[tokio::test]
async fn a_timeout_never_cancels_another_pipelined_query() {
    bounded(async {
        let db = database("timeout_pipelined");
        let client = connect(&db).await;
        // A long query from another task is on the connection first...
        let other = client.clone();
        let long = tokio::spawn(async move {
            other
                .query_one("SELECT pg_sleep(0.5)::text, 7::int4", ())
                .await
        });
        tokio::time::sleep(Duration::from_millis(50)).await;
        // ...so a timing-out query behind it must not send a cancel that
        // would hit the long one.
        let err = client
            .with_timeout(Duration::from_millis(100))
            .execute("SELECT 1", ())
            .await
            .unwrap_err();
        assert!(err.is_timeout(), "{err}");
        assert!(err.to_string().contains("not cancelled"), "{err}");
        let row = long.await.unwrap().unwrap();
        assert_eq!(row.get::<i32, _>(1), 7);
        assert_eq!(
            client
                .query_one("SELECT 2::int4", ())
                .await
                .unwrap()
                .get::<i32, _>(0),
            2
        );
    })
    .await
}
