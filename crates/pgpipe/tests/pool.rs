//! The connection pool against a real server: bounds under load, exhaustion,
//! recovery from killed backends, resets, cancellation, background upkeep,
//! URL settings and the GenericClient trait.

mod common;

use std::time::Duration;

use common::{bounded, database, poll_then_drop};
use pgpipe::{Client, ErrorKind, GenericClient, Pool, PoolConfig, TransactionStatus};
use pgpipe_testkit::{AuthRole, TestDatabase};
use tokio::time::Instant;

/// The database URL for the trusted role with extra query parameters.
fn url(db: &TestDatabase, params: &str) -> String {
    let base = db.url(AuthRole::Trust);
    let sep = if base.contains('?') { '&' } else { '?' };
    format!("{base}{sep}{params}")
}

fn config(db: &TestDatabase) -> pgpipe::Config {
    pgpipe::Config::parse(&db.url(AuthRole::Trust)).unwrap()
}

async fn observer(db: &TestDatabase) -> Client {
    pgpipe::connect(&db.superuser_url()).await.unwrap()
}

/// Client backends connected to the test's database, the observer included.
async fn backends(observer: &Client, db: &TestDatabase) -> i64 {
    observer
        .query_one(
            "SELECT count(*) FROM pg_stat_activity WHERE datname = $1 AND backend_type = 'client backend'",
            (db.name(),),
        )
        .await
        .unwrap()
        .get(0)
}

