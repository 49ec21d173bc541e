//! The `shards` workload on a small fleet of its own (2 servers with 4
//! shard databases each, a standby for the first): both drivers run the
//! mix, and the databases themselves say that the writes reached every
//! shard, as many as the drivers counted. Short runs: no timing
//! assertions.

use std::time::Duration;

use clap::Parser;
use pgpipe_bench::alloc::CountingAlloc;
use pgpipe_bench::catalog::{DriverKind, Workload};
use pgpipe_bench::cli::{Args, Plan};
use pgpipe_bench::drivers::pgpipe::shards as pgpipe;
use pgpipe_bench::drivers::tokio_postgres::shards as deadpool;
use pgpipe_bench::fleet::{FleetSpec, SHARDS_FLEET};
use pgpipe_bench::runner::shards::ShardsSubject;

// As in the bench binary: the clients' heap is measured through it.
#[global_allocator]
static GLOBAL: CountingAlloc = CountingAlloc;

const SMALL: FleetSpec = FleetSpec {
    clusters: 2,
    dbs_per_cluster: 4,
    replicated: 1,
    keys: 2_000,
};

#[test]
fn the_measured_workload_is_100_shards_half_of_them_replicated() {
    assert_eq!(SHARDS_FLEET.shards(), 100);
    assert_eq!(SHARDS_FLEET.replicated_shards(), 50);
    let args = Args::try_parse_from(["pgpipe-bench", "--workloads", "shards"]).expect("args");
    let plan = Plan::from_args(&args).expect("plan");
    assert_eq!(
        plan.drivers,
        [DriverKind::Pgpipe, DriverKind::DeadpoolPostgres],
        "only the two clients of the comparison run it"
    );
    let variants = plan.variants(Workload::Shards);
    assert_eq!(variants.len(), 1);
    assert_eq!(variants[0].total_tasks(), 256);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn both_drivers_run_the_mix_and_the_writes_reach_every_shard() {
    let tasks = 16;
    let mut subjects = Vec::new();
    for driver in [DriverKind::Pgpipe, DriverKind::DeadpoolPostgres] {
        let subject = ShardsSubject::connect(driver, SMALL, tasks)
            .await
            .unwrap_or_else(|e| panic!("{driver}: {e}"));
        subjects.push((driver, subject));
    }
    let fleet = subjects[0].1.fleet().clone();
    assert_eq!(fleet.topology().shards.len(), 8);
    // 8 shard databases on the primaries, 4 of them on the standby too.
    let hosts = 12u64;
    for (driver, subject) in &subjects {
        let out = subject
            .run(Duration::from_millis(400), None)
            .await
            .unwrap_or_else(|e| panic!("{driver}: {e}"));
        assert!(out.ops > 0, "{driver}");
        let held = out.server_connections.expect("server connections");
        let per_host = match driver {
            DriverKind::Pgpipe => (pgpipe::MAX_SIZE + 1) as u64, // + the probe's session
            _ => deadpool::MAX_SIZE as u64,
        };
        assert!(
            (1..=hosts * per_host).contains(&held),
            "{driver} holds {held} server connections"
        );
        assert!(out.client_heap_bytes.expect("heap") > 0, "{driver}");
        let (reads, standby_reads, writes) = subject.tally();
        assert!(
            reads > 0 && writes > 0,
            "{driver}: {reads} reads, {writes} writes"
        );
        assert!(
            standby_reads > 0 && standby_reads < reads,
            "{driver}: {standby_reads} of {reads} reads on a standby (half the shards have one)"
        );
    }
    // Every write added one to one row of the shard it was routed to (an
    // UPDATE routed elsewhere finds no row and fails the run).
    let per_shard = fleet.writes_per_shard().await.expect("writes per shard");
    let counted: u64 = subjects.iter().map(|(_, s)| s.tally().2).sum();
    assert_eq!(per_shard.iter().sum::<u64>(), counted, "{per_shard:?}");
    assert!(
        per_shard.iter().all(|&n| n > 0),
        "every shard got writes: {per_shard:?}"
    );
    drop(subjects);
    drop(fleet);
}
