//! Schema migrations through pgpipe: refinery's async migration traits
//! (feature `refinery`), so that refinery's `embed_migrations!` and
//! `Runner::run_async` run on a pgpipe [`Client`](crate::Client),
//! [`PooledClient`](crate::PooledClient) or [`Pool`](crate::Pool), with
//! refinery's schema history table (a service can switch between pgpipe
//! and tokio-postgres, or `pgpipe-cli migrate`, on the same database).
//!
//! ```no_run
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! // In the service's crate: `refinery::embed_migrations!("migrations");`
//! // makes a `migrations` module; here the same from a folder at run time.
//! let migrations = refinery::load_sql_migrations("migrations")?;
//! let mut client = pgpipe::connect("postgres://app@localhost/app").await?;
//! let report = refinery::Runner::new(&migrations)
//!     .run_async(&mut client)
//!     .await?;
//! println!("applied {} migrations", report.applied_migrations().len());
//! # Ok(()) }
//! ```
//!
//! Each migration runs in its own transaction (refinery's default), its
//! SQL through the simple query protocol, so a file may hold several
//! statements; with `set_grouped(true)` all of them share one
//! transaction. A migration that fails rolls back whole, and the ones
//! before it stay applied and recorded.

mod refinery;
