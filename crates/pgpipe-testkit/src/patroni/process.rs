//! The processes of the HA stack: finding the `patroni` and `etcd`
//! binaries, and a supervised child that is stopped (bounded) on drop.

use std::fs::{self, File, OpenOptions};
use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Mutex;
use std::time::Duration;

use crate::error::TestkitError;
use crate::process::{run_as, spawn_tied_with, stop_child, RunAs};

/// Where Patroni may be: `$PGPIPE_PATRONI`, then `PATH`, then `/usr/bin`.
pub(super) const PATRONI_VAR: &str = "PGPIPE_PATRONI";
/// Where etcd may be: `$PGPIPE_ETCD`, then `PATH`, then `/usr/bin`.
pub(super) const ETCD_VAR: &str = "PGPIPE_ETCD";
const INSTALL: &str = "run scripts/ensure-patroni.sh (Debian's `patroni` and `etcd-server` \
                       packages), or set PGPIPE_PATRONI and PGPIPE_ETCD";

/// The binary `name`, or an error that says how to install it.
pub(super) fn find_binary(var: &str, name: &str) -> Result<PathBuf, TestkitError> {
    if let Some(p) = std::env::var_os(var).filter(|p| !p.is_empty()) {
        return Ok(PathBuf::from(p));
    }
    std::env::var_os("PATH")
        .into_iter()
        .flat_map(|p| std::env::split_paths(&p).collect::<Vec<_>>())
        .map(|d| d.join(name))
        .chain([PathBuf::from("/usr/bin").join(name)])
        .find(|c| c.is_file())
        .ok_or_else(|| TestkitError::new(format!("`{name}` not found: {INSTALL}")))
}

/// A child process with its log file, stopped with `stop_signal` (then
/// SIGKILL after a grace period) when dropped.
pub(super) struct Supervised {
    what: String,
    log: PathBuf,
    child: Mutex<Option<Child>>,
    stop_signal: libc::c_int,
}

impl Supervised {
    /// Starts `cmd` as `user`, stdout and stderr appended to `log`. The
    /// child gets `stop_signal` if the test process dies.
    pub(super) fn start(
        what: impl Into<String>,
        mut cmd: Command,
        user: Option<&RunAs>,
        log: &Path,
        stop_signal: libc::c_int,
    ) -> Result<Supervised, TestkitError> {
        let what = what.into();
        let out = OpenOptions::new()
            .create(true)
            .append(true)
            .open(log)
            .map_err(|e| TestkitError::io(format!("opening {}", log.display()), e))?;
        let err = out
            .try_clone()
            .map_err(|e| TestkitError::io("dup of a log file", e))?;
        if let Some(user) = user {
            let _ = std::os::unix::fs::chown(log, Some(user.uid), Some(user.gid));
        }
        cmd.stdin(Stdio::null()).stdout(out).stderr(err);
        for var in [
            "PGDATA",
            "PGHOST",
            "PGPORT",
            "PGUSER",
            "PGDATABASE",
            "PGOPTIONS",
        ] {
            cmd.env_remove(var);
        }
        run_as(&mut cmd, user);
        let child = spawn_tied_with(cmd, stop_signal)
            .map_err(|e| TestkitError::io(format!("starting {what}"), e))?;
        Ok(Supervised {
            what,
            log: log.to_path_buf(),
            child: Mutex::new(Some(child)),
            stop_signal,
        })
    }

    /// Why the process is not running, if it is not.
    pub(super) fn exited(&self) -> Option<String> {
        let mut slot = self.child.lock().unwrap_or_else(|p| p.into_inner());
        match slot.as_mut().map(|c| c.try_wait()) {
            Some(Ok(None)) => None,
            Some(Ok(Some(status))) => Some(format!("{} exited ({status})", self.what)),
            Some(Err(e)) => Some(format!("{}: unknown status ({e})", self.what)),
            None => Some(format!("{} was stopped", self.what)),
        }
    }

    /// The process id, while it has not been stopped.
    pub(super) fn pid(&self) -> Option<u32> {
        let slot = self.child.lock().unwrap_or_else(|p| p.into_inner());
        slot.as_ref().map(Child::id)
    }

    /// The log's last `n` lines.
    pub(super) fn log_tail(&self, n: usize) -> String {
        tail(&self.log, n)
    }

    /// Stops the process: its stop signal, SIGKILL after `grace`; reaps it.
    pub(super) fn stop(&self, grace: Duration) {
        let mut slot = self.child.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(mut child) = slot.take() {
            stop_child(&mut child, self.stop_signal, grace);
        }
    }
}

impl Drop for Supervised {
    fn drop(&mut self) {
        self.stop(Duration::from_secs(30));
    }
}

/// The last `n` lines of the last MiB of `path`.
pub(super) fn tail(path: &Path, n: usize) -> String {
    let mut bytes = Vec::new();
    if let Ok(mut f) = File::open(path) {
        let len = f.metadata().map(|m| m.len()).unwrap_or(0);
        let _ = f.seek(SeekFrom::Start(len.saturating_sub(1 << 20)));
        let _ = f.read_to_end(&mut bytes);
    }
    let text = String::from_utf8_lossy(&bytes);
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(n)..].join("\n")
}

/// The pid in the first line of `file` (postmaster.pid), if any.
pub(super) fn read_pid(file: &Path) -> Option<u32> {
    fs::read_to_string(file)
        .ok()?
        .lines()
        .next()?
        .trim()
        .parse()
        .ok()
}
