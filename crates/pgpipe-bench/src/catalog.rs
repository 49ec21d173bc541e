//! Which driver runs which workload: the reasons a driver shows `-`.
//! The names themselves live below the drivers (`crate::workload`,
//! `crate::driver_kind`), so that drivers never import the catalog.

pub use crate::driver_kind::DriverKind;
pub use crate::workload::{PoolMode, Variant, Workload};

use std::sync::Arc;

use crate::drivers::pgpipe::pool::PgpipePool;
use crate::drivers::tokio_postgres::deadpool::Deadpool;
use crate::drivers::{self, coalesced, pgpipe, raw, sqlx, tokio_postgres, DynOp, Op};
use crate::error::BenchError;
use crate::families::ozo;
use crate::families::pool::PooledOp;
use crate::families::stream::{limit, Tally, STREAM_SQL};
use crate::measure::LowWater;
use crate::shape::{OzoCase, Shape};

impl DriverKind {
    /// The oldest server major the driver can talk to (`None`: any the
    /// tool supports).
    pub fn min_server_major(self) -> Option<u32> {
        match self {
            DriverKind::ZeroPostgres => Some(drivers::zero::MIN_SERVER_MAJOR),
            _ => None,
        }
    }

    /// Why this driver cannot run `variant` of `workload`, or `None` when
    /// it can.
    pub fn unsupported(self, workload: Workload, variant: &Variant) -> Option<&'static str> {
        use DriverKind as D;
        let pooled_ozo =
            matches!(variant.shape, Shape::Ozo(c) if c != OzoCase::Basic && c != OzoCase::Reuse);
        match (self, workload) {
            (D::Pgpipe | D::DeadpoolPostgres, Workload::Shards) => None,
            (_, Workload::Shards) => Some(
                "measured for pgpipe's Cluster against deadpool-postgres pools per shard",
            ),
            (D::Pgpipe | D::TokioPostgres | D::Asyncpg | D::Pgx, Workload::Magicstack) => None,
            (_, Workload::Magicstack) => {
                Some("measured for pgpipe and tokio-postgres against asyncpg and pgx")
            }
            (D::Asyncpg | D::Pgx, _) => Some("runs MagicStack's queries only (magicstack)"),
            (D::XitcaPostgres | D::ZeroPostgres, _) => newest_peer_unsupported(self, workload, variant),
            (
                D::PgpipeCoalesced,
                Workload::Latency | Workload::Pipeline | Workload::Unprepared | Workload::Pool,
            ) if variant.pool != PoolMode::Checkout && variant.pool != PoolMode::Transaction => {
                None
            }
            (D::PgpipeCoalesced, _) => Some(
                "coalesced Sync is measured on point statements (pipeline, unprepared, pool); \
                 TechEmpower's rules forbid it",
            ),
            (D::Raw | D::Sqlx | D::Pgbench, _) if variant.shape == Shape::Failing => {
                Some("measured for pgpipe (coalesced or not) against tokio-postgres")
            }
            (D::Raw | D::Sqlx, Workload::Batch) => Some(
                "no batch of its own (sqlx cannot pipeline; raw's floor for a batch is pgbench's \\startpipeline)",
            ),
            (D::Pgbench, Workload::Batch) => None,
            (D::Pgbench, w) if !w.is_point() => Some("pgbench cannot decode rows client-side"),
            (D::DeadpoolPostgres, Workload::Ozo) if !pooled_ozo => {
                Some("no pool in this row: see tokio-postgres")
            }
            (D::DeadpoolPostgres, Workload::Ozo) => None,
            (D::DeadpoolPostgres, w) if w != Workload::Pool => {
                Some("deadpool-postgres runs the pool and ozo workloads only")
            }
            (D::DeadpoolPostgres, _) if variant.pool == PoolMode::Dedicated => {
                Some("dedicated connections: no pool")
            }
            (D::TokioPostgres, Workload::Pool) if variant.pool != PoolMode::Dedicated => {
                Some("no pool of its own: see deadpool-postgres")
            }
            (D::TokioPostgres, Workload::Ozo) if pooled_ozo => {
                Some("no pool of its own: see deadpool-postgres")
            }
            (D::Sqlx | D::Raw | D::Pgbench, Workload::Pool | Workload::Ozo) => {
                Some("not measured in this workload")
            }
            (D::Raw, Workload::Techempower)
                if variant.shape == Shape::Te(crate::shape::TeCase::Updates) =>
            {
                Some("raw cannot express read-then-update (two dependent phases)")
            }
            (D::Raw, Workload::Stream) => Some("raw has no streaming API to measure"),
            (D::Pgbench, Workload::Copy) => Some("not measured in this workload"),
            _ => None,
        }
    }
}

