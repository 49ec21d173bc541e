//! The `shards` workload's servers: a few throwaway clusters from
//! pgpipe-testkit, many databases on each (one shard per database), and a
//! streaming standby for some of the clusters, so that some shards have a
//! replica. Started once per run and shared by the drivers measured on it
//! (each client's connections are told apart by `application_name`);
//! stopped when the last of them lets go.

use std::sync::{Arc, Weak};
use std::time::Duration;

use pgpipe_testkit::Cluster;

use crate::error::BenchError;
use crate::families::shards::{shard_of, ShardHosts, Topology};
use crate::server_cpu::{ServerCpu, ServerSnapshot};

/// How big a fleet is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FleetSpec {
    /// Primary servers.
    pub clusters: usize,
    /// Shard databases on each.
    pub dbs_per_cluster: usize,
    /// How many of the clusters (the first ones) get a streaming standby:
    /// their shards have a replica.
    pub replicated: usize,
    /// Keys over all shards (`0..keys`).
    pub keys: i64,
}

/// The measured fleet: 100 shards, 25 databases on each of 4 clusters,
/// the first 2 clusters with a standby (shards 0-49 have a replica),
/// 1,000 keys per shard on average.
pub const SHARDS_FLEET: FleetSpec = FleetSpec {
    clusters: 4,
    dbs_per_cluster: 25,
    replicated: 2,
    keys: 100_000,
};

impl FleetSpec {
    /// Shards in all.
    pub fn shards(&self) -> usize {
        self.clusters * self.dbs_per_cluster
    }

    /// Shards with a replica.
    pub fn replicated_shards(&self) -> usize {
        self.replicated.min(self.clusters) * self.dbs_per_cluster
    }
}

/// How long starting the servers may take (initdb, databases, base
/// backups on a loaded 2-core machine).
pub const START_BOUND: Duration = Duration::from_secs(600);

/// The `application_name` of the fleet's own monitoring sessions.
const MONITOR: &str = "pgpipe-bench-fleet-monitor";

/// The servers, their shards, and one monitoring session per server.
pub struct Fleet {
    // Dropped first: sessions close before their servers stop.
    monitors: Vec<pgpipe::Client>,
    /// The backends' CPU of each server, where its processes are visible.
    cpus: Vec<ServerCpu>,
    topology: Topology,
    spec: FleetSpec,
    /// Standbys stop before their primaries.
    standbys: Vec<Cluster>,
    primaries: Vec<Cluster>,
}

impl std::fmt::Debug for Fleet {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Fleet")
            .field("spec", &self.spec)
            .field("servers", &(self.primaries.len() + self.standbys.len()))
            .finish_non_exhaustive()
    }
}

fn db_name(shard: usize) -> String {
    format!("shard_{shard:03}")
}

/// One cluster with its shard databases filled, and its standby if it
/// gets one (started after the fill, so the base backup holds the rows).
fn start_cluster(spec: FleetSpec, index: usize) -> Result<(Cluster, Option<Cluster>), BenchError> {
    let cluster = Cluster::start()?;
    let count = spec.shard_count_u32();
    cluster.execute("postgres", "CREATE DATABASE shard_template")?;
    cluster.execute(
        "shard_template",
        "CREATE TABLE kv (k int8 PRIMARY KEY, v int8 NOT NULL DEFAULT 0)",
    )?;
    for d in 0..spec.dbs_per_cluster {
        let shard = index * spec.dbs_per_cluster + d;
        let db = db_name(shard);
        cluster.execute(
            "postgres",
            &format!("CREATE DATABASE {db} TEMPLATE shard_template"),
        )?;
        let keys: Vec<String> = (0..spec.keys)
            .filter(|&k| shard_of(k, count) as usize == shard)
            .map(|k| k.to_string())
            .collect();
        cluster.execute(
            &db,
            &format!(
                "INSERT INTO kv (k) SELECT unnest('{{{}}}'::int8[])",
                keys.join(",")
            ),
        )?;
        cluster.execute(&db, "VACUUM ANALYZE kv")?;
    }
    let standby = if index < spec.replicated {
        let standby = cluster.start_standby()?;
        cluster.wait_replicated(&standby)?;
        Some(standby)
    } else {
        None
    };
    Ok((cluster, standby))
}

impl FleetSpec {
    fn shard_count_u32(&self) -> u32 {
        u32::try_from(self.shards()).unwrap_or(u32::MAX)
    }
}

