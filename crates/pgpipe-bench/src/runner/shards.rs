//! The `shards` workload's subject: a driver connected to the shared
//! fleet, primed so that its pools have grown to what the load needs,
//! and after every run the server connections it holds.

use std::sync::Arc;
use std::time::Duration;

use super::loops::RunSessions;
use super::RunOutcome;
use crate::alloc;
use crate::catalog::DriverKind;
use crate::drivers::pgpipe::shards::Shards as PgpipeShards;
use crate::drivers::tokio_postgres::shards::{self as deadpool, Shards as DeadpoolShards};
use crate::error::BenchError;
use crate::families::shards::Tally;
use crate::fleet::{Fleet, FleetSpec};

/// How long a new subject runs the full load before its memory is taken:
/// deadpool-postgres's pools open connections as the load asks for them.
pub const PRIME: Duration = Duration::from_secs(1);

/// A driver on the fleet.
pub struct ShardsSubject {
    // Dropped before the fleet: connections close before servers stop.
    sessions: Box<dyn RunSessions>,
    tally: Arc<dyn Fn() -> (u64, u64, u64) + Send + Sync>,
    tasks: usize,
    application_name: String,
    held_bytes: u64,
    fleet: Arc<Fleet>,
}

impl std::fmt::Debug for ShardsSubject {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ShardsSubject")
            .field("application_name", &self.application_name)
            .field("tasks", &self.tasks)
            .field("held_bytes", &self.held_bytes)
            .finish_non_exhaustive()
    }
}

fn tally_of<S: Send + Sync + 'static>(
    s: &Arc<S>,
    get: fn(&S) -> &Tally,
) -> Arc<dyn Fn() -> (u64, u64, u64) + Send + Sync> {
    let s = s.clone();
    Arc::new(move || {
        let t = get(&s);
        (t.reads(), t.standby_reads(), t.writes())
    })
}

impl ShardsSubject {
    /// `driver` on the fleet of `spec` (started if this run has none yet),
    /// run for [`PRIME`] with `tasks` tasks; its memory is the growth of
    /// the live heap over connecting and priming (every other subject sits
    /// idle meanwhile).
    pub async fn connect(
        driver: DriverKind,
        spec: FleetSpec,
        tasks: usize,
    ) -> Result<ShardsSubject, BenchError> {
        let fleet = Fleet::shared(spec).await?;
        let application_name = format!("pgpipe-bench-shards-{driver}");
        let before = alloc::live_bytes();
        let (sessions, tally): (Box<dyn RunSessions>, _) = match driver {
            DriverKind::Pgpipe => {
                let s = Arc::new(PgpipeShards::connect(fleet.topology(), &application_name)?);
                let tally = tally_of(&s, PgpipeShards::tally);
                (Box::new(vec![s]), tally)
            }
            DriverKind::DeadpoolPostgres => {
                let s = Arc::new(DeadpoolShards::connect(
                    fleet.topology(),
                    &application_name,
                    deadpool::MAX_SIZE,
                )?);
                let tally = tally_of(&s, DeadpoolShards::tally);
                (Box::new(vec![s]), tally)
            }
            other => return Err(BenchError::new(format!("{other} does not run shards"))),
        };
        tokio::time::timeout(PRIME + super::GRACE, sessions.run(tasks, PRIME, None))
            .await
            .map_err(|_| BenchError::new(format!("{driver}: priming shards timed out")))??;
        let held_bytes = alloc::live_bytes().saturating_sub(before);
        Ok(ShardsSubject {
            sessions,
            tally,
            tasks,
            application_name,
            held_bytes,
            fleet,
        })
    }

    /// One run: closed loop (or open loop at `rate`), then the server
    /// connections the driver holds, counted on every server, and the CPU
    /// of every server's backends during the run.
    pub async fn run(
        &self,
        duration: Duration,
        rate: Option<f64>,
    ) -> Result<RunOutcome, BenchError> {
        let before = self.fleet.cpu_snapshot().await;
        let mut out = self.sessions.run(self.tasks, duration, rate).await?;
        if let (Some(before), Some(after)) = (before, self.fleet.cpu_snapshot().await) {
            out.server_cpu = Some(self.fleet.cpu_between(&before, &after));
        }
        out.server_connections = Some(self.fleet.connections(&self.application_name).await?);
        out.client_heap_bytes = Some(self.held_bytes);
        Ok(out)
    }

    /// Reads, reads a standby served, and writes, so far.
    pub fn tally(&self) -> (u64, u64, u64) {
        (self.tally)()
    }

    /// The fleet it runs on.
    pub fn fleet(&self) -> &Arc<Fleet> {
        &self.fleet
    }

    /// Live heap bytes the driver held after connecting and priming.
    pub fn held_bytes(&self) -> u64 {
        self.held_bytes
    }
}
