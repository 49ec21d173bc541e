//! pgpipe through PgBouncer in transaction pooling mode (the way most
//! large deployments run it): queries, types, pipelining, the pool and
//! transactions with `query_mode=unnamed`; and `query_mode=cached`, which
//! named statements make unsafe behind such a pooler, must give a right
//! answer or an error that says to switch mode, never a wrong answer.

mod common;

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};

use common::{bounded, cluster, database};
use pgpipe::{ErrorKind, Pool};
use pgpipe_testkit::{Bouncer, TestDatabase};

/// One PgBouncer per test binary, in front of the shared cluster.
fn bouncer() -> &'static Bouncer {
    static BOUNCER: OnceLock<Bouncer> = OnceLock::new();
    BOUNCER.get_or_init(|| Bouncer::start(cluster()).expect("pgbouncer"))
}

fn unnamed_url(db: &TestDatabase, extra: &str) -> String {
    format!("{}?query_mode=unnamed{extra}", bouncer().url(db.name()))
}

#[tokio::test]
async fn queries_and_types_through_pgbouncer() {
    bounded(async {
        let db = database("bouncer_queries");
        let client = pgpipe::connect(&unnamed_url(&db, "")).await.unwrap();
        let row = client
            .query_one(
                "SELECT $1::int4, $2::text, $3::bool, $4::float8, $5::bytea, $6::int8[], $7::text IS NULL",
                (
                    42i32,
                    "héllo",
                    true,
                    1.5f64,
                    &b"\x00\x01\xff"[..],
                    vec![1i64, 2, 3],
                    None::<&str>,
                ),
            )
            .await
            .unwrap();
        assert_eq!(row.get::<i32, _>(0), 42);
        assert_eq!(row.get::<&str, _>(1), "héllo");
        assert!(row.get::<bool, _>(2));
        assert_eq!(row.get::<f64, _>(3), 1.5);
        assert_eq!(row.get::<&[u8], _>(4), b"\x00\x01\xff");
        assert_eq!(row.get::<Vec<i64>, _>(5), vec![1, 2, 3]);
        assert!(row.get::<bool, _>(6));
        // An error leaves the connection usable.
        let err = client.query("SELEC 1", ()).await.unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Db, "{err:?}");
        let rows = client
            .query("SELECT g FROM generate_series(1, 1000) g", ())
            .await
            .unwrap();
        assert_eq!(rows.len(), 1000);
        // A stream and a batch.
        let mut stream = client
            .query_stream("SELECT g::int8 FROM generate_series(1, 10000) g", ())
            .await
            .unwrap();
        let mut n = 0i64;
        while let Some(r) = stream.next().await {
            n += 1;
            assert_eq!(r.unwrap().get::<i64, _>(0), n);
        }
        assert_eq!(n, 10_000);
        client
            .batch_execute("CREATE TABLE t (id int8 PRIMARY KEY, v text)")
            .await
            .unwrap();
        assert_eq!(
            client
                .execute("INSERT INTO t SELECT g, g::text FROM generate_series(1, 100) g", ())
                .await
                .unwrap(),
            100
        );
    })
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pipelining_through_pgbouncer_gives_every_caller_its_answer() {
    bounded(async {
        let db = database("bouncer_pipeline");
        let client = pgpipe::connect(&unnamed_url(&db, "")).await.unwrap();
        let tasks: Vec<_> = (0..200i64)
            .map(|t| {
                let c = client.clone();
                tokio::spawn(async move {
                    for i in 0..20i64 {
                        let id = t * 100 + i;
                        let row = c
                            .query_one("SELECT $1::int8, $1::int8::text", (id,))
                            .await
                            .unwrap();
                        assert_eq!(row.get::<i64, _>(0), id);
                        assert_eq!(row.get::<&str, _>(1), id.to_string());
                    }
                })
            })
            .collect();
        for t in tasks {
            t.await.unwrap();
        }
    })
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pool_and_transactions_through_pgbouncer() {
    bounded(async {
        let db = database("bouncer_pool");
        let pool = Pool::connect(&unnamed_url(&db, "&pool_max_size=16"))
            .await
            .unwrap();
        pool.execute(
            "CREATE TABLE acct (id int8 PRIMARY KEY, n int8 NOT NULL)",
            (),
        )
        .await
        .unwrap();
        pool.execute(
            "INSERT INTO acct SELECT g, 0 FROM generate_series(0, 7) g",
            (),
        )
        .await
        .unwrap();
        let committed = Arc::new(AtomicU64::new(0));
        let tasks: Vec<_> = (0..64i64)
            .map(|t| {
                let (pool, committed) = (pool.clone(), committed.clone());
                tokio::spawn(async move {
                    for i in 0..20i64 {
                        let v: i64 = pool
                            .query_one("SELECT $1::int8 * 3", (t * 100 + i,))
                            .await
                            .unwrap()
                            .get(0);
                        assert_eq!(v, (t * 100 + i) * 3);
                        let tx = pool.transaction().await.unwrap();
                        tx.execute("UPDATE acct SET n = n + 1 WHERE id = $1", (t % 8,))
                            .await
                            .unwrap();
                        if i % 4 == 3 {
                            tx.rollback().await.unwrap();
                        } else {
                            tx.commit().await.unwrap();
                            committed.fetch_add(1, Ordering::Relaxed);
                        }
                    }
                })
            })
            .collect();
        for t in tasks {
            t.await.unwrap();
        }
        let total: i64 = pool
            .query_one("SELECT sum(n)::int8 FROM acct", ())
            .await
            .unwrap()
            .get(0);
        assert_eq!(total as u64, committed.load(Ordering::Relaxed));
        // A transaction dropped without COMMIT leaves nothing behind.
        {
            let tx = pool.transaction().await.unwrap();
            tx.execute("UPDATE acct SET n = n + 1000", ())
                .await
                .unwrap();
        }
        let after: i64 = pool
            .query_one("SELECT sum(n)::int8 FROM acct", ())
            .await
            .unwrap()
            .get(0);
        assert_eq!(after, total);
    })
    .await
}

/// Cached mode behind transaction pooling: each client's named statements
/// land on server connections shared with other clients. Statements of
/// the same shape (one int8 in, one int8 out) but different meaning make a
/// mix-up visible. Every answer must be right, or an error naming
/// query_mode=unnamed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cached_mode_through_pgbouncer_is_right_or_says_to_switch_mode() {
    bounded(async {
        let db = database("bouncer_cached");
        let url = format!("{}?query_mode=cached", bouncer().url(db.name()));
        let (ok, hinted) = (Arc::new(AtomicU64::new(0)), Arc::new(AtomicU64::new(0)));
        let tasks: Vec<_> = (0..8i64)
            .map(|c| {
                let (url, ok, hinted) = (url.clone(), ok.clone(), hinted.clone());
                tokio::spawn(async move {
                    let mut client = pgpipe::connect(&url).await.unwrap();
                    for i in 0..100i64 {
                        // Client c's k-th statement multiplies by c*10+k:
                        // the same statement number means something else
                        // on every client.
                        let k = i % 5;
                        let factor = c * 10 + k;
                        let sql = format!("SELECT $1::int8 * {factor}");
                        // Every third one inside a transaction, where a
                        // vanished statement cannot be retried.
                        let result = if i % 3 == 0 {
                            let tx = client.transaction().await.unwrap();
                            let r = tx.query_one(&sql, (i,)).await;
                            // A failed statement leaves the transaction
                            // aborted: end it either way.
                            tx.rollback().await.unwrap();
                            r
                        } else {
                            client.query_one(&sql, (i,)).await
                        };
                        match result {
                            Ok(row) => {
                                assert_eq!(
                                    row.get::<i64, _>(0),
                                    i * factor,
                                    "a wrong answer: {sql}"
                                );
                                ok.fetch_add(1, Ordering::Relaxed);
                            }
                            Err(e) => {
                                assert!(
                                    e.to_string().contains("query_mode=unnamed"),
                                    "an error without the hint to switch mode: {e}"
                                );
                                hinted.fetch_add(1, Ordering::Relaxed);
                            }
                        }
                    }
                })
            })
            .collect();
        for t in tasks {
            t.await.unwrap();
        }
        println!(
            "cached mode through pgbouncer: {} right answers, {} errors with the hint",
            ok.load(Ordering::Relaxed),
            hinted.load(Ordering::Relaxed)
        );
    })
    .await
}

