//! Finding the PostgreSQL server binaries (initdb, postgres).
//!
//! The search is a pure function of its inputs ([`Search`]) so the "not
//! found" message can be unit-tested without touching the environment.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::error::TestkitError;
use crate::process::run_bounded;
use crate::versions::{self, find_major_bindir, has_server_binaries, is_executable};

/// What to do when nothing is found; the first sentence is stable (the client
/// crate's docs and CI scripts quote it).
pub(crate) const NOT_FOUND: &str = "PostgreSQL server binaries not found (initdb, postgres). \
Install them: `sudo apt-get install -y postgresql` (Debian/Ubuntu), or set PGPIPE_PG_BINDIR";

/// Where to look, in order.
#[derive(Debug, Clone, Default)]
pub(crate) struct Search {
    /// `$PGPIPE_PG_BINDIR`: when set, it is the only place looked at, so a
    /// typo is reported instead of silently testing another version.
    pub env_bindir: Option<PathBuf>,
    /// `$PATH`, searched for `initdb` (then for `pg_config`).
    pub path: Option<OsString>,
    /// Roots holding one directory per major version with a `bin` inside
    /// (Debian's `/usr/lib/postgresql/<major>/bin`); the newest wins.
    pub versioned_roots: Vec<PathBuf>,
    /// `$PGPIPE_PG_VERSION`: when set (and no PGPIPE_PG_BINDIR), only that
    /// major is looked for, in `major_roots`, so a missing version is
    /// reported instead of silently testing another one.
    pub major: Option<u32>,
    /// Where a requested major is looked for: the distribution's root, then
    /// the cache of `scripts/ensure-postgres-versions.sh`.
    pub major_roots: Vec<PathBuf>,
}

impl Search {
    /// The search a test process actually performs; fails when
    /// `PGPIPE_PG_VERSION` is not a major version number.
    pub(crate) fn from_env() -> Result<Search, TestkitError> {
        Ok(Search {
            env_bindir: std::env::var_os("PGPIPE_PG_BINDIR")
                .filter(|v| !v.is_empty())
                .map(PathBuf::from),
            path: std::env::var_os("PATH"),
            versioned_roots: vec![PathBuf::from("/usr/lib/postgresql")],
            major: versions::requested_version()?,
            major_roots: versions::version_roots(),
        })
    }

    /// The search for one major version, whatever the environment asks
    /// (PGPIPE_PG_BINDIR included: a test asking for 17 must get 17).
    pub(crate) fn for_major(major: u32) -> Search {
        Search {
            major: Some(major),
            major_roots: versions::version_roots(),
            ..Search::default()
        }
    }
}

/// Finds the directory holding both `initdb` and `postgres`.
///
/// `pg_config_bindir` runs a `pg_config` found on PATH and returns what
/// `--bindir` printed; it is a parameter so tests can stub it.
pub(crate) fn find_bindir(
    search: &Search,
    pg_config_bindir: impl FnOnce(&Path) -> Option<PathBuf>,
) -> Result<PathBuf, TestkitError> {
    if let Some(dir) = &search.env_bindir {
        if has_server_binaries(dir) {
            return Ok(dir.clone());
        }
        return Err(TestkitError::new(format!(
            "{NOT_FOUND} (PGPIPE_PG_BINDIR={} does not contain initdb and postgres)",
            dir.display()
        )));
    }
    if let Some(major) = search.major {
        return find_major_bindir(&search.major_roots, major).map_err(|e| {
            e.context(format!(
                "{} asks for PostgreSQL {major}",
                versions::VERSION_VAR
            ))
        });
    }
    let mut searched = Vec::new();
    if let Some(path) = &search.path {
        if let Some(initdb) = find_in_path(path, "initdb") {
            // Resolve symlinks (/usr/local/bin/initdb -> /usr/lib/postgresql/15/bin/initdb)
            // so initdb and postgres come from the same installation.
            let real = std::fs::canonicalize(&initdb).unwrap_or(initdb);
            if let Some(dir) = real.parent() {
                if has_server_binaries(dir) {
                    return Ok(dir.to_path_buf());
                }
                searched.push(dir.display().to_string());
            }
        }
        if let Some(pg_config) = find_in_path(path, "pg_config") {
            if let Some(dir) = pg_config_bindir(&pg_config) {
                if has_server_binaries(&dir) {
                    return Ok(dir);
                }
                searched.push(dir.display().to_string());
            }
        }
        searched.push("$PATH".to_string());
    }
    for root in &search.versioned_roots {
        if let Some(dir) = newest_versioned_bindir(root) {
            return Ok(dir);
        }
        searched.push(format!("{}/*/bin", root.display()));
    }
    Err(TestkitError::new(format!(
        "{NOT_FOUND} (searched: {})",
        searched.join(", ")
    )))
}

