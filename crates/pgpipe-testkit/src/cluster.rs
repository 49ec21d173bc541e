//! The public face of a test server: [`Cluster`], either a throwaway server
//! the testkit runs or an external one named by `PGPIPE_TEST_URL`.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use crate::addresses::Addresses;
use crate::database::{self, TestDatabase};
use crate::error::TestkitError;
use crate::mini_client::{Endpoint, Rows};
use crate::roles::{AuthRole, SUPERUSER};
use crate::server::{first_value, Server};
use crate::url;

/// Bound of [`Cluster::wait_replicated`].
const REPLICATION_TIMEOUT: Duration = Duration::from_secs(30);
/// Bound of the wait for a promoted standby to leave recovery.
const PROMOTE_TIMEOUT: Duration = Duration::from_secs(30);

/// The environment variable naming an external server for [`Cluster::shared`].
pub const TEST_URL_VAR: &str = "PGPIPE_TEST_URL";

/// `PGPIPE_TEST_URL` when set (and not empty).
///
/// With it, [`Cluster::shared`] uses that server instead of starting one.
/// Its user must be allowed to create databases (a superuser is simplest).
pub fn test_url() -> Option<String> {
    std::env::var(TEST_URL_VAR)
        .ok()
        .filter(|u| !u.trim().is_empty())
}

/// A PostgreSQL server for tests.
///
/// Either a throwaway cluster the testkit initialized and runs (private temp
/// directory, loopback TCP on a free port, private Unix socket directory,
/// one login role per [`AuthRole`]), or an external server named by
/// `PGPIPE_TEST_URL` (see [`Cluster::is_external`]).
///
/// The server is configured for speed, not durability (`fsync=off` and
/// friends), and runs with `TimeZone=UTC`.
///
/// Failover tests: [`Cluster::start_standby`] makes a streaming standby of
/// a private cluster, [`Cluster::wait_replicated`] waits until it has caught
/// up, [`Cluster::stop`] / [`Cluster::start_again`] stop and start a server
/// and [`Cluster::promote`] turns a standby into a primary.
pub struct Cluster {
    addr: Addresses,
    version: String,
    /// `None` for an external server.
    server: Option<Server>,
}

static SHARED: OnceLock<Result<Cluster, TestkitError>> = OnceLock::new();

impl Cluster {
    /// Starts a private throwaway cluster (always a real one, even when
    /// `PGPIPE_TEST_URL` is set), stopped and deleted on drop.
    ///
    /// Takes a few seconds (initdb). Fails with a message saying how to fix
    /// it when the PostgreSQL server binaries are missing, or with the
    /// server log's last lines when the server does not come up in 30 s.
    ///
    /// The server is the major version `PGPIPE_PG_VERSION` names (e.g.
    /// `18`), or the distribution's when it is unset; see
    /// [`Cluster::start_version`] for one version whatever the environment.
    pub fn start() -> Result<Cluster, TestkitError> {
        Ok(Cluster::from_server(Server::create()?))
    }

    /// Like [`Cluster::start`] with PostgreSQL `major` (13 to 18), whatever
    /// `PGPIPE_PG_VERSION` and `PGPIPE_PG_BINDIR` say: from the
    /// distribution's `/usr/lib/postgresql/<major>/bin`, or the cache that
    /// `scripts/ensure-postgres-versions.sh` fills. The error says how to
    /// install a missing version; [`version_available`](crate::version_available)
    /// tells beforehand whether a test should skip.
    pub fn start_version(major: u32) -> Result<Cluster, TestkitError> {
        let server = Server::create_version(major, &Default::default())?;
        Ok(Cluster::from_server(server))
    }

    pub(crate) fn from_server(server: Server) -> Cluster {
        let socket_dir = server.socket_dir().to_path_buf();
        Cluster {
            addr: Addresses {
                host: "127.0.0.1".to_string(),
                port: server.port(),
                setup: server.endpoint(),
                socket_dir,
                superuser: SUPERUSER.to_string(),
                superuser_password: None,
                admin_db: "postgres".to_string(),
                query: None,
                external: false,
                stopped: Arc::new(AtomicBool::new(false)),
            },
            version: server.version().to_string(),
            server: Some(server),
        }
    }

