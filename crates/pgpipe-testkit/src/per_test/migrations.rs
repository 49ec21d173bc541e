//! A folder of refinery-style migrations (`V<n>__<name>.sql`), read in
//! version order, and the content hash that names its template database.

use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use crate::error::TestkitError;

/// One `V<version>__<name>.sql` file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Migration {
    pub version: u64,
    pub file_name: String,
    pub sql: String,
}

/// Every migration of `dir`, by version. Files not ending in `.sql` are
/// left out (a README, refinery's `.rs` migrations are not supported); a
/// `.sql` file whose name does not fit, or two files with one version, are
/// errors rather than silently skipped migrations.
pub(crate) fn read_dir(dir: &Path) -> Result<Vec<Migration>, TestkitError> {
    let ctx =
        |e: std::io::Error| TestkitError::io(format!("reading migrations in {}", dir.display()), e);
    let mut found = Vec::new();
    for entry in std::fs::read_dir(dir).map_err(ctx)? {
        let path: PathBuf = entry.map_err(ctx)?.path();
        let Some(file_name) = path.file_name().and_then(|n| n.to_str()) else {
            continue;
        };
        let Some(stem) = file_name.strip_suffix(".sql") else {
            continue;
        };
        let version = parse_version(stem).ok_or_else(|| {
            TestkitError::new(format!(
                "migration {} is not named V<version>__<name>.sql",
                path.display()
            ))
        })?;
        let sql = std::fs::read_to_string(&path)
            .map_err(|e| TestkitError::io(format!("reading migration {}", path.display()), e))?;
        found.push(Migration {
            version,
            file_name: file_name.to_string(),
            sql,
        });
    }
    found.sort_by_key(|m| m.version);
    if let Some(pair) = found.windows(2).find(|w| w[0].version == w[1].version) {
        return Err(TestkitError::new(format!(
            "migrations {} and {} in {} have the same version",
            pair[0].file_name,
            pair[1].file_name,
            dir.display()
        )));
    }
    Ok(found)
}

/// `V12__add_users` -> 12 (refinery's versioned naming; the name part is
/// letters, digits and `_`).
fn parse_version(stem: &str) -> Option<u64> {
    let rest = stem.strip_prefix('V')?;
    let (version, name) = rest.split_once("__")?;
    let ok_name = !name.is_empty() && name.chars().all(|c| c.is_alphanumeric() || c == '_');
    if !ok_name || version.is_empty() || !version.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    version.parse().ok()
}

/// Hex SHA-256 over every file's name and contents, in order: equal for
/// equal folders, whatever their path or the process, so that test
/// processes racing for one template agree on its name, and a changed
/// migration gets a new template instead of a stale one.
pub(crate) fn content_hash(migrations: &[Migration]) -> String {
    let mut hasher = Sha256::new();
    // Bumped when the way a template is built changes.
    hasher.update(b"pgpipe-testkit template 1\0");
    for m in migrations {
        for part in [m.file_name.as_bytes(), m.sql.as_bytes()] {
            hasher.update((part.len() as u64).to_be_bytes());
            hasher.update(part);
        }
    }
    hasher
        .finalize()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(dir: &Path, name: &str, sql: &str) {
        std::fs::write(dir.join(name), sql).unwrap();
    }

    #[test]
    fn versions_parse_like_refinery_names() {
        assert_eq!(parse_version("V1__init"), Some(1));
        assert_eq!(parse_version("V020__add_users_2"), Some(20));
        assert_eq!(parse_version("U1__init"), None);
        assert_eq!(parse_version("V1_init"), None);
        assert_eq!(parse_version("V__init"), None);
        assert_eq!(parse_version("Vx__init"), None);
        assert_eq!(parse_version("V1__"), None);
        assert_eq!(parse_version("V1__a-b"), None);
    }

    #[test]
    fn folder_reads_in_version_order_and_refuses_misnamed_files() {
        let dir = tempfile::tempdir().unwrap();
        write(dir.path(), "V10__ten.sql", "SELECT 10");
        write(dir.path(), "V2__two.sql", "SELECT 2");
        write(dir.path(), "README.md", "not a migration");
        let got = read_dir(dir.path()).unwrap();
        let names: Vec<&str> = got.iter().map(|m| m.file_name.as_str()).collect();
        assert_eq!(names, ["V2__two.sql", "V10__ten.sql"]);
        assert_eq!(got[1].sql, "SELECT 10");

        write(dir.path(), "V02__again.sql", "SELECT 2");
        let e = read_dir(dir.path()).unwrap_err().to_string();
        assert!(e.contains("same version"), "{e}");
        std::fs::remove_file(dir.path().join("V02__again.sql")).unwrap();

        write(dir.path(), "init.sql", "SELECT 1");
        let e = read_dir(dir.path()).unwrap_err().to_string();
        assert!(
            e.contains("init.sql") && e.contains("V<version>__<name>.sql"),
            "{e}"
        );

        let e = read_dir(&dir.path().join("missing"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("reading migrations"), "{e}");
    }

    #[test]
    fn hash_follows_contents_not_paths() {
        let m = |v: u64, name: &str, sql: &str| Migration {
            version: v,
            file_name: name.to_string(),
            sql: sql.to_string(),
        };
        let a = content_hash(&[m(1, "V1__a.sql", "CREATE TABLE a ()")]);
        assert_eq!(a.len(), 64);
        assert_eq!(a, content_hash(&[m(1, "V1__a.sql", "CREATE TABLE a ()")]));
        assert_ne!(a, content_hash(&[m(1, "V1__a.sql", "CREATE TABLE b ()")]));
        assert_ne!(a, content_hash(&[m(1, "V1__b.sql", "CREATE TABLE a ()")]));
        // Name and contents are length-prefixed: moving bytes between them changes the hash.
        assert_ne!(
            content_hash(&[m(1, "ab", "c")]),
            content_hash(&[m(1, "a", "bc")])
        );
        assert_ne!(a, content_hash(&[]));
    }
}