/// Runs `pg_config --bindir` (bounded: it is a local program that prints one line).
pub(crate) fn pg_config_bindir(pg_config: &Path) -> Option<PathBuf> {
    let mut cmd = std::process::Command::new(pg_config);
    cmd.arg("--bindir");
    let out = run_bounded(cmd, Duration::from_secs(10)).ok()?;
    if !out.status.success() {
        return None;
    }
    let text = String::from_utf8(out.stdout).ok()?;
    let dir = text.trim();
    (!dir.is_empty()).then(|| PathBuf::from(dir))
}

fn find_in_path(path: &OsString, name: &str) -> Option<PathBuf> {
    std::env::split_paths(path)
        .filter(|dir| !dir.as_os_str().is_empty())
        .map(|dir| dir.join(name))
        .find(|candidate| is_executable(candidate))
}

/// `<root>/<major>/bin` with the highest numeric major that has the binaries
/// (Debian keeps several majors side by side).
fn newest_versioned_bindir(root: &Path) -> Option<PathBuf> {
    let entries = std::fs::read_dir(root).ok()?;
    entries
        .filter_map(|e| e.ok())
        .filter_map(|e| {
            let name = e.file_name().into_string().ok()?;
            let version = parse_version(&name)?;
            let bin = e.path().join("bin");
            has_server_binaries(&bin).then_some((version, bin))
        })
        .max_by(|a, b| a.0.cmp(&b.0))
        .map(|(_, bin)| bin)
}

