//! `ClusterBuilder::patroni`: a shard's topology read from a real Patroni
//! cluster's REST API (pgpipe-testkit's `PatroniCluster`: three PostgreSQL
//! 15 nodes under Patroni 3.0 and etcd) beside the servers' probes.
//!
//! Patroni's view agrees with the servers' (its leader is the host the
//! probe finds primary, its replicas are standbys, with their lag in
//! bytes); after a switchover the source reports the new leader and writes
//! go there. A shard whose Patroni cannot be reached is served from the
//! probes alone, the error in its stats.

use std::sync::Arc;
use std::time::Duration;

use pgpipe::cluster::{Cluster, HostStatus, Role, Shard};
use pgpipe_testkit::{PatroniCluster, PATRONI_PG_MAJOR};
use tokio::time::Instant;

/// How long the cluster may take to see what Patroni and the servers say
/// (generous: a loaded 2-core machine).
const SEE_BOUND: Duration = Duration::from_secs(120);

async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> Result<T, pgpipe_testkit::TestkitError> + Send + 'static,
) -> T {
    tokio::task::spawn_blocking(f)
        .await
        .unwrap()
        .unwrap_or_else(|e| panic!("{e}"))
}

/// Whether the hosts show `leader` as Patroni's leader and the servers'
/// primary, and every other member as a streaming standby with a lag in
/// bytes.
fn agree(hosts: &[HostStatus], leader: &str) -> bool {
    hosts.len() == 3
        && hosts.iter().all(|h| match &h.patroni {
            Some(m) if m.name == leader => m.is_leader() && h.role == Role::Primary,
            Some(m) => {
                (m.role == "replica" || m.role == "sync_standby")
                    && m.lag.is_some()
                    && h.role == Role::Standby
            }
            None => false,
        })
}

/// Waits until the shard's hosts agree with `leader` (writing through the
/// primary meanwhile, which also keeps the shard in use).
async fn wait_agree(shard: &Shard, leader: &str) {
    let deadline = Instant::now() + SEE_BOUND;
    loop {
        let hosts = shard.hosts();
        if agree(&hosts, leader) {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "the cluster did not see {leader} lead within {SEE_BOUND:?}: {hosts:#?}"
        );
        let _ = shard.primary().execute("SELECT 1", ()).await;
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn patroni_roles_match_the_servers_and_follow_a_switchover() {
    if let Ok(v) = std::env::var(pgpipe_testkit::VERSION_VAR) {
        if v != PATRONI_PG_MAJOR.to_string() {
            eprintln!(
                "SKIPPED: the Patroni stack runs PostgreSQL {PATRONI_PG_MAJOR} only; \
                 it ran in the suite on the default version"
            );
            return;
        }
    }
    tokio::time::timeout(Duration::from_secs(900), run())
        .await
        .expect("the Patroni source test exceeded its bound");
}

async fn run() {
    let ha = Arc::new(blocking(PatroniCluster::start).await);
    let urls: Vec<String> = ha
        .nodes()
        .iter()
        .map(|n| {
            format!(
                "postgres://{}@{}:{}/postgres?connect_timeout=2&query_timeout=5000",
                ha.superuser(),
                n.host(),
                n.port()
            )
        })
        .collect();
    // Nothing listens there: a port bound, then closed.
    let dead = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let dead_url = format!("http://{}", dead.local_addr().unwrap());
    drop(dead);
    let cluster = Cluster::builder()
        .shard(0, &urls)
        .shard(1, &urls)
        .patroni(0, ha.nodes()[0].rest_url())
        .patroni(1, dead_url)
        .probe_interval(Duration::from_millis(200))
        .probe_timeout(Duration::from_secs(10))
        .primary_wait(Duration::from_secs(60))
        .build()
        .unwrap();
    let shard = cluster.shard_id(0).unwrap();

    let leader = ha.leader().unwrap().expect("a leader");
    shard
        .primary()
        .execute("CREATE TABLE patroni_source (id int8 PRIMARY KEY)", ())
        .await
        .unwrap();
    wait_agree(&shard, &leader).await;
    assert_eq!(cluster.stats().shards[0].patroni_error, None);

    // Patroni unreachable: the probes alone find the primary.
    let blind = cluster.shard_id(1).unwrap();
    blind
        .primary()
        .execute("INSERT INTO patroni_source VALUES (1)", ())
        .await
        .unwrap();
    let stats = cluster.stats();
    let error = stats.shards[1].patroni_error.as_deref().unwrap_or_default();
    assert!(error.contains("/cluster"), "{:#?}", stats.shards[1]);
    assert!(stats.shards[1].hosts.iter().all(|h| h.patroni.is_none()));
    assert_eq!(
        stats.shards[1]
            .hosts
            .iter()
            .filter(|h| h.role == Role::Primary)
            .count(),
        1,
        "{:#?}",
        stats.shards[1]
    );

    let old = {
        let ha = ha.clone();
        blocking(move || ha.switchover()).await
    };
    assert_eq!(old, leader);
    let new = {
        let ha = ha.clone();
        blocking(move || ha.wait_for_new_leader(&old)).await
    };
    assert_ne!(new, leader);
    wait_agree(&shard, &new).await;
    // Writes go to the new leader: its own server says it is not in
    // recovery, on the session that took the write.
    let row = shard
        .primary()
        .query_one(
            "INSERT INTO patroni_source VALUES (2) RETURNING pg_is_in_recovery()",
            (),
        )
        .await
        .unwrap();
    let in_recovery: bool = row.get(0);
    assert!(!in_recovery);
    let primary = shard
        .hosts()
        .into_iter()
        .find(|h| h.role == Role::Primary)
        .expect("a primary");
    assert_eq!(primary.patroni.map(|m| m.name), Some(new));
}
