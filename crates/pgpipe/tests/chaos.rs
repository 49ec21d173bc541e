//! Cancellation chaos and load: 1,000 tasks running random operations and
//! dropping them at random polls; 10,000 random actions on one connection
//! checked against a model; 10,000 connect/close cycles. Afterwards: every
//! completed operation had its own right answer, no transaction is left
//! open on the server, the pool never exceeded its size, and no server
//! session or file descriptor leaked.
//!
//! The tests of this binary run one at a time (they count the process's
//! file descriptors).

mod common;

use std::collections::BTreeMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;

use common::{cluster, database};
use pgpipe::{Client, ErrorKind, Pool, SqlState};
use pgpipe_testkit::AuthRole;
use tokio::time::Instant;

const BOUND: Duration = Duration::from_secs(240);

async fn one_at_a_time() -> tokio::sync::MutexGuard<'static, ()> {
    static LOCK: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());
    LOCK.lock().await
}

/// xorshift: no dependency, a different seed per task.
struct Rng(u64);

impl Rng {
    fn new(seed: u64) -> Rng {
        Rng(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1)
    }
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// Polls the inner future at most `polls` times; if it is still pending
/// then, drops it (the way a `select!` or a timeout drops a future).
struct DropAfter<F> {
    inner: Option<Pin<Box<F>>>,
    polls: u32,
}

impl<F: Future> Future for DropAfter<F> {
    type Output = Option<F::Output>;
    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        if self.polls == 0 {
            self.inner = None;
            return Poll::Ready(None);
        }
        self.polls -= 1;
        let Some(f) = self.inner.as_mut() else {
            return Poll::Ready(None);
        };
        match f.as_mut().poll(cx) {
            Poll::Ready(v) => Poll::Ready(Some(v)),
            Poll::Pending => Poll::Pending,
        }
    }
}

fn drop_after<F: Future>(f: F, polls: u32) -> DropAfter<F> {
    DropAfter {
        inner: Some(Box::pin(f)),
        polls,
    }
}

fn open_fds() -> usize {
    std::fs::read_dir("/proc/self/fd")
        .map(|d| d.count())
        .unwrap_or(0)
}

fn rss_kb() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.split_whitespace().next()?.parse().ok())
        .unwrap_or(0)
}