/// Why `driver` cannot talk to a server of `server_major` (`None`: it
/// can, or the version is unknown and connecting will tell).
pub fn server_too_old(driver: DriverKind, server_major: Option<u32>) -> Option<String> {
    let (need, have) = (driver.min_server_major()?, server_major?);
    (have < need).then(|| {
        format!(
            "speaks protocol 3.2 only: needs PostgreSQL {need}+, the server is {have} \
             (PGPIPE_PG_VERSION={need} starts a {need} cluster)"
        )
    })
}

/// What xitca-postgres and zero-postgres do not run (issue 30's peers:
/// point selects, `rows-*` and `stream` so far).
fn newest_peer_unsupported(
    driver: DriverKind,
    workload: Workload,
    variant: &Variant,
) -> Option<&'static str> {
    match (workload, variant.shape) {
        (_, Shape::Failing) => {
            Some("measured for pgpipe (coalesced or not) against tokio-postgres")
        }
        (Workload::Unprepared, _) => {
            Some("no typed unprepared path (its SQL-text query returns text only)")
        }
        (_, Shape::Replay) if driver == DriverKind::ZeroPostgres => {
            Some("the replay server answers protocol 3.0; zero-postgres speaks 3.2 only")
        }
        (Workload::Latency | Workload::Pipeline | Workload::Stream, _) => None,
        (Workload::Techempower, _) => None,
        (Workload::Ozo, Shape::Ozo(OzoCase::Basic | OzoCase::Reuse)) => None,
        (Workload::Ozo, _) => Some("no pooled ozo adapter yet: basic and reuse only"),
        (w, _) if w.is_rows() => None,
        _ => Some("adapter not written yet: point selects, rows-*, stream, techempower and ozo basic/reuse so far"),
    }
}

/// Why the external `driver` (asyncpg, pgx) cannot run on this machine
/// (`None`: it can, or it is not external). Checked once per process; may
/// build the pgx program, fetching its modules from the Go proxy.
pub async fn external_missing(driver: DriverKind) -> Option<String> {
    if !driver.is_external() {
        return None;
    }
    drivers::external::availability(driver, drivers::external::Fetch::Allowed)
        .await
        .err()
}

/// Receives a driver's connected sessions with their concrete type, so the
/// runner's loop is compiled per adapter (one direct call per operation).
pub trait Connected {
    /// What the receiver makes of them.
    type Out;
    /// One session per connection; each gets the variant's tasks.
    fn sessions<S: Op>(self, sessions: Vec<Arc<S>>) -> Self::Out;
    /// One pool (or `ozo` row) that all `tasks` tasks share.
    fn pooled<S: Op>(self, session: Arc<S>, tasks: usize) -> Self::Out;
}

