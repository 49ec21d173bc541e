//! Failover on a real HA stack: three PostgreSQL 15 nodes under Patroni
//! (synchronous mode) and etcd, from pgpipe-testkit's `PatroniCluster`.
//!
//! Writers insert unique ids through a `Pool` on the three nodes' URL with
//! `target_session_attrs=read-write`; readers check, on the same kind of
//! pool, that a read sees every write acknowledged before it started, and
//! others read through `prefer-standby`. Two more writers write through a
//! `pgpipe::cluster::Cluster` holding the three nodes as one shard, each
//! commit yielding a `WriteToken`; readers take the latest token of a
//! writer (through its text form) and read that write back on the
//! replicas with `Consistency::ReadYourWrites`. Meanwhile the harness runs
//! three failovers, each once the load has gone on for a while and the
//! cluster is healthy again (a leader, two streaming replicas, a
//! synchronous one):
//!
//! 1. a switchover (Patroni's REST `/switchover`, as `patronictl` does),
//! 2. `kill -9` of the primary's postmaster: Patroni fails over to the
//!    synchronous standby, or, when that standby's REST API answers Patroni
//!    late (a loaded machine), keeps the leader key, runs crash recovery
//!    and promotes the same node on a new timeline. Either is a primary
//!    dying under a Patroni cluster; the report says which happened,
//! 3. a network partition of the primary (proxies black-hole every link to
//!    and from it, etcd included), healed once a new primary took over.
//!    Once the new primary takes writes, the clients' connections to the
//!    old one are aborted, as their kernels would on a real cut (the proxy
//!    acknowledges what it holds, so nothing else can end a COMMIT in
//!    flight there: query_timeout does not bound COMMIT).
//!
//! Invariants, checked with the failover checker (common/invariants.rs):
//! no acknowledged write missing on the last primary, no failed write
//! present, nothing no writer wrote; unknown outcomes counted; writes
//! resume on the new primary within a (generous) bound; no write
//! acknowledged by a demoted node (every acknowledgment names the server
//! and its timeline: a writer that has written on timeline T never again
//! gets an acknowledgment from a lower one, and each timeline has one
//! writing node); no read on the primary older than a write acknowledged
//! before it; in every phase, no read with a token that misses the write
//! the token came from (and some served by a standby). The measured
//! failover times are printed.
//!
//! It runs in CI's default suite. `PGPIPE_FAILOVER_WRITES` (default 300)
//! is how many acknowledged writes each phase waits for;
//! `scripts/failover.sh` runs it with a longer load.

mod common;

use std::collections::{BTreeMap, HashSet};
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use common::invariants::{commit_error, Outcome, Outcomes};
use pgpipe::cluster::{commit_with_token, Cluster, Consistency, Shard, WriteToken};
use pgpipe::{Pool, PoolConfig, Transaction};
use pgpipe_testkit::{PatroniCluster, PATRONI_PG_MAJOR};
use tokio::time::Instant;

/// The whole run, three failovers and the final check included.
const BOUND: Duration = Duration::from_secs(1500);
/// How long writes may take to resume on a new primary (a failure, not a
/// figure: the measured time is printed).
const RESUME_BOUND: Duration = Duration::from_secs(180);
/// How long a phase of load may take (generous: a loaded 2-core machine).
const PHASE_BOUND: Duration = Duration::from_secs(300);
/// How long the cluster may take to be healthy again after a failover (the
/// old primary rejoins, with pg_rewind when it must).
const HEAL_BOUND: Duration = Duration::from_secs(240);
const WRITERS: i64 = 6;
const READERS: usize = 2;
/// Writers through the `Cluster` (ids after the pool writers'), and the
/// read-your-writes readers using their tokens.
const CLUSTER_WRITERS: usize = 2;
const RYW_READERS: usize = 2;
/// Before the switchover, then from the start of each of the three
/// failovers on.
const PHASES: usize = 4;
const PHASE_NAMES: [&str; PHASES] = ["before", "switchover", "kill -9", "partition"];