    /// The cluster shared by every test of this process, started on first use.
    ///
    /// Thread-safe: concurrent first calls wait for one start. A failed start
    /// is remembered and every caller gets the same error. The server is
    /// stopped and its directory deleted when the process exits (an `atexit`
    /// handler), and receives SIGQUIT if the process dies any other way.
    ///
    /// With `PGPIPE_TEST_URL` set, nothing is started: the cluster points at
    /// that server (see [`Cluster::is_external`]).
    pub fn shared() -> Result<&'static Cluster, TestkitError> {
        let result = SHARED.get_or_init(|| {
            let cluster = match test_url() {
                Some(u) => Cluster::external(TEST_URL_VAR, &u),
                None => Cluster::start(),
            }?;
            if cluster.server.is_some() {
                // SAFETY: registering a plain extern "C" function.
                if unsafe { libc::atexit(stop_shared_at_exit) } != 0 {
                    eprintln!("pgpipe-testkit: atexit registration failed; the shared cluster's directory may be left behind");
                }
            }
            Ok(cluster)
        });
        result.as_ref().map_err(Clone::clone)
    }

    /// A cluster pointing at an existing server (from the environment
    /// variable `var`, named in errors); starts nothing.
    pub(crate) fn external(var: &str, raw: &str) -> Result<Cluster, TestkitError> {
        let parsed = url::parse_var(var, raw)?;
        let socket_dir = if parsed.host.starts_with('/') {
            PathBuf::from(&parsed.host)
        } else {
            PathBuf::new()
        };
        let addr = Addresses {
            setup: Endpoint::from_host(&parsed.host, parsed.port),
            admin_db: parsed
                .dbname
                .clone()
                .unwrap_or_else(|| "postgres".to_string()),
            host: parsed.host,
            port: parsed.port,
            socket_dir,
            superuser: parsed.user,
            superuser_password: parsed.password,
            query: parsed.query,
            external: true,
            stopped: Arc::new(AtomicBool::new(false)),
        };
        let client = addr
            .connect(&addr.admin_db)
            .map_err(|e| e.context(format!("{var}={}", url::redact(raw))))?;
        let version = client
            .parameter("server_version")
            .unwrap_or_default()
            .to_string();
        Ok(Cluster {
            addr,
            version,
            server: None,
        })
    }

    /// Where setup sessions go and how URLs are built: shared with the
    /// databases this cluster hands out.
    pub(crate) fn addresses(&self) -> &Addresses {
        &self.addr
    }

    /// True when this is the server named by `PGPIPE_TEST_URL`.
    ///
    /// Then the [`AuthRole`] roles do not exist and [`Cluster::url`] falls
    /// back to that URL's credentials: tests of authentication methods need
    /// the testkit's own cluster and should skip with a printed note.
    /// [`Cluster::restart`], [`Cluster::stop`], [`Cluster::start_again`],
    /// [`Cluster::start_standby`] and [`Cluster::promote`] are refused.
    pub fn is_external(&self) -> bool {
        self.addr.external
    }

    /// The TCP host: `127.0.0.1` for testkit clusters (the server listens on
    /// loopback only), the URL's host for an external server.
    pub fn host(&self) -> &str {
        &self.addr.host
    }

    /// The server's port (TCP and Unix socket).
    pub fn port(&self) -> u16 {
        self.addr.port
    }

    /// The server's private Unix socket directory. For an external server,
    /// the URL's host when it is a directory, otherwise an empty path.
    pub fn socket_dir(&self) -> &Path {
        &self.addr.socket_dir
    }

    /// A superuser name: trusted over TCP and the socket on testkit
    /// clusters; the URL's user for an external server.
    pub fn superuser(&self) -> &str {
        &self.addr.superuser
    }

    /// `postgres://user:password@127.0.0.1:port/dbname` for `role`, every
    /// part percent-encoded. External server: its own credentials.
    pub fn url(&self, role: AuthRole, dbname: &str) -> String {
        self.addr.url(role, dbname)
    }

    /// The superuser's URL for `dbname`.
    pub fn superuser_url(&self, dbname: &str) -> String {
        self.addr.superuser_url(dbname)
    }

    /// Like [`Cluster::url`] but over the Unix socket: the host is the
    /// percent-encoded socket directory (`%2Ftmp%2F...`), as libpq accepts.
    /// External server: the same as [`Cluster::url`].
    pub fn socket_url(&self, role: AuthRole, dbname: &str) -> String {
        self.addr.socket_url(role, dbname)
    }

    /// Creates a fresh database with a unique name built from `name_hint`,
    /// where every [`AuthRole`] can connect and create objects in `public`.
    /// It is dropped (`WITH (FORCE)`) when the [`TestDatabase`] drops.
    pub fn create_database(&self, name_hint: &str) -> Result<TestDatabase, TestkitError> {
        database::create(&self.addr, name_hint)
    }

    /// Runs `sql` (one or more statements, simple query protocol) as the
    /// superuser in `dbname`. Errors carry the server's message and SQLSTATE.
    pub fn execute(&self, dbname: &str, sql: &str) -> Result<(), TestkitError> {
        self.query(dbname, sql).map(|_| ())
    }

    /// Like [`Cluster::execute`], returning every row as text (`None` for
    /// NULL), for assertions in setup and tests.
    pub fn query(&self, dbname: &str, sql: &str) -> Result<Vec<Vec<Option<String>>>, TestkitError> {
        let rows: Rows = self.addr.connect(dbname)?.simple_query(sql)?;
        Ok(rows)
    }

    /// The server's `server_version` (e.g. `15.8 (Debian 15.8-1)`), as
    /// reported when it started.
    pub fn version(&self) -> &str {
        &self.version
    }

    /// The server's major version (`15` for `15.8 (Debian 15.8-1)`); 0
    /// when `server_version` does not start with a number.
    pub fn major_version(&self) -> u32 {
        crate::versions::server_major(&self.version).unwrap_or(0)
    }

    /// Stops the server (fast shutdown; every connection is cut) and starts
    /// it again on the same port with the same data (also when it was
    /// stopped). Refused for an external server.
    pub fn restart(&self) -> Result<(), TestkitError> {
        let server = self.managed("restart")?;
        let result = server.restart();
        self.note_state(server);
        result
    }

    /// Like [`Cluster::restart`], with an immediate shutdown (`pg_ctl
    /// restart -m immediate`: the postmaster and every backend quit at once,
    /// without a checkpoint; the start that follows runs crash recovery).
    /// Refused for an external server.
    pub fn restart_immediate(&self) -> Result<(), TestkitError> {
        let server = self.managed("restart")?;
        let result = server.restart_immediate();
        self.note_state(server);
        result
    }

    /// Begins a smart shutdown (`pg_ctl stop -m smart`, SIGTERM) and returns
    /// at once: sessions already open go on, new connections are refused
    /// with SQLSTATE `57P03` ("the database system is shutting down"), and
    /// the server exits when its last session ends. Call
    /// [`Cluster::stop`] or [`Cluster::start_again`] afterwards. Refused for
    /// an external server.
    pub fn begin_smart_shutdown(&self) -> Result<(), TestkitError> {
        let server = self.managed("shut down")?;
        server.signal_postmaster(libc::SIGTERM)
    }

    /// Stops the server: fast shutdown (every connection is cut, open
    /// transactions roll back), SIGKILL if it takes over 30 s. When this
    /// returns the postmaster has exited and the port refuses connections;
    /// the data directory stays, for [`Cluster::start_again`]. Nothing
    /// happens when it is already stopped. Refused for an external server.
    ///
    /// A [`TestDatabase`] dropped while its cluster is stopped is not
    /// dropped on the server (it cannot be reached; the data goes with the
    /// cluster's directory). Do not stop the [`Cluster::shared`] cluster:
    /// other tests use it.
    pub fn stop(&self) -> Result<(), TestkitError> {
        let server = self.managed("stop")?;
        server.stop_fast();
        self.note_state(server);
        Ok(())
    }

    /// Starts a stopped server again on its port with its data directory
    /// (waiting up to 30 s until it accepts connections; the error carries
    /// the server log's last lines). Nothing happens when it is running.
    /// Refused for an external server.
    ///
    /// A standby started again resumes streaming from its primary (if that
    /// is running); a stopped primary whose standby was promoted comes back
    /// as a second, independent primary.
    pub fn start_again(&self) -> Result<(), TestkitError> {
        let server = self.managed("start")?;
        let result = server
            .start_again()
            .map_err(|e| e.context("starting the server again"));
        self.note_state(server);
        result
    }

    /// True while the server runs: false after [`Cluster::stop`] or when the
    /// postmaster died. Always true for an external server (not watched).
    pub fn is_running(&self) -> bool {
        self.server.as_ref().is_none_or(Server::is_running)
    }

    /// Starts a streaming-replication standby of this (running, testkit)
    /// cluster: a new owned cluster with its own port, socket directory and
    /// temp directory, copied with `pg_basebackup -X stream -R` and
    /// following this one over its Unix socket. Returns once the standby
    /// accepts connections and `pg_is_in_recovery()` is true (at most 30 s;
    /// the error carries the server log's last lines). Takes a few seconds.
    ///
    /// Roles and passwords are the primary's (replicated), so
    /// [`Cluster::url`] and [`Cluster::socket_url`] of the standby work for
    /// every [`AuthRole`]. Databases are created on the primary and
    /// replicate: use `standby.url(role, db.name())` for a [`TestDatabase`]
    /// of the primary (which drops it on the primary). The standby is read
    /// only: writes fail with SQLSTATE `25006` until [`Cluster::promote`].
    /// Call [`Cluster::wait_replicated`] before reading what the primary
    /// just wrote. Refused for an external server.
    ///
    /// ```no_run
    /// use pgpipe_testkit::{AuthRole, Cluster};
    ///
    /// let primary = Cluster::start()?;
    /// let db = primary.create_database("failover")?;
    /// primary.execute(db.name(), "CREATE TABLE t (id int); INSERT INTO t VALUES (1)")?;
    /// let standby = primary.start_standby()?;
    /// primary.wait_replicated(&standby)?;
    /// let standby_url = standby.url(AuthRole::Scram, db.name());
    /// primary.stop()?;
    /// standby.promote()?;
    /// # let _ = standby_url;
    /// # Ok::<(), pgpipe_testkit::TestkitError>(())
    /// ```
    pub fn start_standby(&self) -> Result<Cluster, TestkitError> {
        let server = self.managed("start a standby of")?;
        let standby = Server::create_standby(server).map_err(|e| {
            e.context(format!(
                "starting a standby of the cluster on port {}",
                self.port()
            ))
        })?;
        Ok(Cluster::from_server(standby))
    }

    /// Promotes this standby to a primary (`pg_promote()`), and waits until
    /// `pg_is_in_recovery()` is false (at most 30 s; the error carries the
    /// server log's last lines). Then it accepts writes. Fails (SQLSTATE
    /// `55000`) when it is not a standby. Refused for an external server.
    pub fn promote(&self) -> Result<(), TestkitError> {
        let server = self.managed("promote")?;
        let ctx =
            |e: TestkitError| e.context(format!("promoting the standby on port {}", self.port()));
        let rows = self
            .query(&self.addr.admin_db, "SELECT pg_promote(true, 30)")
            .map_err(ctx)?;
        if first_value(&rows) != Some("t") {
            return Err(ctx(TestkitError::new(format!(
                "pg_promote() did not complete within 30 s; server log:\n{}",
                server.log_tail(30)
            ))));
        }
        server.wait_recovery(false, PROMOTE_TIMEOUT).map_err(ctx)
    }

    /// Waits until `standby` has replayed everything this cluster (its
    /// primary) had written when the call began, so that what the test
    /// wrote and committed here can be read there. At most 30 s; the error
    /// carries both positions and the standby's log tail.
    ///
    /// The target position is a WAL record written and flushed here for the
    /// purpose (a transactional `pg_logical_emit_message()` committed with
    /// `synchronous_commit = on`): the testkit's clusters commit
    /// asynchronously, so `pg_current_wal_lsn()` alone may lag a commit the
    /// test already saw, or point at WAL not yet flushed (never sent).
    /// Fails at once when `standby` is not in recovery and has not reached
    /// the position.
    pub fn wait_replicated(&self, standby: &Cluster) -> Result<(), TestkitError> {
        let ctx = |e: TestkitError| {
            e.context(format!(
                "waiting for the standby on port {} to replay the WAL of port {}",
                standby.port(),
                self.port()
            ))
        };
        let rows = self
            .query(
                &self.addr.admin_db,
                "SET synchronous_commit = on; \
                 SELECT pg_logical_emit_message(true, 'pgpipe-testkit', 'wait_replicated')",
            )
            .map_err(ctx)?;
        let target = first_value(&rows)
            .ok_or_else(|| {
                ctx(TestkitError::new(
                    "pg_logical_emit_message() returned no LSN",
                ))
            })?
            .to_string();
        let sql = format!(
            "SELECT pg_is_in_recovery(), \
                    coalesce(pg_last_wal_replay_lsn() >= '{target}'::pg_lsn, false), \
                    pg_last_wal_replay_lsn()"
        );
        let deadline = Instant::now() + REPLICATION_TIMEOUT;
        let mut client = None;
        loop {
            let attempt = match client.take() {
                Some(c) => Ok(c),
                None => standby.addr.connect(&standby.addr.admin_db),
            }
            .and_then(|mut c| c.simple_query(&sql).map(|rows| (c, rows)));
            let last = match attempt {
                Ok((c, rows)) => {
                    let row = rows.first().cloned().unwrap_or_default();
                    let col = |i: usize| row.get(i).cloned().flatten();
                    if col(1).as_deref() == Some("t") {
                        return Ok(());
                    }
                    let replayed = col(2).unwrap_or_else(|| "none".into());
                    if col(0).as_deref() == Some("f") {
                        return Err(ctx(TestkitError::new(format!(
                            "it is not in recovery (not a standby, or promoted) and replayed up to \
                             {replayed}, before {target}"
                        ))));
                    }
                    client = Some(c);
                    format!("replayed up to {replayed}")
                }
                Err(e) => e.to_string(),
            };
            if Instant::now() >= deadline {
                let log = standby
                    .server
                    .as_ref()
                    .map(|s| format!("; standby's server log:\n{}", s.log_tail(30)))
                    .unwrap_or_default();
                return Err(ctx(TestkitError::new(format!(
                    "not at {target} within {} s (last: {last}){log}",
                    REPLICATION_TIMEOUT.as_secs()
                ))));
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// The server of a testkit cluster; an error naming `what` for an
    /// external one.
    fn managed(&self, what: &str) -> Result<&Server, TestkitError> {
        self.server.as_ref().ok_or_else(|| {
            TestkitError::new(format!(
                "cannot {what} the external server of {TEST_URL_VAR}; use Cluster::start() for a private one"
            ))
        })
    }

    /// Records whether the server runs, for [`TestDatabase`]'s drop.
    fn note_state(&self, server: &Server) {
        self.addr
            .stopped
            .store(!server.is_running(), Ordering::SeqCst);
    }

    /// The directory holding the data directory, socket and log (testkit
    /// clusters only); deleted when the cluster stops.
    pub fn dir(&self) -> Option<&Path> {
        self.server.as_ref().map(|s| s.root())
    }
}

impl std::fmt::Debug for Cluster {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Cluster")
            .field("host", &self.addr.host)
            .field("port", &self.addr.port)
            .field("socket_dir", &self.addr.socket_dir)
            .field("version", &self.version)
            .field("external", &self.addr.external)
            .finish()
    }
}

/// Runs at process exit (Rust's test harness exits through libc `exit`).
impl Cluster {
    /// For at-exit handlers: stops the server (if ours) without locks.
    pub(crate) fn shutdown_at_exit(&self) {
        if let Some(server) = &self.server {
            server.shutdown_at_exit();
        }
    }
}

extern "C" fn stop_shared_at_exit() {
    // Nothing may unwind into C.
    let _ = std::panic::catch_unwind(|| {
        if let Some(Ok(Cluster {
            server: Some(server),
            ..
        })) = SHARED.get()
        {
            server.shutdown_at_exit();
        }
    });
}
