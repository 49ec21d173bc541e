//! Access to the process environment, behind a trait so that resolution can
//! be tested without touching real variables or files.

use std::io;
use std::path::{Path, PathBuf};

/// Where [`Config::resolve`](super::Config::resolve) reads environment
/// variables, the home directory and the password file from.
///
/// [`ProcessEnvironment`] is the real one; tests supply their own.
pub trait Environment {
    /// The value of an environment variable, or `None` if it is unset or not
    /// valid Unicode.
    fn var(&self, name: &str) -> Option<String>;

    /// The user's home directory, where `.pgpass` is looked for.
    fn home_dir(&self) -> Option<PathBuf>;

    /// Reads a whole file (the password file).
    ///
    /// # Errors
    ///
    /// Any I/O error; resolution then proceeds as if the file did not exist.
    fn read_file(&self, path: &Path) -> io::Result<Vec<u8>>;

    /// The Unix mode bits of a file (`st_mode`; the file-type bits may be
    /// included), or `None` where there are none (Windows) or the file cannot
    /// be examined.
    fn file_mode(&self, path: &Path) -> Option<u32>;
}

/// The real environment: `std::env` variables, `$HOME` (or `%USERPROFILE%`
/// on Windows) and the file system.
///
/// Unlike libpq, it does not consult the system user database: with `HOME`
/// unset there is no `~/.pgpass`, and the default user name comes from the
/// `USER`, `LOGNAME` or `USERNAME` variables only.
#[derive(Debug, Clone, Copy, Default)]
pub struct ProcessEnvironment;

impl Environment for ProcessEnvironment {
    fn var(&self, name: &str) -> Option<String> {
        std::env::var(name).ok()
    }

    fn home_dir(&self) -> Option<PathBuf> {
        let var = if cfg!(windows) { "USERPROFILE" } else { "HOME" };
        std::env::var_os(var)
            .filter(|home| !home.is_empty())
            .map(PathBuf::from)
    }

    fn read_file(&self, path: &Path) -> io::Result<Vec<u8>> {
        std::fs::read(path)
    }

    #[cfg(unix)]
    fn file_mode(&self, path: &Path) -> Option<u32> {
        use std::os::unix::fs::PermissionsExt;
        // Follows symlinks, as libpq's stat() does: the target's mode counts.
        std::fs::metadata(path).ok().map(|m| m.permissions().mode())
    }

    #[cfg(not(unix))]
    fn file_mode(&self, _path: &Path) -> Option<u32> {
        None
    }
}
