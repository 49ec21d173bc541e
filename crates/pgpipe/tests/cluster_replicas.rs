//! Replicas behind a cluster: read-your-writes tokens against a standby
//! whose replay is held back, and lag-aware replica lanes. Each test runs
//! its own primary and streaming standby from the testkit.

use std::future::Future;
use std::time::Duration;

use pgpipe::cluster::{Cluster, ClusterBuilder, Consistency, Fallback, Role, Route, Shard};
use pgpipe::ErrorKind;
use pgpipe_testkit::Cluster as Server;

/// Generous: CI is a loaded 2-core machine and each test starts two servers.
const BOUND: Duration = Duration::from_secs(240);

fn host_url(server: &Server, db: &str) -> String {
    format!(
        "postgres://{}@127.0.0.1:{}/{db}?connect_timeout=5",
        server.superuser(),
        server.port()
    )
}

/// A primary with `kv`, and a standby that has replayed it.
fn pair(db: &str) -> (Server, Server) {
    let primary = Server::start().expect("primary");
    primary
        .execute("postgres", &format!("CREATE DATABASE {db}"))
        .unwrap();
    // Commits flush at once (the testkit's servers commit asynchronously),
    // so a replica can replay a write as soon as it is acknowledged.
    primary
        .execute(
            "postgres",
            &format!("ALTER DATABASE {db} SET synchronous_commit = on"),
        )
        .unwrap();
    primary
        .execute(db, "CREATE TABLE kv (k int8 PRIMARY KEY, v int8 NOT NULL)")
        .unwrap();
    let standby = primary.start_standby().expect("standby");
    primary.wait_replicated(&standby).unwrap();
    (primary, standby)
}

fn builder(primary: &Server, standby: &Server, db: &str) -> ClusterBuilder {
    Cluster::builder()
        .shard(0, [host_url(primary, db), host_url(standby, db)])
        .probe_interval(Duration::from_millis(50))
}

/// Whether the statement ran on a standby, and the value it read.
async fn read_v(route: &Route, k: i64) -> (bool, Option<i64>) {
    let row = route
        .query_one(
            "SELECT pg_is_in_recovery(), (SELECT v FROM kv WHERE k = $1)",
            (k,),
        )
        .await
        .unwrap();
    (row.get(0), row.get(1))
}

