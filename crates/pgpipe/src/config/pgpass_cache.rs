//! One parsed password file per path, shared by every connect: reading and
//! parsing `~/.pgpass` on each connect is client CPU tokio-postgres never
//! spends.
//!
//! It stays fresh by the file's metadata: each lookup examines the file
//! (one `stat`, which the permission check needs anyway) and reads it again
//! when its [`FileStamp`] changed, so a rewritten, replaced, removed or new
//! file counts from the next connect on, as before. The permission check
//! runs on that fresh metadata every time: `chmod` does not change what the
//! stamp compares, and a file made readable by others must stop counting
//! at once.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock, PoisonError};

use super::pgpass::{usable_mode, PassFile};
use super::FileStamp;

/// At most this many files are kept (one per path); a full cache is
/// emptied rather than growing without bound.
const MAX_ENTRIES: usize = 64;

struct Entry {
    stamp: FileStamp,
    file: Arc<PassFile>,
}

/// The cache: one per process ([`shared`]), or a private one in tests.
#[derive(Default)]
pub(super) struct PassFileCache {
    entries: Mutex<HashMap<PathBuf, Entry>>,
}

/// The process's cache.
pub(super) fn shared() -> &'static PassFileCache {
    static CACHE: OnceLock<PassFileCache> = OnceLock::new();
    CACHE.get_or_init(PassFileCache::default)
}

impl PassFileCache {
    /// The password file at `path`, or `None` when there is none to use
    /// (missing, unreadable, not a regular file, readable by others).
    pub(super) fn get(&self, path: &Path) -> Option<Arc<PassFile>> {
        let Ok(metadata) = std::fs::metadata(path) else {
            // Gone: forget it, so that a new file is read when it appears.
            self.lock().remove(path);
            return None;
        };
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            if !usable_mode(metadata.permissions().mode()) {
                return None;
            }
        }
        #[cfg(not(unix))]
        if !metadata.is_file() {
            return None;
        }
        let stamp = FileStamp::of_metadata(&metadata);
        if let Some(entry) = self.lock().get(path) {
            if entry.stamp == stamp {
                return Some(entry.file.clone());
            }
        }
        // Read outside the lock: a slow file must not hold up other connects.
        let contents = std::fs::read(path).ok()?;
        let file = Arc::new(PassFile::parse(&contents));
        let mut entries = self.lock();
        if entries.len() >= MAX_ENTRIES && !entries.contains_key(path) {
            entries.clear();
        }
        // Stamped with the metadata from before the read: a write racing
        // the read leaves a newer stamp behind, so the next lookup reads
        // the file again rather than keeping a torn copy.
        entries.insert(
            path.to_path_buf(),
            Entry {
                stamp,
                file: file.clone(),
            },
        );
        Some(file)
    }

    fn lock(&self) -> MutexGuard<'_, HashMap<PathBuf, Entry>> {
        // A panic while holding the lock leaves a map that is still whole.
        self.entries.lock().unwrap_or_else(PoisonError::into_inner)
    }

    #[cfg(test)]
    fn len(&self) -> usize {
        self.lock().len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::pgpass::Query;

    /// A directory of its own, deleted when the test ends.
    fn temp_dir(name: &str) -> tempfile::TempDir {
        tempfile::Builder::new()
            .prefix(&format!("pgpipe-pgpass-cache-{name}-"))
            .tempdir()
            .expect("temp dir")
    }

    /// Writes a password file by rename, as editors do, with mode 0600.
    fn write(path: &Path, contents: &str, mode: u32) {
        let next = path.with_extension("new");
        std::fs::write(&next, contents).expect("write");
        set_mode(&next, mode);
        std::fs::rename(&next, path).expect("rename");
    }

    fn set_mode(path: &Path, mode: u32) {
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).expect("chmod");
        }
        #[cfg(not(unix))]
        let _ = (path, mode);
    }

    fn password(file: &PassFile) -> Option<Vec<u8>> {
        file.lookup(&Query {
            host: "h",
            unix: false,
            port: 5432,
            dbname: "d",
            user: "u",
        })
    }

    #[test]
    fn same_file_is_parsed_once() {
        let dir = temp_dir("once");
        let path = dir.path().join("pgpass");
        write(&path, "h:*:*:u:first\n", 0o600);
        let cache = PassFileCache::default();
        let first = cache.get(&path).expect("first");
        let second = cache.get(&path).expect("second");
        assert!(Arc::ptr_eq(&first, &second), "parsed again");
        assert_eq!(password(&second).as_deref(), Some(&b"first"[..]));
        assert_eq!(cache.len(), 1);
    }

    #[test]
    fn a_rewritten_file_is_read_again() {
        let dir = temp_dir("rewritten");
        let path = dir.path().join("pgpass");
        write(&path, "h:*:*:u:first\n", 0o600);
        let cache = PassFileCache::default();
        let first = cache.get(&path).expect("first");
        // Replaced by rename (a new inode).
        write(&path, "h:*:*:u:second\n", 0o600);
        let second = cache.get(&path).expect("second");
        assert!(!Arc::ptr_eq(&first, &second));
        assert_eq!(password(&second).as_deref(), Some(&b"second"[..]));
        // Rewritten in place (same inode, another size).
        std::fs::write(&path, "h:*:*:u:third-in-place\n").expect("rewrite");
        let third = cache.get(&path).expect("third");
        assert_eq!(password(&third).as_deref(), Some(&b"third-in-place"[..]));
    }

    #[test]
    fn a_deleted_file_supplies_no_password_and_a_new_one_does() {
        let dir = temp_dir("deleted");
        let path = dir.path().join("pgpass");
        write(&path, "h:*:*:u:first\n", 0o600);
        let cache = PassFileCache::default();
        assert!(cache.get(&path).is_some());
        std::fs::remove_file(&path).expect("remove");
        assert!(cache.get(&path).is_none(), "a deleted file still counts");
        assert_eq!(cache.len(), 0);
        write(&path, "h:*:*:u:back\n", 0o600);
        let back = cache.get(&path).expect("a new file is read");
        assert_eq!(password(&back).as_deref(), Some(&b"back"[..]));
    }

    #[cfg(unix)]
    #[test]
    fn a_file_others_can_read_is_ignored_even_when_cached() {
        let dir = temp_dir("mode");
        let path = dir.path().join("pgpass");
        write(&path, "h:*:*:u:pw\n", 0o600);
        let cache = PassFileCache::default();
        assert!(cache.get(&path).is_some());
        // chmod changes neither the modification time nor the size.
        for mode in [0o640, 0o604, 0o644] {
            set_mode(&path, mode);
            assert!(cache.get(&path).is_none(), "mode {mode:o} used");
        }
        set_mode(&path, 0o400);
        assert!(cache.get(&path).is_some(), "mode 400 ignored");
        // A directory is not a password file.
        assert!(cache.get(dir.path()).is_none());
    }

    #[test]
    fn the_cache_is_bounded() {
        let dir = temp_dir("bounded");
        let cache = PassFileCache::default();
        for i in 0..MAX_ENTRIES + 5 {
            let path = dir.path().join(format!("pgpass-{i}"));
            write(&path, "h:*:*:u:pw\n", 0o600);
            assert!(cache.get(&path).is_some());
            assert!(cache.len() <= MAX_ENTRIES);
        }
    }
}
