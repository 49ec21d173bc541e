//! Connections at fleet scale against real databases: one connection
//! budget across every shard's pool, idle shards shrinking to zero
//! connections (probes' sessions included), probes riding on the pools'
//! connections, and the statistics per host and shard matching what ran.

mod common;

use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use pgpipe::cluster::{Cluster, ClusterBuilder, Role};
use pgpipe::{Client, ErrorKind, PoolConfig};
use pgpipe_testkit::TestDatabase;

const PROBE_APP: &str = "pgpipe cluster probe";

fn shard_databases(n: usize) -> Vec<TestDatabase> {
    (0..n).map(|_| common::database("cluster_fleet")).collect()
}

fn host_url(db: &TestDatabase) -> String {
    let c = common::cluster();
    format!(
        "postgres://{}@127.0.0.1:{}/{}?connect_timeout=5&application_name=fleet_test",
        c.superuser(),
        c.port(),
        db.name()
    )
}

fn builder(dbs: &[TestDatabase]) -> ClusterBuilder {
    dbs.iter()
        .enumerate()
        .fold(Cluster::builder(), |b, (id, db)| {
            b.shard(id as u32, [host_url(db)])
        })
}

fn names(dbs: &[TestDatabase]) -> Vec<String> {
    dbs.iter().map(|d| d.name().to_owned()).collect()
}

/// Server connections to `dbs`: the pools' (`fleet_test`) and the probes'.
async fn server_connections(observer: &Client, dbs: &[String]) -> (i64, i64) {
    let row = observer
        .query_one(
            "SELECT count(*) FILTER (WHERE application_name = 'fleet_test'), \
                    count(*) FILTER (WHERE application_name = $2) \
             FROM pg_stat_activity WHERE datname = ANY($1)",
            (dbs, PROBE_APP),
        )
        .await
        .unwrap();
    (row.get(0), row.get(1))
}

/// 96 tasks over 8 shards whose pools could open 32 connections together,
/// under a budget of 5: every request is served, the budget's peak never
/// passes 5, the server never sees the pools hold more (give or take
/// evicted backends still exiting), and once quiet the server's count is
/// the cluster's.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_budget_caps_connections_across_every_shard() {
    common::bounded(async {
        const BUDGET: usize = 5;
        let dbs = shard_databases(8);
        let cluster = builder(&dbs)
            .pool_config(
                PoolConfig::new()
                    .max_size(4)
                    .acquire_timeout(Duration::from_secs(60)),
            )
            .max_connections(BUDGET)
            .build()
            .unwrap();
        let observer_db = common::database("cluster_fleet_observer");
        let observer = common::connect(&observer_db).await;
        let dbnames = names(&dbs);

        // Samples the server's count of pool connections while the load runs.
        let done = Arc::new(AtomicBool::new(false));
        let most_seen = Arc::new(AtomicI64::new(0));
        let sampler = {
            let (done, most_seen, dbnames) = (done.clone(), most_seen.clone(), dbnames.clone());
            tokio::spawn(async move {
                while !done.load(Ordering::Relaxed) {
                    let (pools, _) = server_connections(&observer, &dbnames).await;
                    most_seen.fetch_max(pools, Ordering::Relaxed);
                    tokio::time::sleep(Duration::from_millis(5)).await;
                }
                observer
            })
        };

        let mut tasks = tokio::task::JoinSet::new();
        for task in 0..96i64 {
            let cluster = cluster.clone();
            tasks.spawn(async move {
                let shard = cluster.shard(task).await?;
                if task % 2 == 0 {
                    // A checkout held across a round trip and a sleep.
                    let tx = shard.primary().transaction().await?;
                    tx.query_one("SELECT pg_sleep(0.01)", ()).await?;
                    tx.commit().await?;
                } else {
                    shard
                        .primary()
                        .query_one("SELECT pg_sleep(0.01)", ())
                        .await?;
                }
                Ok::<_, pgpipe::Error>(())
            });
        }
        while let Some(done) = tasks.join_next().await {
            done.unwrap().unwrap();
        }
        done.store(true, Ordering::Relaxed);
        let observer = sampler.await.unwrap();

        let stats = cluster.stats();
        let budget = stats.budget.expect("a budget was set");
        assert_eq!(budget.limit, BUDGET);
        assert!(budget.peak <= BUDGET, "{budget:?}");
        assert!(budget.peak >= 1, "{budget:?}");
        // 8 shards each needed a connection of its own, 5 fit: at least
        // three openings had to wait or close another host's.
        assert!(budget.waits + budget.evictions >= 3, "{budget:?}");
        assert_eq!(budget.timeouts, 0);
        assert!(stats.open <= BUDGET, "{stats:?}");
        assert_eq!(budget.open, stats.open);
        // A backend closed by an eviction may still be listed for a moment
        // while its replacement logs in.
        let seen = most_seen.load(Ordering::Relaxed) as u64;
        assert!(
            seen <= BUDGET as u64 + budget.evictions,
            "the server saw {seen} pool connections (budget {BUDGET}, {} evictions)",
            budget.evictions
        );
        assert_eq!(
            stats.shards.iter().map(|s| s.requests).sum::<u64>(),
            48,
            "the single statements"
        );
        common::eventually("the server's count is the cluster's", || async {
            let (pools, probes) = server_connections(&observer, &dbnames).await;
            let stats = cluster.stats();
            pools as usize == stats.open && probes as usize == stats.probe_sessions
        })
        .await;
        assert!(server_connections(&observer, &dbnames).await.0 as usize <= BUDGET);
    })
    .await
}

