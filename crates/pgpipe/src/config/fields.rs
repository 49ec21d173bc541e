//! The one table of connection parameters. Each row gives the builder
//! setter and the getter (with their docs), the field with its type and
//! default, its connection-string key (`|` adds aliases), its `PG*`
//! environment variables and the parser of its text. `table.rs` turns the
//! rows into the struct, `Config::new`, the accessors, the key dispatch of
//! URLs and `key=value` strings, the environment layer of `resolve` and
//! `Debug` (secrets are [`Secret`]s, which print as `Secret(***)`).
//!
//! Adding a parameter is adding a row; everything else follows.

use std::net::IpAddr;
use std::path::{Path, PathBuf};
use std::time::Duration;

use super::params::{
    bool01, hostaddrs, hosts, keepalive_count, keepalive_interval, keyword, millis, nonzero_size,
    nonzero_u32, on_off, path, ports, seconds, secret_bytes, secret_text, size, some_keyword, text,
};
use super::table::{
    config_table, copied, exposed_bytes, exposed_str, push, push_addr, push_host, set, set_path,
    set_secret_bytes, set_secret_string, set_some,
};
use super::{
    ChannelBinding, ConfigError, Host, LoadBalanceHosts, ProtocolVersion, QueryMode, RequireAuth,
    Secret, SslMode, SslNegotiation, TargetSessionAttrs, DEFAULT_MAX_MESSAGE_SIZE,
    DEFAULT_SCRAM_MAX_ITERATIONS, DEFAULT_STATEMENT_CACHE_CAPACITY,
};