impl Fleet {
    /// Starts the servers of `spec` (the clusters in parallel), fills
    /// every shard and opens the monitoring sessions. Blocks for seconds
    /// to minutes: call it off the runtime's workers
    /// ([`Fleet::shared`] does).
    pub fn start_blocking(spec: FleetSpec) -> Result<Fleet, BenchError> {
        crate::install::ensure_postgres();
        let started: Vec<Result<(Cluster, Option<Cluster>), BenchError>> =
            std::thread::scope(|s| {
                let handles: Vec<_> = (0..spec.clusters)
                    .map(|i| s.spawn(move || start_cluster(spec, i)))
                    .collect();
                handles
                    .into_iter()
                    .map(|h| {
                        h.join()
                            .unwrap_or_else(|_| Err(BenchError::new("starting a cluster panicked")))
                    })
                    .collect()
            });
        let mut primaries = Vec::new();
        let mut standbys = Vec::new();
        let mut first_error = None;
        for r in started {
            match r {
                Ok((p, s)) => {
                    primaries.push(p);
                    standbys.extend(s);
                }
                Err(e) => {
                    first_error.get_or_insert(e);
                }
            }
        }
        if let Some(e) = first_error {
            return Err(e.context("shards: starting the fleet"));
        }
        let mut shards = Vec::with_capacity(spec.shards());
        for (c, primary) in primaries.iter().enumerate() {
            let standby = (c < spec.replicated).then(|| &standbys[c]);
            for d in 0..spec.dbs_per_cluster {
                let db = db_name(c * spec.dbs_per_cluster + d);
                shards.push(ShardHosts {
                    primary: primary.superuser_url(&db),
                    replica: standby.map(|s| s.superuser_url(&db)),
                });
            }
        }
        Ok(Fleet {
            monitors: Vec::new(),
            cpus: Vec::new(),
            topology: Topology {
                shards,
                keys: spec.keys,
            },
            spec,
            standbys,
            primaries,
        })
    }

    /// The fleet of `spec` that the drivers of this run share: started on
    /// first use (off the runtime's workers, bounded by [`START_BOUND`]),
    /// stopped when the last holder drops it.
    pub async fn shared(spec: FleetSpec) -> Result<Arc<Fleet>, BenchError> {
        static CURRENT: tokio::sync::Mutex<Option<(FleetSpec, Weak<Fleet>)>> =
            tokio::sync::Mutex::const_new(None);
        let mut current = CURRENT.lock().await;
        if let Some((s, weak)) = &*current {
            if *s == spec {
                if let Some(fleet) = weak.upgrade() {
                    return Ok(fleet);
                }
            }
        }
        let start = tokio::task::spawn_blocking(move || Fleet::start_blocking(spec));
        let mut fleet = tokio::time::timeout(START_BOUND, start)
            .await
            .map_err(|_| BenchError::new("shards: the fleet did not start within 10 minutes"))?
            .map_err(|e| BenchError::new(format!("shards: starting the fleet: {e}")))??;
        fleet.connect_monitors().await?;
        let fleet = Arc::new(fleet);
        *current = Some((spec, Arc::downgrade(&fleet)));
        Ok(fleet)
    }

    async fn connect_monitors(&mut self) -> Result<(), BenchError> {
        for server in self.primaries.iter().chain(&self.standbys) {
            // pg_stat_activity shows the sessions of every database.
            let url = crate::families::shards::named(&server.superuser_url("postgres"), MONITOR);
            self.monitors.push(pgpipe::connect(&url).await?);
            if let Some(cpu) = ServerCpu::connect(&url).await? {
                self.cpus.push(cpu);
            }
        }
        Ok(())
    }

    /// The backends' CPU of every server now (`None` unless every server's
    /// processes are visible here).
    pub async fn cpu_snapshot(&self) -> Option<Vec<ServerSnapshot>> {
        if self.cpus.len() != self.monitors.len() {
            return None;
        }
        let mut all = Vec::with_capacity(self.cpus.len());
        for cpu in &self.cpus {
            all.push(cpu.snapshot().await.ok()?);
        }
        Some(all)
    }

    /// The servers' backend CPU between two [`cpu_snapshot`](Self::cpu_snapshot)s.
    pub fn cpu_between(&self, start: &[ServerSnapshot], end: &[ServerSnapshot]) -> Duration {
        self.cpus
            .iter()
            .zip(start.iter().zip(end))
            .map(|(cpu, (a, b))| cpu.between(a, b))
            .sum()
    }

    /// The shards and keys.
    pub fn topology(&self) -> &Topology {
        &self.topology
    }

    /// Its size.
    pub fn spec(&self) -> FleetSpec {
        self.spec
    }

    /// Server connections named `application_name`, over every server of
    /// the fleet (`pg_stat_activity`).
    pub async fn connections(&self, application_name: &str) -> Result<u64, BenchError> {
        let mut total = 0;
        for m in &self.monitors {
            let row = m
                .query_one(
                    "SELECT count(*) FROM pg_stat_activity WHERE application_name = $1",
                    (application_name,),
                )
                .await?;
            total += row.try_get::<i64, _>(0)?.max(0) as u64;
        }
        Ok(total)
    }

    /// Writes each shard received so far, from its primary: every write
    /// adds one to one row's `v`, which starts at 0.
    pub async fn writes_per_shard(&self) -> Result<Vec<u64>, BenchError> {
        let mut out = Vec::with_capacity(self.topology.shards.len());
        for shard in &self.topology.shards {
            let client =
                pgpipe::connect(&crate::families::shards::named(&shard.primary, MONITOR)).await?;
            let row = client
                .query_one("SELECT coalesce(sum(v), 0)::int8, count(*) FROM kv", ())
                .await?;
            let (sum, rows): (i64, i64) = (row.try_get(0)?, row.try_get(1)?);
            if rows == 0 {
                return Err(BenchError::new(format!(
                    "shards: {} holds no keys",
                    shard.primary
                )));
            }
            out.push(sum.max(0) as u64);
            client.close();
        }
        Ok(out)
    }
}
