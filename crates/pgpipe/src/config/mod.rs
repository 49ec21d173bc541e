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

mod conninfo;
mod env;
mod error;
mod params;
mod pgpass;
mod require_auth;
mod resolve;
mod url;

#[cfg(test)]
mod tests;

use std::fmt;
use std::net::IpAddr;
use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::time::Duration;

pub use env::{Environment, ProcessEnvironment};
pub use error::{ConfigError, IntoConfig};
pub(crate) use params::parse_duration;
pub use require_auth::{AuthMethod, RequireAuth};
pub use resolve::{ResolvedConfig, Target};
pub(crate) use url::{query_items, split_query};

/// The host used when none is given anywhere.
pub(crate) const DEFAULT_HOST: &str = "localhost";
/// The port used when none is given anywhere.
pub(crate) const DEFAULT_PORT: u16 = 5432;
const DEFAULT_STATEMENT_CACHE_CAPACITY: usize = 256;
const DEFAULT_MAX_MESSAGE_SIZE: usize = 1 << 30;
const DEFAULT_SCRAM_MAX_ITERATIONS: u32 = 1_000_000;

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

/// Generates a keyword enum together with its `Default`, `as_str`,
/// `Display` and `FromStr`, so that the accepted spellings live in one place.
macro_rules! keyword_enum {
    (
        $(#[$meta:meta])*
        pub enum $name:ident for $param:literal {
            $( $(#[$vmeta:meta])* $variant:ident = $kw:literal, )+
        }
        default = $default:ident;
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum $name {
            $( $(#[$vmeta])* $variant, )+
        }

        impl Default for $name {
            fn default() -> $name {
                $name::$default
            }
        }

        impl $name {
            /// The keyword that selects this value in a connection string.
            pub fn as_str(self) -> &'static str {
                match self {
                    $( $name::$variant => $kw, )+
                }
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(self.as_str())
            }
        }

        impl FromStr for $name {
            type Err = ConfigError;

            /// Parses the connection-string keyword (case-sensitive, as in
            /// libpq).
            fn from_str(s: &str) -> Result<$name, ConfigError> {
                match s {
                    $( $kw => Ok($name::$variant), )+
                    _ => Err(ConfigError::new(
                        s,
                        format!(
                            "invalid value \"{}\" for \"{}\": expected one of {}",
                            s,
                            $param,
                            [$($kw),+].join(", "),
                        ),
                    )),
                }
            }
        }
    };
}

keyword_enum! {
    /// Whether and how to use TLS (`sslmode`).
    pub enum SslMode for "sslmode" {
        /// Never use TLS.
        Disable = "disable",
        /// Try without TLS first; use TLS if the server insists.
        Allow = "allow",
        /// Try TLS first; fall back to plain text if the server refuses.
        Prefer = "prefer",
        /// Require TLS, without verifying the server certificate.
        Require = "require",
        /// Require TLS and a server certificate signed by a trusted CA.
        VerifyCa = "verify-ca",
        /// Like `VerifyCa`, and the certificate must name the host.
        VerifyFull = "verify-full",
    }
    default = Prefer;
}

keyword_enum! {
    /// Which kind of server a connection must reach
    /// (`target_session_attrs`); hosts that do not qualify are skipped.
    pub enum TargetSessionAttrs for "target_session_attrs" {
        /// Any server will do.
        Any = "any",
        /// The session must accept writes by default.
        ReadWrite = "read-write",
        /// The session must be read-only by default.
        ReadOnly = "read-only",
        /// The server must not be in hot standby.
        Primary = "primary",
        /// The server must be in hot standby.
        Standby = "standby",
        /// Prefer a standby; take any server if none is found.
        PreferStandby = "prefer-standby",
    }
    default = Any;
}

keyword_enum! {
    /// The order in which hosts are tried (`load_balance_hosts`).
    pub enum LoadBalanceHosts for "load_balance_hosts" {
        /// In the order given.
        Disable = "disable",
        /// In a random order, to spread clients over the hosts.
        Random = "random",
    }
    default = Disable;
}

keyword_enum! {
    /// How statements given as SQL text are sent (`query_mode`, pgpipe's own).
    ///
    /// Every mode costs one round trip per query; they differ in what the
    /// server keeps and so in where they are safe:
    ///
    /// | mode | per query | server state | behind pgbouncer (transaction pooling) |
    /// | --- | --- | --- | --- |
    /// | `cached` | Bind + Execute after the first time (no re-parse, no re-plan) | one named statement per distinct SQL text and parameter types, at most `statement_cache_capacity` (LRU; evicted ones closed) | no: the next transaction may land on a backend without the statement |
    /// | `unnamed` | Parse + Bind + Describe + Execute every time | none | yes |
    /// | `simple` | parameters inlined as text | none | yes (not implemented yet: connecting with it is refused) |
    ///
    /// In `cached` mode a statement whose result type changed after DDL
    /// (SQLSTATE 0A000) or that vanished after `DISCARD ALL` (26000) is
    /// dropped from the cache and retried once, outside transaction blocks
    /// only: inside one the transaction is already aborted, so the error is
    /// returned.
    pub enum QueryMode for "query_mode" {
        /// Named prepared statements, kept in a per-connection cache.
        Cached = "cached",
        /// The unnamed prepared statement, re-parsed on every execution.
        /// Works behind transaction-pooling proxies.
        Unnamed = "unnamed",
        /// The simple query protocol, with parameters inlined as text (not
        /// supported yet).
        Simple = "simple",
    }
    default = Cached;
}

keyword_enum! {
    /// Whether SCRAM channel binding is used (`channel_binding`).
    pub enum ChannelBinding for "channel_binding" {
        /// Never use channel binding.
        Disable = "disable",
        /// Use channel binding when TLS and the server support it.
        Prefer = "prefer",
        /// Fail unless channel binding is used.
        Require = "require",
    }
    default = Prefer;
}

keyword_enum! {
    /// A frontend/backend protocol version (`min_protocol_version`,
    /// `max_protocol_version`, as libpq 18 names them).
    ///
    /// 3.2 (PostgreSQL 18) brings variable-length cancel keys. Asking an
    /// older server for it is harmless: it answers NegotiateProtocolVersion
    /// and the session runs at 3.0, unless `min_protocol_version` forbids.
    pub enum ProtocolVersion for "protocol_version" {
        /// Protocol 3.0, every server since PostgreSQL 7.4.
        V3_0 = "3.0",
        /// Protocol 3.2, PostgreSQL 18 and later.
        V3_2 = "3.2",
        /// The newest version pgpipe speaks (3.2).
        Latest = "latest",
    }
    default = V3_0;
}

impl ProtocolVersion {
    /// The minor version number (`Latest` is 2).
    pub fn minor(&self) -> u16 {
        match self {
            ProtocolVersion::V3_0 => 0,
            ProtocolVersion::V3_2 | ProtocolVersion::Latest => 2,
        }
    }
}

keyword_enum! {
    /// How TLS is negotiated (`sslnegotiation`).
    pub enum SslNegotiation for "sslnegotiation" {
        /// Ask with an `SSLRequest` first, as every server version allows.
        Postgres = "postgres",
        /// Start the TLS handshake straight away (PostgreSQL 17 and later).
        Direct = "direct",
    }
    default = Postgres;
}

/// Connection settings as given by the user, before environment variables,
/// the password file and defaults are applied by [`Config::resolve`].
///
/// Build one by parsing a connection string, in either URL or libpq
/// `key=value` form, or with the builder methods, which can also adjust a
/// parsed one.
///
/// ```
/// use pgpipe::config::{Config, Host, SslMode};
/// use std::time::Duration;
///
/// let config: Config = "postgres://app@db1:5432,db2:5433/orders?sslmode=require"
///     .parse()
///     .unwrap();
/// assert_eq!(config.get_hosts(), &[Host::Tcp("db1".into()), Host::Tcp("db2".into())]);
/// assert_eq!(config.get_ports(), &[5432, 5433]);
/// assert_eq!(config.get_ssl_mode(), Some(SslMode::Require));
///
/// let mut config = Config::new();
/// config
///     .host("/var/run/postgresql")
///     .user("app")
///     .dbname("orders")
///     .connect_timeout(Duration::from_secs(3));
/// assert_eq!(config.get_hosts(), &[Host::Unix("/var/run/postgresql".into())]);
/// ```
#[derive(Clone, PartialEq, Eq)]
pub struct Config {
    hosts: Vec<Host>,
    hostaddrs: Vec<Option<IpAddr>>,
    ports: Vec<u16>,
    user: Option<String>,
    password: Option<Vec<u8>>,
    dbname: Option<String>,
    application_name: Option<String>,
    fallback_application_name: Option<String>,
    options: Option<String>,
    connect_timeout: Option<Duration>,
    ssl_mode: Option<SslMode>,
    target_session_attrs: Option<TargetSessionAttrs>,
    load_balance_hosts: Option<LoadBalanceHosts>,
    keepalives: bool,
    keepalives_idle: Option<Duration>,
    keepalives_interval: Option<Duration>,
    keepalives_count: Option<u32>,
    tcp_user_timeout: Option<Duration>,
    query_timeout: Option<Duration>,
    coalesce_sync: bool,
    passfile: Option<PathBuf>,
    statement_cache_capacity: usize,
    query_mode: QueryMode,
    max_message_size: usize,
    scram_max_iterations: u32,
    params: Vec<(String, String)>,
    ssl_cert: Option<PathBuf>,
    ssl_key: Option<PathBuf>,
    ssl_root_cert: Option<PathBuf>,
    ssl_password: Option<String>,
    ssl_crl: Option<PathBuf>,
    ssl_crl_dir: Option<PathBuf>,
    channel_binding: Option<ChannelBinding>,
    ssl_negotiation: Option<SslNegotiation>,
    require_auth: Option<RequireAuth>,
    min_protocol_version: Option<ProtocolVersion>,
    max_protocol_version: Option<ProtocolVersion>,
}

impl Default for Config {
    fn default() -> Config {
        Config::new()
    }
}

impl Config {
    /// A configuration with nothing set: resolving it uses only the
    /// environment and the defaults.
    pub fn new() -> Config {
        Config {
            hosts: Vec::new(),
            hostaddrs: Vec::new(),
            ports: Vec::new(),
            user: None,
            password: None,
            dbname: None,
            application_name: None,
            fallback_application_name: None,
            options: None,
            connect_timeout: None,
            ssl_mode: None,
            target_session_attrs: None,
            load_balance_hosts: None,
            keepalives: true,
            keepalives_idle: None,
            keepalives_interval: None,
            keepalives_count: None,
            tcp_user_timeout: None,
            query_timeout: None,
            coalesce_sync: false,
            passfile: None,
            statement_cache_capacity: DEFAULT_STATEMENT_CACHE_CAPACITY,
            query_mode: QueryMode::Cached,
            max_message_size: DEFAULT_MAX_MESSAGE_SIZE,
            scram_max_iterations: DEFAULT_SCRAM_MAX_ITERATIONS,
            params: Vec::new(),
            ssl_cert: None,
            ssl_key: None,
            ssl_root_cert: None,
            ssl_password: None,
            ssl_crl: None,
            ssl_crl_dir: None,
            channel_binding: None,
            ssl_negotiation: None,
            require_auth: None,
            min_protocol_version: None,
            max_protocol_version: None,
        }
    }

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

    // ---- builder ----

    /// Adds a host to try. A value starting with `/` is a Unix-socket
    /// directory (as in libpq); an empty value stands for the default host,
    /// `localhost`. Hosts are tried in the order added.
    pub fn host(&mut self, host: &str) -> &mut Config {
        self.hosts.push(Host::from_entry(host));
        self
    }

    /// Adds a Unix-socket directory to try, whatever its spelling.
    pub fn host_path(&mut self, path: impl AsRef<Path>) -> &mut Config {
        self.hosts.push(Host::Unix(path.as_ref().to_path_buf()));
        self
    }

    /// Adds a numeric address (`hostaddr`). When both hosts and addresses are
    /// given, their counts must match: the address is connected to, and the
    /// host name at the same position is used for the password file (and for
    /// certificate checks).
    pub fn hostaddr(&mut self, addr: IpAddr) -> &mut Config {
        self.hostaddrs.push(Some(addr));
        self
    }

    /// Adds a port. Give one port for all hosts, or one per host.
    pub fn port(&mut self, port: u16) -> &mut Config {
        self.ports.push(port);
        self
    }

    /// Sets the user name to log in as.
    pub fn user(&mut self, user: impl Into<String>) -> &mut Config {
        self.user = Some(user.into());
        self
    }

    /// Sets the password. It is bytes because servers accept passwords that
    /// are not UTF-8.
    pub fn password(&mut self, password: impl AsRef<[u8]>) -> &mut Config {
        self.password = Some(password.as_ref().to_vec());
        self
    }

    /// Sets the database name (default: the user name).
    pub fn dbname(&mut self, dbname: impl Into<String>) -> &mut Config {
        self.dbname = Some(dbname.into());
        self
    }

    /// Sets `application_name`, shown in `pg_stat_activity`.
    pub fn application_name(&mut self, name: impl Into<String>) -> &mut Config {
        self.application_name = Some(name.into());
        self
    }

    /// Sets the application name used when neither `application_name` nor
    /// `PGAPPNAME` gives one; meant for libraries naming themselves.
    pub fn fallback_application_name(&mut self, name: impl Into<String>) -> &mut Config {
        self.fallback_application_name = Some(name.into());
        self
    }

    /// Sets command-line options sent to the server, e.g.
    /// `-c search_path=app`.
    pub fn options(&mut self, options: impl Into<String>) -> &mut Config {
        self.options = Some(options.into());
        self
    }

    /// Bounds each connection attempt (per host). `Duration::ZERO` disables
    /// the bound; when unset, 10 seconds apply.
    pub fn connect_timeout(&mut self, timeout: Duration) -> &mut Config {
        self.connect_timeout = Some(timeout);
        self
    }

    /// Sets whether and how TLS is used.
    pub fn ssl_mode(&mut self, mode: SslMode) -> &mut Config {
        self.ssl_mode = Some(mode);
        self
    }

    /// Sets which kind of server is acceptable.
    pub fn target_session_attrs(&mut self, attrs: TargetSessionAttrs) -> &mut Config {
        self.target_session_attrs = Some(attrs);
        self
    }

    /// Sets the order in which hosts are tried.
    pub fn load_balance_hosts(&mut self, mode: LoadBalanceHosts) -> &mut Config {
        self.load_balance_hosts = Some(mode);
        self
    }

    /// Enables or disables TCP keepalives (default: enabled).
    pub fn keepalives(&mut self, enabled: bool) -> &mut Config {
        self.keepalives = enabled;
        self
    }

    /// Sets the idle time before TCP keepalive probes start;
    /// `Duration::ZERO` means the system default.
    pub fn keepalives_idle(&mut self, idle: Duration) -> &mut Config {
        self.keepalives_idle = Some(idle);
        self
    }

    /// Sets the time between TCP keepalive probes (`keepalives_interval`,
    /// whole seconds, at most 32767); `Duration::ZERO` means the system
    /// default (75 s on Linux). Linux and Android; ignored elsewhere.
    ///
    /// With [`keepalives_idle`](Self::keepalives_idle) and
    /// [`keepalives_count`](Self::keepalives_count) it bounds how long an
    /// idle connection to a dead peer looks alive: idle + interval x count.
    ///
    /// ```
    /// use std::time::Duration;
    /// let mut config = pgpipe::Config::new();
    /// config
    ///     .keepalives_idle(Duration::from_secs(30))
    ///     .keepalives_interval(Duration::from_secs(5))
    ///     .keepalives_count(3); // a dead idle peer is noticed within 45 s
    /// assert_eq!(config.get_keepalives_count(), Some(3));
    /// ```
    pub fn keepalives_interval(&mut self, interval: Duration) -> &mut Config {
        self.keepalives_interval = Some(interval);
        self
    }

    /// Sets how many unanswered keepalive probes close the connection
    /// (`keepalives_count`, at most 127); 0 means the system default (9 on
    /// Linux). Linux and Android; ignored elsewhere.
    pub fn keepalives_count(&mut self, count: u32) -> &mut Config {
        self.keepalives_count = Some(count);
        self
    }

    /// Sets `TCP_USER_TIMEOUT`; `Duration::ZERO` means the system default.
    pub fn tcp_user_timeout(&mut self, timeout: Duration) -> &mut Config {
        self.tcp_user_timeout = Some(timeout);
        self
    }

    /// Sets the default client-side timeout of every query
    /// (`query_timeout`, in milliseconds in a connection string; pgpipe's
    /// own). On expiry the query is cancelled on the server (see
    /// [`Client::with_timeout`](crate::Client::with_timeout));
    /// `Duration::ZERO` means none, the default.
    pub fn query_timeout(&mut self, timeout: Duration) -> &mut Config {
        self.query_timeout = Some(timeout);
        self
    }

    /// Makes every handle of the connection share Syncs between the
    /// statements of different tasks written in one go (`coalesce_sync=on`
    /// in a connection string; pgpipe's own; default off). Read the caveat
    /// on [`Client::coalesced`](crate::Client::coalesced) first: after a
    /// neighbour fails, a statement is sent again, so effects that ignore
    /// rollback (`nextval`) can happen twice.
    pub fn coalesce_sync(&mut self, on: bool) -> &mut Config {
        self.coalesce_sync = on;
        self
    }

    /// Sets the password file to read instead of `PGPASSFILE` or
    /// `~/.pgpass`.
    pub fn passfile(&mut self, path: impl AsRef<Path>) -> &mut Config {
        self.passfile = Some(path.as_ref().to_path_buf());
        self
    }

    /// Sets how many prepared statements each connection keeps
    /// (default 256; 0 disables the cache).
    pub fn statement_cache_capacity(&mut self, capacity: usize) -> &mut Config {
        self.statement_cache_capacity = capacity;
        self
    }

    /// Sets how statements are sent to the server.
    pub fn query_mode(&mut self, mode: QueryMode) -> &mut Config {
        self.query_mode = mode;
        self
    }

    /// Sets the largest message accepted from the server (default 1 GiB),
    /// bounding the memory one message can make the client allocate.
    pub fn max_message_size(&mut self, size: usize) -> &mut Config {
        self.max_message_size = size;
        self
    }

    /// Sets the largest SCRAM iteration count accepted from the server
    /// (default 1,000,000), bounding the CPU a server can make the client
    /// spend on authentication.
    pub fn scram_max_iterations(&mut self, iterations: u32) -> &mut Config {
        self.scram_max_iterations = iterations;
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

    /// Sets the client certificate file (`sslcert`).
    pub fn ssl_cert(&mut self, path: impl AsRef<Path>) -> &mut Config {
        self.ssl_cert = Some(path.as_ref().to_path_buf());
        self
    }

    /// Sets the client private key file (`sslkey`).
    pub fn ssl_key(&mut self, path: impl AsRef<Path>) -> &mut Config {
        self.ssl_key = Some(path.as_ref().to_path_buf());
        self
    }

    /// Sets the trusted CA certificates file (`sslrootcert`).
    pub fn ssl_root_cert(&mut self, path: impl AsRef<Path>) -> &mut Config {
        self.ssl_root_cert = Some(path.as_ref().to_path_buf());
        self
    }

    /// Sets the passphrase of the client key (`sslpassword`).
    pub fn ssl_password(&mut self, password: impl Into<String>) -> &mut Config {
        self.ssl_password = Some(password.into());
        self
    }

    /// Sets the certificate revocation list file (`sslcrl`).
    pub fn ssl_crl(&mut self, path: impl AsRef<Path>) -> &mut Config {
        self.ssl_crl = Some(path.as_ref().to_path_buf());
        self
    }

    /// Sets a directory of certificate revocation lists (`sslcrldir`): every
    /// file in it named like OpenSSL's hashed CRL files (`<hash>.r<n>`, as
    /// `openssl rehash` makes them) is read as PEM. Used with, or instead
    /// of, [`Config::ssl_crl`].
    pub fn ssl_crl_dir(&mut self, path: impl AsRef<Path>) -> &mut Config {
        self.ssl_crl_dir = Some(path.as_ref().to_path_buf());
        self
    }

    /// Sets whether SCRAM channel binding is used.
    pub fn channel_binding(&mut self, mode: ChannelBinding) -> &mut Config {
        self.channel_binding = Some(mode);
        self
    }

    /// Sets which authentication methods the server may use
    /// (`require_auth`); any other request fails before a password is sent.
    pub fn require_auth(&mut self, methods: RequireAuth) -> &mut Config {
        self.require_auth = Some(methods);
        self
    }

    /// Sets the oldest acceptable protocol version (`min_protocol_version`).
    pub fn min_protocol_version(&mut self, version: ProtocolVersion) -> &mut Config {
        self.min_protocol_version = Some(version);
        self
    }

    /// Sets the protocol version to ask for (`max_protocol_version`).
    pub fn max_protocol_version(&mut self, version: ProtocolVersion) -> &mut Config {
        self.max_protocol_version = Some(version);
        self
    }

    /// Sets how TLS is negotiated (`sslnegotiation`).
    pub fn ssl_negotiation(&mut self, mode: SslNegotiation) -> &mut Config {
        self.ssl_negotiation = Some(mode);
        self
    }

    // ---- getters ----

    /// The hosts given, in order (empty: `PGHOST` or `localhost` applies).
    pub fn get_hosts(&self) -> &[Host] {
        &self.hosts
    }

    /// The numeric addresses given (`hostaddr`); `None` entries come from
    /// empty list items and mean "look the host name up".
    pub fn get_hostaddrs(&self) -> &[Option<IpAddr>] {
        &self.hostaddrs
    }

    /// The ports given (empty: `PGPORT` or 5432 applies).
    pub fn get_ports(&self) -> &[u16] {
        &self.ports
    }

    /// The user name, if given.
    pub fn get_user(&self) -> Option<&str> {
        self.user.as_deref()
    }

    /// The password, if given.
    pub fn get_password(&self) -> Option<&[u8]> {
        self.password.as_deref()
    }

    /// The database name, if given.
    pub fn get_dbname(&self) -> Option<&str> {
        self.dbname.as_deref()
    }

    /// The application name, if given.
    pub fn get_application_name(&self) -> Option<&str> {
        self.application_name.as_deref()
    }

    /// The fallback application name, if given.
    pub fn get_fallback_application_name(&self) -> Option<&str> {
        self.fallback_application_name.as_deref()
    }

    /// The server command-line options, if given.
    pub fn get_options(&self) -> Option<&str> {
        self.options.as_deref()
    }

    /// The connect timeout, if given; `Some(Duration::ZERO)` means
    /// explicitly disabled.
    pub fn get_connect_timeout(&self) -> Option<Duration> {
        self.connect_timeout
    }

    /// The TLS mode, if given (`None`: `PGSSLMODE` or `prefer` applies).
    pub fn get_ssl_mode(&self) -> Option<SslMode> {
        self.ssl_mode
    }

    /// The required session kind, if given.
    pub fn get_target_session_attrs(&self) -> Option<TargetSessionAttrs> {
        self.target_session_attrs
    }

    /// The host ordering, if given.
    pub fn get_load_balance_hosts(&self) -> Option<LoadBalanceHosts> {
        self.load_balance_hosts
    }

    /// Whether TCP keepalives are enabled.
    pub fn get_keepalives(&self) -> bool {
        self.keepalives
    }

    /// The keepalive idle time, if given.
    pub fn get_keepalives_idle(&self) -> Option<Duration> {
        self.keepalives_idle
    }

    /// The time between keepalive probes, if given.
    pub fn get_keepalives_interval(&self) -> Option<Duration> {
        self.keepalives_interval
    }

    /// The number of unanswered keepalive probes that close the
    /// connection, if given.
    pub fn get_keepalives_count(&self) -> Option<u32> {
        self.keepalives_count
    }

    /// The TCP user timeout, if given.
    pub fn get_tcp_user_timeout(&self) -> Option<Duration> {
        self.tcp_user_timeout
    }

    /// The default query timeout, if given.
    pub fn get_query_timeout(&self) -> Option<Duration> {
        self.query_timeout
    }

    /// The password file, if given.
    pub fn get_passfile(&self) -> Option<&Path> {
        self.passfile.as_deref()
    }

    /// Whether handles share Syncs by default (see
    /// [`coalesce_sync`](Config::coalesce_sync)).
    pub fn get_coalesce_sync(&self) -> bool {
        self.coalesce_sync
    }

    /// The prepared-statement cache capacity.
    pub fn get_statement_cache_capacity(&self) -> usize {
        self.statement_cache_capacity
    }

    /// How statements are sent.
    pub fn get_query_mode(&self) -> QueryMode {
        self.query_mode
    }

    /// The largest accepted server message, in bytes.
    pub fn get_max_message_size(&self) -> usize {
        self.max_message_size
    }

    /// The largest accepted SCRAM iteration count.
    pub fn get_scram_max_iterations(&self) -> u32 {
        self.scram_max_iterations
    }

    /// The extra startup parameters, in the order first set.
    pub fn get_params(&self) -> &[(String, String)] {
        &self.params
    }

    /// The client certificate file, if given.
    pub fn get_ssl_cert(&self) -> Option<&Path> {
        self.ssl_cert.as_deref()
    }

    /// The client key file, if given.
    pub fn get_ssl_key(&self) -> Option<&Path> {
        self.ssl_key.as_deref()
    }

    /// The trusted CA certificates file, if given.
    pub fn get_ssl_root_cert(&self) -> Option<&Path> {
        self.ssl_root_cert.as_deref()
    }

    /// The client key passphrase, if given.
    pub fn get_ssl_password(&self) -> Option<&str> {
        self.ssl_password.as_deref()
    }

    /// The certificate revocation list file, if given.
    pub fn get_ssl_crl(&self) -> Option<&Path> {
        self.ssl_crl.as_deref()
    }

    /// The certificate revocation list directory, if given.
    pub fn get_ssl_crl_dir(&self) -> Option<&Path> {
        self.ssl_crl_dir.as_deref()
    }

    /// The channel binding mode, if given.
    pub fn get_channel_binding(&self) -> Option<ChannelBinding> {
        self.channel_binding
    }

    /// The `require_auth` setting, if given.
    pub fn get_require_auth(&self) -> Option<RequireAuth> {
        self.require_auth
    }

    /// The `min_protocol_version`, if given.
    pub fn get_min_protocol_version(&self) -> Option<ProtocolVersion> {
        self.min_protocol_version
    }

    /// The `max_protocol_version`, if given.
    pub fn get_max_protocol_version(&self) -> Option<ProtocolVersion> {
        self.max_protocol_version
    }

    /// The TLS negotiation mode, if given.
    pub fn get_ssl_negotiation(&self) -> Option<SslNegotiation> {
        self.ssl_negotiation
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
        resolve::resolve(self, env)
    }
}

impl FromStr for Config {
    type Err = ConfigError;

    /// Same as [`Config::parse`].
    fn from_str(s: &str) -> Result<Config, ConfigError> {
        Config::parse(s)
    }
}

/// Prints in place of a secret, so that logging a configuration never
/// leaks it.
pub(crate) struct Redacted;

impl fmt::Debug for Redacted {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("<redacted>")
    }
}

impl fmt::Debug for Config {
    /// Every field, secrets as `<redacted>`. The struct is destructured
    /// without `..`, so a new field that is not printed here fails to
    /// compile (or warns as unused) instead of silently going missing.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let Config {
            hosts,
            hostaddrs,
            ports,
            user,
            password,
            dbname,
            application_name,
            fallback_application_name,
            options,
            connect_timeout,
            ssl_mode,
            target_session_attrs,
            load_balance_hosts,
            keepalives,
            keepalives_idle,
            keepalives_interval,
            keepalives_count,
            tcp_user_timeout,
            query_timeout,
            coalesce_sync,
            passfile,
            statement_cache_capacity,
            query_mode,
            max_message_size,
            scram_max_iterations,
            params,
            ssl_cert,
            ssl_key,
            ssl_root_cert,
            ssl_password,
            ssl_crl,
            ssl_crl_dir,
            channel_binding,
            ssl_negotiation,
            require_auth,
            min_protocol_version,
            max_protocol_version,
        } = self;
        f.debug_struct("Config")
            .field("hosts", hosts)
            .field("hostaddrs", hostaddrs)
            .field("ports", ports)
            .field("user", user)
            .field("password", &password.as_ref().map(|_| Redacted))
            .field("dbname", dbname)
            .field("application_name", application_name)
            .field("fallback_application_name", fallback_application_name)
            .field("options", options)
            .field("connect_timeout", connect_timeout)
            .field("ssl_mode", ssl_mode)
            .field("target_session_attrs", target_session_attrs)
            .field("load_balance_hosts", load_balance_hosts)
            .field("keepalives", keepalives)
            .field("keepalives_idle", keepalives_idle)
            .field("keepalives_interval", keepalives_interval)
            .field("keepalives_count", keepalives_count)
            .field("tcp_user_timeout", tcp_user_timeout)
            .field("query_timeout", query_timeout)
            .field("coalesce_sync", coalesce_sync)
            .field("passfile", passfile)
            .field("statement_cache_capacity", statement_cache_capacity)
            .field("query_mode", query_mode)
            .field("max_message_size", max_message_size)
            .field("scram_max_iterations", scram_max_iterations)
            .field("params", params)
            .field("ssl_cert", ssl_cert)
            .field("ssl_key", ssl_key)
            .field("ssl_root_cert", ssl_root_cert)
            .field("ssl_password", &ssl_password.as_ref().map(|_| Redacted))
            .field("ssl_crl", ssl_crl)
            .field("ssl_crl_dir", ssl_crl_dir)
            .field("channel_binding", channel_binding)
            .field("ssl_negotiation", ssl_negotiation)
            .field("require_auth", require_auth)
            .field("min_protocol_version", min_protocol_version)
            .field("max_protocol_version", max_protocol_version)
            .finish()
    }
}