/// "15" -> (15, 0), "9.6" -> (9, 6); anything else is not a version dir.
fn parse_version(name: &str) -> Option<(u32, u32)> {
    let mut parts = name.splitn(2, '.');
    let major = parts.next()?.parse().ok()?;
    let minor = match parts.next() {
        Some(m) => m.parse().ok()?,
        None => 0,
    };
    Some((major, minor))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    fn fake_bin(dir: &Path, names: &[&str]) {
        std::fs::create_dir_all(dir).unwrap();
        for name in names {
            let p = dir.join(name);
            std::fs::write(&p, b"#!/bin/sh\n").unwrap();
            std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
        }
    }

    fn no_pg_config(_: &Path) -> Option<PathBuf> {
        None
    }

    #[test]
    fn nothing_found_says_how_to_install() {
        let empty = tempfile::tempdir().unwrap();
        let search = Search {
            env_bindir: None,
            path: None,
            versioned_roots: vec![empty.path().to_path_buf()],
            ..Search::default()
        };
        let err = find_bindir(&search, no_pg_config).unwrap_err();
        let msg = err.to_string();
        assert!(msg.starts_with(NOT_FOUND), "{msg}");
        assert!(msg.contains("sudo apt-get install -y postgresql"), "{msg}");
        assert!(msg.contains("PGPIPE_PG_BINDIR"), "{msg}");
    }

    #[test]
    fn empty_env_bindir_is_reported_not_skipped() {
        let empty = tempfile::tempdir().unwrap();
        let elsewhere = tempfile::tempdir().unwrap();
        fake_bin(&elsewhere.path().join("16/bin"), &["initdb", "postgres"]);
        let search = Search {
            env_bindir: Some(empty.path().to_path_buf()),
            path: None,
            versioned_roots: vec![elsewhere.path().to_path_buf()],
            ..Search::default()
        };
        let msg = find_bindir(&search, no_pg_config).unwrap_err().to_string();
        assert!(msg.starts_with(NOT_FOUND), "{msg}");
        assert!(msg.contains(&empty.path().display().to_string()), "{msg}");
    }

    #[test]
    fn a_requested_major_is_looked_for_alone() {
        let dist = tempfile::tempdir().unwrap();
        let cache = tempfile::tempdir().unwrap();
        fake_bin(&dist.path().join("15/bin"), &["initdb", "postgres"]);
        fake_bin(&cache.path().join("18/bin"), &["initdb", "postgres"]);
        let search = |major| Search {
            versioned_roots: vec![dist.path().to_path_buf()],
            major: Some(major),
            major_roots: vec![dist.path().to_path_buf(), cache.path().to_path_buf()],
            ..Search::default()
        };
        assert_eq!(
            find_bindir(&search(18), no_pg_config).unwrap(),
            cache.path().join("18/bin")
        );
        assert_eq!(
            find_bindir(&search(15), no_pg_config).unwrap(),
            dist.path().join("15/bin")
        );
        // 17 is nowhere: an error, not the newest or the default version.
        let msg = find_bindir(&search(17), no_pg_config)
            .unwrap_err()
            .to_string();
        assert!(
            msg.contains("PGPIPE_PG_VERSION asks for PostgreSQL 17"),
            "{msg}"
        );
        assert!(msg.contains("ensure-postgres-versions.sh 17"), "{msg}");
    }

    #[test]
    fn env_bindir_wins() {
        let dir = tempfile::tempdir().unwrap();
        fake_bin(dir.path(), &["initdb", "postgres"]);
        let search = Search {
            env_bindir: Some(dir.path().to_path_buf()),
            ..Search::default()
        };
        assert_eq!(find_bindir(&search, no_pg_config).unwrap(), dir.path());
    }

    #[test]
    fn path_initdb_is_resolved_through_symlinks() {
        let real = tempfile::tempdir().unwrap();
        fake_bin(real.path(), &["initdb", "postgres"]);
        let on_path = tempfile::tempdir().unwrap();
        std::os::unix::fs::symlink(real.path().join("initdb"), on_path.path().join("initdb"))
            .unwrap();
        let search = Search {
            path: Some(on_path.path().as_os_str().to_owned()),
            ..Search::default()
        };
        let found = find_bindir(&search, no_pg_config).unwrap();
        assert_eq!(found, std::fs::canonicalize(real.path()).unwrap());
    }

    #[test]
    fn pg_config_is_asked_when_initdb_is_not_on_path() {
        let on_path = tempfile::tempdir().unwrap();
        fake_bin(on_path.path(), &["pg_config"]);
        let real = tempfile::tempdir().unwrap();
        fake_bin(real.path(), &["initdb", "postgres"]);
        let search = Search {
            path: Some(on_path.path().as_os_str().to_owned()),
            ..Search::default()
        };
        let want = real.path().to_path_buf();
        let found = find_bindir(&search, |p| {
            assert!(p.ends_with("pg_config"));
            Some(want.clone())
        })
        .unwrap();
        assert_eq!(found, real.path());
    }

    #[test]
    fn newest_versioned_dir_wins_and_incomplete_ones_are_skipped() {
        let root = tempfile::tempdir().unwrap();
        fake_bin(&root.path().join("9.6/bin"), &["initdb", "postgres"]);
        fake_bin(&root.path().join("15/bin"), &["initdb", "postgres"]);
        fake_bin(&root.path().join("17/bin"), &["initdb"]); // client-only leftovers
        fake_bin(&root.path().join("notes/bin"), &["initdb", "postgres"]);
        let search = Search {
            versioned_roots: vec![root.path().to_path_buf()],
            ..Search::default()
        };
        assert_eq!(
            find_bindir(&search, no_pg_config).unwrap(),
            root.path().join("15/bin")
        );
    }
}
