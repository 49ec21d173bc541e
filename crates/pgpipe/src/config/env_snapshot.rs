//! The variables one connect reads, taken in one pass over the process
//! environment.
//!
//! A connect asks for about 25 variables (libpq's `PG*` names and the
//! user-name fallbacks), nearly all unset. Each `std::env::var` takes
//! std's environment lock and has glibc's `getenv` compare the name with
//! every variable of the process: about 470 instructions a name with 35
//! variables, 10k per connect, the largest part of what a plain connect
//! costs pgpipe beyond tokio-postgres (docs/benchmarks.md, "Issue 30,
//! part 3"). One pass that keeps only the names a connect can ask for
//! costs a tenth of that. It is taken afresh for each connect, so a
//! program that changes `PGHOST` between connects still sees the change,
//! as with libpq.

use std::io;
use std::path::{Path, PathBuf};

use super::{Environment, ProcessEnvironment};

/// The environment as one connect sees it: the variables it may read,
/// copied at once; everything else from the [`ProcessEnvironment`].
#[derive(Debug, Default)]
pub(crate) struct EnvSnapshot {
    /// Every kept variable by name, the first of duplicates (as `getenv`
    /// finds it), its value `None` where it is not valid Unicode.
    kept: Vec<(String, Option<String>)>,
}

/// Whether `name` is one the snapshot keeps: libpq's variables (all start
/// with `PG`) and the user-name fallbacks.
fn kept(name: &[u8]) -> bool {
    name.starts_with(b"PG") || matches!(name, b"USER" | b"LOGNAME" | b"USERNAME")
}

impl EnvSnapshot {
    /// Takes the snapshot.
    pub(crate) fn take() -> EnvSnapshot {
        let mut snapshot = EnvSnapshot::default();
        for_each_var(|name, value| {
            if kept(name) && !snapshot.kept.iter().any(|(n, _)| n.as_bytes() == name) {
                if let Ok(name) = std::str::from_utf8(name) {
                    let value = std::str::from_utf8(value).ok().map(str::to_owned);
                    snapshot.kept.push((name.to_owned(), value));
                }
            }
        });
        snapshot
    }
}

/// Calls `each(name, value)` for the process's variables, or for those
/// whose name starts with a letter a kept name starts with.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
fn for_each_var(mut each: impl FnMut(&[u8], &[u8])) {
    // SAFETY: `environ` is glibc's array of "NAME=value" C strings, ended
    // by a null pointer (or itself null); glibc's `getenv` walks it just so,
    // without a lock. std's lock orders std's readers against its own
    // `set_var`, but `set_var` is sound in a program with threads only
    // where no thread reads the environment otherwise (std documents
    // this: C code reads it with `getenv`, as glibc's resolver does on a
    // connect by host name). Under that contract nothing changes the
    // array while it is read here.
    unsafe {
        let mut entry = libc::environ as *const *const libc::c_char;
        if entry.is_null() {
            return;
        }
        while !(*entry).is_null() {
            let first = **entry as u8;
            if matches!(first, b'P' | b'U' | b'L') {
                let bytes = std::ffi::CStr::from_ptr(*entry).to_bytes();
                if let Some(eq) = bytes.iter().position(|&b| b == b'=') {
                    each(&bytes[..eq], &bytes[eq + 1..]);
                }
            }
            entry = entry.add(1);
        }
    }
}

/// Without glibc's `environ`: std's copy of every variable.
#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
fn for_each_var(mut each: impl FnMut(&[u8], &[u8])) {
    for (name, value) in std::env::vars_os() {
        let value = value.into_string().unwrap_or_default();
        if let Some(name) = name.to_str() {
            each(name.as_bytes(), value.as_bytes());
        }
    }
}

impl Environment for EnvSnapshot {
    fn var(&self, name: &str) -> Option<String> {
        if !kept(name.as_bytes()) {
            return ProcessEnvironment.var(name);
        }
        self.kept
            .iter()
            .find(|(n, _)| n == name)
            .and_then(|(_, value)| value.clone())
    }

    fn home_dir(&self) -> Option<PathBuf> {
        ProcessEnvironment.home_dir()
    }

    fn read_file(&self, path: &Path) -> io::Result<Vec<u8>> {
        ProcessEnvironment.read_file(path)
    }

    fn file_mode(&self, path: &Path) -> Option<u32> {
        ProcessEnvironment.file_mode(path)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Set in the child process the first test starts.
    const CHILD: &str = "PGPIPE_ENV_SNAPSHOT_CHILD";

    /// Every name a connect reads, names the process has, and names near
    /// them, read through the snapshot as `std::env::var` reads them.
    fn snapshot_matches_std() {
        let mut names: Vec<String> = std::env::vars_os()
            .filter_map(|(name, _)| name.into_string().ok())
            .collect();
        names.extend(
            [
                "PGHOST",
                "PGPORT",
                "PGUSER",
                "PGPASSWORD",
                "PGSSLMODE",
                "PGAPPNAME",
                "PGDATABASE",
                "USER",
                "LOGNAME",
                "USERNAME",
                "PG",
                "PGPIPE_NO_SUCH_VARIABLE",
                "HOME",
                "PATH",
                "P",
                "",
            ]
            .map(String::from),
        );
        let snapshot = EnvSnapshot::take();
        for name in &names {
            assert_eq!(
                snapshot.var(name),
                std::env::var(name).ok(),
                "variable {name:?}"
            );
        }
    }

    /// In this process's environment, and in a child's made to hold set,
    /// empty, unset and non-Unicode variables of the kinds a connect
    /// reads (a child: setting variables in a test process with threads
    /// would race with the other tests).
    #[test]
    fn a_snapshot_reads_every_variable_as_std_does() {
        snapshot_matches_std();
        if std::env::var_os(CHILD).is_some() {
            return;
        }
        use std::os::unix::ffi::OsStrExt;
        let exe = std::env::current_exe().expect("test binary");
        let out = std::process::Command::new(exe)
            .args([
                "--exact",
                "config::env_snapshot::tests::a_snapshot_reads_every_variable_as_std_does",
                "--test-threads=1",
            ])
            .env(CHILD, "1")
            .env("PGHOST", "db.example")
            .env("PGPORT", "6543")
            .env("PGPASSWORD", "")
            .env("PGAPPNAME", std::ffi::OsStr::from_bytes(b"app\xff"))
            .env("PG", "bare")
            .env("USER", "someone")
            .env("USERS", "not kept")
            .env_remove("LOGNAME")
            .env_remove("PGUSER")
            .output()
            .expect("child test");
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success() && stdout.contains("1 passed"),
            "child: {stdout}{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }

    #[test]
    fn only_libpq_and_user_name_variables_are_kept() {
        for name in [
            "PGHOST",
            "PGSERVICEFILE",
            "PG",
            "USER",
            "LOGNAME",
            "USERNAME",
        ] {
            assert!(kept(name.as_bytes()), "{name}");
        }
        for name in ["PATH", "HOME", "USERS", "LOGNAME2", "P", "", "pghost"] {
            assert!(!kept(name.as_bytes()), "{name}");
        }
    }
}
