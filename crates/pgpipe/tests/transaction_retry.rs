//! The retry helper against real conflicts: a serialization failure and a
//! deadlock provoked between two connections are retried and every logical
//! operation ends committed exactly once; the attempt bound holds; other
//! errors and an unknown COMMIT outcome are never retried.

mod common;

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;
use std::time::Duration;

use common::{bounded, connect, database, eventually};
use pgpipe::{Client, ErrorKind, IsolationLevel, Pool, RetryPolicy, SqlState};
use pgpipe_testkit::AuthRole;
use tokio::sync::Barrier;

fn quick() -> RetryPolicy {
    RetryPolicy::new()
        .max_attempts(5)
        .initial_backoff(Duration::from_millis(1))
        .max_backoff(Duration::from_millis(20))
}

/// Write skew under SERIALIZABLE: both read the whole table, then insert.
/// The first attempts meet at a barrier after reading, so they overlap and
/// one of them must fail with 40001; later attempts run freely.
async fn write_skew(mut client: Client, id: i64, barrier: Arc<Barrier>, attempts: Arc<AtomicU32>) {
    client
        .build_transaction()
        .isolation(IsolationLevel::Serializable)
        .run_with_retry(&quick(), |tx| {
            let attempt = attempts.fetch_add(1, Ordering::SeqCst);
            let barrier = barrier.clone();
            Box::pin(async move {
                let n: i64 = tx.query_one("SELECT count(*) FROM skew", ()).await?.get(0);
                if attempt < 2 {
                    barrier.wait().await;
                }
                tx.execute("INSERT INTO skew VALUES ($1, $2)", (id, n))
                    .await?;
                Ok(())
            })
        })
        .await
        .unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_serialization_failure_is_retried_and_both_commit_once() {
    bounded(async {
        let db = database("retry_40001");
        let a = connect(&db).await;
        let b = connect(&db).await;
        a.batch_execute("CREATE TABLE skew (id int8 PRIMARY KEY, seen int8)")
            .await
            .unwrap();
        let barrier = Arc::new(Barrier::new(2));
        let attempts = Arc::new(AtomicU32::new(0));
        tokio::join!(
            write_skew(a.clone(), 1, barrier.clone(), attempts.clone()),
            write_skew(b.clone(), 2, barrier.clone(), attempts.clone()),
        );
        let rows: Vec<(i64, i64)> = a
            .query_as("SELECT id, seen FROM skew ORDER BY id", ())
            .await
            .unwrap();
        assert_eq!(rows.len(), 2, "{rows:?}");
        // Serializable: one of them saw the other's row.
        assert!(rows.iter().any(|&(_, seen)| seen == 1), "{rows:?}");
        assert!(attempts.load(Ordering::SeqCst) >= 3, "nothing was retried");
    })
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_deadlock_is_retried_and_both_commit_once() {
    bounded(async {
        let db = database("retry_40p01");
        let setup = connect(&db).await;
        setup
            .batch_execute(
                "CREATE TABLE acct (id int8 PRIMARY KEY, n int8);
                 INSERT INTO acct VALUES (1, 0), (2, 0);
                 CREATE TABLE done (op text PRIMARY KEY)",
            )
            .await
            .unwrap();
        let pool = Pool::connect(&format!("{}?pool_max_size=4", db.url(AuthRole::Trust)))
            .await
            .unwrap();
        let barrier = Arc::new(Barrier::new(2));
        let attempts = Arc::new(AtomicU32::new(0));
        let run = |first: i64, second: i64, op: &'static str| {
            let pool = pool.clone();
            let barrier = barrier.clone();
            let attempts = attempts.clone();
            async move {
                pool.transaction_with_retry(&quick(), |tx| {
                    let attempt = attempts.fetch_add(1, Ordering::SeqCst);
                    let barrier = barrier.clone();
                    Box::pin(async move {
                        tx.execute("UPDATE acct SET n = n + 1 WHERE id = $1", (first,))
                            .await?;
                        if attempt < 2 {
                            barrier.wait().await;
                        }
                        tx.execute("UPDATE acct SET n = n + 1 WHERE id = $1", (second,))
                            .await?;
                        tx.execute("INSERT INTO done VALUES ($1)", (op,)).await?;
                        Ok(())
                    })
                })
                .await
            }
        };
        let (x, y) = tokio::join!(run(1, 2, "x"), run(2, 1, "y"));
        x.unwrap();
        y.unwrap();
        let rows: Vec<(i64, i64)> = setup
            .query_as("SELECT id, n FROM acct ORDER BY id", ())
            .await
            .unwrap();
        assert_eq!(
            rows,
            vec![(1, 2), (2, 2)],
            "each operation committed exactly once"
        );
        let n: i64 = setup
            .query_one("SELECT count(*) FROM done", ())
            .await
            .unwrap()
            .get(0);
        assert_eq!(n, 2);
        assert_eq!(attempts.load(Ordering::SeqCst), 3);
    })
    .await
}

#[tokio::test]
async fn the_attempt_bound_holds_and_other_errors_are_not_retried() {
    bounded(async {
        let db = database("retry_bound");
        let mut client = connect(&db).await;
        client
            .batch_execute(
                "CREATE FUNCTION conflict() RETURNS void LANGUAGE plpgsql AS
                   $$ BEGIN RAISE EXCEPTION 'made up' USING ERRCODE = '40001'; END $$;
                 CREATE TABLE u (id int PRIMARY KEY);
                 INSERT INTO u VALUES (1)",
            )
            .await
            .unwrap();

        let attempts = AtomicU32::new(0);
        let err = client
            .transaction_with_retry(&quick().max_attempts(3), |tx| {
                attempts.fetch_add(1, Ordering::SeqCst);
                Box::pin(async move {
                    tx.execute("SELECT conflict()", ()).await?;
                    Ok(())
                })
            })
            .await
            .unwrap_err();
        assert_eq!(err.code(), Some(&SqlState::T_R_SERIALIZATION_FAILURE));
        assert!(err.is_retryable_transaction());
        assert_eq!(attempts.load(Ordering::SeqCst), 3);

        let attempts = AtomicU32::new(0);
        let err = client
            .transaction_with_retry(&quick(), |tx| {
                attempts.fetch_add(1, Ordering::SeqCst);
                Box::pin(async move {
                    tx.execute("INSERT INTO u VALUES (1)", ()).await?;
                    Ok(())
                })
            })
            .await
            .unwrap_err();
        assert_eq!(err.code(), Some(&SqlState::UNIQUE_VIOLATION));
        assert_eq!(attempts.load(Ordering::SeqCst), 1);

        // The value of a successful run comes back, with its attempts.
        let ran = client
            .transaction_with_retry(&quick(), |tx| {
                Box::pin(async move {
                    Ok(tx
                        .query_one("SELECT count(*)::int4 FROM u", ())
                        .await?
                        .get(0))
                })
            })
            .await
            .unwrap();
        assert_eq!((ran.value, ran.attempts), (1i32, 1));
    })
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_connection_killed_during_commit_is_an_unknown_outcome_never_retried() {
    bounded(async {
        let db = database("retry_unknown");
        let mut client = connect(&db).await;
        let killer = connect(&db).await;
        // COMMIT runs the deferred trigger, which sleeps: a window to kill
        // the backend while COMMIT is in flight.
        client
            .batch_execute(
                "CREATE TABLE t (id int);
                 CREATE FUNCTION slow() RETURNS trigger LANGUAGE plpgsql AS
                   $$ BEGIN PERFORM pg_sleep(30); RETURN NULL; END $$;
                 CREATE CONSTRAINT TRIGGER slow_commit AFTER INSERT ON t
                   DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION slow()",
            )
            .await
            .unwrap();
        let pid = client.backend_pid();
        let kill = async {
            eventually("COMMIT is running", || async {
                killer
                    .query_opt(
                        "SELECT 1 FROM pg_stat_activity WHERE pid = $1 AND state = 'active' \
                         AND query LIKE 'COMMIT%'",
                        (pid,),
                    )
                    .await
                    .unwrap()
                    .is_some()
            })
            .await;
            killer
                .execute("SELECT pg_terminate_backend($1)", (pid,))
                .await
                .unwrap();
        };
        let attempts = AtomicU32::new(0);
        let policy = quick();
        let run = client.transaction_with_retry(&policy, |tx| {
            attempts.fetch_add(1, Ordering::SeqCst);
            Box::pin(async move {
                tx.execute("INSERT INTO t VALUES (1)", ()).await?;
                Ok(())
            })
        });
        let (result, ()) = tokio::join!(run, kill);
        let err = result.unwrap_err();
        assert_eq!(err.kind(), ErrorKind::OutcomeUnknown, "{err}");
        assert!(err.is_outcome_unknown());
        assert_eq!(attempts.load(Ordering::SeqCst), 1);
    })
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_retry_future_can_be_spawned() {
    bounded(async {
        let db = database("retry_spawn");
        let pool = Pool::connect(&db.url(AuthRole::Trust)).await.unwrap();
        // A service spawns its handlers: the helper's future must be Send.
        let handle = tokio::spawn(async move {
            pool.transaction_with_retry(&RetryPolicy::new(), |tx| {
                Box::pin(async move {
                    let one: i32 = tx.query_one("SELECT 1", ()).await?.get(0);
                    Ok(one)
                })
            })
            .await
        });
        assert_eq!(handle.await.unwrap().unwrap().value, 1);
    })
    .await
}
