//! Transactions as types, against a real server: commit and rollback,
//! drop = rollback now (the session is idle at once and its locks are
//! gone), cancellation at every poll, failed transactions, options,
//! savepoints, and other handles held back while a transaction is open.

mod common;

use std::time::Duration;

use common::{bounded, connect, database, eventually, poll_then_drop};
use pgpipe::{Client, ErrorKind, GenericClient, IsolationLevel, Pool, SqlState, TransactionStatus};
use pgpipe_testkit::{AuthRole, TestDatabase};

async fn setup(db: &TestDatabase) -> Client {
    let client = connect(db).await;
    client
        .batch_execute("CREATE TABLE items (id int8 PRIMARY KEY, note text)")
        .await
        .unwrap();
    client
}

async fn count(client: &Client) -> i64 {
    client
        .query_one("SELECT count(*) FROM items", ())
        .await
        .unwrap()
        .get(0)
}

/// The server's view of a backend: `idle`, `idle in transaction`, ...
async fn state_of(observer: &Client, pid: i32) -> String {
    observer
        .query_one(
            "SELECT coalesce(state, '') FROM pg_stat_activity WHERE pid = $1",
            (pid,),
        )
        .await
        .unwrap()
        .get::<String, _>(0)
}

/// Waits until the server reports `pid` idle (not idle in transaction),
/// then checks that an ACCESS EXCLUSIVE lock on `items` is free: a DROP
/// would not block.
async fn assert_released(observer: &Client, pid: i32) {
    eventually("the dropped transaction's session is idle", || async {
        state_of(observer, pid).await == "idle"
    })
    .await;
    // Would block (and then fail after 5 s) if the transaction still held
    // a lock on the table.
    let mut observer = observer.clone();
    let tx = observer.transaction().await.unwrap();
    tx.batch_execute("SET LOCAL lock_timeout = '5s'; LOCK TABLE items IN ACCESS EXCLUSIVE MODE")
        .await
        .unwrap();
    tx.rollback().await.unwrap();
}

/// Outside any transaction on the server: no transaction id assigned, and
/// the ReadyForQuery after this statement says idle (inside an earlier
/// transaction block it would say `T` or `E`).
async fn assert_outside_transaction(client: &Client) {
    let row = client
        .query_one("SELECT txid_current_if_assigned() IS NULL", ())
        .await
        .unwrap();
    assert!(row.get::<bool, _>(0), "a transaction id is still assigned");
    assert_eq!(client.transaction_status(), TransactionStatus::Idle);
    // A caller that has its answer never sees its request still pending
    // (the pool relies on it when a connection is returned).
    assert_eq!(client.pending_requests(), 0);
}

