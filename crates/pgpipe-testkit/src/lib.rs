//! Test infrastructure for pgpipe, and for your code that uses it.
//!
//! # A fresh database per test
//!
//! [`macro@test`] gives each test its own database, as `#[sqlx::test]`
//! does: migrations applied (once, into a template every test copies),
//! fixtures loaded, a `pgpipe::Pool`, `Client`, `Config` or the URL
//! handed to the test, and the database dropped when the test passes and
//! kept, with its name and URL printed, when it fails. It works under
//! `cargo test` (threads) and `cargo nextest` (a process per test).
//!
//! ```ignore
//! use pgpipe::Pool;
//!
//! #[pgpipe_testkit::test(migrations = "migrations", fixtures("users"))]
//! async fn counts_users(pool: Pool) -> Result<(), pgpipe::Error> {
//!     let n: i64 = pool.query_one("SELECT count(*) FROM users", ()).await?.get(0);
//!     assert_eq!(n, 2);
//!     Ok(())
//! }
//! ```
//!
//! The server is `PGPIPE_TEST_URL`, else `DATABASE_URL`, else a throwaway
//! cluster the first test of the process starts ([`test_server`]).
//! Without the attribute: [`TestSpec`] and [`run_test`]. The whole story,
//! with what each test costs: `docs/testing.md` in pgpipe's repository.
//!
//! # pgpipe's own test infrastructure
//!
//! * [`Cluster`]: throwaway PostgreSQL servers for tests, demos and
//!   benchmarks. [`Cluster::shared`] starts one per test process on first
//!   use; [`Cluster::start`] a private one. Each has one login role per
//!   authentication method ([`AuthRole`]) and hands out fresh databases
//!   ([`Cluster::create_database`]). Set `PGPIPE_TEST_URL` to use an existing
//!   server instead, `PGPIPE_PG_BINDIR` to choose the PostgreSQL binaries.
//!   `PGPIPE_PG_VERSION` picks the major version (13 to 18) of every cluster
//!   a test run starts, [`Cluster::start_version`] one for a single test;
//!   `scripts/ensure-postgres-versions.sh` installs the versions other than
//!   the distribution's ([`version_available`], [`bindir_for`]).
//!   For failover tests, a private cluster gets streaming standbys
//!   ([`Cluster::start_standby`], [`Cluster::wait_replicated`],
//!   [`Cluster::promote`]) and can be stopped and started again
//!   ([`Cluster::stop`], [`Cluster::start_again`]).
//! * [`FakeServer`]: a scripted fake server for what a real server won't do
//!   (malformed, truncated, oversized, out-of-order messages), with backend
//!   message builders in [`msg`] and SCRAM server helpers in [`scram`]. It
//!   can speak TLS ([`Step::StartTls`]) for direct SSL and channel binding.
//! * [`TlsCluster`]: `ssl=on` and `ssl=off` clusters with `hostssl`,
//!   `hostnossl` and `cert` roles ([`TlsRole`]), and [`TestPki`], the CA,
//!   server and client certificates made at run time with rcgen.
//!   message builders in [`msg`] and SCRAM server helpers in [`scram`].
//! * [`Bouncer`]: PgBouncer in transaction pooling mode in front of a
//!   cluster (`scripts/ensure-pgbouncer.sh` installs it).
//! * [`PatroniCluster`]: etcd and three PostgreSQL 15 nodes under Patroni
//!   on loopback, for failover tests (switchover, `kill -9` of the
//!   primary, a network partition of the primary through proxies);
//!   `scripts/ensure-patroni.sh` installs Patroni and etcd.
//! * [`FaultProxy`]: a TCP proxy for network faults, controlled at run time
//!   per direction ([`LinkFaults`]: latency, jitter, bandwidth, sliced
//!   writes, black hole, close or stall after N bytes) plus connection
//!   resets and refused connections.
//!
//! Needs the PostgreSQL server binaries (initdb, postgres) for clusters:
//! `sudo apt-get install -y postgresql` on Debian/Ubuntu. When run as root,
//! the server runs as the `postgres` user (PostgreSQL refuses root).
//!
//! ```no_run
//! use pgpipe_testkit::{AuthRole, Cluster};
//!
//! let cluster = Cluster::shared()?;
//! let db = cluster.create_database("example")?;
//! cluster.execute(db.name(), "CREATE TABLE t (id int)")?;
//! let url = db.url(AuthRole::Scram); // hand this to the client under test
//! # let _ = url;
//! # Ok::<(), pgpipe_testkit::TestkitError>(())
//! ```
#![warn(missing_docs)]
#![warn(missing_debug_implementations)]
#![warn(unreachable_pub)]

mod addresses;
mod auth;
mod binaries;
mod bouncer;
mod cluster;
mod database;
mod error;
mod fake;
mod mini_client;
mod patroni;
mod per_test;
mod pki;
mod ports;
mod process;
mod proxy;
mod roles;
mod server;
mod tls_cluster;
mod url;
mod versions;

pub use bouncer::Bouncer;
pub use cluster::{test_url, Cluster, TEST_URL_VAR};
pub use database::TestDatabase;
pub use error::TestkitError;
pub use fake::{
    msg, scram, FakeError, FakeErrorKind, FakeServer, Responder, Script, Step, Transcript,
};
pub use patroni::{
    Crashed, Member, PatroniCluster, PatroniNode, FAILOVER_TIMEOUT, PATRONI_PG_MAJOR, REJOIN_GRACE,
};
pub use per_test::{run_test, test_server, TestOutcome, TestSpec, DATABASE_URL_VAR};
/// A test with a fresh database, as `#[sqlx::test]`.
///
/// ```ignore
/// #[pgpipe_testkit::test(migrations = "migrations", fixtures("users"))]
/// async fn signs_up(pool: pgpipe::Pool) -> Result<(), pgpipe::Error> {
///     pool.execute("INSERT INTO users (name) VALUES ($1)", ("cy",)).await?;
///     Ok(())
/// }
/// ```
///
/// Expands to a `#[test]` that calls [`run_test`] with a [`TestSpec`]
/// built from the arguments:
///
/// - `migrations = "dir"`: refinery-style `V<version>__<name>.sql` files,
///   relative to the crate's `Cargo.toml`, applied in version order once
///   into a template database (`pgpipe_tpl_<content hash>`) that each
///   test's database copies ([`TestSpec::migrations`]);
/// - `fixtures("users", "messages")`: SQL files run in the test's database
///   in that order: `fixtures/<name>.sql` next to the test's source file,
///   or the path given when it has a `/` or ends in `.sql` (compiled in
///   with `include_str!`).
///
/// The `async fn` takes one argument, picked by its type's name:
/// `Pool` (`pgpipe::Pool::connect`), `Client` (`pgpipe::connect`),
/// `Config` (the URL parsed) or `String` (the URL). It returns `()` or
/// `Result<(), E: Debug>`. The crate using it must depend on `pgpipe`
/// (the expansion names `::pgpipe`).
pub use pgpipe_testkit_macros::test;
pub use pki::{CrlIssuer, ServerCert, TestPki, CERT_USER, UNUSED_SERIAL};
pub use proxy::{Direction, FaultProxy, LinkFaults, ProxyStats};
pub use roles::AuthRole;
pub use tls_cluster::{test_pki, TlsCluster, TlsRole};
pub use versions::{
    bindir_for, cache_dir, promised_versions, requested_version, server_major, version_available,
    CACHE_VAR, INSTALLED_VAR, VERSION_VAR,
};

#[cfg(test)]
mod cluster_tests;
