//! The shared lane places a statement where it can expect the shortest
//! wait, not only where the fewest statements are in flight (issue 30,
//! fair tails): a lane connection that has not answered for a long time
//! gets no new work while another answers.

mod common;

use std::time::Duration;

use common::{bounded, database, eventually};
use pgpipe::{Pool, PoolConfig};
use pgpipe_testkit::AuthRole;

/// One lane connection is held by a statement blocked on an advisory
/// lock for seconds. Placed by statements in flight alone, the second of
/// four callers issuing five statements together found that connection
/// the least loaded (one in flight against five) and waited behind the
/// lock. Every caller must be answered while the lock is still held, by
/// the other backend.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stalled_lane_connection_gets_no_new_statements() {
    bounded(async {
        let db = database("pool_pace_stall");
        let config = pgpipe::Config::parse(&db.url(AuthRole::Trust)).unwrap();
        let pool =
            Pool::connect_with_config(config, PoolConfig::new().max_size(4).shared_connections(2))
                .await
                .unwrap();
        common::lane::grow_lane(&pool, 2).await;

        let observer = pgpipe::connect(&db.superuser_url()).await.unwrap();
        observer
            .execute("SELECT pg_advisory_lock(4243)", ())
            .await
            .unwrap();
        let blocker = {
            let pool = pool.clone();
            tokio::spawn(async move {
                pool.execute("SELECT pg_advisory_xact_lock_shared(4243)", ())
                    .await
            })
        };
        // Its backend, once it has waited on the lock for 3 seconds: long
        // against any pace the other connection shows on a loaded machine.
        let stalled_pid = std::sync::Arc::new(std::sync::atomic::AtomicI32::new(0));
        eventually("the blocker to wait on the lock for 3 s", || {
            let observer = &observer;
            let stalled_pid = stalled_pid.clone();
            async move {
                let row = observer
                    .query_opt(
                        "SELECT a.pid FROM pg_stat_activity a JOIN pg_locks l ON l.pid = a.pid \
                         WHERE l.locktype = 'advisory' AND l.objid = 4243 AND NOT l.granted \
                           AND now() - a.state_change >= interval '3 seconds'",
                        (),
                    )
                    .await
                    .unwrap();
                match row {
                    Some(row) => {
                        stalled_pid.store(row.get(0), std::sync::atomic::Ordering::Relaxed);
                        true
                    }
                    None => false,
                }
            }
        })
        .await;
        let stalled_pid = stalled_pid.load(std::sync::atomic::Ordering::Relaxed);

        let callers: Vec<_> = (0..4)
            .map(|_| {
                let pool = pool.clone();
                tokio::spawn(async move {
                    let sql = "SELECT pg_backend_pid()";
                    // Issued together, in the task's first poll.
                    let rows = tokio::join!(
                        pool.query_one(sql, ()),
                        pool.query_one(sql, ()),
                        pool.query_one(sql, ()),
                        pool.query_one(sql, ()),
                        pool.query_one(sql, ()),
                    );
                    [rows.0, rows.1, rows.2, rows.3, rows.4]
                        .map(|row| row.unwrap().get::<i32, _>(0))
                })
            })
            .collect();
        let mut pids = Vec::new();
        for (i, caller) in callers.into_iter().enumerate() {
            let answered = tokio::time::timeout(Duration::from_secs(30), caller)
                .await
                .unwrap_or_else(|_| {
                    panic!(
                        "caller {i} waited behind the stalled connection (backend {stalled_pid})"
                    )
                })
                .unwrap();
            pids.extend(answered);
        }
        assert_eq!(pids.len(), 20);
        assert!(
            !pids.contains(&stalled_pid),
            "statements went to the stalled backend {stalled_pid}: {pids:?}"
        );

        observer
            .execute("SELECT pg_advisory_unlock(4243)", ())
            .await
            .unwrap();
        blocker.await.unwrap().unwrap();
        // Nothing was retired on the way.
        assert_eq!(pool.stats().shared, 2, "{:?}", pool.stats());
    })
    .await
}
