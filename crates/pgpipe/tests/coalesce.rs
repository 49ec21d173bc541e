//! Coalesced Sync (`Client::coalesced`, `coalesce_sync=on`): statements of
//! different callers written in one go share one Sync; a failure in a group
//! reaches only its caller, and its neighbours run again alone.

mod common;

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use common::{bounded, database};
use pgpipe::SqlState;
use pgpipe_testkit::{msg, AuthRole, FakeServer, Script, TestDatabase};

/// What the server sends for one `execute` of the unnamed statement.
fn executed(tag: &str) -> bytes::Bytes {
    msg::concat(&[
        msg::parse_complete(),
        msg::bind_complete(),
        msg::no_data(),
        msg::command_complete(tag),
    ])
}

/// A client on `db` whose handles all coalesce.
async fn connect_coalesced(db: &TestDatabase) -> pgpipe::Client {
    let url = db.url(AuthRole::Trust);
    let sep = if url.contains('?') { '&' } else { '?' };
    pgpipe::connect(&format!("{url}{sep}coalesce_sync=on"))
        .await
        .unwrap()
}

/// Two statements joined in one task on a one-thread runtime are both
/// queued before the driver runs: one write, one group.
#[tokio::test(flavor = "current_thread")]
async fn a_group_is_answered_only_after_its_ready_for_query() {
    let answered = Arc::new(AtomicBool::new(false));
    let flag = answered.clone();
    let script = Script::new()
        .expect_startup()
        .send(msg::handshake())
        .expect_until(b'S')
        .respond(move |_| {
            flag.store(true, Ordering::SeqCst);
            msg::concat(&[executed("SELECT 1"), executed("SELECT 1")])
        })
        // ReadyForQuery held back: the callers must stay pending. Long
        // enough that a loaded machine cannot stretch the test's 300 ms
        // look past it (which would let the answers in and fail it).
        .sleep(Duration::from_secs(5))
        .send(msg::ready_for_query(b'I'));
    let server = FakeServer::start(script).await.unwrap();
    let url = format!("{}&statement_cache_capacity=0", server.url());
    let client = pgpipe::connect(&url).await.unwrap().coalesced();
    bounded(async {
        let a = client.execute("SELECT 1", ());
        let b = client.execute("SELECT 1", ());
        tokio::pin!(a, b);
        // Run both until the server has answered every statement but not
        // the Sync, and a while longer: neither may finish.
        let pending = async {
            while !answered.load(Ordering::SeqCst) {
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
            tokio::time::sleep(Duration::from_millis(300)).await;
        };
        tokio::select! {
            biased;
            r = &mut a => panic!("the first caller finished before ReadyForQuery: {r:?}"),
            r = &mut b => panic!("the second caller finished before ReadyForQuery: {r:?}"),
            () = pending => {}
        }
        assert_eq!(a.await.unwrap(), 1);
        assert_eq!(b.await.unwrap(), 1);
    })
    .await;
    let transcript = server.finish().await.unwrap();
    let tags = transcript.tags();
    let count = |t: u8| tags.iter().filter(|&&x| x == t).count();
    assert_eq!((count(b'E'), count(b'S')), (2, 1), "{tags:?}");
}

#[tokio::test(flavor = "current_thread")]
async fn begin_and_anything_in_a_transaction_get_their_own_sync() {
    let script = Script::new()
        .expect_startup()
        .send(msg::handshake())
        .expect_until(b'S')
        .send(msg::concat(&[
            executed("BEGIN"),
            msg::ready_for_query(b'T'),
        ]))
        .expect_until(b'S')
        .send(msg::concat(&[
            executed("SELECT 1"),
            msg::ready_for_query(b'T'),
        ]))
        // Inside the transaction: two statements, two Syncs.
        .expect_until(b'S')
        .send(msg::concat(&[
            executed("SELECT 1"),
            msg::ready_for_query(b'T'),
        ]))
        .expect_until(b'S')
        .send(msg::concat(&[
            executed("SELECT 1"),
            msg::ready_for_query(b'T'),
        ]));
    let server = FakeServer::start(script).await.unwrap();
    let url = format!(
        "{}&statement_cache_capacity=0&coalesce_sync=on",
        server.url()
    );
    let client = pgpipe::connect(&url).await.unwrap();
    assert!(client.is_coalesced());
    bounded(async {
        let (begin, select) =
            tokio::join!(client.execute("BEGIN", ()), client.execute("SELECT 1", ()));
        begin.unwrap();
        select.unwrap();
        let (a, b) = tokio::join!(
            client.execute("SELECT 1", ()),
            client.execute("SELECT 1", ())
        );
        a.unwrap();
        b.unwrap();
    })
    .await;
    let transcript = server.finish().await.unwrap();
    let tags = transcript.tags();
    let count = |t: u8| tags.iter().filter(|&&x| x == t).count();
    assert_eq!((count(b'E'), count(b'S')), (4, 4), "{tags:?}");
}

#[tokio::test(flavor = "current_thread")]
async fn a_statement_refused_in_a_group_with_25001_runs_again_alone() {
    let db = database("coalesce_25001");
    let url = db.url(AuthRole::Trust);
    let sep = if url.contains('?') { '&' } else { '?' };
    let url = format!("{url}{sep}statement_cache_capacity=0");
    let client = pgpipe::connect(&url).await.unwrap().coalesced();
    bounded(async {
        client
            .execute("CREATE TABLE vac (id int)", ())
            .await
            .unwrap();
        // Second in a pipeline, VACUUM is refused (25001); alone it runs.
        let (select, vacuum) = tokio::join!(
            client.query_one("SELECT 41 + 1", ()),
            client.execute("VACUUM vac", ())
        );
        assert_eq!(select.unwrap().get::<i32, _>(0), 42);
        vacuum.unwrap();
        // They did share a Sync, and both ran again alone.
        let stats = client.stats();
        assert_eq!(
            (stats.coalesced_statements, stats.coalesced_sent_again),
            (2, 2)
        );
        // The same pair through the per-statement opt-out: both fine too.
        let plain = client.not_coalesced();
        let (select, vacuum) = tokio::join!(
            plain.query_one("SELECT 41 + 1", ()),
            plain.execute("VACUUM vac", ())
        );
        assert_eq!(select.unwrap().get::<i32, _>(0), 42);
        vacuum.unwrap();
    })
    .await;
}

/// What one task asked for and must get back.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Ask {
    Read,
    Insert,
    DivideByZero,
    Duplicate,
}