/// With the budget spent by idle connections of other shards, a request
/// closes one of them instead of waiting; with every connection busy, it
/// waits and gives up after the acquire timeout with a message naming the
/// budget.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_spent_budget_closes_another_hosts_idle_connection_or_times_out() {
    common::bounded(async {
        let dbs = shard_databases(3);
        let cluster = builder(&dbs)
            .pool_config(
                PoolConfig::new()
                    .max_size(2)
                    .shared_connections(0)
                    // The bound also covers opening a connection (a fork
                    // on the server): generous for a loaded CI machine,
                    // and the one wait that ends in a timeout below.
                    .acquire_timeout(Duration::from_secs(5)),
            )
            .max_connections(2)
            .build()
            .unwrap();
        for id in [0, 1] {
            cluster
                .shard_id(id)
                .unwrap()
                .primary()
                .query_one("SELECT 1", ())
                .await
                .unwrap();
        }
        let before = cluster.stats();
        assert_eq!(before.open, 2);
        assert_eq!(before.budget.unwrap().evictions, 0);

        // Shard 2 needs a connection: shard 0's, idle longest, makes room.
        cluster
            .shard_id(2)
            .unwrap()
            .primary()
            .query_one("SELECT 1", ())
            .await
            .unwrap();
        let after = cluster.stats();
        assert_eq!(after.budget.unwrap().evictions, 1);
        assert_eq!(after.open, 2);
        assert_eq!(after.shards[0].open, 0, "{after:?}");
        assert_eq!(
            after.shards[0].hosts[0].pool.as_ref().unwrap().closed_idle,
            1
        );

        // Both connections held: a third request can only wait, then fail.
        let a = cluster
            .shard_id(1)
            .unwrap()
            .primary()
            .transaction()
            .await
            .unwrap();
        a.query_one("SELECT 1", ()).await.unwrap();
        let b = cluster
            .shard_id(2)
            .unwrap()
            .primary()
            .transaction()
            .await
            .unwrap();
        b.query_one("SELECT 1", ()).await.unwrap();
        let e = cluster
            .shard_id(0)
            .unwrap()
            .primary()
            .query_one("SELECT 1", ())
            .await
            .unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Timeout, "{e}");
        assert!(e.to_string().contains("connection budget"), "{e}");
        let stats = cluster.stats();
        assert_eq!(stats.budget.unwrap().timeouts, 1);
        assert_eq!(stats.shards[0].errors, 1);
        assert_eq!(stats.shards[0].acquire_failures, 1);
        a.commit().await.unwrap();
        // Freed: shard 0 gets its connection now.
        cluster
            .shard_id(0)
            .unwrap()
            .primary()
            .query_one("SELECT 1", ())
            .await
            .unwrap();
        b.rollback().await.unwrap();
    })
    .await
}

/// Shards unused for the pools' idle timeout hold no connection at all:
/// the pools close theirs and the shards go dormant (no probes, the
/// probes' sessions closed). The next use wakes a shard up.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn idle_shards_shrink_to_zero_connections_and_wake_up_on_use() {
    common::bounded(async {
        let dbs = shard_databases(3);
        let cluster = builder(&dbs)
            .pool_config(PoolConfig::new().idle_timeout(Some(Duration::from_millis(300))))
            .probe_interval(Duration::from_millis(100))
            .build()
            .unwrap();
        let observer_db = common::database("cluster_fleet_observer");
        let observer = common::connect(&observer_db).await;
        let dbnames = names(&dbs);
        for id in 0..3 {
            let primary = cluster.shard_id(id).unwrap().primary();
            primary.query_one("SELECT 1", ()).await.unwrap();
            let tx = primary.transaction().await.unwrap();
            tx.query_one("SELECT 1", ()).await.unwrap();
            tx.commit().await.unwrap();
        }
        let (pools, _) = server_connections(&observer, &dbnames).await;
        assert!(pools >= 3, "{pools}");

        common::eventually("every shard is dormant with no connection", || async {
            let stats = cluster.stats();
            stats.open == 0 && stats.shards.iter().all(|s| !s.active)
        })
        .await;
        common::eventually("the server sees no connection to the shards", || async {
            server_connections(&observer, &dbnames).await == (0, 0)
        })
        .await;

        // Roles are asked again on waking; a shard holding a connection
        // stays awake.
        let tx = cluster
            .shard_id(1)
            .unwrap()
            .primary()
            .transaction()
            .await
            .unwrap();
        tx.query_one("SELECT 1", ()).await.unwrap();
        let stats = cluster.stats();
        assert!(stats.shards[1].active);
        assert!(!stats.shards[0].active);
        assert_eq!(stats.shards[1].hosts[0].role, Role::Primary);
        assert_eq!(server_connections(&observer, &dbnames).await, (1, 1));
        tx.commit().await.unwrap();
    })
    .await
}