/// Connects an in-process driver for `variant` of `workload` and hands the
/// sessions, typed, to `to`. (`stream`, `pgbench` and the `raw` floor's
/// point and row reads have runners of their own.)
pub async fn connect_sessions<C: Connected>(
    driver: DriverKind,
    url: &str,
    workload: Workload,
    variant: &Variant,
    to: C,
) -> Result<C::Out, BenchError> {
    use DriverKind as D;
    let n = variant.connections.max(1);
    let no = |family: &str| BenchError::new(format!("{driver} does not run {family}"));
    Ok(match variant.shape {
        Shape::Ozo(case) => {
            let expected = ozo::expected(url).await?;
            let tasks = variant.total_tasks();
            match driver {
                D::Pgpipe => to.pooled(
                    Arc::new(pgpipe::ozo::Conn::connect(url, case, n, expected).await?),
                    tasks,
                ),
                D::TokioPostgres | D::DeadpoolPostgres => to.pooled(
                    Arc::new(tokio_postgres::ozo::Conn::connect(url, case, n, expected).await?),
                    tasks,
                ),
                D::XitcaPostgres => to.pooled(
                    Arc::new(drivers::xitca::ozo::Conn::connect(url, case, expected).await?),
                    tasks,
                ),
                D::ZeroPostgres => to.pooled(
                    Arc::new(drivers::zero::ozo::Conn::connect(url, case, expected).await?),
                    tasks,
                ),
                _ => return Err(no("ozo")),
            }
        }
        Shape::Te(case) => match driver {
            D::Pgpipe => one(to, pgpipe::techempower::Conn::connect(url, case).await?),
            D::TokioPostgres => one(
                to,
                tokio_postgres::techempower::Conn::connect(url, case).await?,
            ),
            D::Sqlx => one(to, sqlx::techempower::Conn::connect(url, case).await?),
            D::XitcaPostgres => one(
                to,
                drivers::xitca::techempower::Conn::connect(url, case).await?,
            ),
            D::ZeroPostgres => one(
                to,
                drivers::zero::techempower::Conn::connect(url, case).await?,
            ),
            _ => return Err(no("techempower")),
        },
        Shape::Copy(case) => match driver {
            D::Pgpipe => one(to, pgpipe::copy::Conn::connect(url, case).await?),
            D::TokioPostgres => one(to, tokio_postgres::copy::Conn::connect(url, case).await?),
            D::Sqlx => one(to, sqlx::copy::Conn::connect(url, case).await?),
            D::Raw => one(to, raw::copy::Conn::connect(url, case).await?),
            _ => return Err(no("copy")),
        },
        Shape::Failing => match driver {
            D::Pgpipe | D::PgpipeCoalesced => {
                let coalesced = driver == D::PgpipeCoalesced;
                each(to, n, || pgpipe::failing::Failing::connect(url, coalesced)).await?
            }
            D::TokioPostgres => {
                each(to, n, || tokio_postgres::failing::Failing::connect(url)).await?
            }
            _ => return Err(no("the failing pipeline")),
        },
        Shape::Batch { size } => match driver {
            D::Pgpipe => one(to, pgpipe::batch::Batch::connect(url, size).await?),
            D::TokioPostgres => one(to, tokio_postgres::batch::Batch::connect(url, size).await?),
            _ => return Err(no("batch")),
        },
        Shape::Magic(query) => match driver {
            D::Pgpipe => each(to, n, || pgpipe::magicstack::Conn::connect(url, query)).await?,
            D::TokioPostgres => {
                each(to, n, || {
                    tokio_postgres::magicstack::Conn::connect(url, query)
                })
                .await?
            }
            _ => return Err(no("magicstack")),
        },
        Shape::Shards => {
            return Err(BenchError::new(
                "shards runs on a fleet of its own (runner::shards)",
            ))
        }
        _ if workload == Workload::Pool && variant.pool != PoolMode::Dedicated => {
            connect_pooled(driver, url, variant, to).await?
        }
        shape => {
            let streamed = shape == Shape::Streamed;
            match driver {
                D::Pgpipe => {
                    let url = crate::tls::url(url);
                    each(to, n, || pgpipe::Conn::connect(&url, workload, streamed)).await?
                }
                D::PgpipeCoalesced => {
                    let url = coalesced(&crate::tls::url(url));
                    each(to, n, || pgpipe::Conn::connect(&url, workload, streamed)).await?
                }
                // Handles --tls itself (its URL parser knows no verify-full).
                D::TokioPostgres => {
                    each(to, n, || {
                        tokio_postgres::Conn::connect(url, workload, streamed)
                    })
                    .await?
                }
                D::Sqlx => {
                    let url = crate::tls::url(url);
                    each(to, n, || sqlx::Conn::connect(&url, workload, streamed)).await?
                }
                D::XitcaPostgres => {
                    each(to, n, || drivers::xitca::Conn::connect(url, workload)).await?
                }
                D::ZeroPostgres => {
                    each(to, n, || {
                        drivers::zero::Conn::connect(url, workload, streamed)
                    })
                    .await?
                }
                other => {
                    return Err(BenchError::new(format!(
                        "{other} is not an in-process session driver"
                    )))
                }
            }
        }
    })
}