#[tokio::test]
async fn commit_persists_rollback_and_drop_do_not() {
    bounded(async {
        let db = database("tx_basic");
        let mut client = setup(&db).await;

        let tx = client.transaction().await.unwrap();
        tx.execute("INSERT INTO items VALUES (1, 'a')", ())
            .await
            .unwrap();
        assert_eq!(tx.transaction_status(), TransactionStatus::InTransaction);
        tx.commit().await.unwrap();

        let tx = client.transaction().await.unwrap();
        tx.execute("INSERT INTO items VALUES (2, 'b')", ())
            .await
            .unwrap();
        tx.rollback().await.unwrap();

        {
            let tx = client.transaction().await.unwrap();
            tx.execute("INSERT INTO items VALUES (3, 'c')", ())
                .await
                .unwrap();
        }
        assert_eq!(count(&client).await, 1);
        assert_outside_transaction(&client).await;

        // A transaction in which nothing ran sends nothing and commits fine.
        client.transaction().await.unwrap().commit().await.unwrap();
        client
            .transaction()
            .await
            .unwrap()
            .rollback()
            .await
            .unwrap();

        // Every query method works inside, and a simple query may come first.
        let tx = client.transaction().await.unwrap();
        tx.batch_execute("INSERT INTO items VALUES (4, 'd')")
            .await
            .unwrap();
        let rows: Vec<(i64, String)> = tx
            .query_as("SELECT id, note FROM items ORDER BY id", ())
            .await
            .unwrap();
        assert_eq!(rows.len(), 2);
        let stmt = tx
            .prepare("SELECT note FROM items WHERE id = $1")
            .await
            .unwrap();
        let note: String = tx.query_one(&stmt, (4i64,)).await.unwrap().get(0);
        assert_eq!(note, "d");
        let mut portal = tx
            .bind_portal("SELECT id FROM items ORDER BY id", ())
            .await
            .unwrap();
        assert_eq!(portal.fetch(1).await.unwrap().len(), 1);
        drop(portal);
        let mut batch = tx.batch();
        batch.add("INSERT INTO items VALUES ($1, 'e')", (5i64,));
        batch.add("SELECT count(*) FROM items", ());
        batch.run_atomic().await.unwrap();
        let mut stream = tx.query_stream("SELECT id FROM items", ()).await.unwrap();
        let mut streamed = 0;
        while let Some(row) = stream.next().await {
            row.unwrap();
            streamed += 1;
        }
        assert_eq!(streamed, 3);
        tx.commit().await.unwrap();
        assert_eq!(count(&client).await, 3);
    })
    .await
}

#[tokio::test]
async fn a_dropped_client_transaction_ends_on_the_server_at_once() {
    bounded(async {
        let db = database("tx_drop_client");
        let mut client = setup(&db).await;
        let observer = connect(&db).await;
        let tx = client.transaction().await.unwrap();
        tx.execute("INSERT INTO items VALUES (1, 'locked')", ())
            .await
            .unwrap();
        assert_eq!(
            state_of(&observer, tx.backend_pid()).await,
            "idle in transaction"
        );
        drop(tx);
        // Nothing else is sent on `client`: the ROLLBACK went out by itself.
        assert_released(&observer, client.backend_pid()).await;
        assert_eq!(count(&observer).await, 0);
        // And DDL on the table from elsewhere is not blocked.
        observer
            .batch_execute("SET lock_timeout = '5s'; DROP TABLE items")
            .await
            .unwrap();
    })
    .await
}

#[tokio::test]
async fn a_dropped_pool_transaction_ends_on_the_server_at_once() {
    bounded(async {
        let db = database("tx_drop_pool");
        let observer = setup(&db).await;
        let pool = Pool::connect(&format!("{}?pool_max_size=2", db.url(AuthRole::Trust)))
            .await
            .unwrap();
        let tx = pool.transaction().await.unwrap();
        tx.execute("INSERT INTO items VALUES (1, 'x')", ())
            .await
            .unwrap();
        let pid = tx.backend_pid();
        assert_eq!(state_of(&observer, pid).await, "idle in transaction");
        drop(tx);
        assert_released(&observer, pid).await;
        assert_eq!(count(&observer).await, 0);

        // A guard on which the user ran BEGIN by hand, then dropped.
        let guard = pool.get().await.unwrap();
        guard
            .batch_execute("BEGIN; INSERT INTO items VALUES (2, 'y')")
            .await
            .unwrap();
        let pid = guard.backend_pid();
        assert_eq!(state_of(&observer, pid).await, "idle in transaction");
        drop(guard);
        assert_released(&observer, pid).await;
        assert_eq!(count(&observer).await, 0);

        // A transaction on a checked-out guard.
        let mut guard = pool.get().await.unwrap();
        let pid = guard.backend_pid();
        {
            let tx = guard.transaction().await.unwrap();
            tx.execute("INSERT INTO items VALUES (3, 'z')", ())
                .await
                .unwrap();
        }
        assert_released(&observer, pid).await;
        let tx = guard.transaction().await.unwrap();
        tx.execute("INSERT INTO items VALUES (4, 'w')", ())
            .await
            .unwrap();
        tx.commit().await.unwrap();
        drop(guard);
        assert_eq!(count(&observer).await, 1);
        assert_eq!(pool.stats().closed_broken, 0);
    })
    .await
}

