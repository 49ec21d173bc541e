//! Connection pooling: [`Pool`] and [`PooledClient`], both
//! [`GenericClient`](crate::GenericClient)s.
//!
//! A pgpipe connection pipelines: many tasks can run statements on one
//! connection at once. So a pool serves two kinds of work differently:
//!
//! - **Single statements** — [`Pool::query`], [`query_one`](Pool::query_one),
//!   [`query_opt`](Pool::query_opt), [`execute`](Pool::execute) — run on a
//!   *shared* connection without any checkout: each goes to the connection
//!   of the pool's shared lane where it can expect the shortest wait (an
//!   idle one, else the fewest statements in flight weighed by how fast
//!   that connection has been answering, so that one slowed by its backend
//!   or stalled behind a lock gets less new work; once
//!   every shared connection has work, to the one where the same task's
//!   statements in flight already are, so that a request's statements
//!   issued together wait for one pipeline, not the slowest of the lane),
//!   and is pipelined there with everyone else's. This costs next to
//!   nothing over a plain [`Client`](crate::Client) (no lock held across an
//!   await). With [`shared_line_at`](PoolConfig::shared_line_at) set,
//!   once every shared connection holds that many statements, a task
//!   with none in flight waits its turn in arrival order and goes where
//!   room frees first, so a request is not stuck behind a pipeline that
//!   slowed after it was chosen: fair tails at saturation, for some of
//!   the rate ([`PoolStats::shared_waiting`] counts the waiting tasks; the
//!   wait is bounded by `acquire_timeout`). The lane holds up to
//!   [`shared_connections`](PoolConfig::shared_connections) connections
//!   (by default a quarter of `max_size`), opened on demand as load grows;
//!   until the first is open, or when it is set to 0, these methods check
//!   out a connection per statement instead. Never use them for `BEGIN`,
//!   `SET` or anything else that leaves state on the session: other
//!   callers' statements share it (a shared connection left inside a
//!   transaction is closed, with a warning).
//! - **Anything that needs the session to itself** — transactions, `SET`,
//!   temporary tables, prepared statements, streams, batches — goes on a
//!   connection checked out with [`Pool::get`], or a [`Transaction`](crate::Transaction)
//!   from [`Pool::transaction`], which holds its connection until it
//!   ends. The [`PooledClient`] runs the query methods of a `Client` (it is
//!   a [`GenericClient`](crate::GenericClient)), plus its session's own
//!   transactions and COPY, and returns the connection when dropped: if a transaction was left open (or requests
//!   that may open one are still in flight), it is rolled back at once, in
//!   the background, before anyone else gets the connection; a broken one
//!   is closed instead.
//!
//! ```no_run
//! # async fn f() -> Result<(), pgpipe::Error> {
//! use pgpipe::Pool;
//!
//! let pool = Pool::connect("postgres://app@localhost/app?pool_max_size=16&pool_min_idle=2").await?;
//!
//! // One statement: shared connection, pipelined, no checkout.
//! let row = pool.query_one("SELECT email FROM users WHERE id = $1", (7i64,)).await?;
//! let email: &str = row.get(0);
//!
//! // A transaction: a connection of its own until it ends. Dropped without
//! // commit (an early `?` return), it is rolled back at once.
//! let tx = pool.transaction().await?;
//! tx.execute("INSERT INTO audit (who) VALUES ($1)", ("admin",)).await?;
//! tx.execute("UPDATE users SET active = false WHERE id = $1", (7i64,)).await?;
//! tx.commit().await?;
//!
//! // Session state: check out, use, return.
//! let conn = pool.get().await?;
//! conn.batch_execute("CREATE TEMP TABLE scratch (x int)").await?;
//! drop(conn);
//!
//! println!("{:?}", pool.stats());
//! # Ok(()) }
//! ```
//!
//! # Sizing, waiting and retiring
//!
//! The pool never holds more than [`max_size`](PoolConfig::max_size)
//! connections, shared ones and ones being opened included. An acquire
//! waits in FIFO order for a free slot, up to the
//! [`acquire_timeout`](PoolConfig::acquire_timeout) (30 s by default),
//! then fails with a [`Timeout`](crate::ErrorKind::Timeout) error that says
//! the pool is exhausted. Acquires are cancel safe: dropping one (a
//! `select!`, a timeout) leaves no slot taken, and a connection that was
//! being opened for it joins the idle list.
//!
//! A background task keeps [`min_idle`](PoolConfig::min_idle) connections
//! open, closes connections idle past the
//! [`idle_timeout`](PoolConfig::idle_timeout) and older than the
//! [`max_lifetime`](PoolConfig::max_lifetime) (±10% jitter). A connection
//! idle for longer than [`health_check_after`](PoolConfig::health_check_after)
//! is pinged with an empty query before it is handed out; a dead one is
//! replaced. Closing and opening are logged at debug level under the
//! `pgpipe::pool` target; [`Pool::stats`] counts them.
//!
//! # Settings in the connection URL
//!
//! [`Pool::connect`] reads `pool_max_size`, `pool_min_idle`,
//! `pool_acquire_timeout` (ms), `pool_idle_timeout` (s),
//! `pool_max_lifetime` (s), `pool_health_check_after` (ms) and
//! `pool_shared_connections` from the query of a `postgres://` URL and
//! hands the rest to [`Config::parse`](crate::Config::parse). With a
//! `key=value` string, use [`Pool::connect_with_config`] and a [`PoolConfig`].

mod admission;
pub(crate) mod budget;
mod config;
mod conn;
mod generic;
mod guard;
mod inner;
mod lane;
mod maintenance;
#[cfg(any(feature = "metrics", feature = "opentelemetry"))]
mod metrics;
mod pace;
#[allow(clippy::module_inception)]
mod pool;
mod stats;
mod transaction;

pub use config::PoolConfig;
pub use guard::PooledClient;
pub use pool::Pool;
pub use stats::{AcquireHistogram, PoolStats, ACQUIRE_BUCKETS};
