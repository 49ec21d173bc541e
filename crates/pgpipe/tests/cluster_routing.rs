//! The cluster's shard map and routing against real databases: one
//! database per shard on the shared test server, each knowing its own id.

mod common;

use std::collections::HashMap;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use pgpipe::cluster::{Cluster, ResolverConfig, ShardKey, ShardMap};
use pgpipe::ErrorKind;
use pgpipe_testkit::TestDatabase;

/// Three databases, each with `whoami` holding its shard id.
fn shard_databases(n: u32) -> Vec<TestDatabase> {
    (0..n)
        .map(|id| {
            let db = common::database("cluster_shard");
            common::cluster()
                .execute(
                    db.name(),
                    &format!("CREATE TABLE whoami (shard int4); INSERT INTO whoami VALUES ({id})"),
                )
                .unwrap();
            db
        })
        .collect()
}

fn host_url(db: &TestDatabase) -> String {
    let c = common::cluster();
    format!(
        "postgres://{}@127.0.0.1:{}/{}?connect_timeout=5",
        c.superuser(),
        c.port(),
        db.name()
    )
}

fn builder(dbs: &[TestDatabase]) -> pgpipe::cluster::ClusterBuilder {
    dbs.iter()
        .enumerate()
        .fold(Cluster::builder(), |b, (id, db)| {
            b.shard(id as u32, [host_url(db)])
        })
}