async fn wait_until<F, Fut>(what: &str, mut check: F)
where
    F: FnMut() -> Fut,
    Fut: Future<Output = bool>,
{
    let deadline = tokio::time::Instant::now() + Duration::from_secs(120);
    while !check().await {
        assert!(
            tokio::time::Instant::now() < deadline,
            "timed out waiting until {what}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

fn standby_of(shard: &Shard) -> pgpipe::cluster::HostStatus {
    shard
        .hosts()
        .into_iter()
        .find(|h| h.role == Role::Standby)
        .expect("the shard has a standby")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn read_your_writes_never_reads_the_old_value() {
    tokio::time::timeout(BOUND, async {
        let db = "ryw";
        let (primary, standby) = pair(db);
        let cluster = builder(&primary, &standby, db)
            .token_wait(Duration::from_millis(500))
            .build()
            .unwrap();
        let strict = builder(&primary, &standby, db)
            .token_wait(Duration::from_millis(200))
            .replica_fallback(Fallback::Fail)
            .build()
            .unwrap();
        let shard = cluster.shard_id(0).unwrap();
        shard
            .primary()
            .execute("INSERT INTO kv VALUES (1, 1)", ())
            .await
            .unwrap();
        let roles: Vec<Role> = shard.hosts().iter().map(|h| h.role).collect();
        assert_eq!(
            roles,
            [Role::Primary, Role::Standby],
            "roles come from the servers"
        );

        // Replay held back: the standby cannot have the next write.
        standby
            .execute("postgres", "SELECT pg_wal_replay_pause()")
            .unwrap();
        wait_until("replay is paused", || async {
            let rows = standby
                .query("postgres", "SELECT pg_is_wal_replay_paused()")
                .unwrap();
            rows[0][0].as_deref() == Some("t")
        })
        .await;
        let (n, token) = shard
            .primary()
            .execute_with_token("UPDATE kv SET v = 2 WHERE k = 1", ())
            .await
            .unwrap();
        assert_eq!(n, 1);
        let token: pgpipe::cluster::WriteToken = token.to_string().parse().unwrap();
        let fresh = shard.replica(Consistency::ReadYourWrites(token));
        // The read waits for the standby, then falls back to the primary:
        // the new value, never the old one.
        assert_eq!(read_v(&fresh, 1).await, (false, Some(2)));
        // Without a fallback it fails clearly instead.
        let err = strict
            .shard_id(0)
            .unwrap()
            .replica(Consistency::ReadYourWrites(token))
            .query_one("SELECT v FROM kv WHERE k = 1", ())
            .await
            .unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Routing);
        assert!(
            err.to_string().contains("no replica of shard 0 qualifies"),
            "{err}"
        );
        // Any replica may still serve the old value: that is what Any means.
        let (on_standby, _) = read_v(
            &shard.replica(Consistency::MaxLag(Duration::from_secs(3600))),
            1,
        )
        .await;
        assert!(on_standby);

        // Replay resumed: the token's reads move to the standby, and every
        // one of them on the way sees the write.
        standby
            .execute("postgres", "SELECT pg_wal_replay_resume()")
            .unwrap();
        wait_until("a token read is served by the standby", || async {
            let (on_standby, v) = read_v(&fresh, 1).await;
            assert_eq!(v, Some(2), "a read with the token saw the old value");
            on_standby
        })
        .await;

        // A transaction's token, taken with its COMMIT.
        let tx = shard.primary().transaction().await.unwrap();
        tx.execute("UPDATE kv SET v = 3 WHERE k = 1", ())
            .await
            .unwrap();
        let t3 = pgpipe::cluster::commit_with_token(tx).await.unwrap();
        assert!(t3 > token);
        assert_eq!(t3.merge(token), t3);
        let (_, v) = read_v(&shard.replica(Consistency::ReadYourWrites(t3)), 1).await;
        assert_eq!(v, Some(3));
    })
    .await
    .expect("test exceeded its bound");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ten_thousand_write_then_read_pairs_see_their_writes() {
    tokio::time::timeout(BOUND, async {
        let db = "pairs";
        let (primary, standby) = pair(db);
        let cluster = builder(&primary, &standby, db)
            .pool_config(pgpipe::PoolConfig::new().max_size(8))
            .token_wait(Duration::from_secs(5))
            .build()
            .unwrap();
        const TASKS: i64 = 100;
        const PAIRS: i64 = 100;
        let mut tasks = tokio::task::JoinSet::new();
        for t in 0..TASKS {
            let cluster = cluster.clone();
            tasks.spawn(async move {
                let shard = cluster.shard_id(0).unwrap();
                let (mut stale, mut on_standby) = (0u32, 0u32);
                for i in 0..PAIRS {
                    // The same key rewritten: an old value is there to be
                    // read by mistake.
                    let (_, token) = shard
                        .primary()
                        .execute_with_token(
                            "INSERT INTO kv VALUES ($1, $2) \
                             ON CONFLICT (k) DO UPDATE SET v = EXCLUDED.v",
                            (t, i),
                        )
                        .await
                        .unwrap();
                    let (standby, v) =
                        read_v(&shard.replica(Consistency::ReadYourWrites(token)), t).await;
                    stale += u32::from(v != Some(i));
                    on_standby += u32::from(standby);
                }
                (stale, on_standby)
            });
        }
        let (mut stale, mut on_standby) = (0, 0);
        while let Some(done) = tasks.join_next().await {
            let (s, o) = done.unwrap();
            stale += s;
            on_standby += o;
        }
        assert_eq!(stale, 0, "reads through a token saw an older value");
        // The tokens did route reads to the standby, not all to the primary.
        assert!(on_standby > 0, "no read was served by the standby");
        eprintln!(
            "{} of {} reads served by the standby",
            on_standby,
            TASKS * PAIRS
        );
    })
    .await
    .expect("test exceeded its bound");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lagging_replica_gets_no_reads_until_it_catches_up() {
    tokio::time::timeout(BOUND, async {
        let db = "lag";
        let (primary, standby) = pair(db);
        let bound = Duration::from_millis(500);
        let cluster = builder(&primary, &standby, db)
            .max_replica_lag(Some(bound))
            .build()
            .unwrap();
        let shard = cluster.shard_id(0).unwrap();
        let any = shard.replica(Consistency::Any);
        // The first probes decide the standby's lag: on a loaded machine
        // a moment of background WAL may put it over the bound at first.
        wait_until("a caught-up standby serves reads", || async {
            read_v(&any, 1).await.0
        })
        .await;

        standby
            .execute("postgres", "SELECT pg_wal_replay_pause()")
            .unwrap();
        wait_until("replay is paused", || async {
            let rows = standby
                .query("postgres", "SELECT pg_is_wal_replay_paused()")
                .unwrap();
            rows[0][0].as_deref() == Some("t")
        })
        .await;
        shard
            .primary()
            .execute("INSERT INTO kv VALUES (1, 1)", ())
            .await
            .unwrap();
        wait_until("the standby's lag exceeds the bound", || async {
            standby_of(&shard).lag.is_some_and(|lag| lag > bound)
        })
        .await;
        // Its lag only grows while replay is paused: no read goes there.
        for _ in 0..50 {
            assert_eq!(read_v(&any, 1).await, (false, Some(1)));
        }
        // A looser bound for one read still takes it.
        let loose = shard.replica(Consistency::MaxLag(Duration::from_secs(3600)));
        assert_eq!(read_v(&loose, 1).await, (true, None));

        standby
            .execute("postgres", "SELECT pg_wal_replay_resume()")
            .unwrap();
        wait_until("the standby is back in the lane", || async {
            read_v(&any, 1).await.0
        })
        .await;
    })
    .await
    .expect("test exceeded its bound");
}
