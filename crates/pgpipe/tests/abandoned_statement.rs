//! A statement abandoned by its caller (the query future dropped, a row
//! stream or a COPY OUT dropped half-read) ends on the server at once when
//! it is alone on its connection outside a transaction, against a real
//! server; with other requests pipelined behind it, it is never cancelled
//! (a cancel could hit them) and the neighbours get their own answers.
//! Without the cancel the abandoned statements run for a minute or more,
//! far past `eventually`'s bound.

mod common;

use std::future::Future;
use std::time::Duration;

use common::{backend_activity as activity, bounded, connect, database, eventually};
use pgpipe::{Client, GenericClient};

/// Far longer than every bound here.
const LONG_SLEEP: &str = "SELECT pg_sleep(60)";

/// Rows for minutes: only a cancel ends it within the bound.
// In the select list, so that rows stream (in FROM, the function's whole
// result would be materialized first).
const ENDLESS_ROWS: &str = "SELECT generate_series(1, 2000000000) AS g, repeat('x', 100)";

async fn pid_of(client: &impl GenericClient) -> i32 {
    client
        .query_one("SELECT pg_backend_pid()", ())
        .await
        .unwrap()
        .get(0)
}

/// Drives `work` until the server reports `marker` running on `pid`, then
/// drops it.
async fn drop_once_running<T>(
    observer: &Client,
    pid: i32,
    marker: &str,
    work: impl Future<Output = T>,
) {
    tokio::select! {
        _ = work => panic!("the abandoned statement ended early"),
        _ = eventually("the statement runs on the server", || async {
            let (state, query) = activity(observer, pid).await;
            state == "active" && query.contains(marker)
        }) => {}
    }
}

/// The backend went back to idle (its statement ended) and the connection
/// still answers correctly.
async fn assert_ended_and_usable(observer: &Client, pid: i32, client: &impl GenericClient) {
    eventually("the abandoned statement ended on the server", || async {
        activity(observer, pid).await.0 == "idle"
    })
    .await;
    let n: i32 = bounded(client.query_one("SELECT $1::int4 + 1", (41i32,)))
        .await
        .unwrap()
        .get(0);
    assert_eq!(n, 42);
    assert_eq!(
        pid_of(client).await,
        pid,
        "the connection was given up instead of cancelling"
    );
}

#[tokio::test]
async fn a_dropped_query_future_is_cancelled_on_the_server() {
    let db = database("a_dropped_query_future_is_cancelled_on_t");
    let client = connect(&db).await;
    let observer = connect(&db).await;
    let pid = pid_of(&client).await;

    drop_once_running(&observer, pid, "pg_sleep", client.query(LONG_SLEEP, ())).await;
    assert_ended_and_usable(&observer, pid, &client).await;
}

#[tokio::test]
async fn a_query_dropped_by_a_timeout_is_cancelled_on_the_server() {
    let db = database("a_query_dropped_by_a_timeout_is_cancelle");
    let client = connect(&db).await;
    let observer = connect(&db).await;
    let pid = pid_of(&client).await;

    // The usual way a future gets dropped: the caller's own deadline. It
    // is reached once the server runs the statement (a state, not a
    // duration); the statement itself would take a minute.
    let (reached, deadline) = tokio::sync::oneshot::channel::<()>();
    let watch = async {
        eventually("the statement runs on the server", || async {
            let (state, query) = activity(&observer, pid).await;
            state == "active" && query.contains("pg_sleep")
        })
        .await;
        let _ = reached.send(());
    };
    let caller = async {
        tokio::select! {
            ended = client.execute(LONG_SLEEP, ()) => Some(ended),
            _ = deadline => None,
        }
    };
    let (_, timed) = tokio::join!(watch, caller);
    assert!(
        timed.is_none(),
        "the 60 s statement ended before its deadline"
    );
    assert_ended_and_usable(&observer, pid, &client).await;
}