fn writes_per_phase() -> u64 {
    std::env::var("PGPIPE_FAILOVER_WRITES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(300)
}

/// One acknowledged write: who acknowledged it and on which timeline.
#[derive(Debug, Clone, Copy)]
struct Ack {
    at: Instant,
    port: u16,
    timeline: u32,
}

/// Read-your-writes counters of one phase (before the switchover, then
/// from the start of each failover on).
#[derive(Default)]
struct RywPhase {
    /// Reads with a token that answered.
    reads: AtomicU64,
    /// Of those, reads a standby served (the others fell back to the
    /// primary: no standby had replayed the token in time).
    on_standby: AtomicU64,
    /// Reads that did not see the write their token came from.
    stale: AtomicU64,
    failed: AtomicU64,
}

/// Shared by the load tasks and the test.
#[derive(Default)]
struct Load {
    outcomes: Mutex<Outcomes>,
    acks: Mutex<Vec<Ack>>,
    ok: AtomicU64,
    /// The last acknowledged id of each pool writer (ids only grow per
    /// writer).
    last_acked: [AtomicI64; WRITERS as usize],
    /// Acknowledgments from a timeline older than one the same writer had
    /// already been acknowledged on.
    demoted_acks: AtomicU64,
    reads_ok: AtomicU64,
    reads_failed: AtomicU64,
    stale_reads: AtomicU64,
    standby_reads_ok: AtomicU64,
    standby_reads_failed: AtomicU64,
    /// The latest acknowledged write of each cluster writer and its token.
    tokens: [Mutex<Option<(i64, WriteToken)>>; CLUSTER_WRITERS],
    /// Which phase the run is in (index into `ryw`).
    phase: AtomicUsize,
    ryw: [RywPhase; PHASES],
    stop: AtomicBool,
}

/// Where a writer's transactions go.
#[derive(Clone)]
enum Via {
    /// A `Pool` on the multi-host URL (`target_session_attrs=read-write`).
    Pool(Pool),
    /// The shard's primary through a `Cluster`; commits yield a token.
    Cluster(Shard),
}

impl Via {
    async fn begin(&self) -> Result<Transaction<'static>, pgpipe::Error> {
        match self {
            Via::Pool(pool) => pool.transaction().await,
            Via::Cluster(shard) => shard.primary().transaction().await,
        }
    }
}

/// What acknowledged a write: the server's port, its WAL timeline, and
/// (through the cluster) the commit's token.
type Who = (u16, u32, Option<WriteToken>);

/// BEGIN; INSERT ... RETURNING the server's port and WAL timeline; COMMIT
/// (with a token through the cluster).
async fn write(via: &Via, id: i64, writer: i64) -> (Outcome, Option<Who>) {
    let Ok(tx) = via.begin().await else {
        return (Outcome::Failed, None);
    };
    let row = match tx
        .query_one(
            "INSERT INTO ids (id, writer) VALUES ($1, $2) \
             RETURNING inet_server_port(), substr(pg_walfile_name(pg_current_wal_lsn()), 1, 8)",
            (id, writer),
        )
        .await
    {
        Ok(row) => row,
        Err(_) => return (Outcome::Failed, None),
    };
    let port: i32 = row.get(0);
    let timeline: String = row.get(1);
    let port = u16::try_from(port).unwrap_or(0);
    let timeline = u32::from_str_radix(&timeline, 16).unwrap_or(0);
    let committed = match via {
        Via::Pool(_) => tx.commit().await.map(|()| None),
        Via::Cluster(_) => commit_with_token(tx).await.map(Some),
    };
    match committed {
        Ok(token) => (Outcome::Ok, Some((port, timeline, token))),
        Err(e) => (commit_error(&e), None),
    }
}