async fn served_by(cluster: &Cluster, key: impl Into<ShardKey>) -> i32 {
    let shard = cluster.shard(key).await.unwrap();
    let id: i32 = shard
        .primary()
        .query_one("SELECT shard FROM whoami", ())
        .await
        .unwrap()
        .get(0);
    assert_eq!(
        id as u32,
        shard.id(),
        "the handle's id and the database agree"
    );
    id
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn keys_reach_the_shard_the_static_maps_say() {
    common::bounded(async {
        let dbs = shard_databases(3);
        let hashed = builder(&dbs)
            .map(ShardMap::hash(3).unwrap())
            .build()
            .unwrap();
        for key in (0..60i64)
            .map(ShardKey::from)
            .chain(["ann", "bob", "", "ünï"].map(ShardKey::from))
        {
            let expected = (key.stable_hash() % 3) as i32;
            assert_eq!(served_by(&hashed, key.clone()).await, expected, "key {key}");
        }

        let ranged = builder(&dbs)
            .map(ShardMap::ranges([(0..100, 0), (100..200, 1), (200..i64::MAX, 2)]).unwrap())
            .build()
            .unwrap();
        for (key, shard) in [
            (0i64, 0),
            (99, 0),
            (100, 1),
            (199, 1),
            (200, 2),
            (1 << 40, 2),
        ] {
            assert_eq!(served_by(&ranged, key).await, shard, "key {key}");
        }

        // Without a map, shards 0..n hash.
        let default = builder(&dbs).build().unwrap();
        assert_eq!(
            served_by(&default, 5i64).await,
            (ShardKey::from(5i64).stable_hash() % 3) as i32
        );
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_resolver_runs_once_per_key_under_a_thousand_concurrent_lookups() {
    common::bounded(async {
        let dbs = shard_databases(3);
        let calls: Arc<Mutex<HashMap<ShardKey, u32>>> = Arc::default();
        let counted = calls.clone();
        let map = ShardMap::resolver(
            move |key: ShardKey| {
                *counted.lock().unwrap().entry(key.clone()).or_default() += 1;
                async move {
                    // A directory lookup that takes a while, so that the
                    // callers pile up behind it.
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    Ok((key.as_int().unwrap() % 3) as u32)
                }
            },
            ResolverConfig::new().ttl(Duration::from_secs(3600)),
        );
        let cluster = builder(&dbs).map(map).build().unwrap();
        let mut tasks = tokio::task::JoinSet::new();
        for i in 0..1000i64 {
            let cluster = cluster.clone();
            tasks.spawn(async move {
                let key = i % 10;
                (key, cluster.shard(key).await.unwrap().id())
            });
        }
        while let Some(done) = tasks.join_next().await {
            let (key, shard) = done.unwrap();
            assert_eq!(shard as i64, key % 3);
        }
        let calls = calls.lock().unwrap().clone();
        assert_eq!(calls.len(), 10, "{calls:?}");
        assert!(
            calls.values().all(|n| *n == 1),
            "one look-up per key: {calls:?}"
        );
        // And the routes go where the resolver said.
        for key in 0..10i64 {
            assert_eq!(served_by(&cluster, key).await as i64, key % 3);
        }
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unknown_shards_and_keys_fail_clearly() {
    common::bounded(async {
        let dbs = shard_databases(2);
        let cluster = builder(&dbs)
            .map(ShardMap::ranges([(0..10, 0), (10..20, 1)]).unwrap())
            .build()
            .unwrap();
        let err = cluster.shard_id(7).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Routing);
        assert!(err.to_string().contains("no shard 7"), "{err}");
        assert!(err.to_string().contains("shards 0, 1"), "{err}");

        let err = cluster.shard(25i64).await.unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Routing);
        assert!(err.to_string().contains("key 25 is in no range"), "{err}");
        let err = cluster.shard("text").await.unwrap_err();
        assert!(err.to_string().contains("not an integer"), "{err}");

        // A resolver's unknown shard, and its own failure.
        let calls = Arc::new(AtomicU32::new(0));
        let c = calls.clone();
        let resolving = builder(&dbs)
            .map(ShardMap::resolver(
                move |key: ShardKey| {
                    c.fetch_add(1, Ordering::SeqCst);
                    async move {
                        match key.as_int() {
                            Some(k) => Ok(k as u32),
                            None => Err(pgpipe::Error::from(
                                pgpipe::Config::parse("port=notaport").unwrap_err(),
                            )),
                        }
                    }
                },
                ResolverConfig::new(),
            ))
            .build()
            .unwrap();
        let err = resolving.shard(42i64).await.unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Routing);
        assert!(err.to_string().contains("no shard 42"), "{err}");
        assert!(err.to_string().contains("sent key 42 to shard 42"), "{err}");
        let err = resolving.shard("who").await.unwrap_err();
        assert!(
            err.to_string()
                .contains("resolving the shard of key \"who\""),
            "{err}"
        );

        // Maps that send keys nowhere are refused when built.
        let err = builder(&dbs)
            .map(ShardMap::hash(3).unwrap())
            .build()
            .unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Config);
        assert!(err.to_string().contains("shard 2"), "{err}");
        let err = Cluster::builder().build().unwrap_err();
        assert!(err.to_string().contains("at least one shard"), "{err}");
        let err = Cluster::builder()
            .shard(0, ["postgres://h/db?port=x"])
            .build()
            .unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Config);
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fan_out_reports_every_shard_and_never_a_silent_partial_answer() {
    common::bounded(async {
        let dbs = shard_databases(3);
        let cluster = builder(&dbs).build().unwrap();
        let all = cluster
            .fan_out(|shard| async move {
                let row = shard
                    .primary()
                    .query_one("SELECT shard FROM whoami", ())
                    .await?;
                Ok(row.get::<i32, _>(0))
            })
            .await;
        assert_eq!(all.failed(), 0);
        assert_eq!(
            all.into_all().unwrap(),
            vec![(0, 0), (1, 1), (2, 2)],
            "each shard's own answer, in id order"
        );

        let some = cluster
            .fan_out_to([2, 0, 2], |shard| async move { Ok(shard.id()) })
            .await
            .unwrap();
        assert_eq!(some.into_all().unwrap(), vec![(0, 0), (2, 2)]);
        let err = cluster
            .fan_out_to([0, 9], |shard| async move { Ok(shard.id()) })
            .await
            .unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Routing);

        // One shard whose only host is down: its failure is reported, the
        // others' answers are kept, and into_all refuses the partial whole.
        let c = common::cluster();
        let dead = format!(
            "postgres://{}@127.0.0.1:1/postgres?connect_timeout=2",
            c.superuser()
        );
        let degraded = Cluster::builder()
            .shard(0, [host_url(&dbs[0])])
            .shard(1, [dead])
            .primary_wait(Duration::from_millis(200))
            .build()
            .unwrap();
        let outcome = degraded
            .fan_out(|shard| async move {
                let row = shard.primary().query_one("SELECT 1", ()).await?;
                Ok(row.get::<i32, _>(0))
            })
            .await;
        let outcomes = outcome
            .iter()
            .map(|(id, r)| (id, r.is_ok()))
            .collect::<Vec<_>>();
        assert_eq!(outcomes, vec![(0, true), (1, false)]);
        let err = outcome.into_all().unwrap_err();
        assert!(
            err.to_string().contains("1 of 2 shards failed: shard 1:"),
            "{err}"
        );
        assert!(err.to_string().contains("has no primary"), "{err}");
    })
    .await;
}
