//! Failover with an invariant checker (Jepsen's rule: an I/O error or a
//! timeout during a commit is an unknown outcome, never a failure).
//!
//! 8 writers insert unique ids through a pool with
//! `target_session_attrs=read-write` over `primary,standby`, recording each
//! outcome as ok / failed / unknown. Mid-run the primary stops (fast) and the
//! standby is promoted. Afterwards the new primary must hold every ok id and
//! no failed id; unknown ids may go either way and are counted. Writers must
//! resume on the new primary within a bound.
//!
//! Read routing: `prefer-standby` reads land on the standby, and move to the
//! primary when the standby goes away.

mod common;

use std::collections::HashSet;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use common::invariants::{write, Outcome, Outcomes};
use pgpipe::Pool;
use pgpipe_testkit::Cluster;
use tokio::time::Instant;

const BOUND: Duration = Duration::from_secs(150);
const RESUME_BOUND: Duration = Duration::from_secs(30);
const WRITERS: i64 = 8;

fn hosts_url(a: &Cluster, b: &Cluster, params: &str) -> String {
    format!(
        "postgres://{}@127.0.0.1:{},127.0.0.1:{}/postgres?{params}",
        a.superuser(),
        a.port(),
        b.port()
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failover_loses_no_acknowledged_write_and_keeps_no_failed_one() {
    tokio::time::timeout(BOUND, async {
        let primary = Arc::new(Cluster::start().expect("primary"));
        let standby = Arc::new(primary.start_standby().expect("standby"));
        primary
            .execute("postgres", "CREATE TABLE ids (id int8 PRIMARY KEY)")
            .unwrap();
        let pool = Pool::connect(&hosts_url(
            &primary,
            &standby,
            "target_session_attrs=read-write&connect_timeout=2&query_timeout=5000\
             &pool_max_size=8&pool_acquire_timeout=5000",
        ))
        .await
        .unwrap();

        let outcomes = Arc::new(Mutex::new(Outcomes::default()));
        let ok_count = Arc::new(AtomicU64::new(0));
        let stop = Arc::new(AtomicBool::new(false));
        let writers: Vec<_> = (0..WRITERS)
            .map(|w| {
                let (pool, outcomes, ok_count, stop) = (
                    pool.clone(),
                    outcomes.clone(),
                    ok_count.clone(),
                    stop.clone(),
                );
                tokio::spawn(async move {
                    let mut i = 0;
                    while !stop.load(Ordering::Relaxed) {
                        i += 1;
                        let id = w * 10_000_000 + i;
                        let outcome = write(&pool, id).await;
                        let failed = outcome == Outcome::Failed;
                        if outcome == Outcome::Ok {
                            ok_count.fetch_add(1, Ordering::Relaxed);
                        }
                        outcomes.lock().unwrap().record(id, outcome);
                        if failed {
                            tokio::time::sleep(Duration::from_millis(20)).await;
                        }
                    }
                })
            })
            .collect();

        while ok_count.load(Ordering::Relaxed) < 500 {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        // Failover: the old primary goes away (a fast shutdown sends its
        // standby all of its WAL first), then the standby is promoted.
        let (p, s) = (primary.clone(), standby.clone());
        tokio::task::spawn_blocking(move || {
            p.stop()?;
            s.promote()
        })
        .await
        .unwrap()
        .expect("failover");
        let promoted = Instant::now();
        let ok_at_promotion = ok_count.load(Ordering::Relaxed);
        while ok_count.load(Ordering::Relaxed) < ok_at_promotion + 1 {
            assert!(
                promoted.elapsed() < RESUME_BOUND,
                "writers did not resume: {:?}",
                pool.stats()
            );
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        let resumed = promoted.elapsed();
        while ok_count.load(Ordering::Relaxed) < ok_at_promotion + 500 {
            assert!(
                promoted.elapsed() < RESUME_BOUND * 2,
                "writers stalled after resuming"
            );
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        stop.store(true, Ordering::Relaxed);
        for w in writers {
            w.await.unwrap();
        }

        // The checker reads the new primary.
        let checker = pgpipe::connect(&hosts_url(
            &standby,
            &standby,
            "target_session_attrs=read-write",
        ))
        .await
        .unwrap();
        let present: HashSet<i64> = checker
            .query("SELECT id FROM ids", ())
            .await
            .unwrap()
            .iter()
            .map(|r| r.get::<i64, _>(0))
            .collect();
        let o = outcomes.lock().unwrap();
        let verdict = o.check(&present);
        println!(
            "failover report: {} ok, {} failed, {} unknown ({} of them committed), \
             writers resumed {resumed:?} after the promotion; {} rows on the new primary",
            o.ok.len(),
            o.failed.len(),
            o.unknown.len(),
            verdict.unknown_committed,
            present.len()
        );
        verdict.assert_holds();
    })
    .await
    .expect("failover test exceeded its bound");
}

async fn reads_in_recovery(pool: &Pool) -> Result<bool, pgpipe::Error> {
    Ok(pool
        .query_one("SELECT pg_is_in_recovery()", ())
        .await?
        .get(0))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn prefer_standby_reads_land_on_the_standby_then_move_to_the_primary() {
    tokio::time::timeout(BOUND, async {
        let primary = Arc::new(Cluster::start().expect("primary"));
        let standby = Arc::new(primary.start_standby().expect("standby"));
        // Primary listed first: the attribute decides, not the order.
        let pool = Pool::connect(&hosts_url(
            &primary,
            &standby,
            "target_session_attrs=prefer-standby&connect_timeout=2&query_timeout=5000\
             &pool_max_size=4&pool_acquire_timeout=5000",
        ))
        .await
        .unwrap();
        for _ in 0..50 {
            assert!(
                reads_in_recovery(&pool).await.unwrap(),
                "a read went to the primary"
            );
            let c = pool.get().await.unwrap();
            let in_recovery: bool = c
                .query_one("SELECT pg_is_in_recovery()", ())
                .await
                .unwrap()
                .get(0);
            assert!(in_recovery);
        }

        let s = standby.clone();
        tokio::task::spawn_blocking(move || s.stop())
            .await
            .unwrap()
            .unwrap();
        // Reads fail over to the primary within the bound; every answer in
        // between is an error or a read from a server that is up.
        let start = Instant::now();
        let mut on_primary = 0;
        while on_primary < 20 {
            assert!(
                start.elapsed() < RESUME_BOUND,
                "reads did not move: {:?}",
                pool.stats()
            );
            match reads_in_recovery(&pool).await {
                Ok(false) => on_primary += 1,
                Ok(true) => panic!("a read from a stopped standby"),
                Err(e) => assert!(
                    e.is_closed()
                        || e.is_timeout()
                        || e.kind() == pgpipe::ErrorKind::Io
                        || e.kind() == pgpipe::ErrorKind::Connect
                        || e.is_db(),
                    "{e:?}"
                ),
            }
        }
        println!(
            "prefer-standby: reads moved to the primary {:?} after the standby stopped",
            start.elapsed()
        );
    })
    .await
    .expect("read routing test exceeded its bound");
}