/// Polls `cond` every 10 ms until it holds; panics after 10 s.
async fn eventually(what: &str, mut cond: impl FnMut() -> bool) {
    let give_up = Instant::now() + Duration::from_secs(10);
    while !cond() {
        assert!(Instant::now() < give_up, "timed out waiting for: {what}");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// A small xorshift generator: random cancellation points without a
/// dependency.
struct Rng(u64);

impl Rng {
    fn new(seed: u64) -> Rng {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % n
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn five_hundred_tasks_over_eight_connections() {
    bounded(async {
        let db = database("pool_load");
        let pool = Pool::connect(&url(&db, "pool_max_size=8")).await.unwrap();
        let observer = observer(&db).await;

        let mut tasks = Vec::new();
        for i in 0..500i32 {
            let pool = pool.clone();
            tasks.push(tokio::spawn(async move {
                match i % 3 {
                    // A single statement on a shared connection.
                    0 => {
                        let row = pool.query_one("SELECT $1::int4 * 2", (i,)).await.unwrap();
                        assert_eq!(row.get::<i32, _>(0), i * 2);
                    }
                    // A checkout.
                    1 => {
                        let conn = pool.get().await.unwrap();
                        let row = conn
                            .query_one("SELECT $1::int4 + 1, pg_sleep(0.001)::text", (i,))
                            .await
                            .unwrap();
                        assert_eq!(row.get::<i32, _>(0), i + 1);
                    }
                    // A transaction.
                    _ => {
                        let tx = pool.transaction().await.unwrap();
                        let row = tx
                            .query_one("SELECT $1::text", (format!("t{i}"),))
                            .await
                            .unwrap();
                        assert_eq!(row.get::<&str, _>(0), format!("t{i}"));
                        assert_eq!(tx.transaction_status(), TransactionStatus::InTransaction);
                        tx.commit().await.unwrap();
                    }
                }
            }));
        }
        let mut max_backends = 0;
        let mut samples = 0;
        while tasks.iter().any(|t| !t.is_finished()) || samples < 3 {
            max_backends = max_backends.max(backends(&observer, &db).await);
            assert!(pool.stats().size <= 8, "{:?}", pool.stats());
            samples += 1;
            tokio::time::sleep(Duration::from_millis(2)).await;
        }
        for t in tasks {
            t.await.unwrap();
        }
        assert!(
            max_backends <= 9,
            "{max_backends} backends (8 pooled + observer at most)"
        );
        let stats = pool.stats();
        assert!(
            stats.size <= 8 && stats.created <= 8 + stats.closed_broken,
            "{stats:?}"
        );
        assert_eq!(stats.in_use, 0, "{stats:?}");
        assert!(stats.acquire_time.total() >= 333, "{stats:?}");
        eprintln!("{samples} samples, max {max_backends} backends; {stats:?}");
    })
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_exhausted_pool_times_out_saying_so() {
    bounded(async {
        let db = database("pool_exhausted");
        let pool = Pool::connect(&url(&db, "pool_max_size=2&pool_acquire_timeout=200"))
            .await
            .unwrap();
        let a = pool.get().await.unwrap();
        let b = pool.get().await.unwrap();
        let start = Instant::now();
        let err = pool.get().await.unwrap_err();
        let waited = start.elapsed();
        assert_eq!(err.kind(), ErrorKind::Timeout, "{err}");
        assert!(err.is_timeout());
        let msg = err.to_string();
        assert!(msg.contains("exhausted") && msg.contains('2'), "{msg}");
        assert!(waited >= Duration::from_millis(200), "{waited:?}");
        assert!(waited < Duration::from_secs(10), "{waited:?}");
        assert_eq!(pool.stats().acquire_failures, 1);

        // A slot that frees up is taken by the waiter.
        let waiter = tokio::spawn({
            let pool = pool.clone();
            async move { pool.get().await.map(|c| c.backend_pid()) }
        });
        let pid = a.backend_pid();
        drop(a);
        assert_eq!(waiter.await.unwrap().unwrap(), pid);
        drop(b);
    })
    .await
}

/// The four constructors (and the two old names kept for compatibility):
/// all give a working pool; the `connect_lazy` ones open nothing, so only
/// the eager ones notice an address where no server listens.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[allow(deprecated)]
async fn every_constructor_gives_a_pool_and_only_eager_ones_connect() {
    bounded(async {
        let db = database("pool_constructors");
        let pools = [
            Pool::connect(&url(&db, "")).await.unwrap(),
            Pool::connect_with_config(config(&db), PoolConfig::new())
                .await
                .unwrap(),
            Pool::connect_lazy(&url(&db, "")).unwrap(),
            Pool::connect_lazy_with_config(config(&db), PoolConfig::new()).unwrap(),
            Pool::connect_with(config(&db), PoolConfig::new())
                .await
                .unwrap(),
            Pool::new(config(&db), PoolConfig::new()).unwrap(),
        ];
        for (i, pool) in pools.iter().enumerate() {
            let eager = matches!(i, 0 | 1 | 4);
            // An eager pool kept the connection it opened; a lazy one has none yet.
            assert_eq!(pool.stats().size > 0, eager, "pool {i}: {:?}", pool.stats());
            let one: i32 = pool.query_one("SELECT 1", ()).await.unwrap().get(0);
            assert_eq!(one, 1, "pool {i}");
            pool.close();
        }

        // Port 1 on the loopback: nothing listens there.
        let dead = "postgres://app@127.0.0.1:1/app?connect_timeout=5&pool_acquire_timeout=5000";
        let dead_config =
            || pgpipe::Config::parse("postgres://app@127.0.0.1:1/app?connect_timeout=5").unwrap();
        assert!(Pool::connect(dead).await.is_err());
        assert!(Pool::connect_with_config(dead_config(), PoolConfig::new())
            .await
            .is_err());
        let lazy = [
            Pool::connect_lazy(dead).unwrap(),
            Pool::connect_lazy_with_config(dead_config(), PoolConfig::new()).unwrap(),
        ];
        for pool in lazy {
            assert_eq!(pool.stats().size, 0, "{:?}", pool.stats());
            pool.close();
        }
    })
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn killed_backends_are_replaced() {
    bounded(async {
        let db = database("pool_kill");
        let pool = Pool::connect_with_config(
            config(&db),
            PoolConfig::new().max_size(4).shared_connections(1),
        )
        .await
        .unwrap();
        let observer = observer(&db).await;

        // Three idle connections and one shared one.
        let held = [pool.get().await.unwrap(), pool.get().await.unwrap(), pool.get().await.unwrap()];
        drop(held);
        for _ in 0..20 {
            pool.query("SELECT 1", ()).await.unwrap();
        }
        let p = pool.clone();
        eventually("the shared lane to open", move || p.stats().shared == 1).await;
        // A connection the pool has just opened may not show on the server
        // yet: wait until the server sees exactly the pool's connections
        // (and the observer), so that the kill below hits all of them.
        let give_up = Instant::now() + Duration::from_secs(10);
        let size = loop {
            let size = pool.stats().size;
            if backends(&observer, &db).await - 1 == size as i64 && pool.stats().size == size {
                break size;
            }
            assert!(Instant::now() < give_up, "the server never saw the pool's connections: {:?}", pool.stats());
            tokio::time::sleep(Duration::from_millis(10)).await;
        };
        assert!((3..=4).contains(&size), "{:?}", pool.stats());

        let killed = observer
            .query(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity \
                 WHERE datname = $1 AND backend_type = 'client backend' AND pid <> pg_backend_pid()",
                (db.name(),),
            )
            .await
            .unwrap();
        assert_eq!(killed.len(), size);
        let give_up = Instant::now() + Duration::from_secs(10);
        while backends(&observer, &db).await > 1 {
            assert!(Instant::now() < give_up, "the backends did not exit");
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        // The termination is complete on the server; give the drivers a
        // moment to read the server's goodbye (no assertion on timing).
        tokio::time::sleep(Duration::from_millis(100)).await;

        // Statements and checkouts started now succeed.
        for i in 0..10i32 {
            let row = pool.query_one("SELECT $1::int4", (i,)).await.unwrap();
            assert_eq!(row.get::<i32, _>(0), i);
        }
        let conns = [pool.get().await.unwrap(), pool.get().await.unwrap()];
        for c in &conns {
            c.query_one("SELECT 1", ()).await.unwrap();
        }
        drop(conns);
        let stats = pool.stats();
        assert!(stats.closed_broken >= 3, "{stats:?}");
        assert!(stats.size <= 4, "{stats:?}");
    })
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn returned_transactions_are_rolled_back() {
    bounded(async {
        let db = database("pool_reset");
        // One connection, so every checkout gets the same one back.
        let pool = Pool::connect(&url(&db, "pool_max_size=1")).await.unwrap();
        let exists = "SELECT count(*) FROM pg_class WHERE relname = $1 AND relpersistence = 't'";

        let conn = pool.get().await.unwrap();
        let pid = conn.backend_pid();
        conn.batch_execute("BEGIN; CREATE TEMP TABLE left_open (x int)")
            .await
            .unwrap();
        assert_eq!(conn.transaction_status(), TransactionStatus::InTransaction);
        drop(conn);

        let conn = pool.get().await.unwrap();
        assert_eq!(conn.backend_pid(), pid);
        assert_eq!(conn.transaction_status(), TransactionStatus::Idle);
        let n: i64 = conn.query_one(exists, ("left_open",)).await.unwrap().get(0);
        assert_eq!(n, 0);

        conn.batch_execute("BEGIN; CREATE TEMP TABLE left_failed (x int)")
            .await
            .unwrap();
        conn.execute("SELECT 1 / 0", ()).await.unwrap_err();
        assert_eq!(conn.transaction_status(), TransactionStatus::Failed);
        drop(conn);

        let conn = pool.get().await.unwrap();
        assert_eq!(conn.backend_pid(), pid);
        assert_eq!(conn.transaction_status(), TransactionStatus::Idle);
        let n: i64 = conn
            .query_one(exists, ("left_failed",))
            .await
            .unwrap()
            .get(0);
        assert_eq!(n, 0);
        drop(conn);

        // A pool transaction dropped without COMMIT.
        let tx = pool.transaction().await.unwrap();
        tx.batch_execute("CREATE TEMP TABLE never_committed (x int)")
            .await
            .unwrap();
        drop(tx);

        // A transaction opened by a request still in flight when the guard
        // was dropped (its future was cancelled).
        let conn = pool.get().await.unwrap();
        let cancelled = tokio::time::timeout(
            Duration::from_millis(20),
            conn.batch_execute("BEGIN; CREATE TEMP TABLE in_flight (x int); SELECT pg_sleep(0.3)"),
        )
        .await;
        assert!(cancelled.is_err(), "the statement should still be running");
        drop(conn);

        let conn = pool.get().await.unwrap();
        assert_eq!(conn.backend_pid(), pid);
        assert_eq!(conn.transaction_status(), TransactionStatus::Idle);
        for table in ["never_committed", "in_flight"] {
            let n: i64 = conn.query_one(exists, (table,)).await.unwrap().get(0);
            assert_eq!(n, 0, "{table}");
        }
        assert_eq!(pool.stats().closed_broken, 0);
    })
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ten_thousand_cancelled_acquires_leak_nothing() {
    bounded(async {
        let db = database("pool_cancel");
        const MAX: usize = 4;
        let pool = Pool::connect_with_config(
            config(&db),
            PoolConfig::new()
                .max_size(MAX)
                .shared_connections(0)
                .acquire_timeout(Duration::from_secs(5)),
        )
        .await
        .unwrap();
        let seed = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos() as u64)
            .unwrap_or(1);
        eprintln!("seed {seed}");

        let mut tasks = Vec::new();
        for t in 0..8u64 {
            let pool = pool.clone();
            tasks.push(tokio::spawn(async move {
                let mut rng = Rng::new(seed + t);
                let mut got = 0;
                for _ in 0..1250 {
                    let conn = match rng.below(3) {
                        0 => {
                            tokio::time::timeout(Duration::from_micros(rng.below(1500)), pool.get())
                                .await
                                .ok()
                        }
                        1 => poll_then_drop(pool.get(), rng.below(6)).await,
                        _ => {
                            tokio::select! {
                                c = pool.get() => Some(c),
                                _ = tokio::task::yield_now() => None,
                            }
                        }
                    };
                    if let Some(conn) = conn {
                        let conn = conn.unwrap();
                        got += 1;
                        // Sometimes drop it mid-query as well.
                        if rng.below(4) == 0 {
                            let _ =
                                poll_then_drop(conn.query_one("SELECT 1", ()), rng.below(4)).await;
                        }
                    }
                    assert!(pool.stats().size <= MAX);
                }
                got
            }));
        }
        let mut got = 0;
        for t in tasks {
            got += t.await.unwrap();
        }
        eprintln!("{got} of 10000 acquires completed; {:?}", pool.stats());

        let stats = pool.stats();
        assert!(stats.size <= MAX, "{stats:?}");
        assert_eq!(stats.in_use, 0, "{stats:?}");
        assert_eq!(stats.waiters, 0, "{stats:?}");
        // Every slot is free: max_size checkouts at once, without waiting
        // for a timeout.
        let all = tokio::time::timeout(Duration::from_secs(5), async {
            let mut all = Vec::new();
            for _ in 0..MAX {
                all.push(pool.get().await.unwrap());
            }
            all
        })
        .await
        .expect("a slot leaked");
        for c in &all {
            c.query_one("SELECT 1", ()).await.unwrap();
        }
        assert!(pool.stats().size <= MAX);
    })
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn min_idle_is_kept_and_old_connections_retire() {
    bounded(async {
        let db = database("pool_upkeep");

        // min_idle fills in the background.
        let pool =
            Pool::connect_lazy_with_config(config(&db), PoolConfig::new().max_size(5).min_idle(3))
                .unwrap();
        let p = pool.clone();
        eventually("min_idle connections", move || p.stats().idle >= 3).await;
        assert!(pool.stats().size <= 5);
        pool.close();

        // idle_timeout retires idle connections.
        let pool = Pool::connect_lazy_with_config(
            config(&db),
            PoolConfig::new()
                .max_size(4)
                .idle_timeout(Some(Duration::from_millis(200))),
        )
        .unwrap();
        let held = [
            pool.get().await.unwrap(),
            pool.get().await.unwrap(),
            pool.get().await.unwrap(),
        ];
        drop(held);
        let p = pool.clone();
        eventually("idle connections to retire", move || {
            let s = p.stats();
            s.closed_idle >= 3 && s.size == 0
        })
        .await;

        // ... but keeps min_idle.
        let pool = Pool::connect_lazy_with_config(
            config(&db),
            PoolConfig::new()
                .max_size(4)
                .min_idle(1)
                .idle_timeout(Some(Duration::from_millis(200))),
        )
        .unwrap();
        let held = [pool.get().await.unwrap(), pool.get().await.unwrap()];
        drop(held);
        let p = pool.clone();
        eventually("surplus idle connections to retire", move || {
            p.stats().closed_idle >= 1
        })
        .await;
        assert!(pool.stats().idle >= 1, "{:?}", pool.stats());

        // max_lifetime retires idle connections, and checked-out ones on
        // their return.
        let pool = Pool::connect_lazy_with_config(
            config(&db),
            PoolConfig::new()
                .max_size(4)
                .max_lifetime(Some(Duration::from_millis(200))),
        )
        .unwrap();
        let held = pool.get().await.unwrap();
        drop(pool.get().await.unwrap());
        let p = pool.clone();
        eventually("an old idle connection to retire", move || {
            p.stats().closed_lifetime >= 1
        })
        .await;
        let other = pool.get().await.unwrap();
        tokio::time::sleep(Duration::from_millis(250)).await;
        drop(held);
        drop(other);
        let p = pool.clone();
        eventually("old returned connections to retire", move || {
            let s = p.stats();
            s.closed_lifetime >= 3 && s.size == 0
        })
        .await;
    })
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn close_refuses_acquires_and_closes_returned_connections() {
    bounded(async {
        let db = database("pool_close");
        let pool = Pool::connect(&url(&db, "pool_max_size=3")).await.unwrap();
        let held = pool.get().await.unwrap();
        let waiter = tokio::spawn({
            let pool = pool.clone();
            async move {
                let _a = pool.get().await?;
                let _b = pool.get().await?;
                pool.get().await.map(drop)
            }
        });
        let p = pool.clone();
        eventually("a waiter", move || p.stats().waiters == 1).await;
        pool.close();
        assert!(pool.is_closed());
        let err = waiter.await.unwrap().unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Closed, "{err}");
        let err = pool.get().await.unwrap_err();
        assert!(err.is_closed(), "{err}");
        assert!(pool.query("SELECT 1", ()).await.unwrap_err().is_closed());
        // Still usable until returned, then closed.
        held.query_one("SELECT 1", ()).await.unwrap();
        let pid = held.backend_pid();
        drop(held);
        let observer = common::connect(&db).await;
        common::backend_gone(&observer, pid, "the returned connection's backend to end").await;
        let stats = pool.stats();
        assert_eq!(stats.size, 0, "{stats:?}");
        assert!(stats.closed_pool >= 1, "{stats:?}");
    })
    .await
}

#[test]
fn pool_url_parameters_parse() {
    let (config, pool) = PoolConfig::from_url(
        "postgres://app@db.example/orders?pool_max_size=20&sslmode=disable&pool_min_idle=2\
         &pool_acquire_timeout=1500&pool_idle_timeout=30&pool_max_lifetime=0\
         &pool_health_check_after=250&pool_shared_connections=3",
    )
    .unwrap();
    assert_eq!(config.get_dbname(), Some("orders"));
    assert_eq!(pool.get_max_size(), 20);
    assert_eq!(pool.get_min_idle(), 2);
    assert_eq!(pool.get_acquire_timeout(), Duration::from_millis(1500));
    assert_eq!(pool.get_idle_timeout(), Some(Duration::from_secs(30)));
    assert_eq!(pool.get_max_lifetime(), None);
    assert_eq!(
        pool.get_health_check_after(),
        Some(Duration::from_millis(250))
    );
    assert_eq!(pool.get_shared_connections(), 3);

    for (bad, name) in [
        ("pool_max_size=many", "pool_max_size"),
        ("pool_acquire_timeout=-1", "pool_acquire_timeout"),
        ("pool_idle_timeout=1.5", "pool_idle_timeout"),
        ("pool_maxsize=3", "pool_maxsize"),
        ("pool_max_size=0", "pool_max_size"),
        ("pool_max_size=2&pool_min_idle=5", "pool_min_idle"),
    ] {
        let err = PoolConfig::from_url(&format!("postgres://h/db?{bad}")).unwrap_err();
        assert_eq!(err.part(), name, "{bad}: {err}");
        assert!(err.to_string().contains(name), "{bad}: {err}");
    }
}

#[tokio::test]
async fn an_invalid_pool_parameter_is_an_error_naming_it() {
    let err = Pool::connect("postgres://localhost/db?pool_idle_timeout=soon")
        .await
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Config);
    assert!(err.to_string().contains("pool_idle_timeout"), "{err}");
}

async fn double(db: &impl GenericClient, x: i32) -> Result<i32, pgpipe::Error> {
    Ok(db.query_one("SELECT $1::int4 * 2", (x,)).await?.get(0))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn generic_client_is_implemented_by_client_and_pool() {
    bounded(async {
        let db = database("pool_provider");
        let client = common::connect(&db).await;
        let pool = Pool::connect(&db.url(AuthRole::Trust)).await.unwrap();
        assert_eq!(double(&client, 2).await.unwrap(), 4);
        assert_eq!(double(&pool, 3).await.unwrap(), 6);
        assert_eq!(pool.stats().in_use, 0);
        client.close();
        assert!(double(&client, 1).await.unwrap_err().is_closed());
    })
    .await
}

/// A statement that would queue behind another on the only shared backend
/// makes the lane open a second one: two callers of a slow statement must
/// not be serialized on one backend while the lane may still grow.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_concurrent_statements_get_two_backends() {
    bounded(async {
        let db = database("pool_lane_pair");
        let pool = Pool::connect_with_config(
            config(&db),
            PoolConfig::new().max_size(4).shared_connections(2),
        )
        .await
        .unwrap();
        let sql = "SELECT pg_backend_pid() FROM pg_sleep(0.02)";
        let pair = || async {
            let (a, b) = tokio::join!(pool.query_one(sql, ()), pool.query_one(sql, ()));
            (a.unwrap().get::<i32, _>(0), b.unwrap().get::<i32, _>(0))
        };
        // Growth happens in the background after the first overlap.
        for _ in 0..100 {
            pair().await;
            if pool.stats().shared == 2 {
                break;
            }
        }
        assert_eq!(pool.stats().shared, 2, "{:?}", pool.stats());
        let (a, b) = pair().await;
        assert_ne!(a, b, "two concurrent statements ran on one backend");
    })
    .await
}

/// A burst of statements on a cold pool waits for the shared lane's first
/// connection instead of opening checkouts of its own, which would then
/// sit idle until `idle_timeout` (per host of a cluster, that doubled the
/// connections held).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_burst_on_a_cold_pool_opens_one_connection() {
    bounded(async {
        let db = database("pool_cold_burst");
        let pool = Pool::connect_lazy_with_config(
            config(&db),
            PoolConfig::new().max_size(4).shared_connections(1),
        )
        .unwrap();
        let observer = observer(&db).await;
        let burst: Vec<_> = (0..32)
            .map(|i| {
                let pool = pool.clone();
                tokio::spawn(async move {
                    let row = pool.query_one("SELECT $1::int4", (i,)).await.unwrap();
                    assert_eq!(row.get::<i32, _>(0), i);
                })
            })
            .collect();
        for task in burst {
            task.await.unwrap();
        }
        let stats = pool.stats();
        assert_eq!((stats.size, stats.shared), (1, 1), "{stats:?}");
        // The server agrees (the observer is the other backend).
        assert_eq!(backends(&observer, &db).await, 2, "{stats:?}");
    })
    .await
}

/// Polls `futures` together in this task (as `try_join_all` does, which
/// issues them all in its first poll), says so on `issued` after that
/// first poll, and returns their outputs in order.
async fn issued_together<F: std::future::Future>(
    futures: Vec<F>,
    issued: tokio::sync::oneshot::Sender<()>,
) -> Vec<F::Output> {
    let mut futures: Vec<_> = futures.into_iter().map(Box::pin).collect();
    let mut outputs: Vec<Option<F::Output>> = futures.iter().map(|_| None).collect();
    let mut issued = Some(issued);
    std::future::poll_fn(|cx| {
        for (f, out) in futures.iter_mut().zip(outputs.iter_mut()) {
            if out.is_none() {
                if let std::task::Poll::Ready(v) = f.as_mut().poll(cx) {
                    *out = Some(v);
                }
            }
        }
        if let Some(tx) = issued.take() {
            let _ = tx.send(());
        }
        if outputs.iter().all(Option::is_some) {
            std::task::Poll::Ready(())
        } else {
            std::task::Poll::Pending
        }
    })
    .await;
    outputs.into_iter().flatten().collect()
}

/// At saturation a task's statements issued together run on one shared
/// connection, as a checkout would run them: spread over the lane, a
/// request waited for the slowest of every connection's pipeline (issue
/// 30's unfair tails). Every lane connection is held busy by a statement
/// blocked on an advisory lock, four callers then issue 20 statements each,
/// and each caller's answers must all come from one backend.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_callers_statements_stay_on_one_shared_connection_when_all_are_busy() {
    bounded(async {
        let db = database("pool_lane_affinity");
        let pool = Pool::connect_with_config(
            config(&db),
            PoolConfig::new().max_size(8).shared_connections(4),
        )
        .await
        .unwrap();
        common::lane::grow_lane(&pool, 4).await;

        let observer = observer(&db).await;
        observer
            .execute("SELECT pg_advisory_lock(4242)", ())
            .await
            .unwrap();
        let waiting = || async {
            observer
                .query_one(
                    "SELECT count(DISTINCT pid) FROM pg_locks \
                     WHERE locktype = 'advisory' AND objid = 4242 AND NOT granted",
                    (),
                )
                .await
                .unwrap()
                .get::<i64, _>(0)
        };
        // One blocked statement per lane connection, each from its own
        // task, added one at a time: each goes to an idle connection.
        let mut blockers = Vec::new();
        for k in 1..=4 {
            let pool = pool.clone();
            blockers.push(tokio::spawn(async move {
                pool.execute("SELECT pg_advisory_xact_lock_shared(4242)", ())
                    .await
            }));
            let give_up = Instant::now() + Duration::from_secs(60);
            while waiting().await < k {
                assert!(Instant::now() < give_up, "blocker {k} never waited");
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
        }
        assert_eq!(waiting().await, 4, "every lane connection is busy");

        let mut callers = Vec::new();
        let mut issued = Vec::new();
        for _ in 0..4 {
            let pool = pool.clone();
            let (tx, rx) = tokio::sync::oneshot::channel();
            issued.push(rx);
            callers.push(tokio::spawn(async move {
                let statements = (0..20)
                    .map(|_| pool.query_one("SELECT pg_backend_pid()", ()))
                    .collect();
                issued_together(statements, tx).await
            }));
        }
        for rx in issued {
            rx.await.unwrap();
        }
        observer
            .execute("SELECT pg_advisory_unlock(4242)", ())
            .await
            .unwrap();
        for b in blockers {
            b.await.unwrap().unwrap();
        }
        for (i, c) in callers.into_iter().enumerate() {
            let mut pids: Vec<i32> = c
                .await
                .unwrap()
                .into_iter()
                .map(|r| r.unwrap().get::<i32, _>(0))
                .collect();
            assert_eq!(pids.len(), 20);
            pids.sort_unstable();
            pids.dedup();
            assert_eq!(
                pids.len(),
                1,
                "caller {i}'s statements ran on backends {pids:?}"
            );
        }
    })
    .await
}
