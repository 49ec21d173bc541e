//! The public face of a test server: [`Cluster`], either a throwaway server
//! the testkit runs or an external one named by `PGPIPE_TEST_URL`.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use crate::database::{self, TestDatabase};
use crate::error::TestkitError;
use crate::mini_client::{Endpoint, Login, MiniClient, Rows};
use crate::roles::{AuthRole, SUPERUSER};
use crate::server::{Server, SQL_TIMEOUT};
use crate::url;

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
pub struct Cluster {
    addr: Addresses,
    version: String,
    /// `None` for an external server.
    server: Option<Server>,
}

/// What is needed to build URLs and reach the server for setup; shared with
/// [`TestDatabase`], which outlives no borrow of its cluster.
#[derive(Debug, Clone)]
pub(crate) struct Addresses {
    pub host: String,
    pub port: u16,
    pub socket_dir: PathBuf,
    pub superuser: String,
    pub superuser_password: Option<String>,
    /// The database setup connections use (CREATE/DROP DATABASE run there).
    pub admin_db: String,
    /// Where setup connections go: the private socket, or the external URL's host.
    pub setup: Endpoint,
    /// The external URL's query string, passed on in every URL (sslmode...).
    pub query: Option<String>,
    pub external: bool,
}

impl Addresses {
    pub(crate) fn url(&self, role: AuthRole, dbname: &str) -> String {
        if self.external {
            return self.superuser_url(dbname);
        }
        url::build(
            role.user(),
            Some(role.password()),
            &self.host,
            self.port,
            dbname,
            None,
        )
    }

    pub(crate) fn superuser_url(&self, dbname: &str) -> String {
        url::build(
            &self.superuser,
            self.superuser_password.as_deref(),
            &self.host,
            self.port,
            dbname,
            self.query.as_deref(),
        )
    }

    pub(crate) fn socket_url(&self, role: AuthRole, dbname: &str) -> String {
        if self.external {
            // Only the URL's own host is known; if that was a socket
            // directory, this is a socket URL, otherwise TCP.
            return self.superuser_url(dbname);
        }
        let dir = self.socket_dir.to_string_lossy();
        url::build(
            role.user(),
            Some(role.password()),
            &dir,
            self.port,
            dbname,
            None,
        )
    }

    /// A setup session as the superuser.
    pub(crate) fn connect(&self, dbname: &str) -> Result<MiniClient, TestkitError> {
        MiniClient::connect(&Login {
            endpoint: self.setup.clone(),
            user: self.superuser.clone(),
            password: self.superuser_password.clone(),
            dbname: dbname.to_string(),
            timeout: SQL_TIMEOUT,
        })
    }
}

static SHARED: OnceLock<Result<Cluster, TestkitError>> = OnceLock::new();

impl Cluster {
    /// Starts a private throwaway cluster (always a real one, even when
    /// `PGPIPE_TEST_URL` is set), stopped and deleted on drop.
    ///
    /// Takes a few seconds (initdb). Fails with a message saying how to fix
    /// it when the PostgreSQL server binaries are missing, or with the
    /// server log's last lines when the server does not come up in 30 s.
    pub fn start() -> Result<Cluster, TestkitError> {
        let server = Server::create()?;
        let socket_dir = server.socket_dir().to_path_buf();
        Ok(Cluster {
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
            },
            version: server.version().to_string(),
            server: Some(server),
        })
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
                Some(u) => Cluster::external(&u),
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

    /// A cluster pointing at an existing server; starts nothing.
    fn external(raw: &str) -> Result<Cluster, TestkitError> {
        let parsed = url::parse(raw)?;
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
        };
        let client = addr
            .connect(&addr.admin_db)
            .map_err(|e| e.context(format!("{TEST_URL_VAR}={}", url::redact(raw))))?;
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

    /// True when this is the server named by `PGPIPE_TEST_URL`.
    ///
    /// Then the [`AuthRole`] roles do not exist and [`Cluster::url`] falls
    /// back to that URL's credentials: tests of authentication methods need
    /// the testkit's own cluster and should skip with a printed note.
    /// [`Cluster::restart`] is refused.
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

    /// Stops the server (fast shutdown; every connection is cut) and starts
    /// it again on the same port with the same data. Refused for an
    /// external server.
    pub fn restart(&self) -> Result<(), TestkitError> {
        match &self.server {
            Some(server) => server.restart(),
            None => Err(TestkitError::new(format!(
                "cannot restart the external server of {TEST_URL_VAR}; use Cluster::start() for a private one"
            ))),
        }
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