/// The numbers per host and shard are what ran: requests, failures,
/// acquires, roles; unused shards have no pool and zero everywhere.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stats_count_what_ran_per_host_and_shard() {
    common::bounded(async {
        let dbs = shard_databases(3);
        let cluster = builder(&dbs)
            .pool_config(PoolConfig::new().shared_connections(0))
            .build()
            .unwrap();
        let zero = cluster.shard_id(0).unwrap().primary();
        for _ in 0..5 {
            zero.query_one("SELECT 1", ()).await.unwrap();
        }
        let one = cluster.shard_id(1).unwrap().primary();
        one.execute("SELECT 1", ()).await.unwrap();
        let e = one.query_one("SELECT 1/0", ()).await.unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Db);
        let tx = one.transaction().await.unwrap();
        tx.commit().await.unwrap();

        let stats = cluster.stats();
        assert!(stats.budget.is_none());
        let [s0, s1, s2] = &stats.shards[..] else {
            panic!("three shards: {stats:?}")
        };
        assert_eq!((s0.id, s1.id, s2.id), (0, 1, 2));
        assert_eq!((s0.requests, s0.errors), (5, 0));
        assert_eq!((s1.requests, s1.errors), (2, 1));
        // Without a shared lane every statement checks a connection out;
        // the transaction is one more on shard 1.
        assert_eq!(s0.acquired, 5);
        assert_eq!(s1.acquired, 3);
        assert_eq!(s0.hosts[0].role, Role::Primary);
        assert_eq!(s0.hosts[0].requests, 5);
        assert_eq!(s0.hosts[0].in_use, 0);
        assert!(s0.open >= 1 && s0.open == s0.idle, "{s0:?}");
        assert!(!s2.active);
        assert_eq!((s2.requests, s2.acquired, s2.open), (0, 0, 0));
        assert!(s2.hosts[0].pool.is_none());
        assert_eq!(s2.hosts[0].role, Role::Unknown);
        assert_eq!(stats.open, s0.open + s1.open);
    })
    .await
}

/// A host in use costs the server one connection: once its pool holds a
/// shared connection, the role probe runs on it and closes its own
/// session. The probes still run (the host's WAL position follows a
/// write), and a pooled connection that dies under them does not make the
/// host unreachable: the probe asks on a session of its own instead.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_probe_rides_on_the_pools_connection() {
    common::bounded(async {
        let dbs = shard_databases(1);
        let cluster = builder(&dbs)
            .probe_interval(Duration::from_millis(50))
            .build()
            .unwrap();
        let observer_db = common::database("cluster_fleet_observer");
        let observer = common::connect(&observer_db).await;
        let dbnames = names(&dbs);
        let shard = cluster.shard_id(0).unwrap();
        shard
            .primary()
            .execute("CREATE TABLE t (v int)", ())
            .await
            .unwrap();

        common::eventually("one connection: the pool's, the probe on it", || async {
            server_connections(&observer, &dbnames).await == (1, 0)
                && cluster.stats().probe_sessions == 0
        })
        .await;
        assert!(!cluster.stats().shards[0].hosts[0].probe_session);

        // A write moves the primary's WAL position; a later probe (on the
        // pooled connection: still no session of its own) reports it.
        let after: pgpipe::types::PgLsn = shard
            .primary()
            .query_one(
                "WITH w AS (INSERT INTO t VALUES (1)) SELECT pg_current_wal_insert_lsn()",
                (),
            )
            .await
            .unwrap()
            .get(0);
        common::eventually("a probe sees the write's position", || async {
            shard.hosts()[0].position.is_some_and(|p| p >= after)
        })
        .await;
        assert_eq!(server_connections(&observer, &dbnames).await, (1, 0));

        // The pooled connection dies: the probes go on, on a session of
        // their own, and never call the host unreachable.
        // As the superuser the pools connect as (on another database, so
        // it is not counted).
        let superuser = pgpipe::connect(&host_url(&observer_db)).await.unwrap();
        superuser
            .execute(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity \
                 WHERE datname = $1 AND application_name = 'fleet_test'",
                (&dbnames[0],),
            )
            .await
            .unwrap();
        let watched = async {
            loop {
                let host = &shard.hosts()[0];
                assert_eq!(host.role, Role::Primary, "{host:?}");
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
        };
        let (_, ()) = tokio::join!(
            tokio::time::timeout(Duration::from_secs(1), watched),
            common::eventually("the probe holds its own session", || async {
                cluster.stats().probe_sessions == 1
                    && server_connections(&observer, &dbnames).await == (0, 1)
            })
        );
        // The next statement opens a pooled connection again, and the
        // probe moves back onto it.
        shard.primary().execute("SELECT 1", ()).await.unwrap();
        common::eventually("the probe is back on the pool's connection", || async {
            server_connections(&observer, &dbnames).await == (1, 0)
                && cluster.stats().probe_sessions == 0
        })
        .await;
    })
    .await
}
