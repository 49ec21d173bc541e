//! Connection configuration: parsing connection strings, applying the
//! `PG*` environment variables, the password file and built-in defaults.
//!
//! A [`Config`] holds only what its user said, from a URL, a libpq
//! `key=value` string or the builder methods. [`Config::resolve`] turns it
//! into a [`ResolvedConfig`], in which every setting has its final value and
//! each host to try is a [`Target`] with its port and password. Keeping the
//! two apart means a `Config` can be built once and resolved again on every
//! reconnect, picking up a rotated password file.
//!
//! The rules follow libpq's, with these deliberate differences:
//!
//! * With no host anywhere, pgpipe connects to `localhost` over TCP, where
//!   libpq would use a Unix socket in a directory chosen at its build time,
//!   which a Rust program cannot know.
//! * With no `connect_timeout` anywhere, connecting gives up after 10 seconds
//!   rather than waiting forever: every wait in pgpipe has a bound.
//!   `connect_timeout=0` still means "no timeout".
//! * An empty value (`user=` or `PGUSER=`) leaves the setting unset, so the
//!   environment or the default applies.
//! * `client_encoding` may only be UTF-8: pgpipe always talks UTF-8.
//! * Service files (`service=`, `PGSERVICE`) are not supported.
//!
//! Durations accept a unit everywhere (`us`, `ms`, `s`, `min`, `h`, `d`); a
//! bare number keeps the parameter's documented unit, as libpq reads it:
//!
//! | parameter | bare number | with a unit |
//! | --- | --- | --- |
//! | `connect_timeout` | seconds (`2`) | `250ms`, `2s` |
//! | `keepalives_idle` | seconds (`60`) | `1min` |
//! | `keepalives_interval` | seconds (`10`) | `1min` (whole seconds only) |
//! | `tcp_user_timeout` | milliseconds (`5000`) | `5s` |
//! | `query_timeout` | milliseconds (`1500`) | `1500ms`, `2s` |
//! | `pool_acquire_timeout` | milliseconds (`2000`) | `2s` |
//! | `pool_health_check_after` | milliseconds (`1000`) | `1s` |
//! | `pool_idle_timeout` | seconds (`600`; 0: never) | `10min` |
//! | `pool_max_lifetime` | seconds (`1800`; 0: never) | `30min` |
//!
//! TLS and authentication settings follow libpq: `sslmode` (default
//! `prefer`), `sslrootcert` (a file, or `system`), `sslcert`, `sslkey`,
//! `sslcrl`, `sslcrldir`, `channel_binding`, `sslnegotiation`, `require_auth`,
//! `min_protocol_version` and `max_protocol_version`; see the crate README
//! for what each value does.

mod assign;
mod conninfo;
mod env;
mod env_snapshot;
mod error;
mod fields;
mod host;
mod keywords;
mod params;
mod password_file;
mod pgpass;
mod pgpass_cache;
mod require_auth;
mod resolve;
mod resolved;
mod secret;
mod stamp;
pub(crate) mod table;
mod url;
mod validate;

#[cfg(test)]
mod tests;

use std::path::Path;
use std::str::FromStr;

pub use env::{Environment, ProcessEnvironment};
pub use error::{ConfigError, IntoConfig};
pub use fields::Config;
pub use host::Host;
pub use keywords::{
    ChannelBinding, LoadBalanceHosts, ProtocolVersion, QueryMode, SslMode, SslNegotiation,
    TargetSessionAttrs,
};
pub(crate) use params::parse_duration;
pub(crate) use password_file::PasswordFile;
pub use require_auth::{AuthMethod, RequireAuth};
pub use resolved::{ResolvedConfig, Target};
pub use secret::Secret;
pub(crate) use stamp::FileStamp;
pub(crate) use url::{query_items, split_query};

/// The host used when none is given anywhere.
pub(crate) const DEFAULT_HOST: &str = "localhost";
/// The port used when none is given anywhere.
pub(crate) const DEFAULT_PORT: u16 = 5432;
const DEFAULT_STATEMENT_CACHE_CAPACITY: usize = 256;
const DEFAULT_MAX_MESSAGE_SIZE: usize = 1 << 30;
const DEFAULT_SCRAM_MAX_ITERATIONS: u32 = 1_000_000;

impl Default for Config {
    fn default() -> Config {
        Config::new()
    }
}

