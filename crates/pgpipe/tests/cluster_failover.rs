//! Role changes under a cluster: a promotion seen by the background probe
//! on its open session, and a write refused with 25006 by a fenced
//! primary retried on the new one. Each test runs its own primary and
//! streaming standby from the testkit.

use std::future::Future;
use std::time::Duration;

use pgpipe::cluster::{Cluster, Consistency, HostStatus, Role, Shard};
use pgpipe_testkit::Cluster as Server;

const BOUND: Duration = Duration::from_secs(240);

fn host_url(server: &Server) -> String {
    format!(
        "postgres://{}@127.0.0.1:{}/postgres?connect_timeout=3",
        server.superuser(),
        server.port()
    )
}

fn pair() -> (Server, Server) {
    let primary = Server::start().expect("primary");
    primary
        .execute("postgres", "CREATE TABLE kv (k int8 PRIMARY KEY)")
        .unwrap();
    let standby = primary.start_standby().expect("standby");
    primary.wait_replicated(&standby).unwrap();
    (primary, standby)
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

fn host(shard: &Shard, server: &Server) -> HostStatus {
    let port = format!(":{}/", server.port());
    shard
        .hosts()
        .into_iter()
        .find(|h| h.host.contains(&port))
        .expect("the server is a host of the shard")
}

async fn served_port(route: &pgpipe::cluster::Route) -> u16 {
    let port: i32 = route
        .query_one("SELECT inet_server_port()", ())
        .await
        .unwrap()
        .get(0);
    port as u16
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_promotion_is_seen_before_any_write_fails() {
    tokio::time::timeout(BOUND, async {
        let (primary, standby) = pair();
        let cluster = Cluster::builder()
            .shard(0, [host_url(&primary), host_url(&standby)])
            .probe_interval(Duration::from_millis(100))
            .build()
            .unwrap();
        let shard = cluster.shard_id(0).unwrap();
        shard
            .primary()
            .execute("INSERT INTO kv VALUES (1)", ())
            .await
            .unwrap();
        assert_eq!(served_port(&shard.primary()).await, primary.port());
        assert_eq!(
            served_port(&shard.replica(Consistency::Any)).await,
            standby.port()
        );
        // The standby's probe moves onto its pool's connection (opened by
        // the read above) and stays there: the same open session before
        // and after the promotion.
        wait_until(
            "the standby's probe rides on its pool's connection",
            || async { !cluster.stats().shards[0].hosts[1].probe_session },
        )
        .await;
        let before = host(&shard, &standby);
        assert_eq!(before.role, Role::Standby);

        primary.stop().unwrap();
        standby.promote().unwrap();
        wait_until(
            "the cluster sees the promoted standby as primary",
            || async { host(&shard, &standby).role == Role::Primary },
        )
        .await;
        let after = host(&shard, &standby);
        if primary.major_version() >= 14 {
            // The server pushed the change to the probe's session, opened
            // before the promotion.
            assert_eq!(before.in_hot_standby, Some(true));
            assert_eq!(after.in_hot_standby, Some(false));
            assert_eq!(after.probe_backend_pid, before.probe_backend_pid);
        } else {
            eprintln!(
                "skipped: PostgreSQL {} reports no in_hot_standby (14+); the probe's \
                 pg_is_in_recovery() found the promotion",
                primary.major_version()
            );
        }

        // The first write after the failover succeeds, on the new primary.
        shard
            .primary()
            .execute("INSERT INTO kv VALUES (2)", ())
            .await
            .unwrap();
        assert_eq!(served_port(&shard.primary()).await, standby.port());
        let n: i64 = shard
            .primary()
            .query_one("SELECT count(*) FROM kv", ())
            .await
            .unwrap()
            .get(0);
        assert_eq!(n, 2);
    })
    .await
    .expect("test exceeded its bound");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_write_refused_as_read_only_moves_to_the_new_primary() {
    tokio::time::timeout(BOUND, async {
        let (primary, standby) = pair();
        // No background probe to notice first: the 25006 must.
        let cluster = Cluster::builder()
            .shard(0, [host_url(&primary), host_url(&standby)])
            .probe_interval(Duration::from_secs(3600))
            .pool_config(pgpipe::PoolConfig::new().max_size(1))
            .build()
            .unwrap();
        let shard = cluster.shard_id(0).unwrap();
        shard
            .primary()
            .execute("INSERT INTO kv VALUES (1)", ())
            .await
            .unwrap();

        // Fence the old primary (it stays up, refusing writes), promote the
        // standby.
        primary
            .execute(
                "postgres",
                "ALTER SYSTEM SET default_transaction_read_only = on",
            )
            .unwrap();
        primary
            .execute("postgres", "SELECT pg_reload_conf()")
            .unwrap();
        // The pool's one connection has taken the setting.
        wait_until("the pooled write connection is read-only", || async {
            let row = shard
                .primary()
                .query_one("SHOW default_transaction_read_only", ())
                .await
                .unwrap();
            row.get::<&str, _>(0) == "on"
        })
        .await;
        standby.promote().unwrap();
        assert_eq!(
            host(&shard, &primary).role,
            Role::Primary,
            "nothing noticed yet"
        );

        // Refused with 25006 on the old primary, retried on the new one.
        shard
            .primary()
            .execute("INSERT INTO kv VALUES (2)", ())
            .await
            .unwrap();
        let old = host(&shard, &primary);
        assert_eq!(old.role, Role::ReadOnly, "{old:?}");
        assert_eq!(host(&shard, &standby).role, Role::Primary);
        assert_eq!(served_port(&shard.primary()).await, standby.port());
        let on_new = standby
            .query("postgres", "SELECT count(*) FROM kv WHERE k = 2")
            .unwrap();
        assert_eq!(on_new[0][0].as_deref(), Some("1"));
        let on_old = primary
            .query("postgres", "SELECT count(*) FROM kv WHERE k = 2")
            .unwrap();
        assert_eq!(on_old[0][0].as_deref(), Some("0"));
    })
    .await
    .expect("test exceeded its bound");
}

/// A standby cut off from a failed primary, not yet following the new one,
/// may have replayed the old primary's WAL past a token the new primary
/// hands out: by position alone it has "reached" the token without the
/// write. Staged with two standbys of one primary: one promoted (timeline
/// 2) and taking the write, the other still following the old primary
/// (timeline 1), which goes on writing. The token names timeline 2, so
/// the old-timeline standby never serves it: the read falls back to the
/// new primary and sees the write. A token without a timeline (the text
/// form before timelines) trusts position alone, and is served stale.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_standby_on_an_older_timeline_never_serves_a_newer_token() {
    tokio::time::timeout(BOUND, async {
        let old = Server::start().expect("primary");
        old.execute("postgres", "CREATE TABLE kv (k int8 PRIMARY KEY)")
            .unwrap();
        let promoted = old.start_standby().expect("standby to promote");
        let behind = old.start_standby().expect("standby left behind");
        old.wait_replicated(&promoted).unwrap();
        old.wait_replicated(&behind).unwrap();
        promoted.promote().unwrap();

        let cluster = Cluster::builder()
            .shard(0, [host_url(&promoted), host_url(&behind)])
            .probe_interval(Duration::from_millis(100))
            .token_wait(Duration::from_millis(300))
            .build()
            .unwrap();
        let shard = cluster.shard_id(0).unwrap();
        let (_, token) = shard
            .primary()
            .execute_with_token("INSERT INTO kv VALUES (42)", ())
            .await
            .unwrap();
        assert_eq!(served_port(&shard.primary()).await, promoted.port());
        assert_eq!(token.timeline(), Some(2), "{token}");

        // The old primary goes on (split brain): its standby replays past
        // the token's position, on timeline 1, without the write.
        for _ in 0..2 {
            old.execute("postgres", "SELECT pg_switch_wal()").unwrap();
            // Other keys than the write's.
            old.execute(
                "postgres",
                "INSERT INTO kv SELECT generate_series(1000, 1100) ON CONFLICT DO NOTHING",
            )
            .unwrap();
        }
        old.wait_replicated(&behind).unwrap();
        wait_until(
            "the cluster sees the old-timeline standby past the token",
            || async {
                let h = host(&shard, &behind);
                h.role == Role::Standby
                    && h.timeline == Some(1)
                    && h.position.is_some_and(|p| p >= token.lsn())
            },
        )
        .await;

        let read = |token| {
            let shard = shard.clone();
            async move {
                let row = shard
                    .replica(Consistency::ReadYourWrites(token))
                    .query_one(
                        "SELECT (SELECT count(*) FROM kv WHERE k = 42), inet_server_port()",
                        (),
                    )
                    .await
                    .unwrap();
                let (count, port): (i64, i32) = (row.get(0), row.get(1));
                (count, port as u16)
            }
        };
        for _ in 0..5 {
            assert_eq!(read(token).await, (1, promoted.port()));
        }
        let bare = pgpipe::cluster::WriteToken::from_lsn(token.lsn()).unwrap();
        assert_eq!(read(bare).await, (0, behind.port()));
    })
    .await
    .expect("the test finished within its bound");
}

/// A split brain without Patroni: the old primary still answers beside the
/// standby promoted in its place, and is listed first. Writes and the
/// fallback of a read-your-writes read go to the primary on the newest
/// timeline; a shard whose only primary is on an older timeline than a
/// token's refuses the read instead of serving it without the write.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_split_brain_routes_to_the_primary_on_the_newest_timeline() {
    tokio::time::timeout(BOUND, async {
        let (old, promoted) = pair();
        promoted.promote().unwrap();

        let cluster = Cluster::builder()
            .shard(0, [host_url(&old), host_url(&promoted)])
            .probe_interval(Duration::from_millis(100))
            .token_wait(Duration::from_millis(200))
            .build()
            .unwrap();
        let shard = cluster.shard_id(0).unwrap();
        wait_until(
            "the cluster sees two primaries on timelines 1 and 2",
            || async {
                let (o, p) = (host(&shard, &old), host(&shard, &promoted));
                // Any route asks the hosts first.
                let _ = shard.primary().query_one("SELECT 1", ()).await;
                o.role == Role::Primary
                    && o.timeline == Some(1)
                    && p.role == Role::Primary
                    && p.timeline == Some(2)
            },
        )
        .await;

        assert_eq!(served_port(&shard.primary()).await, promoted.port());
        let (_, token) = shard
            .primary()
            .execute_with_token("INSERT INTO kv VALUES (7)", ())
            .await
            .unwrap();
        assert_eq!(token.timeline(), Some(2), "{token}");
        // No standby: the read falls back to the primary, the new one.
        let row = shard
            .replica(Consistency::ReadYourWrites(token))
            .query_one(
                "SELECT (SELECT count(*) FROM kv WHERE k = 7), inet_server_port()",
                (),
            )
            .await
            .unwrap();
        let (count, port): (i64, i32) = (row.get(0), row.get(1));
        assert_eq!((count, port as u16), (1, promoted.port()));

        // A client that knows only the old primary.
        let stale = Cluster::builder()
            .shard(0, [host_url(&old)])
            .probe_interval(Duration::from_millis(100))
            .token_wait(Duration::from_millis(200))
            .primary_wait(Duration::from_millis(500))
            .build()
            .unwrap();
        let stale = stale.shard_id(0).unwrap();
        let e = stale
            .replica(Consistency::ReadYourWrites(token))
            .query_one("SELECT count(*) FROM kv WHERE k = 7", ())
            .await
            .expect_err("the old primary never had the write");
        assert_eq!(e.kind(), pgpipe::ErrorKind::Routing, "{e}");
        assert!(e.to_string().contains("timeline 2"), "{e}");
        // Reads without a token, and the bare position, still go there.
        let bare = pgpipe::cluster::WriteToken::from_lsn(token.lsn()).unwrap();
        assert_eq!(
            served_port(&stale.replica(Consistency::ReadYourWrites(bare))).await,
            old.port()
        );
        assert_eq!(
            served_port(&stale.replica(Consistency::Any)).await,
            old.port()
        );
    })
    .await
    .expect("the test finished within its bound");
}