/// A pooled session for a `pool` variant that is not `Dedicated`:
/// pgpipe's `Pool` or deadpool-postgres; all the variant's tasks share it.
async fn connect_pooled<C: Connected>(
    driver: DriverKind,
    url: &str,
    variant: &Variant,
    to: C,
) -> Result<C::Out, BenchError> {
    use DriverKind as D;
    let tasks = variant.total_tasks();
    let pgpipe_pool = |url: String, max_size, lane: (Option<usize>, Option<usize>), op| async move {
        PgpipePool::connect(&url, max_size, lane, op).await
    };
    Ok(match (driver, variant.pool) {
        (
            D::Pgpipe | D::PgpipeCoalesced,
            PoolMode::Shared {
                max_size,
                shared,
                line_at,
            },
        ) => {
            let url = if driver == D::PgpipeCoalesced {
                coalesced(url)
            } else {
                url.to_string()
            };
            let pool = pgpipe_pool(url, max_size, (shared, line_at), PooledOp::Shared).await?;
            to.pooled(Arc::new(pool), tasks)
        }
        (D::Pgpipe, PoolMode::Checkout) => to.pooled(
            Arc::new(
                pgpipe_pool(
                    url.to_string(),
                    variant.connections,
                    (None, None),
                    PooledOp::Checkout,
                )
                .await?,
            ),
            tasks,
        ),
        (D::Pgpipe, PoolMode::Transaction) => to.pooled(
            Arc::new(
                pgpipe_pool(
                    url.to_string(),
                    variant.connections,
                    (None, None),
                    PooledOp::Transaction,
                )
                .await?,
            ),
            tasks,
        ),
        (D::DeadpoolPostgres, PoolMode::Shared { .. } | PoolMode::Checkout) => to.pooled(
            Arc::new(Deadpool::connect(url, variant.connections, false).await?),
            tasks,
        ),
        (D::DeadpoolPostgres, PoolMode::Transaction) => to.pooled(
            Arc::new(Deadpool::connect(url, variant.connections, true).await?),
            tasks,
        ),
        (other, mode) => {
            return Err(BenchError::new(format!(
                "{other} has no pooled session for {mode:?}"
            )))
        }
    })
}

/// One session (the workload runs all its tasks on one connection).
fn one<C: Connected, S: Op>(to: C, session: S) -> C::Out {
    to.sessions(vec![Arc::new(session)])
}

/// `n` sessions, connected one after another.
async fn each<C, S, F, Fut>(to: C, n: usize, connect: F) -> Result<C::Out, BenchError>
where
    C: Connected,
    S: Op,
    F: Fn() -> Fut,
    Fut: std::future::Future<Output = Result<S, BenchError>>,
{
    let mut sessions = Vec::with_capacity(n);
    for _ in 0..n {
        sessions.push(Arc::new(connect().await?));
    }
    Ok(to.sessions(sessions))
}

/// Makes boxed sessions ([`DynOp`]): for tests and one-off calls.
#[derive(Debug, Clone, Copy)]
pub struct Boxed;

impl Connected for Boxed {
    type Out = Vec<Arc<dyn DynOp>>;

    fn sessions<S: Op>(self, sessions: Vec<Arc<S>>) -> Self::Out {
        sessions.into_iter().map(|s| s as Arc<dyn DynOp>).collect()
    }

    fn pooled<S: Op>(self, session: Arc<S>, _tasks: usize) -> Self::Out {
        vec![session]
    }
}

/// One connection of `driver` set up for `workload` in `shape`, boxed:
/// for tests and one-off calls.
pub async fn connect_boxed(
    driver: DriverKind,
    url: &str,
    workload: Workload,
    shape: Shape,
) -> Result<Arc<dyn DynOp>, BenchError> {
    let variant = Variant {
        shape,
        ..Variant::single(1)
    };
    connect_sessions(driver, url, workload, &variant, Boxed)
        .await?
        .pop()
        .ok_or_else(|| BenchError::new(format!("{driver}: no session")))
}

/// Streams `rows` rows with `driver` (connecting first) through its
/// streaming API, checks them as they pass and returns how many there
/// were (the `stream` workload's operation).
pub async fn stream(driver: DriverKind, url: &str, rows: u64) -> Result<u64, BenchError> {
    Ok(stream_counted(driver, url, rows).await?.0)
}

/// [`stream`], with the driver's low-water counts over the stream (pgpipe
/// only).
pub async fn stream_counted(
    driver: DriverKind,
    url: &str,
    rows: u64,
) -> Result<(u64, Option<LowWater>), BenchError> {
    use DriverKind as D;
    let n = limit(rows)?;
    let mut tally = Tally::default();
    let each = |g: i32, text: &str| tally.row(g, text);
    let mut low_water = None;
    match driver {
        D::Pgpipe => low_water = Some(pgpipe::stream::stream(url, STREAM_SQL, n, each).await?),
        D::TokioPostgres => tokio_postgres::stream::stream(url, STREAM_SQL, n, each).await?,
        D::Sqlx => sqlx::stream::stream(url, STREAM_SQL, n, each).await?,
        D::XitcaPostgres => drivers::xitca::stream(url, STREAM_SQL, n, each).await?,
        D::ZeroPostgres => drivers::zero::stream(url, STREAM_SQL, n, each).await?,
        other => return Err(BenchError::new(format!("{other} has no stream adapter"))),
    }
    Ok((tally.finish(rows)?, low_water))
}
