//! One throwaway PostgreSQL server: temp directory, initdb, postgres process,
//! readiness, stop and restart.

use std::fs::{self, File};
use std::io::{Read, Seek, SeekFrom};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use tempfile::TempDir;

use crate::binaries::{find_bindir, pg_config_bindir, Search};
use crate::error::TestkitError;
use crate::mini_client::{Endpoint, Login, MiniClient, Rows};
use crate::ports::free_port;
use crate::process::{run_as, run_bounded, server_user, signal, stop_child, RunAs};
use crate::roles::{create_roles_sql, hba_conf, SUPERUSER};

mod dirs;
mod launch;
mod standby;

pub(crate) use dirs::make_root;
use launch::Launch;

/// Prefix of the temp directories, also used to find ones left behind.
const DIR_PREFIX: &str = "pgpipe-testkit-";
/// How long a start may take before it is reported as failed.
const START_TIMEOUT: Duration = Duration::from_secs(30);
/// Bound of initdb (it takes a second or two on a quiet machine).
const INITDB_TIMEOUT: Duration = Duration::from_secs(120);
/// Bound of every setup-client socket operation.
pub(crate) const SQL_TIMEOUT: Duration = Duration::from_secs(60);
/// Fresh ports tried when the chosen one was taken before the server bound it.
const PORT_ATTEMPTS: usize = 5;
/// How long a fast shutdown may take before SIGKILL.
const STOP_TIMEOUT: Duration = Duration::from_secs(30);
/// Bound of pg_basebackup (a fresh cluster copies in a second or two).
const BASEBACKUP_TIMEOUT: Duration = Duration::from_secs(120);

/// A running (or restartable) server and everything it lives in.
pub(crate) struct Server {
    bindir: PathBuf,
    run_as: Option<RunAs>,
    /// Holds data/, sock/, server.log, initdb.log, owner.pid; removed on drop.
    root: TempDir,
    data_dir: PathBuf,
    socket_dir: PathBuf,
    log_path: PathBuf,
    port: u16,
    version: String,
    child: Mutex<Option<Child>>,
    /// The postmaster's pid (0 when stopped), readable without the lock by
    /// the at-exit handler.
    pid: AtomicU32,
    /// `-c` settings beyond the usual ones (TLS clusters).
    extra_settings: Vec<(String, String)>,
}

/// What a custom server adds to the usual setup.
#[derive(Debug, Default, Clone)]
pub(crate) struct ServerSetup {
    /// pg_hba.conf lines placed before the usual ones (first match wins).
    pub hba_lines: String,
    /// Extra settings; `{root}` in a value is replaced by the server's
    /// directory, where `files` are written.
    pub settings: Vec<(String, String)>,
    /// Files written to the server's directory: (name, contents, mode).
    pub files: Vec<(String, String, u32)>,
    /// SQL run after the usual roles are created.
    pub sql: Vec<String>,
}

impl Server {
    /// Creates, initializes and starts a server with the testkit's roles.
    pub(crate) fn create() -> Result<Server, TestkitError> {
        Server::create_with(find_bindir(&Search::from_env()?, pg_config_bindir)?)
    }

    /// [`Server::create`] with the binaries of `bindir`.
    fn create_with(bindir: PathBuf) -> Result<Server, TestkitError> {
        Server::create_custom_with(bindir, &ServerSetup::default())
    }

    /// Like [`Server::create`], with `setup`'s files, pg_hba.conf lines
    /// (before the usual ones), settings and SQL added.
    pub(crate) fn create_custom(setup: &ServerSetup) -> Result<Server, TestkitError> {
        Server::create_custom_with(find_bindir(&Search::from_env()?, pg_config_bindir)?, setup)
    }

    /// Like [`Server::create_custom`] with the binaries of PostgreSQL
    /// `major`, whatever `PGPIPE_PG_VERSION` says.
    pub(crate) fn create_version(major: u32, setup: &ServerSetup) -> Result<Server, TestkitError> {
        let bindir = find_bindir(&Search::for_major(major), pg_config_bindir)?;
        Server::create_custom_with(bindir, setup)
    }