/// Polls the server until `sql` (one int8) returns `want`, within a bound.
async fn eventually_count(observer: &Client, sql: &str, want: i64, what: &str) {
    let start = Instant::now();
    loop {
        let n: i64 = observer.query_one(sql, ()).await.unwrap().get(0);
        if n == want {
            return;
        }
        assert!(
            start.elapsed() < Duration::from_secs(30),
            "{what}: {n}, expected {want}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

const OPS: [&str; 6] = [
    "query",
    "stream",
    "batch",
    "transaction",
    "pool get",
    "prepare",
];

/// One random operation; returns an error string if a completed operation
/// got a wrong answer (the task asserts on it).
async fn operation(
    kind: usize,
    id: i64,
    pool: &Pool,
    shared: &Client,
) -> Result<(), pgpipe::Error> {
    match kind {
        0 => {
            let v: i64 = pool.query_one("SELECT $1::int8 + 1", (id,)).await?.get(0);
            assert_eq!(v, id + 1, "query: another caller's answer");
        }
        1 => {
            let mut rows = shared
                .query_stream("SELECT $1::int8 + g FROM generate_series(1, 200) g", (id,))
                .await?;
            let mut n = 0;
            while let Some(row) = rows.next().await {
                n += 1;
                assert_eq!(
                    row?.get::<i64, _>(0),
                    id + n,
                    "stream: another caller's row"
                );
            }
            assert_eq!(n, 200);
        }
        2 => {
            let mut batch = shared.batch();
            batch.add("SELECT $1::int8", (id,));
            batch.add("SELECT $1::int8 * 2", (id,));
            let mut results = batch.run().await?.into_iter();
            let a: i64 = results.next().expect("two results")?.rows()[0].get(0);
            let b: i64 = results.next().expect("two results")?.rows()[0].get(0);
            assert_eq!((a, b), (id, id * 2), "batch: another caller's answer");
        }
        3 => {
            let tx = pool.transaction().await?;
            tx.execute("INSERT INTO done VALUES ($1)", (id,)).await?;
            let n: i64 = tx
                .query_one("SELECT count(*) FROM done WHERE id = $1", (id,))
                .await?
                .get(0);
            assert_eq!(n, 1, "transaction: own insert not visible");
            tx.commit().await?;
        }
        4 => {
            let c = pool.get().await?;
            let v: i64 = c.query_one("SELECT $1::int8 - 1", (id,)).await?.get(0);
            assert_eq!(v, id - 1, "pool get: another caller's answer");
        }
        _ => {
            let st = shared.prepare("SELECT $1::int8 * 3").await?;
            let v: i64 = shared.query_one(&st, (id,)).await?.get(0);
            assert_eq!(v, id * 3, "prepare: another caller's answer");
        }
    }
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_thousand_tasks_dropping_random_operations_at_random_polls() {
    let _one = one_at_a_time().await;
    tokio::time::timeout(BOUND, async {
        let db = database("chaos");
        let url = db.url(AuthRole::Trust);
        let observer = pgpipe::connect(&url).await.unwrap();
        observer
            .batch_execute("CREATE TABLE done (id int8 PRIMARY KEY)")
            .await
            .unwrap();
        let fds_before = open_fds();
        let pool = Pool::connect(&format!("{url}?pool_max_size=12&pool_acquire_timeout=30000"))
            .await
            .unwrap();
        let shared = pgpipe::connect(&url).await.unwrap();

        let stop = Arc::new(AtomicBool::new(false));
        let max_seen = Arc::new(AtomicUsize::new(0));
        let sampler = {
            let (pool, stop, max_seen) = (pool.clone(), stop.clone(), max_seen.clone());
            tokio::spawn(async move {
                while !stop.load(Ordering::Relaxed) {
                    let s = pool.stats();
                    max_seen.fetch_max(s.size, Ordering::Relaxed);
                    tokio::time::sleep(Duration::from_millis(5)).await;
                }
            })
        };
        let completed: Arc<[AtomicU64; 6]> = Arc::new(Default::default());
        let dropped: Arc<[AtomicU64; 6]> = Arc::new(Default::default());
        let failed = Arc::new(AtomicU64::new(0));
        let committed = Arc::new(Mutex::new(Vec::new()));
        let deadline = Instant::now() + Duration::from_secs(8);
        let tasks: Vec<_> = (0..1000u64)
            .map(|t| {
                let (pool, shared) = (pool.clone(), shared.clone());
                let (completed, dropped, failed, committed) =
                    (completed.clone(), dropped.clone(), failed.clone(), committed.clone());
                tokio::spawn(async move {
                    let mut rng = Rng::new(t + 1);
                    let mut i = 0i64;
                    while Instant::now() < deadline {
                        i += 1;
                        let id = t as i64 * 1_000_000 + i;
                        let kind = rng.below(6) as usize;
                        // A third run to completion, the rest are dropped
                        // after 1..=12 polls (if not done by then).
                        let polls = if rng.below(3) == 0 { u32::MAX } else { 1 + rng.below(12) as u32 };
                        match drop_after(operation(kind, id, &pool, &shared), polls).await {
                            Some(Ok(())) => {
                                completed[kind].fetch_add(1, Ordering::Relaxed);
                                if kind == 3 {
                                    committed.lock().unwrap().push(id);
                                }
                            }
                            Some(Err(e)) => {
                                // Only a timeout is acceptable: no server
                                // fault is injected here.
                                assert!(e.is_timeout(), "{} failed: {e:?}", OPS[kind]);
                                failed.fetch_add(1, Ordering::Relaxed);
                            }
                            None => {
                                dropped[kind].fetch_add(1, Ordering::Relaxed);
                            }
                        }
                    }
                })
            })
            .collect();
        for t in tasks {
            t.await.expect("a task saw a wrong answer");
        }
        stop.store(true, Ordering::Relaxed);
        sampler.await.unwrap();

        let stats = pool.stats();
        assert!(max_seen.load(Ordering::Relaxed) <= stats.max_size, "pool grew past max: {}", max_seen.load(Ordering::Relaxed));
        // Both the pool and the shared connection still answer correctly.
        assert_eq!(pool.query_one("SELECT 11::int8", ()).await.unwrap().get::<i64, _>(0), 11);
        assert_eq!(shared.query_one("SELECT 12::int8", ()).await.unwrap().get::<i64, _>(0), 12);
        // Every acknowledged commit is there.
        let committed = committed.lock().unwrap().clone();
        let present: i64 = observer
            .query_one("SELECT count(*) FROM done WHERE id = ANY($1)", (&committed,))
            .await
            .unwrap()
            .get(0);
        assert_eq!(present as usize, committed.len(), "acknowledged commits missing");
        // No transaction left open: a dropped transaction is rolled back
        // (before its connection is reused, or when the pool checks it).
        let open_tx = format!(
            "SELECT count(*) FROM pg_stat_activity WHERE datname = '{}' AND state LIKE 'idle in transaction%'",
            db.name()
        );
        // A dropped transaction is rolled back at once (issue 11): nothing
        // is left open even on connections the pool has not reused.
        eventually_count(&observer, &open_tx, 0, "transactions left open on the server").await;

        let line = |counts: &[AtomicU64; 6]| {
            OPS.iter()
                .zip(counts.iter())
                .map(|(n, c)| format!("{n} {}", c.load(Ordering::Relaxed)))
                .collect::<Vec<_>>()
                .join(", ")
        };
        println!(
            "chaos: completed [{}]; dropped [{}]; timed out {}; commits {}; pool max size seen {} of {}; {:?}",
            line(&completed),
            line(&dropped),
            failed.load(Ordering::Relaxed),
            committed.len(),
            max_seen.load(Ordering::Relaxed),
            stats.max_size,
            pool.stats(),
        );
        let total_completed: u64 = completed.iter().map(|c| c.load(Ordering::Relaxed)).sum();
        let total_dropped: u64 = dropped.iter().map(|c| c.load(Ordering::Relaxed)).sum();
        assert!(total_completed > 1000 && total_dropped > 1000);

        // No leaked sessions or descriptors once the pool and client go.
        pool.close();
        drop(pool);
        drop(shared);
        let sessions = format!(
            "SELECT count(*) FROM pg_stat_activity WHERE datname = '{}' AND pid <> pg_backend_pid()",
            db.name()
        );
        eventually_count(&observer, &sessions, 0, "server sessions left").await;
        let start = Instant::now();
        while open_fds() > fds_before {
            assert!(
                start.elapsed() < Duration::from_secs(30),
                "file descriptors leaked: {} before, {} after",
                fds_before,
                open_fds()
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    })
    .await
    .expect("chaos test exceeded its bound");
}

/// pgx-style stress: 10,000 random actions on ONE connection, each checked
/// against a model of the table.
#[tokio::test]
async fn ten_thousand_random_actions_on_one_connection_match_a_model() {
    let _one = one_at_a_time().await;
    tokio::time::timeout(BOUND, async {
        let db = database("stress");
        let mut client = common::connect(&db).await;
        client
            .batch_execute("CREATE TABLE kv (k int8 PRIMARY KEY, v int8 NOT NULL)")
            .await
            .unwrap();
        let mut model: BTreeMap<i64, i64> = BTreeMap::new();
        let mut rng = Rng::new(42);
        let started = Instant::now();
        let mut counts = [0u32; 10];
        for step in 0..10_000i64 {
            let k = rng.below(200) as i64;
            let v = step;
            let action = rng.below(10) as usize;
            counts[action] += 1;
            match action {
                0 => {
                    let r = client.execute("INSERT INTO kv VALUES ($1, $2)", (k, v)).await;
                    if let std::collections::btree_map::Entry::Vacant(e) = model.entry(k) {
                        assert_eq!(r.unwrap(), 1);
                        e.insert(v);
                    } else {
                        assert_eq!(r.unwrap_err().code(), Some(&SqlState::UNIQUE_VIOLATION));
                    }
                }
                1 => {
                    let n = client
                        .execute("UPDATE kv SET v = $2 WHERE k = $1", (k, v))
                        .await
                        .unwrap();
                    assert_eq!(n, u64::from(model.contains_key(&k)));
                    if let Some(x) = model.get_mut(&k) {
                        *x = v;
                    }
                }
                2 => {
                    let n = client.execute("DELETE FROM kv WHERE k = $1", (k,)).await.unwrap();
                    assert_eq!(n, u64::from(model.remove(&k).is_some()));
                }
                3 => {
                    let got: Option<i64> = client
                        .query_opt("SELECT v FROM kv WHERE k = $1", (k,))
                        .await
                        .unwrap()
                        .map(|r| r.get(0));
                    assert_eq!(got, model.get(&k).copied(), "select k={k} at step {step}");
                }
                4 => {
                    let rows = client.query("SELECT k, v FROM kv ORDER BY k", ()).await.unwrap();
                    let got: Vec<(i64, i64)> = rows.iter().map(|r| (r.get(0), r.get(1))).collect();
                    let want: Vec<(i64, i64)> = model.iter().map(|(a, b)| (*a, *b)).collect();
                    assert_eq!(got, want, "full scan at step {step}");
                }
                5 => {
                    // A transaction that commits, rolls back, or is dropped
                    // (rolled back at once).
                    let end = rng.below(3);
                    let tx = client.transaction().await.unwrap();
                    let n = tx
                        .execute(
                            "INSERT INTO kv VALUES ($1, $2) ON CONFLICT (k) DO UPDATE SET v = $2",
                            (k, v),
                        )
                        .await
                        .unwrap();
                    assert_eq!(n, 1);
                    match end {
                        0 => {
                            tx.commit().await.unwrap();
                            model.insert(k, v);
                        }
                        1 => tx.rollback().await.unwrap(),
                        _ => drop(tx),
                    }
                }
                6 => {
                    // An error in a transaction aborts it; rollback recovers.
                    let tx = client.transaction().await.unwrap();
                    let err = tx.query("SELECT 1 / 0", ()).await.unwrap_err();
                    assert_eq!(err.code(), Some(&SqlState::DIVISION_BY_ZERO));
                    // Refused by pgpipe itself, no round trip.
                    let err = tx.query("SELECT 1", ()).await.unwrap_err();
                    assert_eq!(err.kind(), ErrorKind::TransactionAborted, "{err:?}");
                    if rng.below(2) == 0 {
                        tx.rollback().await.unwrap();
                    } else {
                        let err = tx.commit().await.unwrap_err();
                        assert_eq!(err.kind(), ErrorKind::RolledBack, "{err:?}");
                    }
                }
                7 => {
                    // A stream read part-way and dropped.
                    let mut rows = client
                        .query_stream("SELECT k FROM kv ORDER BY k", ())
                        .await
                        .unwrap();
                    let take = rng.below(5);
                    for _ in 0..take {
                        if rows.next().await.is_none() {
                            break;
                        }
                    }
                }
                8 => {
                    let st = client.prepare("SELECT count(*) FROM kv WHERE k <= $1").await.unwrap();
                    let n: i64 = client.query_one(&st, (k,)).await.unwrap().get(0);
                    assert_eq!(n as usize, model.range(..=k).count());
                }
                _ => {
                    // Several statements pipelined at once.
                    let (a, b, c) = tokio::join!(
                        client.query_one("SELECT $1::int8", (k,)),
                        client.query_opt("SELECT v FROM kv WHERE k = $1", (k,)),
                        client.query_one("SELECT count(*) FROM kv", ()),
                    );
                    assert_eq!(a.unwrap().get::<i64, _>(0), k);
                    assert_eq!(b.unwrap().map(|r| r.get::<i64, _>(0)), model.get(&k).copied());
                    assert_eq!(c.unwrap().get::<i64, _>(0) as usize, model.len());
                }
            }
        }
        println!(
            "stress: 10,000 actions on one connection in {:?}; per action kind {counts:?}; {} rows at the end",
            started.elapsed(),
            model.len()
        );
        assert!(!client.is_closed());
    })
    .await
    .expect("stress test exceeded its bound");
}

/// 10,000 connect/close cycles: no file descriptor, memory or server
/// session growth.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ten_thousand_connect_close_cycles_leak_nothing() {
    let _one = one_at_a_time().await;
    tokio::time::timeout(BOUND, async {
        let db = database("cycles");
        let url = db.url(AuthRole::Trust);
        let observer = pgpipe::connect(&url).await.unwrap();
        let cycle = |n: usize| {
            let url = url.clone();
            async move {
                let tasks: Vec<_> = (0..8)
                    .map(|_| {
                        let url = url.clone();
                        tokio::spawn(async move {
                            for _ in 0..n / 8 {
                                let c = pgpipe::connect(&url).await.unwrap();
                                drop(c);
                            }
                        })
                    })
                    .collect();
                for t in tasks {
                    t.await.unwrap();
                }
            }
        };
        // Warm up (runtime, allocator, lazily created state), then measure.
        cycle(400).await;
        let sessions = format!(
            "SELECT count(*) FROM pg_stat_activity WHERE datname = '{}' AND pid <> pg_backend_pid()",
            db.name()
        );
        eventually_count(&observer, &sessions, 0, "sessions after the warm-up").await;
        let (fds, rss) = (open_fds(), rss_kb());
        let started = Instant::now();
        cycle(10_000).await;
        let took = started.elapsed();
        eventually_count(&observer, &sessions, 0, "server sessions left").await;
        let start = Instant::now();
        while open_fds() > fds {
            assert!(start.elapsed() < Duration::from_secs(30), "fds: {fds} before, {} after", open_fds());
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        let grown = rss_kb().saturating_sub(rss);
        println!(
            "connect/close: 10,000 cycles in {took:?}; fds {fds} -> {}; RSS {rss} kB -> {} kB",
            open_fds(),
            rss_kb()
        );
        // Allocator noise is a few MB at most; a per-connection leak of even
        // 1 kB would show as 10 MB.
        assert!(grown < 8 * 1024, "RSS grew by {grown} kB over 10,000 connections");
        let _ = cluster();
    })
    .await
    .expect("connect/close test exceeded its bound");
}