#[tokio::test]
async fn a_stream_dropped_half_read_is_cancelled_on_the_server() {
    let db = database("a_stream_dropped_half_read_is_cancelled_");
    let client = connect(&db).await;
    let observer = connect(&db).await;
    let pid = pid_of(&client).await;

    let mut rows = client.query_stream(ENDLESS_ROWS, ()).await.unwrap();
    for _ in 0..1000 {
        bounded(rows.next()).await.unwrap().unwrap();
    }
    drop(rows);
    assert_ended_and_usable(&observer, pid, &client).await;
}

#[tokio::test]
async fn a_dropped_pool_query_is_cancelled_on_the_server() {
    let db = database("a_dropped_pool_query_is_cancelled_on_the");
    let url = db.url(pgpipe_testkit::AuthRole::Trust);
    let sep = if url.contains('?') { '&' } else { '?' };
    let pool = pgpipe::Pool::connect(&format!("{url}{sep}pool_max_size=1"))
        .await
        .unwrap();
    let observer = connect(&db).await;
    let pid = pid_of(&pool).await;

    drop_once_running(&observer, pid, "pg_sleep", pool.query(LONG_SLEEP, ())).await;
    assert_ended_and_usable(&observer, pid, &pool).await;
}

#[tokio::test]
async fn a_dropped_query_with_neighbours_is_not_cancelled_and_they_get_their_answers() {
    let db = database("a_dropped_query_with_neighbours_is_not_c");
    let client = connect(&db).await;
    let observer = connect(&db).await;
    let pid = pid_of(&client).await;

    // The abandoned statement runs first; a neighbour's request is
    // pipelined behind it. A cancel sent now could end the neighbour's
    // statement instead, so none is sent: the sleep runs to its end and the
    // neighbour gets its own answer after it. Each step waits on a state:
    // the sleep running on the server, then the neighbour queued.
    // Boxed, so that `drop` below really drops it.
    let mut sleeping = Box::pin(client.query("SELECT pg_sleep(5)", ()));
    tokio::select! {
        _ = &mut sleeping => panic!("the 5 s statement ended early"),
        _ = eventually("the statement runs on the server", || async {
            let (state, query) = activity(&observer, pid).await;
            state == "active" && query.contains("pg_sleep")
        }) => {}
    }
    let neighbour = {
        let client = client.clone();
        tokio::spawn(async move { client.query_one("SELECT 7::int4", ()).await })
    };
    eventually("the neighbour is queued behind the sleep", || async {
        client.pending_requests() >= 2
    })
    .await;
    drop(sleeping);
    let seven: i32 = tokio::time::timeout(Duration::from_secs(30), neighbour)
        .await
        .expect("the neighbour never got an answer")
        .unwrap()
        .expect("the neighbour's statement failed: a cancel hit it")
        .get(0);
    assert_eq!(seven, 7);
    assert_eq!(pid_of(&client).await, pid);
}

#[tokio::test]
async fn a_dropped_statement_inside_a_transaction_leaves_the_transaction_alive() {
    let db = database("a_dropped_statement_inside_a_transaction");
    let mut client = connect(&db).await;
    let observer = connect(&db).await;
    let pid = pid_of(&client).await;

    let tx = client.transaction().await.unwrap();
    tx.execute("CREATE TEMP TABLE t (x int4)", ())
        .await
        .unwrap();
    // A cancel here would abort the caller's transaction: not sent. The
    // statement is dropped once the server runs it.
    drop_once_running(
        &observer,
        pid,
        "pg_sleep",
        tx.execute("SELECT pg_sleep(3)", ()),
    )
    .await;
    tx.execute("INSERT INTO t VALUES (1)", ()).await.unwrap();
    let n: i64 = tx
        .query_one("SELECT count(*) FROM t", ())
        .await
        .unwrap()
        .get(0);
    assert_eq!(n, 1);
    tx.commit().await.unwrap();
    assert_eq!(activity(&observer, pid).await.0, "idle");
}