/// What a pooler does to a cached statement, done by hand on a direct
/// connection: inside a transaction (no retry there) the error names the
/// fix.
#[tokio::test]
async fn a_vanished_statement_in_a_transaction_says_to_use_unnamed_mode() {
    bounded(async {
        let db = database("bouncer_hint");
        let client = common::connect(&db).await;
        let v: i64 = client
            .query_one("SELECT $1::int8 + 1", (1i64,))
            .await
            .unwrap()
            .get(0);
        assert_eq!(v, 2);
        client.batch_execute("BEGIN; DEALLOCATE ALL").await.unwrap();
        let err = client
            .query_one("SELECT $1::int8 + 1", (1i64,))
            .await
            .unwrap_err();
        assert_eq!(
            err.code(),
            Some(&pgpipe::SqlState::INVALID_SQL_STATEMENT_NAME)
        );
        assert!(err.to_string().contains("query_mode=unnamed"), "{err}");
        client.batch_execute("ROLLBACK").await.unwrap();
        // Outside a transaction the statement is prepared again.
        client.batch_execute("DEALLOCATE ALL").await.unwrap();
        let v: i64 = client
            .query_one("SELECT $1::int8 + 1", (2i64,))
            .await
            .unwrap()
            .get(0);
        assert_eq!(v, 3);
    })
    .await
}
