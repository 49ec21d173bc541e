//! PgBouncer in front of a testkit cluster, in transaction pooling mode,
//! for the tests that check pgpipe through a pooler.

use std::fs;
use std::net::TcpStream;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use tempfile::TempDir;

use crate::ports::free_port;
use crate::process::{run_as, server_user, spawn_tied, stop_child};
use crate::{AuthRole, Cluster, TestkitError};

/// Where PgBouncer may be: `$PGPIPE_PGBOUNCER`, then `PATH`, then Debian's
/// `/usr/sbin` (`scripts/ensure-pgbouncer.sh` installs it there).
const BINARY_VAR: &str = "PGPIPE_PGBOUNCER";

/// A PgBouncer (transaction pooling, trust authentication from clients)
/// forwarding every database to one testkit [`Cluster`]. Stopped when
/// dropped.
///
/// ```no_run
/// use pgpipe_testkit::{Bouncer, Cluster};
///
/// let cluster = Cluster::shared()?;
/// let db = cluster.create_database("through_bouncer")?;
/// let bouncer = Bouncer::start(cluster)?;
/// // A client must not rely on named statements surviving a transaction:
/// let url = format!("{}?query_mode=unnamed", bouncer.url(db.name()));
/// # let _ = url;
/// # Ok::<(), pgpipe_testkit::TestkitError>(())
/// ```
pub struct Bouncer {
    port: u16,
    dir: TempDir,
    child: Mutex<Option<Child>>,
}

impl Bouncer {
    /// Starts PgBouncer on a free loopback port in front of `cluster`, with
    /// `pool_mode = transaction` and at most 4 server connections per
    /// database and user (so that clients really share them). Waits until
    /// it accepts connections (at most 15 s).
    pub fn start(cluster: &Cluster) -> Result<Bouncer, TestkitError> {
        let binary = find_binary()?;
        let run_as_user = server_user()?;
        // Inside the cluster's own directory when it has one: a bouncer held
        // in a `static` is never dropped, and the cluster's directory is
        // deleted at exit, so nothing is left in the temp directory.
        let builder = {
            let mut b = tempfile::Builder::new();
            b.prefix("pgpipe-bouncer-");
            b
        };
        let dir = match cluster.dir() {
            Some(parent) => builder.tempdir_in(parent),
            None => builder.tempdir(),
        }
        .map_err(|e| TestkitError::io("creating the pgbouncer directory", e))?;
        if let Some(user) = &run_as_user {
            chown(dir.path(), user.uid, user.gid)?;
        }
        let port = free_port()?;
        let users: String = [cluster.superuser(), AuthRole::Trust.user()]
            .iter()
            .map(|u| format!("\"{u}\" \"\"\n"))
            .collect();
        fs::write(dir.path().join("userlist.txt"), users)
            .map_err(|e| TestkitError::io("writing the pgbouncer user list", e))?;
        let ini = format!(
            "[databases]\n\
             * = host={host} port={pg_port}\n\
             [pgbouncer]\n\
             listen_addr = 127.0.0.1\n\
             listen_port = {port}\n\
             unix_socket_dir =\n\
             auth_type = trust\n\
             auth_file = {dir}/userlist.txt\n\
             pool_mode = transaction\n\
             default_pool_size = 4\n\
             max_client_conn = 2000\n\
             server_login_retry = 1\n\
             logfile = {dir}/pgbouncer.log\n\
             pidfile = {dir}/pgbouncer.pid\n",
            host = cluster.host(),
            pg_port = cluster.port(),
            dir = dir.path().display(),
        );
        let ini_path = dir.path().join("pgbouncer.ini");
        fs::write(&ini_path, ini).map_err(|e| TestkitError::io("writing pgbouncer.ini", e))?;
        for f in ["userlist.txt", "pgbouncer.ini"] {
            let _ = fs::set_permissions(dir.path().join(f), fs::Permissions::from_mode(0o644));
        }
        let mut cmd = Command::new(&binary);
        cmd.arg(&ini_path)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        run_as(&mut cmd, run_as_user.as_ref());
        let child = spawn_tied(cmd)
            .map_err(|e| TestkitError::io(format!("starting {}", binary.display()), e))?;
        let bouncer = Bouncer {
            port,
            dir,
            child: Mutex::new(Some(child)),
        };
        bouncer.wait_ready()?;
        Ok(bouncer)
    }

    /// The port PgBouncer listens on (127.0.0.1).
    pub fn port(&self) -> u16 {
        self.port
    }

    /// A URL for `dbname` through PgBouncer, as the [`AuthRole::Trust`]
    /// role (PgBouncer itself trusts its clients).
    pub fn url(&self, dbname: &str) -> String {
        format!(
            "postgres://{}@127.0.0.1:{}/{}",
            AuthRole::Trust.user(),
            self.port,
            crate::url::encode(dbname)
        )
    }

    /// The directory holding `pgbouncer.ini`, its log and its pid file:
    /// inside the cluster's own directory for a testkit cluster, so it is
    /// deleted with the cluster even when the bouncer is never dropped.
    pub fn dir(&self) -> &Path {
        self.dir.path()
    }

    /// PgBouncer's log so far (for failure messages).
    pub fn log(&self) -> String {
        fs::read_to_string(self.dir.path().join("pgbouncer.log")).unwrap_or_default()
    }

    fn wait_ready(&self) -> Result<(), TestkitError> {
        let deadline = Instant::now() + Duration::from_secs(15);
        loop {
            if TcpStream::connect(("127.0.0.1", self.port)).is_ok() {
                return Ok(());
            }
            let exited = {
                let mut child = self.child.lock().unwrap_or_else(|p| p.into_inner());
                matches!(child.as_mut().map(|c| c.try_wait()), Some(Ok(Some(_))))
            };
            if exited || Instant::now() >= deadline {
                return Err(TestkitError::new(format!(
                    "pgbouncer did not start listening on port {}; its log:\n{}",
                    self.port,
                    self.log()
                )));
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

impl Drop for Bouncer {
    fn drop(&mut self) {
        let mut child = self.child.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(mut c) = child.take() {
            stop_child(&mut c, libc::SIGINT, Duration::from_secs(5));
        }
    }
}

impl std::fmt::Debug for Bouncer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Bouncer").field("port", &self.port).finish()
    }
}

fn find_binary() -> Result<PathBuf, TestkitError> {
    if let Some(p) = std::env::var_os(BINARY_VAR) {
        return Ok(PathBuf::from(p));
    }
    let on_path = std::env::var_os("PATH")
        .into_iter()
        .flat_map(|p| std::env::split_paths(&p).collect::<Vec<_>>())
        .map(|d| d.join("pgbouncer"))
        .chain([PathBuf::from("/usr/sbin/pgbouncer")]);
    for candidate in on_path {
        if candidate.is_file() {
            return Ok(candidate);
        }
    }
    Err(TestkitError::new(
        "pgbouncer not found (run scripts/ensure-pgbouncer.sh, or set PGPIPE_PGBOUNCER)",
    ))
}

fn chown(path: &Path, uid: u32, gid: u32) -> Result<(), TestkitError> {
    std::os::unix::fs::chown(path, Some(uid), Some(gid))
        .map_err(|e| TestkitError::io(format!("chown of {}", path.display()), e))
}
