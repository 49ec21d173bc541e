//! The shared lane's admission line (issue 30, fair tails), set with
//! `PoolConfig::shared_line_at(Some(64))`: once every lane connection
//! holds 64 statements, a task with none in flight waits
//! in arrival order and goes where room frees first, instead of joining a
//! pipeline that may be stuck; a wait in line is bounded by the pool's
//! `acquire_timeout`, and a waiter that goes away gives up its place.
//!
//! Each lane connection is filled by one task whose first statement waits
//! on an advisory lock the test holds, with 139 more pipelined behind it:
//! the server, not a timer, decides when room frees.

mod common;

use std::sync::Arc;
use std::time::Duration;

use common::{bounded, database, eventually};
use futures_util::future::try_join_all;
use pgpipe::{ErrorKind, Pool, PoolConfig};
use pgpipe_testkit::AuthRole;
use tokio::task::JoinHandle;

/// Statements per filling task: past the lane's 64 per connection, with
/// a margin for the one a task may place on an idle connection.
const FILL: usize = 140;

/// The database lives as long as its handle: keep the third value.
async fn lane_of_two(
    hint: &str,
    acquire_timeout: Duration,
) -> (Pool, pgpipe::Client, pgpipe_testkit::TestDatabase) {
    let db = database(hint);
    let config = pgpipe::Config::parse(&db.url(AuthRole::Trust)).unwrap();
    let pool = Pool::connect_with_config(
        config,
        PoolConfig::new()
            .max_size(4)
            .shared_connections(2)
            .shared_line_at(Some(64))
            .acquire_timeout(acquire_timeout),
    )
    .await
    .unwrap();
    common::lane::grow_lane(&pool, 2).await;
    let observer = pgpipe::connect(&db.superuser_url()).await.unwrap();
    (pool, observer, db)
}

/// A task whose `FILL` statements are issued together, the first waiting
/// on advisory lock `key`; its answers in order.
fn filler(pool: &Pool, key: i64) -> JoinHandle<Result<usize, pgpipe::Error>> {
    let pool = pool.clone();
    tokio::spawn(async move {
        let head = format!("SELECT pg_advisory_xact_lock_shared({key})::text");
        let statements = (0..FILL).map(|i| {
            let pool = pool.clone();
            let sql = if i == 0 {
                head.clone()
            } else {
                "SELECT 1::text".to_owned()
            };
            async move { pool.query_one(sql.as_str(), ()).await }
        });
        Ok(try_join_all(statements).await?.len())
    })
}

/// Waits until some backend waits on advisory lock `key`.
async fn waiting_on_lock(observer: &pgpipe::Client, key: i64) {
    eventually(&format!("a backend to wait on lock {key}"), || async move {
        observer
            .query_one(
                "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' \
                 AND objid = $1::bigint::oid AND NOT granted",
                (key,),
            )
            .await
            .unwrap()
            .get::<i64, _>(0)
            >= 1
    })
    .await;
}

async fn lock(observer: &pgpipe::Client, key: i64) {
    observer
        .execute("SELECT pg_advisory_lock($1)", (key,))
        .await
        .unwrap();
}

async fn unlock(observer: &pgpipe::Client, key: i64) {
    observer
        .execute("SELECT pg_advisory_unlock($1)", (key,))
        .await
        .unwrap();
}

/// Fills both lane connections: tasks on locks `a` and `b`.
async fn fill_lane(
    pool: &Pool,
    observer: &pgpipe::Client,
    a: i64,
    b: i64,
) -> [JoinHandle<Result<usize, pgpipe::Error>>; 2] {
    lock(observer, a).await;
    lock(observer, b).await;
    let first = filler(pool, a);
    waiting_on_lock(observer, a).await;
    let second = filler(pool, b);
    waiting_on_lock(observer, b).await;
    [first, second]
}

async fn waiting_count(pool: &Pool, n: usize) {
    eventually(
        &format!("{n} task(s) to wait in the lane's line"),
        || async { pool.stats().shared_waiting == n },
    )
    .await;
}

/// On one thread a task admitted from the line places all its statements
/// before anyone else runs.
#[tokio::test(flavor = "current_thread")]
async fn a_new_task_waits_for_room_and_goes_in_arrival_order() {
    arrival_order("pool_admission_order", 7101).await
}

/// On two threads the next in line may look while the admitted task is
/// still placing its 140 statements: the room kept for them must stop it
/// (without that, it went in beside them).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_admitted_task_keeps_room_for_its_statements_on_two_threads() {
    arrival_order("pool_admission_order_mt", 7401).await
}

