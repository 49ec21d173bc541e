//! A request made through another handle of a connection while a
//! transaction holds it waits behind the transaction, but never forever:
//! after the query timeout (30 s without one) it ends with an error that
//! names the transaction and says what to do, and it is never sent.
//! Against a real server; the bound is set small through the connection's
//! `query_timeout`.

mod common;

use std::time::Duration;

use common::{bounded, database, eventually};
use pgpipe::{Client, Error, ErrorKind, Transaction};
use pgpipe_testkit::{AuthRole, TestDatabase};

/// The wait bound in these tests (`query_timeout`, milliseconds).
const BOUND_MS: u64 = 300;

/// How long a held request may take to fail in these tests: far past the
/// bound, so that only a hang trips it.
const FAIL_BOUND: Duration = Duration::from_secs(10);

/// Connects with `query_timeout` set to `query_timeout_ms` (none if 0).
async fn connect_with(db: &TestDatabase, query_timeout_ms: u64) -> Client {
    let mut url = db.url(AuthRole::Trust);
    if query_timeout_ms > 0 {
        url = format!("{url}?query_timeout={query_timeout_ms}");
    }
    pgpipe::connect(&url)
        .await
        .unwrap_or_else(|e| panic!("connect failed: {e}"))
}

async fn setup(db: &TestDatabase, query_timeout_ms: u64) -> Client {
    let client = connect_with(db, query_timeout_ms).await;
    client
        .batch_execute("CREATE TABLE items (id int8 PRIMARY KEY)")
        .await
        .unwrap();
    client
}

async fn begin(client: &mut Client) -> Transaction<'_> {
    client.transaction().await.unwrap()
}

async fn ids(client: &Client) -> Vec<i64> {
    client
        .query("SELECT id FROM items ORDER BY id", ())
        .await
        .unwrap()
        .iter()
        .map(|r| r.get(0))
        .collect()
}

/// The error a held request must end with, within [`FAIL_BOUND`].
async fn assert_held_error<T: std::fmt::Debug>(
    what: &str,
    call: impl std::future::Future<Output = Result<T, Error>>,
) {
    let err = match tokio::time::timeout(FAIL_BOUND, call).await {
        Err(_) => panic!("{what}: still held after {FAIL_BOUND:?}"),
        Ok(Ok(v)) => panic!("{what}: ran ({v:?}) while a transaction held the connection"),
        Ok(Err(e)) => e,
    };
    assert_eq!(err.kind(), ErrorKind::Timeout, "{what}: {err}");
    let text = err.to_string();
    for needle in ["transaction", "Transaction", "Pool"] {
        assert!(
            text.contains(needle),
            "{what}: the error does not say {needle:?}: {text}"
        );
    }
}

/// The mistake of issue 26 through a clone: the task that holds the
/// transaction waits for a clone's request, which waits for the
/// transaction. It ends with the error at the connection's query timeout,
/// and the request never runs (not even after the commit).
#[tokio::test]
async fn a_clone_used_during_the_transaction_ends_with_a_clear_error() {
    bounded(async {
        let db = database("held_clone");
        let mut owner = setup(&db, BOUND_MS).await;
        let other = owner.clone();
        let tx = begin(&mut owner).await;
        tx.execute("INSERT INTO items VALUES (1)", ())
            .await
            .unwrap();
        assert_held_error(
            "a clone's insert",
            other.execute("INSERT INTO items VALUES (2)", ()),
        )
        .await;
        // The transaction goes on and commits; the withdrawn insert never
        // ran, then or later.
        tx.execute("INSERT INTO items VALUES (3)", ())
            .await
            .unwrap();
        tx.commit().await.unwrap();
        assert_eq!(ids(&other).await, vec![1, 3]);
        assert_eq!(other.pending_requests(), 0);
    })
    .await;
}

/// Without a query timeout on the handle, the connection's bound still
/// ends the wait (the driver's own timer, not the query's).
#[tokio::test]
async fn the_bound_holds_for_a_handle_without_a_query_timeout() {
    bounded(async {
        let db = database("held_no_timeout");
        let mut owner = setup(&db, BOUND_MS).await;
        let other = owner.with_timeout(Duration::ZERO);
        let tx = begin(&mut owner).await;
        tx.execute("INSERT INTO items VALUES (1)", ())
            .await
            .unwrap();
        assert_held_error(
            "a query_one without a timeout",
            other.query_one("SELECT count(*) FROM items", ()),
        )
        .await;
        assert_held_error(
            "a batch without a timeout",
            other.batch_execute("INSERT INTO items VALUES (2)"),
        )
        .await;
        assert_held_error("a second transaction through a clone", async {
            other.clone().transaction().await.map(drop)
        })
        .await;
        tx.commit().await.unwrap();
        assert_eq!(ids(&other).await, vec![1]);
        assert_eq!(other.pending_requests(), 0);
    })
    .await;
}

/// A handle's own timeout, shorter than the connection's bound, gives
/// the same error: the request was held, not sent, so nothing is
/// cancelled and nothing runs later.
#[tokio::test]
async fn a_handle_timeout_while_held_withdraws_the_request() {
    bounded(async {
        let db = database("held_handle_timeout");
        let mut owner = setup(&db, 0).await;
        let other = owner.with_timeout(Duration::from_millis(BOUND_MS));
        let tx = begin(&mut owner).await;
        tx.execute("INSERT INTO items VALUES (1)", ())
            .await
            .unwrap();
        assert_held_error(
            "an insert with a handle timeout",
            other.execute("INSERT INTO items VALUES (2)", ()),
        )
        .await;
        tx.commit().await.unwrap();
        assert_eq!(ids(&other).await, vec![1]);
    })
    .await;
}

/// Within the bound, a request held behind a transaction that another
/// task ends runs as before, after it.
#[tokio::test]
async fn a_request_held_within_the_bound_runs_after_the_transaction() {
    bounded(async {
        let db = database("held_within_bound");
        let mut owner = setup(&db, 20_000).await;
        let other = owner.clone();
        let watch = owner.clone();
        let tx = begin(&mut owner).await;
        tx.execute("INSERT INTO items VALUES (1)", ())
            .await
            .unwrap();
        let held =
            tokio::spawn(async move { other.execute("INSERT INTO items VALUES (2)", ()).await });
        eventually("the clone's insert is held", || async {
            watch.pending_requests() == 1
        })
        .await;
        tx.commit().await.unwrap();
        assert_eq!(held.await.unwrap().unwrap(), 1);
        assert_eq!(ids(&watch).await, vec![1, 2]);
    })
    .await;
}
