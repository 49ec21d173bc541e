//! [`PasswordFile`]: a connect's password file, looked up only when a
//! server asks for a password.
//!
//! libpq reads the file before connecting, whether or not the server will
//! ask; most servers that clients connect to in a hot loop do not (trust,
//! certificates, a pooler), and the file's `stat` and the cache's lock and
//! path hash were client CPU on every connect. The answer is the same: the
//! file is matched with the same host, port, database and user, through
//! the same cache, so a rewritten file still counts from the next connect.

use std::borrow::Cow;
use std::path::{Path, PathBuf};

use super::pgpass::Query;
use super::{pgpass_cache, Host, ProcessEnvironment, ResolvedConfig};

/// Where a connect's password file is and what to match in it, for the
/// targets without a configured password. Made by
/// `Config::resolve_for_connect`.
#[derive(Debug, Default)]
pub(crate) struct PasswordFile {
    /// Whether the targets lack a configured password, so the file may
    /// supply one (a configured password serves every target).
    pub(super) wanted: bool,
    /// `passfile=` or `PGPASSFILE`; `None`: the per-user default, found
    /// when needed.
    pub(super) path: Option<PathBuf>,
    /// By target index, the host to match where it is not the target's own
    /// (a socket directory as `host` beside a `hostaddr`: libpq matches the
    /// name the user gave). Empty, and unallocated, otherwise.
    pub(super) keys: Vec<(usize, String)>,
}

impl PasswordFile {
    /// The file's password for `resolved.targets[index]`, if the targets
    /// have no configured password and a line matches: what
    /// [`Config::resolve`](super::Config::resolve) puts in that target's
    /// `password`, read now.
    pub(crate) fn password(&self, resolved: &ResolvedConfig, index: usize) -> Option<Vec<u8>> {
        if !self.wanted {
            return None;
        }
        let target = resolved.targets.get(index)?;
        let default;
        let path: &Path = match &self.path {
            Some(path) => path,
            None => {
                default = super::resolve::default_passfile(&ProcessEnvironment)?;
                &default
            }
        };
        let file = pgpass_cache::shared().get(path)?;
        let (host, unix) = match self.keys.iter().find(|(i, _)| *i == index) {
            Some((_, dir)) => (Cow::Borrowed(dir.as_str()), true),
            // The name the user gave: beside a `hostaddr` it is kept as
            // `host_name`; else it is the host connected to (an address
            // given alone is its own name, and so is the default host).
            None => match (&target.host_name, &target.host) {
                (Some(name), _) => (Cow::Borrowed(name.as_str()), false),
                (None, Host::Tcp(host)) => (Cow::Borrowed(host.as_str()), false),
                (None, Host::Unix(dir)) => (dir.to_string_lossy(), true),
            },
        };
        file.lookup(&Query {
            host: &host,
            unix,
            port: target.port,
            dbname: &resolved.dbname,
            user: &resolved.user,
        })
    }
}