async fn newcomer_handler(pool: &Pool, fail: bool) -> Result<(), pgpipe::Error> {
    let tx = pool.transaction().await?;
    tx.execute("INSERT INTO app.events VALUES (1)", ()).await?;
    // An early `?` return, as handlers do: the transaction is dropped.
    tx.execute(if fail { "SELECT 1 / 0" } else { "SELECT 1" }, ())
        .await?;
    tx.commit().await
}

#[tokio::test]
async fn the_newcomer_path_leaves_no_lock_behind() {
    bounded(async {
        let db = database("tx_newcomer");
        let admin = connect(&db).await;
        admin
            .batch_execute("CREATE SCHEMA app; CREATE TABLE app.events (id int)")
            .await
            .unwrap();
        let pool = Pool::connect(&db.url(AuthRole::Trust)).await.unwrap();
        let err = newcomer_handler(&pool, true).await.unwrap_err();
        assert_eq!(err.code(), Some(&SqlState::DIVISION_BY_ZERO));
        // No wait for anything: DDL from another connection goes through
        // (lock_timeout turns a block into an error instead of a hang).
        admin
            .batch_execute("SET lock_timeout = '5s'; DROP SCHEMA app CASCADE")
            .await
            .unwrap();
    })
    .await
}

/// Runs `op` on a fresh transaction, dropping the future of the step chosen
/// by `step` after `polls` polls; returns whether any future completed.
#[derive(Clone, Copy, Debug)]
enum Step {
    /// The first statement (which carries BEGIN).
    First,
    /// A later statement.
    Later,
    /// COMMIT.
    Commit,
}

