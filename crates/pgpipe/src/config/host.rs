//! [`Host`]: one server address of a connection string.

use std::fmt;
use std::path::PathBuf;

use super::DEFAULT_HOST;

/// A server address to connect to.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Host {
    /// A host name or a numeric IP address, reached over TCP. IPv6 literals
    /// are stored without their URL brackets (`::1`, not `[::1]`).
    Tcp(String),
    /// The directory holding the server's Unix-domain socket (the socket
    /// itself is `.s.PGSQL.<port>` inside it). As in libpq, a host that
    /// starts with `/` is taken as such a directory.
    Unix(PathBuf),
}

impl Host {
    /// Classifies one host entry the way libpq does: an absolute path is a
    /// socket directory, an empty entry means the default host.
    pub(crate) fn from_entry(entry: &str) -> Host {
        if entry.is_empty() {
            Host::Tcp(DEFAULT_HOST.to_owned())
        } else if entry.starts_with('/') {
            Host::Unix(PathBuf::from(entry))
        } else if let Some(inner) = entry
            .strip_prefix('[')
            .and_then(|rest| rest.strip_suffix(']'))
        {
            // People paste URL-style `[::1]` into key=value strings too.
            Host::Tcp(inner.to_owned())
        } else {
            Host::Tcp(entry.to_owned())
        }
    }
}

impl fmt::Display for Host {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Host::Tcp(name) => f.write_str(name),
            Host::Unix(path) => write!(f, "{}", path.display()),
        }
    }
}
