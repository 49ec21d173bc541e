//! A transaction (or pool guard) dropped while one of its statements runs
//! cancels that statement and rolls back, against a real server: its row
//! locks are free and its session is not left `idle in transaction`
//! shortly after, whatever the statement's length (here `pg_sleep(30)`).

mod common;

use std::future::Future;
use std::time::Duration;

use common::{backend_activity as activity, bounded, connect, database};
use pgpipe::{Client, Pool};
use pgpipe_testkit::{AuthRole, TestDatabase};

/// Generous bound for the server to show the expected state: the cancel
/// and rollback take milliseconds, the statement 30 s.
const STATE_BOUND: Duration = Duration::from_secs(10);

/// What the dropped work runs: far longer than every bound here.
const LONG_SLEEP: &str = "SELECT pg_sleep(30)";

async fn setup(db: &TestDatabase) -> Client {
    let client = connect(db).await;
    client
        .batch_execute(
            "CREATE TABLE items (id int8 PRIMARY KEY, note text); \
             INSERT INTO items VALUES (1, 'a')",
        )
        .await
        .unwrap();
    client
}

/// Polls `check` every 20 ms until it holds; panics after [`STATE_BOUND`].
async fn within_bound<F, Fut>(what: &str, mut check: F)
where
    F: FnMut() -> Fut,
    Fut: Future<Output = bool>,
{
    let deadline = tokio::time::Instant::now() + STATE_BOUND;
    while !check().await {
        assert!(
            tokio::time::Instant::now() < deadline,
            "not within {STATE_BOUND:?}: {what}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Drives `statement` (a future running [`LONG_SLEEP`]) until the server
/// reports it running, then drops it.
async fn run_until_sleeping<T>(observer: &Client, pid: i32, statement: impl Future<Output = T>) {
    tokio::select! {
        _ = statement => panic!("the 30 s statement ended early"),
        _ = within_bound("the statement runs on the server", || async {
            let (state, query) = activity(observer, pid).await;
            state == "active" && query.contains("pg_sleep")
        }) => {}
    }
}

/// Asserts that the row lock on `items` is free (a NOWAIT lock succeeds
/// from another session) and that `pid` is no longer in a transaction.
async fn assert_released(observer: &Client, pid: i32) {
    within_bound("the dropped transaction's row lock is free", || async {
        let mut observer = observer.clone();
        let tx = observer.transaction().await.unwrap();
        let locked = tx
            .query("SELECT id FROM items WHERE id = 1 FOR UPDATE NOWAIT", ())
            .await;
        drop(tx);
        match locked {
            Ok(rows) => rows.len() == 1,
            Err(e) if e.code() == Some(&pgpipe::SqlState::LOCK_NOT_AVAILABLE) => false,
            Err(e) => panic!("locking the row failed: {e}"),
        }
    })
    .await;
    within_bound("the dropped transaction's session is idle", || async {
        activity(observer, pid).await.0 == "idle"
    })
    .await;
    let locks: i64 = observer
        .query_one(
            "SELECT count(*) FROM pg_locks WHERE pid = $1 AND locktype IN ('relation', 'transactionid')",
            (pid,),
        )
        .await
        .unwrap()
        .get(0);
    assert_eq!(
        locks, 0,
        "the dropped transaction's backend still holds locks"
    );
    let note: String = observer
        .query_one("SELECT note FROM items WHERE id = 1", ())
        .await
        .unwrap()
        .get(0);
    assert_eq!(
        note, "a",
        "the dropped transaction's update was not rolled back"
    );
}

async fn pid_of(client: &impl pgpipe::GenericClient) -> i32 {
    client
        .query_one("SELECT pg_backend_pid()", ())
        .await
        .unwrap()
        .get(0)
}

#[tokio::test]
async fn a_dropped_client_transaction_cancels_its_running_statement() {
    bounded(async {
        let db = database("drop_cancel_client");
        let observer = setup(&db).await;
        let mut client = connect(&db).await;
        let pid = client.backend_pid();
        let tx = client.transaction().await.unwrap();
        tx.execute("UPDATE items SET note = 'b' WHERE id = 1", ())
            .await
            .unwrap();
        run_until_sleeping(&observer, pid, tx.execute(LONG_SLEEP, ())).await;
        drop(tx);
        assert_released(&observer, pid).await;
        // The connection goes on: the cancelled statement's answer was
        // discarded, the rollback ran.
        let row = client.query_one("SELECT 41 + 1", ()).await.unwrap();
        assert_eq!(row.get::<i32, _>(0), 42);
        assert_eq!(client.transaction_status(), pgpipe::TransactionStatus::Idle);
    })
    .await;
}

#[tokio::test]
async fn a_dropped_pool_transaction_cancels_its_running_statement() {
    bounded(async {
        let db = database("drop_cancel_pool_tx");
        let observer = setup(&db).await;
        let pool = Pool::connect(&format!("{}?pool_max_size=1", db.url(AuthRole::Trust)))
            .await
            .unwrap();
        let tx = pool.transaction().await.unwrap();
        let pid: i32 = tx
            .query_one("SELECT pg_backend_pid()", ())
            .await
            .unwrap()
            .get(0);
        tx.execute("UPDATE items SET note = 'b' WHERE id = 1", ())
            .await
            .unwrap();
        run_until_sleeping(&observer, pid, tx.execute(LONG_SLEEP, ())).await;
        drop(tx);
        assert_released(&observer, pid).await;
        // The one connection comes back to the pool, usable.
        let again: i32 = pool
            .query_one("SELECT pg_backend_pid()", ())
            .await
            .unwrap()
            .get(0);
        assert_eq!(again, pid, "the pool's only connection was replaced");
    })
    .await;
}

#[tokio::test]
async fn a_dropped_pool_guard_with_a_manual_begin_cancels_its_running_statement() {
    bounded(async {
        let db = database("drop_cancel_guard");
        let observer = setup(&db).await;
        let pool = Pool::connect(&format!("{}?pool_max_size=1", db.url(AuthRole::Trust)))
            .await
            .unwrap();
        let guard = pool.get().await.unwrap();
        let pid = pid_of(&guard).await;
        guard
            .batch_execute("BEGIN; UPDATE items SET note = 'b' WHERE id = 1")
            .await
            .unwrap();
        run_until_sleeping(&observer, pid, guard.execute(LONG_SLEEP, ())).await;
        drop(guard);
        assert_released(&observer, pid).await;
        let again: i32 = pool
            .query_one("SELECT pg_backend_pid()", ())
            .await
            .unwrap()
            .get(0);
        assert_eq!(again, pid, "the pool's only connection was replaced");
    })
    .await;
}

/// A transaction dropped while its statement waits for another session's
/// row lock is cancelled too: the wait is its statement's.
#[tokio::test]
async fn a_dropped_transaction_waiting_on_a_lock_is_cancelled() {
    bounded(async {
        let db = database("drop_cancel_lock_wait");
        let observer = setup(&db).await;
        let mut holder = connect(&db).await;
        let mut client = connect(&db).await;
        let pid = client.backend_pid();
        let hold = holder.transaction().await.unwrap();
        hold.execute("UPDATE items SET note = 'h' WHERE id = 1", ())
            .await
            .unwrap();
        let tx = client.transaction().await.unwrap();
        tx.execute("CREATE TEMP TABLE scratch (x int)", ())
            .await
            .unwrap();
        let waiting = tx.execute("UPDATE items SET note = 'w' WHERE id = 1", ());
        tokio::select! {
            _ = waiting => panic!("the update did not wait for the lock"),
            _ = within_bound("the update waits for the row lock", || async {
                let (state, query) = activity(&observer, pid).await;
                state == "active" && query.contains("UPDATE")
            }) => {}
        }
        drop(tx);
        within_bound("the dropped transaction's session is idle", || async {
            activity(&observer, pid).await.0 == "idle"
        })
        .await;
        hold.rollback().await.unwrap();
        assert_released(&observer, pid).await;
    })
    .await;
}