/// Fills the lane (locks `key`, `key + 1`), queues a task of `FILL`
/// statements (lock `key + 2`) and then one of one, and frees room a
/// connection at a time: the first in line takes the first room, and the
/// last waits until the second.
async fn arrival_order(hint: &str, key: i64) {
    bounded(async {
        let (pool, observer, _db) = lane_of_two(hint, Duration::from_secs(120)).await;
        let [first, second] = fill_lane(&pool, &observer, key, key + 1).await;

        // Two later tasks find the lane full and wait, in arrival order.
        lock(&observer, key + 2).await;
        let third = filler(&pool, key + 2);
        waiting_count(&pool, 1).await;
        let done = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let last = {
            let pool = pool.clone();
            let done = done.clone();
            tokio::spawn(async move {
                let row = pool.query_one("SELECT 'last'::text", ()).await;
                done.store(true, std::sync::atomic::Ordering::SeqCst);
                row.map(|r| r.get::<String, _>(0))
            })
        };
        waiting_count(&pool, 2).await;

        // Room frees on the first connection: the first in line, not the
        // latest, takes it, and fills it again; the last one keeps waiting.
        unlock(&observer, key).await;
        assert_eq!(first.await.unwrap().unwrap(), FILL);
        waiting_on_lock(&observer, key + 2).await;
        assert_eq!(pool.stats().shared_waiting, 1, "{:?}", pool.stats());
        assert!(!done.load(std::sync::atomic::Ordering::SeqCst));

        // Room on the second connection: the last task goes there and is
        // answered while the third still waits on its lock.
        unlock(&observer, key + 1).await;
        assert_eq!(second.await.unwrap().unwrap(), FILL);
        let answer = tokio::time::timeout(Duration::from_secs(60), last)
            .await
            .expect("the last task was not answered once room freed")
            .unwrap()
            .unwrap();
        assert_eq!(answer, "last");
        assert!(!third.is_finished(), "the third task's lock is still held");
        assert_eq!(pool.stats().shared_waiting, 0);

        unlock(&observer, key + 2).await;
        assert_eq!(third.await.unwrap().unwrap(), FILL);
        // Nothing was retired on the way.
        assert_eq!(pool.stats().shared, 2, "{:?}", pool.stats());
    })
    .await
}

/// The wait in line is bounded like a checkout: by `acquire_timeout`
/// (short here, since waiting it out is the point).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_wait_in_line_ends_at_the_acquire_timeout() {
    bounded(async {
        let (pool, observer, _db) =
            lane_of_two("pool_admission_timeout", Duration::from_secs(2)).await;
        let [first, second] = fill_lane(&pool, &observer, 7201, 7202).await;

        // In a task of its own: a statement outside any task (this test's
        // body runs in `block_on`) has no caller to queue.
        let waiter = {
            let pool = pool.clone();
            tokio::spawn(async move { pool.query_one("SELECT 1", ()).await })
        };
        let err = waiter.await.unwrap().unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Timeout, "{err}");
        assert!(err.to_string().contains("shared lane full"), "{err}");
        assert_eq!(pool.stats().shared_waiting, 0, "{:?}", pool.stats());

        unlock(&observer, 7201).await;
        unlock(&observer, 7202).await;
        assert_eq!(first.await.unwrap().unwrap(), FILL);
        assert_eq!(second.await.unwrap().unwrap(), FILL);
        // With room again, a statement goes straight in.
        let row = pool.query_one("SELECT 'after'::text", ()).await.unwrap();
        assert_eq!(row.get::<String, _>(0), "after");
    })
    .await
}

/// A waiter dropped before its turn (a cancelled request) leaves no place
/// behind: the one after it is served when room frees.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_waiter_that_goes_away_gives_up_its_place() {
    bounded(async {
        let (pool, observer, _db) =
            lane_of_two("pool_admission_cancel", Duration::from_secs(120)).await;
        let [first, second] = fill_lane(&pool, &observer, 7301, 7302).await;

        let cancelled = {
            let pool = pool.clone();
            tokio::spawn(async move { pool.query_one("SELECT 1", ()).await })
        };
        waiting_count(&pool, 1).await;
        let served = {
            let pool = pool.clone();
            tokio::spawn(async move { pool.query_one("SELECT 'served'::text", ()).await })
        };
        waiting_count(&pool, 2).await;
        cancelled.abort();
        waiting_count(&pool, 1).await;

        unlock(&observer, 7301).await;
        let row = tokio::time::timeout(Duration::from_secs(60), served)
            .await
            .expect("the waiter behind a cancelled one was not served")
            .unwrap()
            .unwrap();
        assert_eq!(row.get::<String, _>(0), "served");
        assert_eq!(pool.stats().shared_waiting, 0);
        unlock(&observer, 7302).await;
        assert_eq!(first.await.unwrap().unwrap(), FILL);
        assert_eq!(second.await.unwrap().unwrap(), FILL);
    })
    .await
}
