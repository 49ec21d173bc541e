//! Server faults under load: restarts (fast and immediate) while 256 tasks
//! use the pool, backends terminated under checked-out, shared and idle
//! connections, a server that stays down, and the 57P01 / 57P03 errors.
//!
//! Invariants: every caller gets its own answer or an error (never another
//! caller's answer), errors say what happened, the pool recovers within a
//! bound once the server is back, and no wait outlives its bound.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use pgpipe::{ErrorKind, Pool, SqlState};
use pgpipe_testkit::{AuthRole, Cluster};
use tokio::time::Instant;

const BOUND: Duration = Duration::from_secs(150);
/// How long the pool may take to serve again once the server is back.
const RECOVERY_BOUND: Duration = Duration::from_secs(30);

fn pool_url(cluster: &Cluster, params: &str) -> String {
    format!("{}?{params}", cluster.url(AuthRole::Trust, "postgres"))
}

fn expected_failure(e: &pgpipe::Error) -> bool {
    matches!(
        e.kind(),
        ErrorKind::Closed | ErrorKind::Io | ErrorKind::Connect | ErrorKind::Timeout
    ) || matches!(
        e.code(),
        Some(c) if *c == SqlState::ADMIN_SHUTDOWN
            || *c == SqlState::CRASH_SHUTDOWN
            || *c == SqlState::CANNOT_CONNECT_NOW
    )
}

#[derive(Default)]
struct Tally {
    ok: AtomicU64,
    failed: AtomicU64,
}

/// 256 tasks, each asking for its own numbers through the pool (shared
/// lane and checkouts) until `stop`.
fn load(
    pool: &Pool,
    tally: &Arc<Tally>,
    stop: &Arc<AtomicBool>,
) -> Vec<tokio::task::JoinHandle<()>> {
    (0..256i64)
        .map(|t| {
            let (pool, tally, stop) = (pool.clone(), tally.clone(), stop.clone());
            tokio::spawn(async move {
                let mut i = 0i64;
                while !stop.load(Ordering::Relaxed) {
                    i += 1;
                    let id = t * 1_000_000 + i;
                    let r = if i % 3 == 0 {
                        match pool.get().await {
                            Ok(c) => c.query_one("SELECT $1::int8, $1::int8 * 2", (id,)).await,
                            Err(e) => Err(e),
                        }
                    } else {
                        pool.query_one("SELECT $1::int8, $1::int8 * 2", (id,)).await
                    };
                    match r {
                        Ok(row) => {
                            assert_eq!(row.get::<i64, _>(0), id, "another caller's answer");
                            assert_eq!(row.get::<i64, _>(1), id * 2, "another caller's answer");
                            tally.ok.fetch_add(1, Ordering::Relaxed);
                        }
                        Err(e) => {
                            assert!(expected_failure(&e), "unexpected error: {e:?}");
                            tally.failed.fetch_add(1, Ordering::Relaxed);
                            tokio::time::sleep(Duration::from_millis(20)).await;
                        }
                    }
                }
            })
        })
        .collect()
}