    fn create_custom_with(bindir: PathBuf, setup: &ServerSetup) -> Result<Server, TestkitError> {
        let run_as = server_user()?;
        let (root, socket_dir) = make_root(run_as.as_ref())?;
        let data_dir = root.path().join("data");
        initdb(&bindir, run_as.as_ref(), root.path(), &data_dir)?;
        fs::write(
            data_dir.join("pg_hba.conf"),
            format!("{}{}", setup.hba_lines, hba_conf()),
        )
        .map_err(|e| TestkitError::io("writing pg_hba.conf", e))?;
        for (name, contents, mode) in &setup.files {
            // In the root, owned by the server user: PostgreSQL refuses a
            // key file others can read or it does not own.
            let path = root.path().join(name);
            fs::write(&path, contents)
                .map_err(|e| TestkitError::io(format!("writing {}", path.display()), e))?;
            fs::set_permissions(&path, fs::Permissions::from_mode(*mode))
                .map_err(|e| TestkitError::io(format!("chmod of {}", path.display()), e))?;
            if let Some(user) = &run_as {
                std::os::unix::fs::chown(&path, Some(user.uid), Some(user.gid))
                    .map_err(|e| TestkitError::io(format!("chown of {}", path.display()), e))?;
            }
        }
        let mut server = Server::new(bindir, run_as, root, socket_dir, data_dir);
        server.extra_settings = setup
            .settings
            .iter()
            .map(|(k, v)| {
                let v = v.replace("{root}", &server.root.path().to_string_lossy());
                (k.clone(), v)
            })
            .collect();
        let server = server.start_on_free_port()?;
        let mut sql = create_roles_sql();
        sql.extend(setup.sql.iter().cloned());
        server.sql("postgres", &sql.join(";\n"))?;
        Ok(server)
    }

    fn new(
        bindir: PathBuf,
        run_as: Option<RunAs>,
        root: TempDir,
        socket_dir: PathBuf,
        data_dir: PathBuf,
    ) -> Server {
        let log_path = root.path().join("server.log");
        Server {
            bindir,
            run_as,
            data_dir: fs::canonicalize(&data_dir).unwrap_or(data_dir),
            root,
            socket_dir,
            log_path,
            port: 0,
            version: String::new(),
            child: Mutex::new(None),
            pid: AtomicU32::new(0),
            extra_settings: Vec::new(),
        }
    }

    /// The first start: on a fresh free port, another one when that was
    /// taken before postgres bound it.
    fn start_on_free_port(mut self) -> Result<Server, TestkitError> {
        let mut last_error = None;
        for _ in 0..PORT_ATTEMPTS {
            self.port = free_port()?;
            match self.launch() {
                Ok(version) => {
                    self.version = version;
                    return Ok(self);
                }
                Err(Launch::PortTaken(e)) => last_error = Some(e),
                Err(Launch::Failed(e)) => return Err(e),
            }
        }
        let e = last_error.unwrap_or_else(|| TestkitError::new("no attempt made"));
        Err(e.context(format!("no free port after {PORT_ATTEMPTS} attempts")))
    }

    pub(crate) fn port(&self) -> u16 {
        self.port
    }

    pub(crate) fn socket_dir(&self) -> &Path {
        &self.socket_dir
    }

    pub(crate) fn version(&self) -> &str {
        &self.version
    }

    pub(crate) fn root(&self) -> &Path {
        self.root.path()
    }

    /// Where the setup client connects: the private Unix socket, which no
    /// other server can be listening on.
    pub(crate) fn endpoint(&self) -> Endpoint {
        Endpoint::from_host(&self.socket_dir.to_string_lossy(), self.port)
    }

    fn sql(&self, dbname: &str, sql: &str) -> Result<(), TestkitError> {
        self.query(dbname, sql).map(|_| ())
    }

    fn query(&self, dbname: &str, sql: &str) -> Result<Rows, TestkitError> {
        let login = Login {
            endpoint: self.endpoint(),
            user: SUPERUSER.to_string(),
            password: None,
            dbname: dbname.to_string(),
            timeout: SQL_TIMEOUT,
        };
        MiniClient::connect(&login)?.simple_query(sql)
    }

    /// Fast shutdown, then a start on the same port and data directory.
    pub(crate) fn restart(&self) -> Result<(), TestkitError> {
        self.stop(libc::SIGINT, STOP_TIMEOUT);
        self.start_again().map_err(|e| e.context("restart"))
    }

    /// Immediate shutdown (SIGQUIT), then a start (with crash recovery).
    pub(crate) fn restart_immediate(&self) -> Result<(), TestkitError> {
        self.stop(libc::SIGQUIT, STOP_TIMEOUT);
        self.start_again()
            .map_err(|e| e.context("restart (immediate)"))
    }

