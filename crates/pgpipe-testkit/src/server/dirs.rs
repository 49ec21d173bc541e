//! The server's directories: a fresh temp root (with `owner.pid`) and
//! socket directory the server user can reach, and the removal of roots
//! left behind by test processes that died.

use std::fs::{self, File};
use std::io::Read;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use tempfile::TempDir;

use super::DIR_PREFIX;
use crate::error::TestkitError;
use crate::process::RunAs;

/// A fresh temp directory (with `owner.pid`) and its private socket
/// directory, both owned by the server user.
pub(crate) fn make_root(run_as: Option<&RunAs>) -> Result<(TempDir, PathBuf), TestkitError> {
    let base = temp_base(run_as)?;
    remove_stale_dirs(&base);
    let root = tempfile::Builder::new()
        .prefix(DIR_PREFIX)
        .tempdir_in(&base)
        .map_err(|e| {
            TestkitError::io(
                format!("creating a temp directory in {}", base.display()),
                e,
            )
        })?;
    // Lets a later run recognize this directory as abandoned if we die
    // without cleaning up (SIGKILL); see remove_stale_dirs.
    fs::write(
        root.path().join("owner.pid"),
        std::process::id().to_string(),
    )
    .map_err(|e| TestkitError::io("writing owner.pid", e))?;
    let socket_dir = root.path().join("sock");
    fs::create_dir(&socket_dir)
        .map_err(|e| TestkitError::io("creating the socket directory", e))?;
    fs::set_permissions(&socket_dir, fs::Permissions::from_mode(0o700))
        .map_err(|e| TestkitError::io("chmod of the socket directory", e))?;
    if let Some(user) = run_as {
        for dir in [root.path(), socket_dir.as_path()] {
            std::os::unix::fs::chown(dir, Some(user.uid), Some(user.gid)).map_err(|e| {
                TestkitError::io(
                    format!("chown of {} to user {}", dir.display(), user.name),
                    e,
                )
            })?;
        }
    }
    Ok((root, socket_dir))
}

/// The temp base directory. As root, the server user must be able to reach
/// its directory, so every ancestor must be traversable by others.
fn temp_base(user: Option<&RunAs>) -> Result<PathBuf, TestkitError> {
    let preferred = std::env::temp_dir();
    if user.is_none() || traversable(&preferred) {
        return Ok(preferred);
    }
    let tmp = PathBuf::from("/tmp");
    if traversable(&tmp) {
        return Ok(tmp);
    }
    Err(TestkitError::new(format!(
        "running as root, the server runs as another user who cannot reach {} or /tmp \
         (a parent directory lacks o+x); set TMPDIR to a directory every user can traverse",
        preferred.display()
    )))
}

fn traversable(dir: &Path) -> bool {
    let Ok(dir) = fs::canonicalize(dir) else {
        return false;
    };
    dir.ancestors().all(|a| {
        fs::metadata(a)
            .map(|m| m.permissions().mode() & 0o001 != 0)
            .unwrap_or(false)
    })
}

/// Removes directories of earlier test processes that died without cleaning
/// up (SIGKILL, OOM): their owner is gone and so is their server.
fn remove_stale_dirs(base: &Path) {
    let Ok(entries) = fs::read_dir(base) else {
        return;
    };
    for entry in entries.filter_map(|e| e.ok()) {
        let name = entry.file_name();
        if !name.to_string_lossy().starts_with(DIR_PREFIX) {
            continue;
        }
        let dir = entry.path();
        let owner = read_pid(&dir.join("owner.pid"));
        let postmaster = read_pid(&dir.join("data/postmaster.pid"));
        if owner.is_some_and(|p| !alive(p)) && !postmaster.is_some_and(alive) {
            let _ = fs::remove_dir_all(&dir);
        }
    }
}

fn read_pid(path: &Path) -> Option<u32> {
    let mut text = String::new();
    File::open(path)
        .ok()?
        .take(64)
        .read_to_string(&mut text)
        .ok()?;
    text.lines().next()?.trim().parse().ok()
}

fn alive(pid: u32) -> bool {
    let Ok(pid) = libc::pid_t::try_from(pid) else {
        return false;
    };
    // SAFETY: signal 0 only checks for existence.
    let rc = unsafe { libc::kill(pid, 0) };
    if rc != 0 {
        return std::io::Error::last_os_error().raw_os_error() != Some(libc::ESRCH);
    }
    // A zombie (dead, not yet reaped by its new parent) still "exists".
    let stat = fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    let state = stat
        .rsplit_once(") ")
        .and_then(|(_, rest)| rest.chars().next());
    state != Some('Z')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stale_dirs_of_dead_owners_are_removed_live_ones_kept() {
        let base = tempfile::tempdir().unwrap();
        let dead = base.path().join(format!("{DIR_PREFIX}dead"));
        let live = base.path().join(format!("{DIR_PREFIX}live"));
        let other = base.path().join("unrelated");
        for d in [&dead, &live, &other] {
            fs::create_dir(d).unwrap();
        }
        // pid_max is at most 2^22 on Linux, so this pid cannot exist.
        fs::write(dead.join("owner.pid"), "99999999").unwrap();
        fs::write(live.join("owner.pid"), std::process::id().to_string()).unwrap();
        fs::write(other.join("owner.pid"), "99999999").unwrap();
        remove_stale_dirs(base.path());
        assert!(!dead.exists());
        assert!(live.exists());
        assert!(other.exists());
    }

    #[test]
    fn tmp_is_traversable() {
        assert!(traversable(Path::new("/tmp")));
    }
}