async fn cancel_at(client: &Client, step: Step, polls: u64, id: i64) -> bool {
    let mut client = client.clone();
    let tx = client.transaction().await.unwrap();
    let insert = "INSERT INTO items VALUES ($1, 'x')";
    match step {
        Step::First => poll_then_drop(tx.execute(insert, (id,)), polls)
            .await
            .is_some(),
        Step::Later => {
            tx.execute(insert, (id,)).await.unwrap();
            poll_then_drop(tx.execute(insert, (id + 1_000_000,)), polls)
                .await
                .is_some()
        }
        Step::Commit => {
            tx.execute(insert, (id,)).await.unwrap();
            tx.execute(insert, (id + 1_000_000,)).await.unwrap();
            poll_then_drop(tx.commit(), polls).await.is_some()
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_future_dropped_at_any_poll_leaves_no_transaction_behind() {
    bounded(async {
        let db = database("tx_cancel");
        let client = setup(&db).await;
        for step in [Step::First, Step::Later, Step::Commit] {
            let mut id = 0;
            for polls in 0.. {
                id += 1;
                let completed = cancel_at(&client, step, polls, id).await;
                assert_outside_transaction(&client).await;
                let rows: Vec<(i64,)> = client
                    .query_as(
                        "SELECT id FROM items WHERE id IN ($1, $2) ORDER BY id",
                        (id, id + 1_000_000),
                    )
                    .await
                    .unwrap();
                match step {
                    // Never committed.
                    Step::First | Step::Later => assert!(rows.is_empty(), "{step:?} {polls}"),
                    // All or nothing.
                    Step::Commit => assert!(
                        rows.is_empty() || rows.len() == 2,
                        "{step:?} {polls}: {rows:?}"
                    ),
                }
                client.execute("DELETE FROM items", ()).await.unwrap();
                if completed {
                    break;
                }
                assert!(polls < 10_000, "{step:?} never completed");
            }
        }
    })
    .await
}

#[tokio::test]
async fn a_failed_transaction_refuses_statements_and_commit_says_rolled_back() {
    bounded(async {
        let db = database("tx_failed");
        let mut client = setup(&db).await;
        let watcher = client.clone();
        let tx = client.transaction().await.unwrap();
        tx.execute("INSERT INTO items VALUES (1, 'a')", ())
            .await
            .unwrap();
        let err = tx.execute("SELECT 1 / 0", ()).await.unwrap_err();
        assert_eq!(err.code(), Some(&SqlState::DIVISION_BY_ZERO));
        assert_eq!(tx.transaction_status(), TransactionStatus::Failed);
        // Refused by pgpipe (the server would say 25P02, a Db error).
        let before = watcher.pending_requests();
        let err = tx.query("SELECT 1", ()).await.unwrap_err();
        assert_eq!(err.kind(), ErrorKind::TransactionAborted, "{err}");
        assert!(err.code().is_none());
        assert_eq!(watcher.pending_requests(), before);
        let err = tx.commit().await.unwrap_err();
        assert_eq!(err.kind(), ErrorKind::RolledBack, "{err}");
        assert_eq!(count(&client).await, 0);
        assert_outside_transaction(&client).await;
    })
    .await
}

#[tokio::test]
async fn options_are_what_the_server_reports() {
    bounded(async {
        let db = database("tx_options");
        let mut client = setup(&db).await;
        for (level, name) in [
            (IsolationLevel::ReadCommitted, "read committed"),
            (IsolationLevel::RepeatableRead, "repeatable read"),
            (IsolationLevel::Serializable, "serializable"),
        ] {
            let tx = client
                .build_transaction()
                .isolation(level)
                .read_only(true)
                .deferrable(true)
                .start()
                .await
                .unwrap();
            let row = tx
                .query_one(
                    "SELECT current_setting('transaction_isolation'), \
                     current_setting('transaction_read_only'), \
                     current_setting('transaction_deferrable')",
                    (),
                )
                .await
                .unwrap();
            assert_eq!(row.get::<&str, _>(0), name);
            assert_eq!(row.get::<&str, _>(1), "on");
            assert_eq!(row.get::<&str, _>(2), "on");
            let err = tx
                .execute("INSERT INTO items VALUES (1, 'a')", ())
                .await
                .unwrap_err();
            assert_eq!(err.code(), Some(&SqlState::READ_ONLY_SQL_TRANSACTION));
            tx.rollback().await.unwrap();
        }
        let tx = client
            .build_transaction()
            .read_only(false)
            .start()
            .await
            .unwrap();
        let ro: String = tx
            .query_one("SHOW transaction_read_only", ())
            .await
            .unwrap()
            .get(0);
        assert_eq!(ro, "off");
        tx.execute("INSERT INTO items VALUES (1, 'a')", ())
            .await
            .unwrap();
        tx.commit().await.unwrap();
        assert_eq!(count(&client).await, 1);
    })
    .await
}

/// The ids in `items`, as `on` sees them.
async fn ids(on: &impl GenericClient) -> Vec<i64> {
    on.query_as::<(i64,), _, _>("SELECT id FROM items ORDER BY id", ())
        .await
        .unwrap()
        .into_iter()
        .map(|(id,)| id)
        .collect()
}

#[tokio::test]
async fn savepoints_nest_three_deep() {
    bounded(async {
        let db = database("tx_savepoints");
        let mut client = setup(&db).await;
        let mut tx = client.transaction().await.unwrap();
        tx.execute("INSERT INTO items VALUES (1, 'outer')", ())
            .await
            .unwrap();
        {
            // Inner rollback keeps the outer work; the inner failure is undone.
            let inner = tx.savepoint("a \"quoted\" name").await.unwrap();
            assert_eq!(inner.depth(), 1);
            inner
                .execute("INSERT INTO items VALUES (2, 'inner')", ())
                .await
                .unwrap();
            inner.execute("SELECT 1 / 0", ()).await.unwrap_err();
            inner.rollback().await.unwrap();
        }
        assert_eq!(tx.transaction_status(), TransactionStatus::InTransaction);
        {
            // Three levels: the innermost is dropped (rolled back to its
            // savepoint), the middle one commits.
            let mut l1 = tx.transaction().await.unwrap();
            l1.execute("INSERT INTO items VALUES (3, 'l1')", ())
                .await
                .unwrap();
            {
                let mut l2 = l1.transaction().await.unwrap();
                l2.execute("INSERT INTO items VALUES (4, 'l2')", ())
                    .await
                    .unwrap();
                {
                    let l3 = l2.transaction().await.unwrap();
                    assert_eq!(l3.depth(), 3);
                    l3.execute("INSERT INTO items VALUES (5, 'l3')", ())
                        .await
                        .unwrap();
                    l3.execute("SELECT 1 / 0", ()).await.unwrap_err();
                    // Dropped: ROLLBACK TO SAVEPOINT, RELEASE SAVEPOINT.
                }
                l2.execute("INSERT INTO items VALUES (6, 'l2 again')", ())
                    .await
                    .unwrap();
                l2.commit().await.unwrap();
            }
            l1.commit().await.unwrap();
        }
        {
            let sp = tx.savepoint("dropped").await.unwrap();
            sp.execute("INSERT INTO items VALUES (7, 'dropped')", ())
                .await
                .unwrap();
        }
        assert_eq!(ids(&tx).await, vec![1, 3, 4, 6]);
        tx.commit().await.unwrap();
        assert_eq!(ids(&client).await, vec![1, 3, 4, 6]);
        assert_outside_transaction(&client).await;
    })
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn other_handles_wait_behind_an_open_transaction() {
    bounded(async {
        let db = database("tx_reserve");
        let mut client = setup(&db).await;
        let other = client.clone();
        let mut third = client.clone();
        let tx = client.transaction().await.unwrap();
        tx.execute("INSERT INTO items VALUES (1, 'tx')", ())
            .await
            .unwrap();

        // Another handle's statement is held back: it must not run inside
        // the transaction (which will be rolled back).
        let outside = tokio::spawn(async move {
            other
                .execute("INSERT INTO items VALUES (2, 'outside')", ())
                .await
                .unwrap();
            other
        });
        // A second transaction on another handle waits too.
        let second = tokio::spawn(async move {
            let tx = third.transaction().await.unwrap();
            tx.execute("INSERT INTO items VALUES (3, 'second tx')", ())
                .await
                .unwrap();
            tx.commit().await.unwrap();
        });
        // The transaction goes on, pipelined, while they wait.
        for i in 10..20i64 {
            tx.execute("INSERT INTO items VALUES ($1, 'tx')", (i,))
                .await
                .unwrap();
        }
        assert!(!outside.is_finished());
        assert!(!second.is_finished());
        tx.rollback().await.unwrap();
        let other = outside.await.unwrap();
        second.await.unwrap();
        let ids: Vec<(i64,)> = other
            .query_as("SELECT id FROM items ORDER BY id", ())
            .await
            .unwrap();
        assert_eq!(ids, vec![(2,), (3,)]);
    })
    .await
}

#[tokio::test]
async fn a_waiting_handle_is_bounded_by_its_timeout() {
    bounded(async {
        let db = database("tx_reserve_timeout");
        let mut client = setup(&db).await;
        let waiting = client.with_timeout(Duration::from_millis(200));
        let tx = client.transaction().await.unwrap();
        tx.execute("INSERT INTO items VALUES (1, 'tx')", ())
            .await
            .unwrap();
        let err = waiting.clone().transaction().await.unwrap_err();
        assert!(err.is_timeout(), "{err}");
        let err = waiting.execute("SELECT 1", ()).await.unwrap_err();
        assert!(err.is_timeout(), "{err}");
        tx.commit().await.unwrap();
        assert_eq!(count(&client).await, 1);
    })
    .await
}

#[tokio::test]
async fn a_hand_written_begin_on_a_plain_client_keeps_working() {
    bounded(async {
        let db = database("tx_by_hand");
        let client = setup(&db).await;
        client
            .execute("INSERT INTO items VALUES (1, 'a')", ())
            .await
            .unwrap();
        client
            .batch_execute("BEGIN; SELECT * FROM items WHERE id = 1 FOR UPDATE")
            .await
            .unwrap();
        let n: i64 = client
            .query_one(
                "SELECT count(*) FROM pg_stat_activity WHERE pid = pg_backend_pid()",
                (),
            )
            .await
            .unwrap()
            .get(0);
        assert_eq!(n, 1);
        assert_eq!(
            client.transaction_status(),
            TransactionStatus::InTransaction
        );
        client.batch_execute("COMMIT").await.unwrap();
    })
    .await
}

/// A table whose inserts make COMMIT wait for advisory lock 42 (a
/// deferred constraint trigger runs at COMMIT), so a test decides when
/// COMMIT can finish.
async fn commit_blocks_on_lock_42(observer: &Client) {
    observer
        .batch_execute(
            "CREATE FUNCTION wait_for_42() RETURNS trigger LANGUAGE plpgsql AS \
             $$ BEGIN PERFORM pg_advisory_xact_lock(42); RETURN NULL; END $$; \
             CREATE CONSTRAINT TRIGGER slow_commit AFTER INSERT ON items \
             DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION wait_for_42()",
        )
        .await
        .unwrap();
    observer
        .query_one("SELECT pg_advisory_lock(42)", ())
        .await
        .unwrap();
}

/// COMMIT is bounded by `query_timeout`: one held up at commit time
/// returns "outcome unknown" and closes the connection (a pool discards
/// it and the next checkout gets a fresh one); the transaction really may
/// have been committed, as the server shows once the lock is released.
#[tokio::test]
async fn a_commit_past_the_query_timeout_has_an_unknown_outcome_and_closes_the_connection() {
    bounded(async {
        let db = database("tx_commit_timeout");
        let observer = setup(&db).await;
        commit_blocks_on_lock_42(&observer).await;
        let url = format!("{}?query_timeout=2000", db.url(AuthRole::Trust));

        let mut client = pgpipe::connect(&url).await.unwrap();
        let tx = client.transaction().await.unwrap();
        tx.execute("INSERT INTO items VALUES (1, 'client')", ())
            .await
            .unwrap();
        let e = tx.commit().await.unwrap_err();
        assert_eq!(e.kind(), ErrorKind::OutcomeUnknown, "{e}");
        assert!(e.is_outcome_unknown());
        assert!(e.to_string().contains("query timeout"), "{e}");
        assert!(client.is_closed());
        assert_eq!(
            client.query_one("SELECT 1", ()).await.unwrap_err().kind(),
            ErrorKind::Closed
        );

        let pool = Pool::connect(&format!("{url}&pool_max_size=1"))
            .await
            .unwrap();
        let tx = pool.transaction().await.unwrap();
        let pid = tx.backend_pid();
        tx.execute("INSERT INTO items VALUES (2, 'pool')", ())
            .await
            .unwrap();
        let e = tx.commit().await.unwrap_err();
        assert_eq!(e.kind(), ErrorKind::OutcomeUnknown, "{e}");
        assert_eq!(pool.stats().closed_broken, 1);
        // The only slot is free again, on a new connection.
        let guard = pool.get().await.unwrap();
        assert_ne!(guard.backend_pid(), pid);
        guard.query_one("SELECT 1", ()).await.unwrap();
        drop(guard);

        // Both COMMITs were still waiting on the server: released, they
        // complete although nobody hears it. "Unknown" was the only
        // honest answer.
        observer
            .query_one("SELECT pg_advisory_unlock(42)", ())
            .await
            .unwrap();
        eventually("both timed-out commits completed on the server", || async {
            count(&observer).await == 2
        })
        .await;
    })
    .await
}