/// What the parameter table (`fields.rs`) cannot express: parsing a whole
/// string, the setters of lists with their own rules, and resolving.
impl Config {
    /// Parses a connection string: a URL starting with `postgres://` or
    /// `postgresql://`, or a libpq `key=value` string (which may be empty).
    ///
    /// # Errors
    ///
    /// A [`ConfigError`] naming the offending part: a malformed URL piece or
    /// percent-escape, an unknown parameter, an invalid value, or host and
    /// port lists of mismatched lengths.
    ///
    /// ```
    /// use pgpipe::config::Config;
    ///
    /// let url = Config::parse("postgresql://app:s%40cret@[::1]:6432/orders").unwrap();
    /// let kv = Config::parse("host=::1 port=6432 user=app password='s@cret' dbname=orders").unwrap();
    /// assert_eq!(url, kv);
    /// ```
    pub fn parse(s: &str) -> Result<Config, ConfigError> {
        if let Some(pos) = s.find('\0') {
            return Err(ConfigError::new(
                "\\0",
                format!("connection string contains a NUL byte at position {pos}"),
            ));
        }
        // Strings read from files and variables often end in a newline.
        let trimmed = s.trim_matches(|c: char| c.is_ascii_whitespace());
        let config = if let Some(rest) = url::strip_scheme(trimmed) {
            url::parse(trimmed, rest)?
        } else {
            url::reject_non_postgres_url(s)?;
            conninfo::parse(s)?
        };
        // A string that lists both hosts and ports must be consistent by
        // itself; lists completed from the environment are checked by
        // resolve().
        if !config.hosts.is_empty() || !config.hostaddrs.is_empty() {
            resolve::target_count(
                config.hosts.len(),
                config.hostaddrs.len(),
                config.ports.len(),
            )?;
        }
        Ok(config)
    }

    /// Adds a Unix-socket directory to try, whatever its spelling.
    pub fn host_path(&mut self, path: impl AsRef<Path>) -> &mut Config {
        self.hosts.push(Host::Unix(path.as_ref().to_path_buf()));
        self
    }

    /// Adds a run-time parameter sent in the startup message, such as
    /// `search_path` or `TimeZone`. Setting a name again replaces its value.
    pub fn param(&mut self, name: impl Into<String>, value: impl Into<String>) -> &mut Config {
        let name = name.into();
        let value = value.into();
        match self.params.iter_mut().find(|(n, _)| *n == name) {
            Some(slot) => slot.1 = value,
            None => self.params.push((name, value)),
        }
        self
    }

    /// The extra startup parameters, in the order first set.
    pub fn get_params(&self) -> &[(String, String)] {
        &self.params
    }

    /// Fills in everything left unset from the environment variables libpq
    /// reads (`PGHOST`, `PGPORT`, `PGUSER`, `PGPASSWORD`, ...), the password
    /// file, and the defaults; and checks the combination.
    ///
    /// # Errors
    ///
    /// A [`ConfigError`] when an environment variable holds an invalid value
    /// (naming the variable), no user name can be found, the host, address
    /// and port lists do not line up, or a setting cannot be sent to the
    /// server (a NUL byte, a reserved startup parameter, a zero limit).
    ///
    /// ```
    /// use pgpipe::config::{Config, ProcessEnvironment};
    ///
    /// let config = Config::parse("host=db.example user=app").unwrap();
    /// let resolved = config.resolve(&ProcessEnvironment).unwrap();
    /// assert_eq!(resolved.targets.len(), 1);
    /// ```
    pub fn resolve(&self, env: &dyn Environment) -> Result<ResolvedConfig, ConfigError> {
        resolve::resolve(self, env, resolve::PassFiles::Env).map(|(resolved, _)| resolved)
    }

    /// [`resolve`](Config::resolve) against the [`ProcessEnvironment`] (its
    /// variables read in one pass) for a connect: the targets' passwords are only the configured ones, and
    /// the [`PasswordFile`] finds a target's entry in the password file
    /// (through the process's cache) if its server asks for a password.
    pub(crate) fn resolve_for_connect(
        &self,
    ) -> Result<(ResolvedConfig, PasswordFile), ConfigError> {
        let env = env_snapshot::EnvSnapshot::take();
        resolve::resolve(self, &env, resolve::PassFiles::Deferred)
    }
}

impl FromStr for Config {
    type Err = ConfigError;

    /// Same as [`Config::parse`].
    fn from_str(s: &str) -> Result<Config, ConfigError> {
        Config::parse(s)
    }
}
