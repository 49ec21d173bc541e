//! Many tasks on one client: requests are pipelined, answers routed to the
//! right caller, errors isolated; dropped futures leave the connection sound.

mod common;

use std::future::Future;
use std::pin::pin;
use std::task::Context;

use common::{bounded, connect, database};

fn noop_context() -> Context<'static> {
    Context::from_waker(std::task::Waker::noop())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_thousand_concurrent_tasks_each_get_their_own_answer() {
    bounded(async {
        let db = database("pipeline");
        let client = connect(&db).await;
        let mut tasks = Vec::new();
        for i in 0..1000i32 {
            let client = client.clone();
            tasks.push(tokio::spawn(async move {
                if i % 97 == 13 {
                    // A failing query in the middle of the burst fails alone.
                    let err = client
                        .query("SELECT 1/($1::int4 - $1::int4)", (i,))
                        .await
                        .unwrap_err();
                    assert_eq!(err.code().map(|c| c.code()), Some("22012"));
                    return;
                }
                let row = client
                    .query_one("SELECT $1::int4 * 2, $2::text", (i, format!("task {i}")))
                    .await
                    .unwrap();
                assert_eq!(row.get::<i32, _>(0), i * 2);
                assert_eq!(row.get::<String, _>(1), format!("task {i}"));
            }));
        }
        for t in tasks {
            t.await.unwrap();
        }
    })
    .await
}

/// 256 tasks of 20 statements each on one client keep about 256 requests
/// in flight: deep enough that, on a multi-thread runtime too, answered
/// callers' next requests gather and wait for the driver's next read
/// (from 64 in flight). Every task must get each of its answers: nothing
/// held back may wait for an answer that only comes after it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pipeline_deep_enough_to_gather_on_a_multi_thread_runtime_answers_everyone() {
    bounded(async {
        let db = database("pipeline_gather");
        let client = connect(&db).await;
        let tasks: Vec<_> = (0..256i32)
            .map(|i| {
                let client = client.clone();
                tokio::spawn(async move {
                    for j in 0..20i32 {
                        let row = client
                            .query_one("SELECT $1::int4 * 100 + $2::int4", (i, j))
                            .await
                            .unwrap();
                        assert_eq!(row.get::<i32, _>(0), i * 100 + j);
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

/// Polls `fut` up to `max` times and returns how many polls it took to
/// complete, if it did. It is polled only when woken (the first time at
/// once), so the count is the number of await points it passed, not a
/// number that grows with how long the server took on a loaded machine.
async fn poll_times<F: Future>(fut: F, max: usize) -> Option<usize> {
    struct Wakeup(tokio::sync::Notify);
    impl std::task::Wake for Wakeup {
        fn wake(self: std::sync::Arc<Self>) {
            self.0.notify_one();
        }
    }
    let wakeup = std::sync::Arc::new(Wakeup(tokio::sync::Notify::new()));
    let waker = std::task::Waker::from(wakeup.clone());
    let mut fut = pin!(fut);
    for n in 1..=max {
        if fut
            .as_mut()
            .poll(&mut Context::from_waker(&waker))
            .is_ready()
        {
            return Some(n);
        }
        // A wake before this point left a permit: nothing is missed.
        wakeup.0.notified().await;
    }
    None
}

const SQL: &str = "SELECT g, repeat('x', 1000) FROM generate_series(1, 300) g";

#[tokio::test]
async fn dropping_a_query_after_any_number_of_polls_leaves_the_connection_correct() {
    bounded(async {
        let db = database("dropped");
        let client = connect(&db).await;
        // How many polls a whole query takes here (the result spans many reads).
        let total = poll_times(client.query(SQL, ()), 100_000)
            .await
            .expect("the query completes when polled");
        for polls in 0..=total {
            poll_times(client.query(SQL, ()), polls).await;
            let row = client
                .query_one("SELECT $1::int8", (polls as i64,))
                .await
                .unwrap();
            assert_eq!(
                row.get::<i64, _>(0),
                polls as i64,
                "after dropping a query polled {polls} of {total} times"
            );
        }
        // The same for statements served from the cache and for streams.
        for polls in 0..=total {
            poll_times(
                async {
                    let mut s = client.query_stream(SQL, ()).await.unwrap();
                    while s.next().await.is_some() {}
                },
                polls,
            )
            .await;
            let v: i64 = client
                .query_one("SELECT $1::int8", (-(polls as i64),))
                .await
                .unwrap()
                .get(0);
            assert_eq!(v, -(polls as i64));
        }
    })
    .await
}

#[tokio::test]
async fn a_dropped_future_inside_a_transaction_does_not_break_it() {
    bounded(async {
        let db = database("droptx");
        let client = connect(&db).await;
        client
            .batch_execute("CREATE TABLE t (v int); BEGIN")
            .await
            .unwrap();
        {
            let mut fut = pin!(client.execute("INSERT INTO t VALUES (1)", ()));
            let _ = fut.as_mut().poll(&mut noop_context());
        }
        client
            .execute("INSERT INTO t VALUES (2)", ())
            .await
            .unwrap();
        client.batch_execute("COMMIT").await.unwrap();
        // The dropped insert was already sent, so it ran; what matters is
        // that the transaction and the connection stayed consistent.
        let n: i64 = client
            .query_one("SELECT count(*) FROM t", ())
            .await
            .unwrap()
            .get(0);
        assert_eq!(n, 2);
    })
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn more_tasks_than_the_request_queue_holds_wait_their_turn() {
    bounded(async {
        let db = database("queuebound");
        let client = connect(&db).await;
        // Above the 4096 in-flight bound: the extra callers wait for a place
        // instead of growing the queue, and everyone still gets their answer.
        let tasks: Vec<_> = (0..6000i32)
            .map(|i| {
                let client = client.clone();
                tokio::spawn(async move {
                    client
                        .query_one("SELECT $1::int4", (i,))
                        .await
                        .unwrap()
                        .get::<i32, _>(0)
                })
            })
            .collect();
        for (i, t) in tasks.into_iter().enumerate() {
            assert_eq!(t.await.unwrap(), i as i32);
        }
    })
    .await
}