    /// Sends `sig` to the running postmaster.
    pub(crate) fn signal_postmaster(&self, sig: libc::c_int) -> Result<(), TestkitError> {
        match self.pid.load(Ordering::SeqCst) {
            0 => Err(TestkitError::new("the server is not running")),
            pid => {
                signal(pid, sig);
                Ok(())
            }
        }
    }

    /// Starts a stopped server again on its port and data directory; nothing
    /// when it is running.
    pub(crate) fn start_again(&self) -> Result<(), TestkitError> {
        if self.is_running() {
            return Ok(());
        }
        // Reaps a server that died on its own (is_running saw it exit).
        self.stop(libc::SIGQUIT, Duration::from_secs(5));
        // The port was ours a moment ago; if someone grabbed it meanwhile,
        // wait a little for it rather than moving (clients hold the old URL).
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            match self.launch() {
                Ok(_) => return Ok(()),
                Err(Launch::PortTaken(e)) if Instant::now() >= deadline => return Err(e),
                Err(Launch::PortTaken(_)) => std::thread::sleep(Duration::from_millis(200)),
                Err(Launch::Failed(e)) => return Err(e),
            }
        }
    }

    /// Fast shutdown (every connection is cut), SIGKILL after 30 s.
    pub(crate) fn stop_fast(&self) {
        self.stop(libc::SIGINT, STOP_TIMEOUT);
    }

    /// True while the postmaster we started has not exited.
    pub(crate) fn is_running(&self) -> bool {
        let mut slot = self.child.lock().unwrap_or_else(|p| p.into_inner());
        matches!(slot.as_mut().map(|c| c.try_wait()), Some(Ok(None)))
    }

    /// Polls `pg_is_in_recovery()` until it is `want`; on timeout, the error
    /// carries the server log's last lines.
    pub(crate) fn wait_recovery(&self, want: bool, timeout: Duration) -> Result<(), TestkitError> {
        let deadline = Instant::now() + timeout;
        let want_text = if want { "t" } else { "f" };
        loop {
            let last = match self.query("postgres", "SELECT pg_is_in_recovery()") {
                Ok(rows) if first_value(&rows) == Some(want_text) => return Ok(()),
                Ok(rows) => format!("pg_is_in_recovery() = {:?}", first_value(&rows)),
                Err(e) => e.to_string(),
            };
            if Instant::now() >= deadline || !self.is_running() {
                return Err(TestkitError::new(format!(
                    "the server on port {} did not {} recovery within {} s (last: {last}); \
                     server log:\n{}",
                    self.port,
                    if want { "enter" } else { "leave" },
                    timeout.as_secs(),
                    self.log_tail(30),
                )));
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// The server log's last `n` lines (all of it, across restarts).
    pub(crate) fn log_tail(&self, n: usize) -> String {
        log_tail(&self.log_path, 0, n)
    }

    /// Sends `first` (SIGINT: fast shutdown), SIGKILL after `grace`; reaps it.
    pub(crate) fn stop(&self, first: libc::c_int, grace: Duration) {
        let mut slot = self.child.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(mut child) = slot.take() {
            stop_child(&mut child, first, grace);
        }
        self.pid.store(0, Ordering::SeqCst);
    }

    /// For the at-exit handler: no locks, no allocation-heavy work. Immediate
    /// shutdown (the data is deleted next), bounded wait, then the directory.
    pub(crate) fn shutdown_at_exit(&self) {
        let pid = self.pid.swap(0, Ordering::SeqCst);
        if pid != 0 {
            signal(pid, libc::SIGQUIT);
            if !wait_pid(pid, Duration::from_secs(5)) {
                signal(pid, libc::SIGKILL);
                wait_pid(pid, Duration::from_secs(2));
            }
        }
        let _ = fs::remove_dir_all(self.root.path());
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        // Fast shutdown; the TempDir field then removes everything.
        self.stop(libc::SIGINT, Duration::from_secs(10));
    }
}

fn initdb(
    bindir: &Path,
    user: Option<&RunAs>,
    root: &Path,
    data_dir: &Path,
) -> Result<(), TestkitError> {
    let mut cmd = Command::new(bindir.join("initdb"));
    cmd.arg("-D")
        .arg(data_dir)
        .args([
            "-U",
            SUPERUSER,
            "-A",
            "trust",
            "--encoding=UTF8",
            "--locale=C",
            "--no-sync",
        ])
        .current_dir(root);
    clean_env(&mut cmd);
    run_as(&mut cmd, user);
    let out = run_bounded(cmd, INITDB_TIMEOUT)
        .map_err(|e| TestkitError::io(format!("running {}", bindir.join("initdb").display()), e))?;
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    // Kept for post-mortems while the directory lives.
    let _ = fs::write(root.join("initdb.log"), &text);
    if !out.status.success() {
        return Err(TestkitError::new(format!(
            "initdb failed ({}) for {}:\n{}",
            out.status,
            data_dir.display(),
            last_lines(&text, 30)
        )));
    }
    Ok(())
}

/// The first column of the first row, when not NULL.
pub(crate) fn first_value(rows: &Rows) -> Option<&str> {
    rows.first()?.first()?.as_deref()
}

/// Variables that would point the server elsewhere or change its messages
/// (the readiness check reads the log in English).
fn clean_env(cmd: &mut Command) {
    for var in [
        "PGDATA",
        "PGHOST",
        "PGHOSTADDR",
        "PGPORT",
        "PGUSER",
        "PGDATABASE",
        "PGOPTIONS",
        "PGPASSWORD",
        "LANGUAGE",
    ] {
        cmd.env_remove(var);
    }
    cmd.env("LC_ALL", "C");
}

/// Waits for `pid` (our child) to exit, reaping it; false on timeout.
fn wait_pid(pid: u32, timeout: Duration) -> bool {
    let Ok(pid) = libc::pid_t::try_from(pid) else {
        return true;
    };
    let deadline = Instant::now() + timeout;
    loop {
        let mut status = 0;
        // SAFETY: plain syscall with a valid out-pointer.
        let rc = unsafe { libc::waitpid(pid, &mut status, libc::WNOHANG) };
        // rc == pid: exited now; rc < 0: not our child any more (reaped).
        if rc == pid || rc < 0 {
            return true;
        }
        if Instant::now() >= deadline {
            return false;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// The last `n` lines written to the log since `from`.
fn log_tail(path: &Path, from: u64, n: usize) -> String {
    let mut text = String::new();
    if let Ok(mut f) = File::open(path) {
        let _ = f.seek(SeekFrom::Start(from));
        let mut bytes = Vec::new();
        let _ = f.take(1 << 20).read_to_end(&mut bytes);
        text = String::from_utf8_lossy(&bytes).into_owned();
    }
    if text.trim().is_empty() {
        return "(empty)".into();
    }
    last_lines(&text, n)
}

fn last_lines(text: &str, n: usize) -> String {
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(n)..].join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn last_lines_keeps_the_end() {
        assert_eq!(last_lines("a\nb\nc\n", 2), "b\nc");
        assert_eq!(last_lines("a", 5), "a");
    }

    /// A `postgres` that fails at once, next to a real initdb: the start
    /// error must carry the server's own words from the log.
    #[test]
    fn a_server_that_dies_at_startup_is_reported_with_its_log() {
        let Ok(real) = Search::from_env().and_then(|s| find_bindir(&s, pg_config_bindir)) else {
            eprintln!("skipped: no PostgreSQL binaries");
            return;
        };
        let fake = tempfile::tempdir().unwrap();
        // The server user (when root) must be able to run what is in here.
        fs::set_permissions(fake.path(), fs::Permissions::from_mode(0o755)).unwrap();
        std::os::unix::fs::symlink(real.join("initdb"), fake.path().join("initdb")).unwrap();
        let postgres = fake.path().join("postgres");
        fs::write(
            &postgres,
            "#!/bin/sh\necho 'FATAL:  the fake postgres refuses to start' >&2\nexit 1\n",
        )
        .unwrap();
        fs::set_permissions(&postgres, fs::Permissions::from_mode(0o755)).unwrap();
        let started = Instant::now();
        let err = match Server::create_with(fake.path().to_path_buf()) {
            Ok(_) => panic!("the fake postgres cannot start"),
            Err(e) => e.to_string(),
        };
        assert!(err.contains("postgres exited during startup"), "{err}");
        assert!(err.contains("the fake postgres refuses to start"), "{err}");
        assert!(
            started.elapsed() < START_TIMEOUT,
            "took {:?}",
            started.elapsed()
        );
    }
}