async fn writer(via: Via, load: Arc<Load>, w: i64) {
    let mut i = 0;
    let mut highest_timeline = 0;
    while !load.stop.load(Ordering::Relaxed) {
        i += 1;
        let id = w * 1_000_000_000 + i;
        let (outcome, who) = write(&via, id, w).await;
        if let (Outcome::Ok, Some((port, timeline, token))) = (outcome, who) {
            if timeline < highest_timeline {
                load.demoted_acks.fetch_add(1, Ordering::Relaxed);
            }
            highest_timeline = highest_timeline.max(timeline);
            load.acks.lock().unwrap().push(Ack {
                at: Instant::now(),
                port,
                timeline,
            });
            match token {
                Some(token) => {
                    *load.tokens[(w - WRITERS) as usize].lock().unwrap() = Some((id, token));
                }
                None => load.last_acked[w as usize].store(id, Ordering::SeqCst),
            }
            load.ok.fetch_add(1, Ordering::SeqCst);
        }
        load.outcomes.lock().unwrap().record(id, outcome);
        if outcome != Outcome::Ok {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
}

/// Reads on the replicas with a cluster writer's latest token (passed
/// through its text form, as through a cookie): the read must see the
/// write the token came from, whichever host serves it.
async fn ryw_reader(shard: Shard, load: Arc<Load>, r: usize) {
    let mut n = 0usize;
    while !load.stop.load(Ordering::Relaxed) {
        n += 1;
        let latest = *load.tokens[(n + r) % CLUSTER_WRITERS].lock().unwrap();
        let Some((id, token)) = latest else {
            tokio::time::sleep(Duration::from_millis(20)).await;
            continue;
        };
        let token: WriteToken = token.to_string().parse().unwrap();
        let phase = &load.ryw[load.phase.load(Ordering::SeqCst)];
        match shard
            .replica(Consistency::ReadYourWrites(token))
            .query_one(
                "SELECT (SELECT count(*) FROM ids WHERE id = $1), pg_is_in_recovery()",
                (id,),
            )
            .await
        {
            Ok(row) => {
                let seen: i64 = row.get(0);
                let on_standby: bool = row.get(1);
                phase.reads.fetch_add(1, Ordering::Relaxed);
                if on_standby {
                    phase.on_standby.fetch_add(1, Ordering::Relaxed);
                }
                if seen != 1 {
                    phase.stale.fetch_add(1, Ordering::Relaxed);
                }
            }
            Err(_) => {
                phase.failed.fetch_add(1, Ordering::Relaxed);
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
        }
    }
}

/// Reads on the primary must see every write acknowledged before they
/// started: the highest id of a writer is at least its last acknowledged
/// one.
async fn primary_reader(pool: Pool, load: Arc<Load>, r: usize) {
    let mut n = 0usize;
    while !load.stop.load(Ordering::Relaxed) {
        n += 1;
        let w = ((n + r) % WRITERS as usize) as i64;
        let floor = load.last_acked[w as usize].load(Ordering::SeqCst);
        match pool
            .query_one(
                "SELECT coalesce(max(id), 0) FROM ids WHERE writer = $1",
                (w,),
            )
            .await
        {
            Ok(row) => {
                let seen: i64 = row.get(0);
                if seen < floor {
                    load.stale_reads.fetch_add(1, Ordering::Relaxed);
                }
                load.reads_ok.fetch_add(1, Ordering::Relaxed);
            }
            Err(_) => {
                load.reads_failed.fetch_add(1, Ordering::Relaxed);
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
        }
    }
}

/// Read load on the replicas (counted; without a token a replica may lag).
async fn standby_reader(pool: Pool, load: Arc<Load>) {
    while !load.stop.load(Ordering::Relaxed) {
        match pool.query_one("SELECT count(*) FROM ids", ()).await {
            Ok(_) => load.standby_reads_ok.fetch_add(1, Ordering::Relaxed),
            Err(_) => {
                tokio::time::sleep(Duration::from_millis(20)).await;
                load.standby_reads_failed.fetch_add(1, Ordering::Relaxed)
            }
        };
    }
}

/// Runs blocking harness calls off the runtime.
async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> Result<T, pgpipe_testkit::TestkitError> + Send + 'static,
) -> T {
    tokio::task::spawn_blocking(f)
        .await
        .unwrap()
        .unwrap_or_else(|e| panic!("{e}"))
}

/// Waits until `n` more writes are acknowledged.
async fn more_writes(load: &Load, n: u64, what: &str) {
    let target = load.ok.load(Ordering::SeqCst) + n;
    let start = Instant::now();
    while load.ok.load(Ordering::SeqCst) < target {
        assert!(
            start.elapsed() < PHASE_BOUND,
            "{what}: {} of {n} writes acknowledged in {PHASE_BOUND:?}",
            n - (target - load.ok.load(Ordering::SeqCst))
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// One failover's figures.
struct Measured {
    name: &'static str,
    from: String,
    to: String,
    /// Until the harness saw the new leader take writes.
    leader: Duration,
    /// Until the first write acknowledged by the new leader.
    resumed: Duration,
}

/// Runs `fault`, which breaks the leader and waits until a leader takes
/// writes again, returning both; then waits for writes acknowledged by the
/// new leader. Returns the figures.
async fn failover(
    ha: &Arc<PatroniCluster>,
    load: &Load,
    name: &'static str,
    fault: impl FnOnce(&PatroniCluster) -> Result<(String, String), pgpipe_testkit::TestkitError>
        + Send
        + 'static,
) -> Measured {
    load.phase.fetch_add(1, Ordering::SeqCst);
    let started = Instant::now();
    let h = ha.clone();
    let (from, to) = blocking(move || fault(&h)).await;
    let leader = started.elapsed();
    if name == "partition" {
        // The proxy acknowledges what it holds, so clients cannot notice
        // the cut as their kernels would (tcp_user_timeout, keepalives): a
        // COMMIT in flight would wait for ever (query_timeout does not
        // bound COMMIT). Abort those connections now, as the kernel would.
        let aborted = ha.abort_partitioned_connections();
        println!("partition: {aborted} client connections to {from} aborted");
    }
    let new_port = ha.node(&to).unwrap().server_port();
    let acked_by_new = |load: &Load| {
        load.acks
            .lock()
            .unwrap()
            .iter()
            .find(|a| a.at >= started && a.port == new_port)
            .map(|a| a.at - started)
    };
    let resumed = loop {
        if let Some(d) = acked_by_new(load) {
            break d;
        }
        assert!(
            started.elapsed() < RESUME_BOUND,
            "{name}: no write acknowledged by the new primary {to} within {RESUME_BOUND:?}"
        );
        tokio::time::sleep(Duration::from_millis(5)).await;
    };
    let how = if from == to {
        " (crash recovery in place: Patroni kept the leader key)"
    } else {
        ""
    };
    println!(
        "{name}: {from} -> {to}{how}; the leader takes writes after {:.2} s, \
         pgpipe's writes resumed on it after {:.2} s",
        leader.as_secs_f64(),
        resumed.as_secs_f64()
    );
    Measured {
        name,
        from,
        to,
        leader,
        resumed,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn switchover_kill_and_partition_lose_no_acknowledged_write() {
    if let Ok(v) = std::env::var(pgpipe_testkit::VERSION_VAR) {
        if v != PATRONI_PG_MAJOR.to_string() {
            // The stack runs PostgreSQL 15 whatever the variable says
            // (Patroni 3.0's newest): the default run has tested it.
            eprintln!(
                "SKIPPED: the Patroni stack runs PostgreSQL {PATRONI_PG_MAJOR} only; \
                 it ran in the suite on the default version"
            );
            return;
        }
    }
    tokio::time::timeout(BOUND, run())
        .await
        .expect("the Patroni failover run exceeded its bound");
}

async fn run() {
    let ha = Arc::new(blocking(PatroniCluster::start).await);
    let leader = ha.leader().unwrap().expect("a leader");
    ha.node(&leader)
        .unwrap()
        .query("CREATE TABLE ids (id int8 PRIMARY KEY, writer int4 NOT NULL)")
        .unwrap();
    let per_phase = writes_per_phase();
    let params = "connect_timeout=2&query_timeout=5000&pool_max_size=8&pool_acquire_timeout=5000";
    let writes = Pool::connect(&ha.url(&format!("target_session_attrs=read-write&{params}")))
        .await
        .unwrap();
    let reads = Pool::connect(&ha.url(&format!("target_session_attrs=read-write&{params}")))
        .await
        .unwrap();
    let standby_reads =
        Pool::connect(&ha.url(&format!("target_session_attrs=prefer-standby&{params}")))
            .await
            .unwrap();

    // The same three nodes as one shard of a Cluster: roles are asked of
    // the servers (probed every 200 ms), read-your-writes reads wait up to
    // 3 s for a standby to replay their token, then read the primary.
    let cluster = Cluster::builder()
        .shard(
            0,
            ha.nodes().iter().map(|n| {
                format!(
                    "postgres://{}@{}:{}/postgres?connect_timeout=2&query_timeout=5000",
                    ha.superuser(),
                    n.host(),
                    n.port()
                )
            }),
        )
        .pool_config(
            PoolConfig::new()
                .max_size(4)
                .acquire_timeout(Duration::from_secs(5)),
        )
        .probe_interval(Duration::from_millis(200))
        .probe_timeout(Duration::from_secs(2))
        .token_wait(Duration::from_secs(3))
        .primary_wait(Duration::from_secs(10))
        .build()
        .unwrap();
    let shard = cluster.shard_id(0).unwrap();

    let load = Arc::new(Load::default());
    let mut tasks = Vec::new();
    for w in 0..WRITERS {
        tasks.push(tokio::spawn(writer(
            Via::Pool(writes.clone()),
            load.clone(),
            w,
        )));
    }
    for k in 0..CLUSTER_WRITERS {
        let w = WRITERS + k as i64;
        tasks.push(tokio::spawn(writer(
            Via::Cluster(shard.clone()),
            load.clone(),
            w,
        )));
    }
    for r in 0..RYW_READERS {
        tasks.push(tokio::spawn(ryw_reader(shard.clone(), load.clone(), r)));
    }
    for r in 0..READERS {
        tasks.push(tokio::spawn(primary_reader(reads.clone(), load.clone(), r)));
    }
    tasks.push(tokio::spawn(standby_reader(
        standby_reads.clone(),
        load.clone(),
    )));

    more_writes(&load, per_phase, "before the switchover").await;
    let mut measured = Vec::new();

    measured.push(
        failover(&ha, &load, "switchover", |h| {
            let from = h.switchover()?;
            Ok((from.clone(), h.wait_for_new_leader(&from)?))
        })
        .await,
    );
    more_writes(&load, per_phase, "after the switchover").await;
    let h = ha.clone();
    blocking(move || h.wait_healthy(HEAL_BOUND)).await;

    // Patroni fails the crashed primary over when it can, or (when the
    // synchronous standby's REST API answers late, on a loaded machine)
    // runs crash recovery and promotes the same node again: either way a
    // leader takes writes on a new timeline, and the invariants hold.
    measured.push(
        failover(&ha, &load, "kill -9", |h| {
            let crashed = h.kill_primary()?;
            let to = h.wait_for_recovery(&crashed)?;
            Ok((crashed.leader, to))
        })
        .await,
    );
    more_writes(&load, per_phase, "after kill -9").await;
    let h = ha.clone();
    blocking(move || h.wait_healthy(HEAL_BOUND)).await;

    measured.push(
        failover(&ha, &load, "partition", |h| {
            let from = h.partition_primary()?;
            Ok((from.clone(), h.wait_for_new_leader(&from)?))
        })
        .await,
    );
    more_writes(&load, per_phase, "during the partition").await;
    ha.heal();
    let h = ha.clone();
    let last_leader = blocking(move || h.wait_healthy(HEAL_BOUND)).await;
    more_writes(&load, per_phase, "after the partition healed").await;

    load.stop.store(true, Ordering::SeqCst);
    for t in tasks {
        t.await.unwrap();
    }

    // The checker reads the last primary on its own port.
    let node = ha.node(&last_leader).unwrap();
    let checker = pgpipe::connect(&format!(
        "postgres://{}@127.0.0.1:{}/postgres?target_session_attrs=read-write",
        ha.superuser(),
        node.server_port()
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

    let o = load.outcomes.lock().unwrap();
    let verdict = o.check(&present);
    let acks = load.acks.lock().unwrap();
    let mut by_timeline: BTreeMap<u32, HashSet<u16>> = BTreeMap::new();
    for a in acks.iter() {
        by_timeline.entry(a.timeline).or_default().insert(a.port);
    }
    let name_of = |port: u16| {
        ha.nodes()
            .iter()
            .find(|n| n.server_port() == port)
            .map_or_else(|| format!("port {port}"), |n| n.name().to_string())
    };
    println!(
        "patroni failover report: {} ok, {} failed, {} unknown ({} of them committed); \
         {} rows on the last primary ({last_leader}); reads on the primary: {} ok, {} failed, \
         {} stale; reads on standbys: {} ok, {} failed; writes acknowledged by a demoted node: {}",
        o.ok.len(),
        o.failed.len(),
        o.unknown.len(),
        verdict.unknown_committed,
        present.len(),
        load.reads_ok.load(Ordering::Relaxed),
        load.reads_failed.load(Ordering::Relaxed),
        load.stale_reads.load(Ordering::Relaxed),
        load.standby_reads_ok.load(Ordering::Relaxed),
        load.standby_reads_failed.load(Ordering::Relaxed),
        load.demoted_acks.load(Ordering::Relaxed),
    );
    println!(
        "  members reinitialized because they did not rejoin on their own: {:?}",
        ha.reinitialized()
    );
    for (timeline, ports) in &by_timeline {
        let names: Vec<String> = ports.iter().map(|p| name_of(*p)).collect();
        println!("  timeline {timeline}: writes acknowledged by {names:?}");
    }
    println!("  read-your-writes reads (tokens from the cluster's writers), by phase:");
    for (name, p) in PHASE_NAMES.iter().zip(&load.ryw) {
        println!(
            "    {name}: {} answered ({} by a standby, the rest by the primary), {} stale, {} failed",
            p.reads.load(Ordering::Relaxed),
            p.on_standby.load(Ordering::Relaxed),
            p.stale.load(Ordering::Relaxed),
            p.failed.load(Ordering::Relaxed),
        );
    }
    println!("| failover | from -> to | new leader takes writes | pgpipe's writes resumed |");
    println!("| --- | --- | --- | --- |");
    for m in &measured {
        println!(
            "| {} | {} -> {} | {:.2} s | {:.2} s |",
            m.name,
            m.from,
            m.to,
            m.leader.as_secs_f64(),
            m.resumed.as_secs_f64()
        );
    }

    verdict.assert_holds();
    assert_eq!(
        load.demoted_acks.load(Ordering::Relaxed),
        0,
        "writes acknowledged by a demoted node"
    );
    for (timeline, ports) in &by_timeline {
        assert_eq!(
            ports.len(),
            1,
            "two nodes acknowledged writes on timeline {timeline}: {ports:?}"
        );
    }
    assert_eq!(
        load.stale_reads.load(Ordering::Relaxed),
        0,
        "reads on the primary missed acknowledged writes"
    );
    for (name, p) in PHASE_NAMES.iter().zip(&load.ryw) {
        assert_eq!(
            p.stale.load(Ordering::Relaxed),
            0,
            "{name}: reads with a token missed the write it came from"
        );
        assert!(
            p.reads.load(Ordering::Relaxed) > 0,
            "{name}: no read-your-writes read answered"
        );
    }
    assert!(
        load.ryw
            .iter()
            .map(|p| p.on_standby.load(Ordering::Relaxed))
            .sum::<u64>()
            > 0,
        "no read-your-writes read was served by a standby"
    );
    // Every failover moved the writes: the last one's timeline is later
    // than the first's by at least the three promotions.
    let first = *by_timeline.keys().next().unwrap();
    let last = *by_timeline.keys().last().unwrap();
    assert!(last >= first + 3, "timelines {first}..{last}");
    for m in measured.iter().filter(|m| m.name != "kill -9") {
        assert_ne!(m.from, m.to, "{}: the leader did not change", m.name);
    }
}