config_table! {
    /// Connection settings as given by the user, before environment variables,
    /// the password file and defaults are applied by [`Config::resolve`].
    ///
    /// Build one by parsing a connection string, in either URL or libpq
    /// `key=value` form, or with the builder methods, which can also adjust a
    /// parsed one. Its `Debug` output shows every setting except the
    /// secrets (`password`, `sslpassword`), which print as `Secret(***)`.
    ///
    /// ```
    /// use pgpipe::config::{Config, Host, SslMode};
    /// use std::time::Duration;
    ///
    /// let config: Config = "postgres://app:hunter2@db1:5432,db2:5433/orders?sslmode=require"
    ///     .parse()
    ///     .unwrap();
    /// assert_eq!(config.get_hosts(), &[Host::Tcp("db1".into()), Host::Tcp("db2".into())]);
    /// assert_eq!(config.get_ports(), &[5432, 5433]);
    /// assert_eq!(config.get_ssl_mode(), Some(SslMode::Require));
    /// assert!(!format!("{config:?}").contains("hunter2"));
    ///
    /// let mut config = Config::new();
    /// config
    ///     .host("/var/run/postgresql")
    ///     .user("app")
    ///     .dbname("orders")
    ///     .connect_timeout(Duration::from_secs(3));
    /// assert_eq!(config.get_hosts(), &[Host::Unix("/var/run/postgresql".into())]);
    /// ```
    pub struct Config {
        /// Adds a host to try. A value starting with `/` is a Unix-socket
        /// directory (as in libpq); an empty value stands for the default host,
        /// `localhost`. Hosts are tried in the order added.
        set host(&str) = push_host;
        /// The hosts given, in order (empty: `PGHOST` or `localhost` applies).
        get get_hosts -> &[Host] = Vec::as_slice;
        hosts: Vec<Host> = Vec::new(), key "host", env ["PGHOST"], parse hosts;

        /// Adds a numeric address (`hostaddr`). When both hosts and addresses are
        /// given, their counts must match: the address is connected to, and the
        /// host name at the same position is used for the password file (and for
        /// certificate checks).
        set hostaddr(IpAddr) = push_addr;
        /// The numeric addresses given (`hostaddr`); `None` entries come from
        /// empty list items and mean "look the host name up".
        get get_hostaddrs -> &[Option<IpAddr>] = Vec::as_slice;
        hostaddrs: Vec<Option<IpAddr>> = Vec::new(), key "hostaddr", env ["PGHOSTADDR"],
            parse hostaddrs;

        /// Adds a port. Give one port for all hosts, or one per host.
        set port(u16) = push;
        /// The ports given (empty: `PGPORT` or 5432 applies).
        get get_ports -> &[u16] = Vec::as_slice;
        ports: Vec<u16> = Vec::new(), key "port", env ["PGPORT"], parse ports;

        /// Sets the user name to log in as.
        set user(impl Into<String>) = set_some;
        /// The user name, if given.
        get get_user -> Option<&str> = Option::as_deref;
        user: Option<String> = None, key "user", env ["PGUSER"], parse text;

        /// Sets the password. It is bytes because servers accept passwords that
        /// are not UTF-8. It is kept as a [`Secret`], so `Debug` never shows it.
        set password(impl AsRef<[u8]>) = set_secret_bytes;
        /// The password, if given.
        get get_password -> Option<&[u8]> = exposed_bytes;
        password: Option<Secret<Vec<u8>>> = None, key "password", env ["PGPASSWORD"],
            parse secret_bytes;

        /// Sets the database name (default: the user name).
        set dbname(impl Into<String>) = set_some;
        /// The database name, if given.
        get get_dbname -> Option<&str> = Option::as_deref;
        dbname: Option<String> = None, key "dbname", env ["PGDATABASE"], parse text;

        /// Sets `application_name`, shown in `pg_stat_activity`.
        set application_name(impl Into<String>) = set_some;
        /// The application name, if given.
        get get_application_name -> Option<&str> = Option::as_deref;
        application_name: Option<String> = None, key "application_name", env ["PGAPPNAME"],
            parse text;

        /// Sets the application name used when neither `application_name` nor
        /// `PGAPPNAME` gives one; meant for libraries naming themselves.
        set fallback_application_name(impl Into<String>) = set_some;
        /// The fallback application name, if given.
        get get_fallback_application_name -> Option<&str> = Option::as_deref;
        fallback_application_name: Option<String> = None, key "fallback_application_name",
            env [], parse text;

        /// Sets command-line options sent to the server, e.g.
        /// `-c search_path=app`.
        set options(impl Into<String>) = set_some;
        /// The server command-line options, if given.
        get get_options -> Option<&str> = Option::as_deref;
        options: Option<String> = None, key "options", env ["PGOPTIONS"], parse text;

        /// Bounds each connection attempt (per host). `Duration::ZERO` disables
        /// the bound; when unset, 10 seconds apply.
        set connect_timeout(Duration) = set_some;
        /// The connect timeout, if given; `Some(Duration::ZERO)` means
        /// explicitly disabled.
        get get_connect_timeout -> Option<Duration> = copied;
        connect_timeout: Option<Duration> = None, key "connect_timeout",
            env ["PGCONNECT_TIMEOUT"], parse seconds;

        /// Sets whether and how TLS is used.
        set ssl_mode(SslMode) = set_some;
        /// The TLS mode, if given (`None`: `PGSSLMODE` or `prefer` applies).
        get get_ssl_mode -> Option<SslMode> = copied;
        ssl_mode: Option<SslMode> = None, key "sslmode", env ["PGSSLMODE"], parse some_keyword;

        /// Sets which kind of server is acceptable.
        set target_session_attrs(TargetSessionAttrs) = set_some;
        /// The required session kind, if given.
        get get_target_session_attrs -> Option<TargetSessionAttrs> = copied;
        target_session_attrs: Option<TargetSessionAttrs> = None, key "target_session_attrs",
            env ["PGTARGETSESSIONATTRS"], parse some_keyword;

        /// Sets the order in which hosts are tried.
        set load_balance_hosts(LoadBalanceHosts) = set_some;
        /// The host ordering, if given.
        get get_load_balance_hosts -> Option<LoadBalanceHosts> = copied;
        load_balance_hosts: Option<LoadBalanceHosts> = None, key "load_balance_hosts",
            env ["PGLOADBALANCEHOSTS"], parse some_keyword;

        /// Enables or disables TCP keepalives (default: enabled).
        set keepalives(bool) = set;
        /// Whether TCP keepalives are enabled.
        get get_keepalives -> bool = copied;
        keepalives: bool = true, key "keepalives", env [], parse bool01;

        /// Sets the idle time before TCP keepalive probes start;
        /// `Duration::ZERO` means the system default.
        set keepalives_idle(Duration) = set_some;
        /// The keepalive idle time, if given.
        get get_keepalives_idle -> Option<Duration> = copied;
        keepalives_idle: Option<Duration> = None, key "keepalives_idle", env [], parse seconds;

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
        set keepalives_interval(Duration) = set_some;
        /// The time between keepalive probes, if given.
        get get_keepalives_interval -> Option<Duration> = copied;
        keepalives_interval: Option<Duration> = None, key "keepalives_interval", env [],
            parse keepalive_interval;

        /// Sets how many unanswered keepalive probes close the connection
        /// (`keepalives_count`, at most 127); 0 means the system default (9 on
        /// Linux). Linux and Android; ignored elsewhere.
        set keepalives_count(u32) = set_some;
        /// The number of unanswered keepalive probes that close the
        /// connection, if given.
        get get_keepalives_count -> Option<u32> = copied;
        keepalives_count: Option<u32> = None, key "keepalives_count", env [],
            parse keepalive_count;

        /// Sets `TCP_USER_TIMEOUT`; `Duration::ZERO` means the system default.
        set tcp_user_timeout(Duration) = set_some;
        /// The TCP user timeout, if given.
        get get_tcp_user_timeout -> Option<Duration> = copied;
        tcp_user_timeout: Option<Duration> = None, key "tcp_user_timeout", env [], parse millis;

        /// Sets the default client-side timeout of every query
        /// (`query_timeout`, in milliseconds in a connection string; pgpipe's
        /// own). On expiry the query is cancelled on the server (see
        /// [`Client::with_timeout`](crate::Client::with_timeout));
        /// `Duration::ZERO` means none, the default.
        set query_timeout(Duration) = set_some;
        /// The default query timeout, if given.
        get get_query_timeout -> Option<Duration> = copied;
        query_timeout: Option<Duration> = None, key "query_timeout", env [], parse millis;

        /// Makes every handle of the connection share Syncs between the
        /// statements of different tasks written in one go (`coalesce_sync=on`
        /// in a connection string; pgpipe's own; default off). Read the caveat
        /// on [`Client::coalesced`](crate::Client::coalesced) first: after a
        /// neighbour fails, a statement is sent again, so effects that ignore
        /// rollback (`nextval`) can happen twice.
        set coalesce_sync(bool) = set;
        /// Whether handles share Syncs by default (see
        /// [`coalesce_sync`](Config::coalesce_sync)).
        get get_coalesce_sync -> bool = copied;
        coalesce_sync: bool = false, key "coalesce_sync", env [], parse on_off;

        /// Sets the password file to read instead of `PGPASSFILE` or
        /// `~/.pgpass`.
        set passfile(impl AsRef<Path>) = set_path;
        /// The password file, if given.
        get get_passfile -> Option<&Path> = Option::as_deref;
        passfile: Option<PathBuf> = None, key "passfile", env ["PGPASSFILE"], parse path;

        /// Sets how many prepared statements each connection keeps
        /// (default 256; 0 disables the cache).
        set statement_cache_capacity(usize) = set;
        /// The prepared-statement cache capacity.
        get get_statement_cache_capacity -> usize = copied;
        statement_cache_capacity: usize = DEFAULT_STATEMENT_CACHE_CAPACITY,
            key "statement_cache_capacity", env [], parse size;

        /// Sets how statements are sent to the server.
        set query_mode(QueryMode) = set;
        /// How statements are sent.
        get get_query_mode -> QueryMode = copied;
        query_mode: QueryMode = QueryMode::Cached, key "query_mode", env [], parse keyword;

        /// Sets the largest message accepted from the server (default 1 GiB),
        /// bounding the memory one message can make the client allocate.
        set max_message_size(usize) = set;
        /// The largest accepted server message, in bytes.
        get get_max_message_size -> usize = copied;
        max_message_size: usize = DEFAULT_MAX_MESSAGE_SIZE, key "max_message_size", env [],
            parse nonzero_size;

        /// Sets the largest SCRAM iteration count accepted from the server
        /// (default 1,000,000), bounding the CPU a server can make the client
        /// spend on authentication.
        set scram_max_iterations(u32) = set;
        /// The largest accepted SCRAM iteration count.
        get get_scram_max_iterations -> u32 = copied;
        scram_max_iterations: u32 = DEFAULT_SCRAM_MAX_ITERATIONS, key "scram_max_iterations",
            env [], parse nonzero_u32;

        /// Sets the client certificate file (`sslcert`).
        set ssl_cert(impl AsRef<Path>) = set_path;
        /// The client certificate file, if given.
        get get_ssl_cert -> Option<&Path> = Option::as_deref;
        ssl_cert: Option<PathBuf> = None, key "sslcert", env ["PGSSLCERT"], parse path;

        /// Sets the client private key file (`sslkey`).
        set ssl_key(impl AsRef<Path>) = set_path;
        /// The client key file, if given.
        get get_ssl_key -> Option<&Path> = Option::as_deref;
        ssl_key: Option<PathBuf> = None, key "sslkey", env ["PGSSLKEY"], parse path;

        /// Sets the trusted CA certificates file (`sslrootcert`).
        set ssl_root_cert(impl AsRef<Path>) = set_path;
        /// The trusted CA certificates file, if given.
        get get_ssl_root_cert -> Option<&Path> = Option::as_deref;
        ssl_root_cert: Option<PathBuf> = None, key "sslrootcert", env ["PGSSLROOTCERT"],
            parse path;

        /// Sets the passphrase of the client key (`sslpassword`). It is kept
        /// as a [`Secret`], so `Debug` never shows it.
        set ssl_password(impl Into<String>) = set_secret_string;
        /// The client key passphrase, if given.
        get get_ssl_password -> Option<&str> = exposed_str;
        ssl_password: Option<Secret<String>> = None, key "sslpassword", env [],
            parse secret_text;

        /// Sets the certificate revocation list file (`sslcrl`).
        set ssl_crl(impl AsRef<Path>) = set_path;
        /// The certificate revocation list file, if given.
        get get_ssl_crl -> Option<&Path> = Option::as_deref;
        ssl_crl: Option<PathBuf> = None, key "sslcrl", env ["PGSSLCRL"], parse path;

        /// Sets a directory of certificate revocation lists (`sslcrldir`): every
        /// file in it named like OpenSSL's hashed CRL files (`<hash>.r<n>`, as
        /// `openssl rehash` makes them) is read as PEM. Used with, or instead
        /// of, [`Config::ssl_crl`].
        set ssl_crl_dir(impl AsRef<Path>) = set_path;
        /// The certificate revocation list directory, if given.
        get get_ssl_crl_dir -> Option<&Path> = Option::as_deref;
        ssl_crl_dir: Option<PathBuf> = None, key "sslcrldir", env ["PGSSLCRLDIR"], parse path;

        /// Sets whether SCRAM channel binding is used.
        set channel_binding(ChannelBinding) = set_some;
        /// The channel binding mode, if given.
        get get_channel_binding -> Option<ChannelBinding> = copied;
        channel_binding: Option<ChannelBinding> = None, key "channel_binding",
            env ["PGCHANNELBINDING"], parse some_keyword;

        /// Sets how TLS is negotiated (`sslnegotiation`).
        set ssl_negotiation(SslNegotiation) = set_some;
        /// The TLS negotiation mode, if given.
        get get_ssl_negotiation -> Option<SslNegotiation> = copied;
        ssl_negotiation: Option<SslNegotiation> = None, key "sslnegotiation",
            env ["PGSSLNEGOTIATION"], parse some_keyword;

        /// Sets which authentication methods the server may use
        /// (`require_auth`); any other request fails before a password is sent.
        set require_auth(RequireAuth) = set_some;
        /// The `require_auth` setting, if given.
        get get_require_auth -> Option<RequireAuth> = copied;
        require_auth: Option<RequireAuth> = None, key "require_auth", env ["PGREQUIREAUTH"],
            parse some_keyword;

        /// Sets the oldest acceptable protocol version (`min_protocol_version`).
        set min_protocol_version(ProtocolVersion) = set_some;
        /// The `min_protocol_version`, if given.
        get get_min_protocol_version -> Option<ProtocolVersion> = copied;
        min_protocol_version: Option<ProtocolVersion> = None, key "min_protocol_version",
            env ["PGMINPROTOCOLVERSION"], parse some_keyword;

        /// Sets the protocol version to ask for (`max_protocol_version`).
        set max_protocol_version(ProtocolVersion) = set_some;
        /// The `max_protocol_version`, if given.
        get get_max_protocol_version -> Option<ProtocolVersion> = copied;
        max_protocol_version: Option<ProtocolVersion> = None, key "max_protocol_version",
            env ["PGMAXPROTOCOLVERSION"], parse some_keyword;

        extra params: Vec<(String, String)> = Vec::new();
    }
}