/// Waits until the pool answers correctly again; returns how long it took.
async fn recovery(pool: &Pool) -> Duration {
    let start = Instant::now();
    loop {
        if let Ok(row) = pool.query_one("SELECT 42::int4", ()).await {
            assert_eq!(row.get::<i32, _>(0), 42);
            return start.elapsed();
        }
        assert!(
            start.elapsed() < RECOVERY_BOUND,
            "the pool did not recover: {:?}",
            pool.stats()
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn restarts_under_256_pool_tasks_never_give_a_wrong_answer() {
    tokio::time::timeout(BOUND, async {
        let cluster = Arc::new(Cluster::start().expect("cluster"));
        let pool = Pool::connect(&pool_url(
            &cluster,
            "pool_max_size=16&pool_acquire_timeout=10000&query_timeout=10000&connect_timeout=5",
        ))
        .await
        .unwrap();
        for (mode, immediate) in [("fast", false), ("immediate", true)] {
            let tally = Arc::new(Tally::default());
            let stop = Arc::new(AtomicBool::new(false));
            let tasks = load(&pool, &tally, &stop);
            while tally.ok.load(Ordering::Relaxed) < 2_000 {
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
            let c = cluster.clone();
            tokio::task::spawn_blocking(move || {
                if immediate {
                    c.restart_immediate()
                } else {
                    c.restart()
                }
            })
            .await
            .unwrap()
            .expect("restart");
            let back = Instant::now();
            let took = recovery(&pool).await;
            let ok_at_recovery = tally.ok.load(Ordering::Relaxed);
            // The load goes on working after the restart.
            while tally.ok.load(Ordering::Relaxed) < ok_at_recovery + 2_000 {
                assert!(back.elapsed() < RECOVERY_BOUND * 2, "the load did not resume");
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
            stop.store(true, Ordering::Relaxed);
            for t in tasks {
                t.await.expect("a task saw a wrong answer or an unexpected error");
            }
            let stats = pool.stats();
            println!(
                "restart -m {mode}: {} ok, {} failed, pool serving again {took:?} after the server was back; {stats:?}",
                tally.ok.load(Ordering::Relaxed),
                tally.failed.load(Ordering::Relaxed),
            );
            assert!(stats.size <= stats.max_size);
        }
    })
    .await
    .expect("restart test exceeded its bound");
}

/// Terminates `pid` from a separate superuser session.
async fn terminate(cluster: &Cluster, pid: i32) {
    let admin = pgpipe::connect(&cluster.superuser_url("postgres"))
        .await
        .unwrap();
    let done: bool = admin
        .query_one("SELECT pg_terminate_backend($1)", (pid,))
        .await
        .unwrap()
        .get(0);
    assert!(done, "backend {pid} not found");
}

/// The error of a statement on a terminated backend: the server's 57P01
/// when its FATAL message was read first, else the closed connection.
fn assert_terminated(e: &pgpipe::Error) {
    assert!(
        e.code() == Some(&SqlState::ADMIN_SHUTDOWN)
            || matches!(e.kind(), ErrorKind::Closed | ErrorKind::Io),
        "{e:?}"
    );
}

async fn wait_closed(is_closed: impl Fn() -> bool) {
    let start = Instant::now();
    while !is_closed() {
        assert!(
            start.elapsed() < RECOVERY_BOUND,
            "the client never saw its backend go"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn terminated_backends_under_checked_out_shared_and_idle_connections() {
    tokio::time::timeout(BOUND, async {
        let cluster = Cluster::start().expect("cluster");
        let pool = Pool::connect(&pool_url(
            &cluster,
            // Every checkout pings first: an idle connection whose backend was
            // terminated is then caught whether or not its driver has seen the
            // EOF yet (a fixed sleep could not promise that on a loaded machine).
            "pool_max_size=4&pool_shared_connections=1&pool_acquire_timeout=10000\
             &pool_health_check_after=0",
        ))
        .await
        .unwrap();

        // Checked out: the holder's next statement fails, says why, and the
        // connection is not handed out again.
        let held = pool.get().await.unwrap();
        let pid = held.backend_pid();
        terminate(&cluster, pid).await;
        wait_closed(|| held.is_closed()).await;
        let err = held.query_one("SELECT 1", ()).await.unwrap_err();
        assert_terminated(&err);
        drop(held);
        for _ in 0..8 {
            let c = pool.get().await.unwrap();
            assert_ne!(
                c.backend_pid(),
                pid,
                "a terminated connection was handed out"
            );
            assert_eq!(
                c.query_one("SELECT 1::int4", ())
                    .await
                    .unwrap()
                    .get::<i32, _>(0),
                1
            );
        }

        // Shared lane: the statements after the termination find a new
        // connection (at most the first fails).
        let lane_pid: i32 = pool
            .query_one("SELECT pg_backend_pid()", ())
            .await
            .unwrap()
            .get(0);
        terminate(&cluster, lane_pid).await;
        let mut failures = 0;
        let mut pids = Vec::new();
        for i in 0..20i32 {
            match pool
                .query_one("SELECT $1::int4, pg_backend_pid()", (i,))
                .await
            {
                Ok(row) => {
                    assert_eq!(row.get::<i32, _>(0), i);
                    pids.push(row.get::<i32, _>(1));
                }
                Err(e) => {
                    assert_terminated(&e);
                    failures += 1;
                }
            }
        }
        assert!(
            failures <= 1,
            "{failures} statements failed after one termination"
        );
        assert!(!pids.contains(&lane_pid));

        // Idle: the pool notices (closed client, or the check before
        // handing out) and never hands it out.
        let idle_pid = {
            let c = pool.get().await.unwrap();
            c.backend_pid()
        };
        terminate(&cluster, idle_pid).await;
        for _ in 0..8 {
            let c = pool.get().await.unwrap();
            assert_ne!(c.backend_pid(), idle_pid);
            assert_eq!(
                c.query_one("SELECT 2::int4", ())
                    .await
                    .unwrap()
                    .get::<i32, _>(0),
                2
            );
        }
        let stats = pool.stats();
        assert!(stats.closed_broken >= 2, "{stats:?}");
    })
    .await
    .expect("termination test exceeded its bound");
}

/// A single client sees 57P01 with the server's message.
#[tokio::test]
async fn a_terminated_session_reports_admin_shutdown() {
    tokio::time::timeout(BOUND, async {
        let cluster = Cluster::start().expect("cluster");
        let client = pgpipe::connect(&cluster.url(AuthRole::Trust, "postgres"))
            .await
            .unwrap();
        // Busy when terminated: the statement's own error is 57P01.
        let busy = {
            let c = client.clone();
            tokio::spawn(async move { c.execute("SELECT pg_sleep(30)", ()).await })
        };
        // Terminate only once the statement runs (bounded wait on the
        // server's own view, not a fixed delay).
        let admin = pgpipe::connect(&cluster.superuser_url("postgres"))
            .await
            .unwrap();
        let started = tokio::time::Instant::now();
        while admin
            .query_opt(
                "SELECT 1 FROM pg_stat_activity WHERE pid = $1 AND state = 'active' \
                 AND query LIKE 'SELECT pg_sleep%'",
                (client.backend_pid(),),
            )
            .await
            .unwrap()
            .is_none()
        {
            assert!(
                started.elapsed() < Duration::from_secs(20),
                "pg_sleep never started"
            );
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        terminate(&cluster, client.backend_pid()).await;
        let err = busy.await.unwrap().unwrap_err();
        assert_eq!(err.code(), Some(&SqlState::ADMIN_SHUTDOWN), "{err:?}");
        assert!(err.to_string().contains("terminat"), "{err}");
        wait_closed(|| client.is_closed()).await;
        assert!(client
            .query_one("SELECT 1", ())
            .await
            .unwrap_err()
            .is_closed());
    })
    .await
    .expect("57P01 test exceeded its bound");
}

/// A server that stays down: acquire fails within acquire_timeout with a
/// clear error; once it is back the same pool serves again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_stays_down_fails_acquire_within_its_timeout() {
    tokio::time::timeout(BOUND, async {
        let cluster = Arc::new(Cluster::start().expect("cluster"));
        let pool = Pool::connect(&pool_url(
            &cluster,
            "pool_max_size=4&pool_acquire_timeout=1500&connect_timeout=1",
        ))
        .await
        .unwrap();
        let c = cluster.clone();
        tokio::task::spawn_blocking(move || c.stop())
            .await
            .unwrap()
            .unwrap();
        for _ in 0..3 {
            let started = Instant::now();
            let err = match pool.get().await {
                Ok(_) => panic!("a connection from a stopped server"),
                Err(e) => e,
            };
            // acquire_timeout is 1.5 s; the bound allows a loaded machine.
            assert!(
                started.elapsed() < Duration::from_secs(15),
                "{:?}",
                started.elapsed()
            );
            assert!(
                matches!(
                    err.kind(),
                    ErrorKind::Timeout | ErrorKind::Connect | ErrorKind::Closed
                ),
                "{err:?}"
            );
            let text = err.to_string();
            assert!(
                text.contains("refused") || text.contains("acquire") || text.contains("connect"),
                "unclear error: {text}"
            );
            let err = pool.query_one("SELECT 1", ()).await.unwrap_err();
            assert!(expected_failure(&err), "{err:?}");
        }
        let c = cluster.clone();
        tokio::task::spawn_blocking(move || c.start_again())
            .await
            .unwrap()
            .unwrap();
        recovery(&pool).await;
    })
    .await
    .expect("server-down test exceeded its bound");
}

/// A server shutting down refuses new sessions with 57P03
/// (cannot_connect_now): connect and the pool report it with its code.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_shutting_down_refuses_new_sessions_with_57p03() {
    tokio::time::timeout(BOUND, async {
        let cluster = Arc::new(Cluster::start().expect("cluster"));
        let url = cluster.url(AuthRole::Trust, "postgres");
        // A session open through the smart shutdown keeps the server up.
        let keeper = pgpipe::connect(&url).await.unwrap();
        cluster.begin_smart_shutdown().unwrap();
        let start = Instant::now();
        let err = loop {
            match pgpipe::connect(&url).await {
                Ok(c) => {
                    drop(c);
                    assert!(
                        start.elapsed() < RECOVERY_BOUND,
                        "connections still accepted"
                    );
                    tokio::time::sleep(Duration::from_millis(20)).await;
                }
                Err(e) => break e,
            }
        };
        assert_eq!(err.code(), Some(&SqlState::CANNOT_CONNECT_NOW), "{err:?}");
        assert!(err.to_string().contains("shutting down"), "{err}");
        let pool = Pool::connect_lazy(&format!("{url}?pool_acquire_timeout=3000")).unwrap();
        let err = match pool.get().await {
            Ok(_) => panic!("a pool connection from a server shutting down"),
            Err(e) => e,
        };
        assert_eq!(err.code(), Some(&SqlState::CANNOT_CONNECT_NOW), "{err:?}");
        // The open session still works until it leaves.
        assert_eq!(
            keeper
                .query_one("SELECT 5::int4", ())
                .await
                .unwrap()
                .get::<i32, _>(0),
            5
        );
        drop(keeper);
        let c = cluster.clone();
        tokio::task::spawn_blocking(move || {
            c.stop()?;
            c.start_again()
        })
        .await
        .unwrap()
        .unwrap();
        let client = pgpipe::connect(&url).await.unwrap();
        assert_eq!(
            client
                .query_one("SELECT 6::int4", ())
                .await
                .unwrap()
                .get::<i32, _>(0),
            6
        );
    })
    .await
    .expect("57P03 test exceeded its bound");
}