/// On a one-thread runtime the 1,000 spawned tasks all queue their
/// statement before the driver runs again, so groups form for certain (on
/// a multi-thread runtime whether they do depends on timing).
#[tokio::test(flavor = "current_thread")]
async fn a_thousand_tasks_with_failures_each_get_their_own_answer() {
    let db = database("coalesce_many");
    let client = connect_coalesced(&db).await;
    bounded(async {
        client
            .execute("CREATE TABLE t (id int PRIMARY KEY, v int)", ())
            .await
            .unwrap();
        // Rows the duplicate inserts collide with.
        client
            .execute(
                "INSERT INTO t SELECT 100000 + g, 0 FROM generate_series(0, 6) g",
                (),
            )
            .await
            .unwrap();
        let asks: Vec<Ask> = (0..1000)
            .map(|i| match i % 40 {
                0 => Ask::DivideByZero,
                20 => Ask::Duplicate,
                k if k % 2 == 0 => Ask::Read,
                _ => Ask::Insert,
            })
            .collect();
        let mut tasks = Vec::new();
        for (i, &ask) in asks.iter().enumerate() {
            let client = client.clone();
            let i = i as i32;
            tasks.push(tokio::spawn(async move {
                match ask {
                    Ask::Read => client
                        .query_one("SELECT $1::int + 1", (i,))
                        .await
                        .map(|row| i64::from(row.get::<i32, _>(0))),
                    Ask::Insert => client
                        .execute(
                            "INSERT INTO t (id, v) VALUES ($1, 100 / $2::int)",
                            (i, 5i32),
                        )
                        .await
                        .map(|n| n as i64),
                    Ask::DivideByZero => client
                        .execute(
                            "INSERT INTO t (id, v) VALUES ($1, 100 / $2::int)",
                            (i, 0i32),
                        )
                        .await
                        .map(|n| n as i64),
                    Ask::Duplicate => client
                        .execute("INSERT INTO t (id, v) VALUES ($1, 1)", (100000 + i % 7,))
                        .await
                        .map(|n| n as i64),
                }
            }));
        }
        let mut ok_inserts = Vec::new();
        let mut failed_inserts = Vec::new();
        for (i, task) in tasks.into_iter().enumerate() {
            let result = task.await.unwrap();
            match (asks[i], result) {
                (Ask::Read, Ok(v)) => assert_eq!(v, i as i64 + 1, "task {i}"),
                (Ask::Insert, Ok(n)) => {
                    assert_eq!(n, 1, "task {i}");
                    ok_inserts.push(i as i32);
                }
                (Ask::DivideByZero, Err(e)) => {
                    assert_eq!(e.code(), Some(&SqlState::DIVISION_BY_ZERO), "task {i}: {e}");
                    failed_inserts.push(i as i32);
                }
                (Ask::Duplicate, Err(e)) => {
                    assert_eq!(e.code(), Some(&SqlState::UNIQUE_VIOLATION), "task {i}: {e}");
                }
                (ask, other) => panic!("task {i} asked {ask:?} and got {other:?}"),
            }
        }
        assert_eq!(ok_inserts.len(), 500);
        // Not vacuous: groups formed, and failures sent neighbours again.
        let stats = client.stats();
        assert!(stats.coalesced_statements > 0, "{stats:?}");
        assert!(stats.coalesced_sent_again > 0, "{stats:?}");
        let rows = client
            .query(
                "SELECT id, count(*)::int8 FROM t WHERE id < 100000 GROUP BY id",
                (),
            )
            .await
            .unwrap();
        let in_table: HashMap<i32, i64> = rows
            .iter()
            .map(|r| (r.get::<i32, _>(0), r.get::<i64, _>(1)))
            .collect();
        for id in &ok_inserts {
            assert_eq!(in_table.get(id), Some(&1), "insert {id} reported ok");
        }
        for id in &failed_inserts {
            assert_eq!(in_table.get(id), None, "insert {id} reported failed");
        }
        assert_eq!(in_table.len(), ok_inserts.len());
        let dups: i64 = client
            .query_one("SELECT count(*) FROM t WHERE id >= 100000", ())
            .await
            .unwrap()
            .get(0);
        assert_eq!(dups, 7);
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_pool_shared_lane_coalesces_and_keeps_answers_apart() {
    let db = database("coalesce_pool");
    let url = db.url(AuthRole::Trust);
    let sep = if url.contains('?') { '&' } else { '?' };
    let pool = pgpipe::Pool::connect(&format!(
        "{url}{sep}coalesce_sync=on&pool_max_size=2&query_timeout=30000"
    ))
    .await
    .unwrap();
    bounded(async {
        let mut tasks = Vec::new();
        for i in 0..300i32 {
            let pool = pool.clone();
            tasks.push(tokio::spawn(async move {
                // Every tenth divides by zero; the others answer i * 2.
                let divisor = if i % 10 == 0 { 0 } else { 1 };
                pool.query_one("SELECT ($1::int * 2) / $2::int", (i, divisor))
                    .await
                    .map(|row| row.get::<i32, _>(0))
            }));
        }
        for (i, task) in tasks.into_iter().enumerate() {
            match task.await.unwrap() {
                Ok(v) => {
                    assert_ne!(i % 10, 0, "task {i} should have failed");
                    assert_eq!(v, i as i32 * 2, "task {i}");
                }
                Err(e) => {
                    assert_eq!(i % 10, 0, "task {i}: {e}");
                    assert_eq!(e.code(), Some(&SqlState::DIVISION_BY_ZERO), "task {i}: {e}");
                }
            }
        }
    })
    .await;
}

/// A group that fails while a transaction takes the connection: the
/// neighbours sent again must wait for the transaction's end, not run
/// inside it (where its ROLLBACK would undo inserts their callers were told
/// had succeeded). One thread: the group, the failing statement and the
/// transaction's first statement are all queued before the driver runs, so
/// the group's answer arrives while the transaction is open on the server.
#[tokio::test(flavor = "current_thread")]
async fn neighbours_sent_again_never_run_inside_a_transaction_that_started_meanwhile() {
    let db = database("coalesce_tx");
    let url = db.url(AuthRole::Trust);
    let sep = if url.contains('?') { '&' } else { '?' };
    let client = pgpipe::connect(&format!(
        "{url}{sep}coalesce_sync=on&statement_cache_capacity=0"
    ))
    .await
    .unwrap();
    bounded(async {
        client
            .execute("CREATE TABLE t (id int PRIMARY KEY)", ())
            .await
            .unwrap();
        for round in 0..20 {
            let base = round * 100;
            let insert = |i: i32| client.execute("INSERT INTO t (id) VALUES ($1)", (base + i,));
            let failing = client.execute("SELECT 1 / $1::int", (0i32,));
            let tx = async {
                // Another handle: this task's statements run beside it.
                let mut handle = client.clone();
                let tx = handle.transaction().await?;
                tx.execute("SELECT 1", ()).await?;
                tx.rollback().await
            };
            let (i0, i1, i2, i3, i4, i5, i6, i7, failed, tx) = tokio::join!(
                insert(0),
                insert(1),
                insert(2),
                insert(3),
                insert(4),
                insert(5),
                insert(6),
                insert(7),
                failing,
                tx
            );
            tx.unwrap();
            assert_eq!(
                failed.unwrap_err().code(),
                Some(&SqlState::DIVISION_BY_ZERO)
            );
            for (i, r) in [i0, i1, i2, i3, i4, i5, i6, i7].into_iter().enumerate() {
                assert_eq!(r.unwrap(), 1, "round {round}, insert {i}");
            }
            let present: i64 = client
                .query_one(
                    "SELECT count(*) FROM t WHERE id >= $1 AND id < $1 + 100",
                    (base,),
                )
                .await
                .unwrap()
                .get(0);
            assert_eq!(present, 8, "round {round}: inserts reported ok are missing");
        }
        let stats = client.stats();
        assert!(stats.coalesced_sent_again > 0, "{stats:?}");
    })
    .await;
}

/// A group holds at most 32 statements, so a failure sends at most 31
/// neighbours again: 100 selects queued in one go, the last one failing,
/// make groups of 32, 32, 32 and 4, and only the 3 before the failure in
/// its group run again (one group of 100 would send 99 again).
#[tokio::test(flavor = "current_thread")]
async fn a_failure_sends_at_most_a_group_of_32_again() {
    let db = database("coalesce_cap");
    let client = connect_coalesced(&db).await;
    bounded(async {
        let divide = client.prepare("SELECT 1000 / $1::int4").await.unwrap();
        let before = client.stats();
        let mut tasks = Vec::new();
        for i in 0..100i32 {
            let client = client.clone();
            let divide = divide.clone();
            let divisor = if i == 99 { 0 } else { i + 1 };
            tasks.push(tokio::spawn(async move {
                let got = client.query_one(&divide, (divisor,)).await;
                (divisor, got.map(|row| row.get::<i32, _>(0)))
            }));
        }
        for task in tasks {
            match task.await.unwrap() {
                (0, Err(e)) => assert_eq!(e.code(), Some(&SqlState::DIVISION_BY_ZERO), "{e}"),
                (0, Ok(v)) => panic!("dividing by zero returned {v}"),
                (d, got) => assert_eq!(got.unwrap(), 1000 / d, "divisor {d}"),
            }
        }
        let after = client.stats();
        let grouped = after.coalesced_statements - before.coalesced_statements;
        let again = after.coalesced_sent_again - before.coalesced_sent_again;
        assert!(
            grouped >= 64,
            "the 100 selects were not grouped ({grouped} grouped)"
        );
        assert!(
            again <= 31,
            "{again} statements sent again after one failure (at most 31)"
        );
    })
    .await;
}

/// Members sent again behind a transaction that took the connection while
/// their group was in flight must not hold the other callers back: here
/// the transaction waits for the failed statement's error before it ends,
/// which would never come if that caller were held until the members
/// behind the transaction had run. Each caller is its own task (callers
/// joined in one task are polled together and would slip past a hold).
#[tokio::test(flavor = "current_thread")]
async fn a_failure_is_answered_while_its_neighbours_wait_behind_a_transaction() {
    let db = database("coalesce_tx_wait");
    let mut client = connect_coalesced(&db).await;
    bounded(async {
        let divide = client.prepare("SELECT 10 / $1::int4").await.unwrap();
        let before = client.stats();
        for round in 0..10 {
            let (failed_tx, failed_rx) = tokio::sync::oneshot::channel::<()>();
            let ask = |d: i32| {
                let (client, divide) = (client.clone(), divide.clone());
                tokio::spawn(async move { client.query_one(&divide, (d,)).await })
            };
            let (a, b) = (ask(1), ask(2));
            let failing = {
                let (client, divide) = (client.clone(), divide.clone());
                tokio::spawn(async move {
                    let result = client.query_one(&divide, (0i32,)).await;
                    let _ = failed_tx.send(());
                    result
                })
            };
            let c = ask(5);
            // The four are queued as one group; the transaction takes the
            // connection before its answer is in.
            tokio::task::yield_now().await;
            let tx = client.transaction().await.unwrap();
            tx.execute("SELECT 1", ()).await.unwrap();
            // Ends only once the failed statement has its answer.
            failed_rx.await.unwrap();
            tx.rollback().await.unwrap();
            let err = failing.await.unwrap().unwrap_err();
            assert_eq!(
                err.code(),
                Some(&SqlState::DIVISION_BY_ZERO),
                "round {round}: {err}"
            );
            for (task, want) in [(a, 10), (b, 5), (c, 2)] {
                let got = task.await.unwrap().unwrap();
                assert_eq!(got.get::<i32, _>(0), want, "round {round}");
            }
        }
        let after = client.stats();
        assert!(
            after.coalesced_sent_again > before.coalesced_sent_again,
            "no member was sent again: the test did not build a failing group"
        );
    })
    .await;
}
