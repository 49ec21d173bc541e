//! Turning a [`Config`] into a [`ResolvedConfig`]: settings first, then
//! libpq's environment variables, then the password file, then defaults.

use std::fmt;
use std::net::IpAddr;
use std::path::PathBuf;
use std::time::Duration;

use super::{
    params, pgpass, ChannelBinding, Config, ConfigError, Environment, Host, LoadBalanceHosts,
    ProtocolVersion, QueryMode, Redacted, RequireAuth, SslMode, SslNegotiation, TargetSessionAttrs,
    DEFAULT_HOST, DEFAULT_PORT,
};

/// The bound on a connection attempt when none is configured.
const DEFAULT_CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// Startup parameters that have their own settings; setting them through
/// [`Config::param`] would send them twice.
const RESERVED_PARAMS: &[&str] = &[
    "user",
    "database",
    "options",
    "application_name",
    "client_encoding",
    "replication",
];

/// One server to try: where to connect and which password to offer.
#[derive(Clone, PartialEq, Eq)]
pub struct Target {
    /// Where to connect. When `hostaddr` was given, this is that numeric
    /// address, so no name lookup is needed.
    pub host: Host,
    /// The TCP port, or the number in the Unix socket's file name.
    pub port: u16,
    /// The password for this server: the configured one, `PGPASSWORD`, or
    /// the password file's entry for this host, port, database and user.
    pub password: Option<Vec<u8>>,
    /// The host name given alongside a `hostaddr`, which the address stands
    /// in for; `None` when `host` is the name itself. The password file was
    /// matched against it; certificate verification should use it.
    pub host_name: Option<String>,
}

impl fmt::Debug for Target {
    /// Every field, secrets as `<redacted>`. The struct is destructured
    /// without `..`, so a new field that is not printed here fails to
    /// compile (or warns as unused) instead of silently going missing.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let Target {
            host,
            port,
            password,
            host_name,
        } = self;
        f.debug_struct("Target")
            .field("host", host)
            .field("port", port)
            .field("password", &password.as_ref().map(|_| Redacted))
            .field("host_name", host_name)
            .finish()
    }
}

/// Every connection setting with its final value, ready for connecting.
///
/// Produced by [`Config::resolve`]. The TLS file settings are `None` when
/// neither the configuration nor the environment names a file; the TLS code
/// decides which default locations to look at.
#[derive(Clone, PartialEq, Eq)]
pub struct ResolvedConfig {
    /// The servers to try, in the configured order (at least one).
    pub targets: Vec<Target>,
    /// The user to log in as.
    pub user: String,
    /// The database to connect to.
    pub dbname: String,
    /// The `application_name` to send, if any.
    pub application_name: Option<String>,
    /// The `options` to send, if any.
    pub options: Option<String>,
    /// The bound on each connection attempt; `None` means no bound.
    pub connect_timeout: Option<Duration>,
    /// Whether and how to use TLS.
    pub ssl_mode: SslMode,
    /// Which kind of server is acceptable.
    pub target_session_attrs: TargetSessionAttrs,
    /// The order in which targets are tried.
    pub load_balance_hosts: LoadBalanceHosts,
    /// Whether TCP keepalives are enabled.
    pub keepalives: bool,
    /// The keepalive idle time; `None` means the system default.
    pub keepalives_idle: Option<Duration>,
    /// The time between keepalive probes; `None` means the system default.
    pub keepalives_interval: Option<Duration>,
    /// Unanswered probes before the connection closes; `None` means the
    /// system default.
    pub keepalives_count: Option<u32>,
    /// `TCP_USER_TIMEOUT`; `None` means the system default.
    pub tcp_user_timeout: Option<Duration>,
    /// The default client-side query timeout; `None`: no timeout.
    pub query_timeout: Option<Duration>,
    /// Whether handles share Syncs by default (`coalesce_sync`).
    pub coalesce_sync: bool,
    /// The prepared-statement cache capacity (0: no cache).
    pub statement_cache_capacity: usize,
    /// How statements are sent.
    pub query_mode: QueryMode,
    /// The largest accepted server message, in bytes.
    pub max_message_size: usize,
    /// The largest accepted SCRAM iteration count.
    pub scram_max_iterations: u32,
    /// Extra startup parameters.
    pub params: Vec<(String, String)>,
    /// The client certificate file (`sslcert`, `PGSSLCERT`).
    pub ssl_cert: Option<PathBuf>,
    /// The client key file (`sslkey`, `PGSSLKEY`).
    pub ssl_key: Option<PathBuf>,
    /// The trusted CA certificates file (`sslrootcert`, `PGSSLROOTCERT`).
    pub ssl_root_cert: Option<PathBuf>,
    /// The client key passphrase (`sslpassword`).
    pub ssl_password: Option<String>,
    /// The certificate revocation list file (`sslcrl`, `PGSSLCRL`).
    pub ssl_crl: Option<PathBuf>,
    /// The certificate revocation list directory (`sslcrldir`, `PGSSLCRLDIR`).
    pub ssl_crl_dir: Option<PathBuf>,
    /// Whether SCRAM channel binding is used.
    pub channel_binding: ChannelBinding,
    /// How TLS is negotiated.
    pub ssl_negotiation: SslNegotiation,
    /// Which authentication methods the server may use (`require_auth`).
    pub require_auth: RequireAuth,
    /// The oldest protocol version accepted (`min_protocol_version`).
    pub min_protocol_version: ProtocolVersion,
    /// The protocol version asked for (`max_protocol_version`).
    pub max_protocol_version: ProtocolVersion,
}

impl fmt::Debug for ResolvedConfig {
    /// Every field, secrets as `<redacted>`. The struct is destructured
    /// without `..`, so a new field that is not printed here fails to
    /// compile (or warns as unused) instead of silently going missing.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let ResolvedConfig {
            targets,
            user,
            dbname,
            application_name,
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
        f.debug_struct("ResolvedConfig")
            .field("targets", targets)
            .field("user", user)
            .field("dbname", dbname)
            .field("application_name", application_name)
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

/// Reads environment variables, treating empty ones as unset.
struct Vars<'a>(&'a dyn Environment);

impl Vars<'_> {
    fn get(&self, name: &str) -> Option<String> {
        self.0.var(name).filter(|v| !v.is_empty())
    }

    /// `setting` if given, else the parsed variable, else `None`.
    fn or_parse<T>(
        &self,
        setting: Option<T>,
        name: &str,
        parse: impl FnOnce(&str) -> Result<T, ConfigError>,
    ) -> Result<Option<T>, ConfigError> {
        if setting.is_some() {
            return Ok(setting);
        }
        match self.get(name) {
            Some(value) => parse(&value).map(Some).map_err(|e| e.in_env_var(name)),
            None => Ok(None),
        }
    }
}

fn non_empty(s: Option<&str>) -> Option<String> {
    s.filter(|s| !s.is_empty()).map(str::to_owned)
}

fn non_empty_list<T: Clone>(list: &[T]) -> Option<Vec<T>> {
    (!list.is_empty()).then(|| list.to_vec())
}

pub(super) fn resolve(
    config: &Config,
    env: &dyn Environment,
) -> Result<ResolvedConfig, ConfigError> {
    let vars = Vars(env);

    let hosts = vars
        .or_parse(non_empty_list(&config.hosts), "PGHOST", |v| {
            Ok(params::parse_hosts(v))
        })?
        .unwrap_or_default();
    let hostaddrs = vars
        .or_parse(
            non_empty_list(&config.hostaddrs),
            "PGHOSTADDR",
            params::parse_hostaddrs,
        )?
        .unwrap_or_default();
    let ports = vars
        .or_parse(non_empty_list(&config.ports), "PGPORT", params::parse_ports)?
        .unwrap_or_default();
    if ports.contains(&0) {
        return Err(ConfigError::new(
            "0",
            "invalid port \"0\": expected a number from 1 to 65535",
        ));
    }

    let count = target_count(hosts.len(), hostaddrs.len(), ports.len())?;

    let user = non_empty(config.user.as_deref())
        .or_else(|| vars.get("PGUSER"))
        .or_else(|| vars.get("USER"))
        .or_else(|| vars.get("LOGNAME"))
        .or_else(|| vars.get("USERNAME"))
        .ok_or_else(|| ConfigError::new("user", "no user given and USER is not set"))?;
    let dbname = non_empty(config.dbname.as_deref())
        .or_else(|| vars.get("PGDATABASE"))
        .unwrap_or_else(|| user.clone());
    let application_name = non_empty(config.application_name.as_deref())
        .or_else(|| vars.get("PGAPPNAME"))
        .or_else(|| non_empty(config.fallback_application_name.as_deref()));
    let options = non_empty(config.options.as_deref()).or_else(|| vars.get("PGOPTIONS"));

    let connect_timeout = vars
        .or_parse(config.connect_timeout, "PGCONNECT_TIMEOUT", |v| {
            params::parse_seconds("connect_timeout", v)
        })?
        .unwrap_or(DEFAULT_CONNECT_TIMEOUT);
    let explicit_ssl_mode = vars.or_parse(config.ssl_mode, "PGSSLMODE", str::parse)?;
    let target_session_attrs = vars
        .or_parse(
            config.target_session_attrs,
            "PGTARGETSESSIONATTRS",
            str::parse,
        )?
        .unwrap_or_default();
    let load_balance_hosts = vars
        .or_parse(config.load_balance_hosts, "PGLOADBALANCEHOSTS", str::parse)?
        .unwrap_or_default();
    let channel_binding = vars
        .or_parse(config.channel_binding, "PGCHANNELBINDING", str::parse)?
        .unwrap_or_default();
    let ssl_negotiation = vars
        .or_parse(config.ssl_negotiation, "PGSSLNEGOTIATION", str::parse)?
        .unwrap_or_default();
    vars.or_parse(None, "PGCLIENTENCODING", params::check_client_encoding)?;
    let path_var = |setting: &Option<PathBuf>, name: &str| {
        setting
            .clone()
            .or_else(|| vars.get(name).map(PathBuf::from))
    };
    let ssl_cert = path_var(&config.ssl_cert, "PGSSLCERT");
    let ssl_key = path_var(&config.ssl_key, "PGSSLKEY");
    let ssl_root_cert = path_var(&config.ssl_root_cert, "PGSSLROOTCERT");
    let ssl_crl = path_var(&config.ssl_crl, "PGSSLCRL");
    let ssl_crl_dir = path_var(&config.ssl_crl_dir, "PGSSLCRLDIR");
    let ssl_mode = effective_ssl_mode(explicit_ssl_mode, ssl_root_cert.as_deref())?;
    if channel_binding == ChannelBinding::Require && ssl_mode == SslMode::Disable {
        return Err(ConfigError::new(
            "channel_binding",
            "channel_binding=require needs TLS, but sslmode=disable forbids it",
        ));
    }
    let require_auth = vars
        .or_parse(config.require_auth, "PGREQUIREAUTH", str::parse)?
        .unwrap_or_default();
    let min_protocol_version = vars
        .or_parse(
            config.min_protocol_version,
            "PGMINPROTOCOLVERSION",
            str::parse,
        )?
        .unwrap_or_default();
    let max_protocol_version = vars
        .or_parse(
            config.max_protocol_version,
            "PGMAXPROTOCOLVERSION",
            str::parse,
        )?
        // libpq 18: asking for a minimum above 3.0 raises the default maximum.
        .unwrap_or(min_protocol_version);
    if min_protocol_version.minor() > max_protocol_version.minor() {
        return Err(ConfigError::new(
            "min_protocol_version",
            format!(
                "min_protocol_version {min_protocol_version} is greater than \
                 max_protocol_version {max_protocol_version}"
            ),
        ));
    }

    if ssl_negotiation == SslNegotiation::Direct
        && matches!(
            ssl_mode,
            SslMode::Disable | SslMode::Allow | SslMode::Prefer
        )
    {
        return Err(ConfigError::new(
            "sslnegotiation",
            format!(
                "weak sslmode \"{ssl_mode}\" may not be used with sslnegotiation=direct \
                 (use \"require\", \"verify-ca\", or \"verify-full\")"
            ),
        ));
    }
    validate_limits(config)?;
    validate_text(&user, "user")?;
    validate_text(&dbname, "dbname")?;
    if let Some(name) = &application_name {
        validate_text(name, "application_name")?;
    }
    if let Some(options) = &options {
        validate_text(options, "options")?;
    }
    validate_params(&config.params)?;

    let shared_password = match config.password.as_ref().filter(|p| !p.is_empty()) {
        Some(password) => Some(password.clone()),
        None => vars.get("PGPASSWORD").map(String::into_bytes),
    };
    if shared_password.as_ref().is_some_and(|p| p.contains(&0)) {
        return Err(ConfigError::new(
            "password",
            "password contains a NUL byte, which the protocol cannot carry",
        ));
    }

    // Read at most once, and only if some target lacks a password.
    let mut passfile: Option<Option<Vec<u8>>> = None;
    let mut targets = Vec::with_capacity(count);
    for i in 0..count {
        let host = hosts.get(i);
        let addr = hostaddrs.get(i).copied().flatten();
        let port = match ports.as_slice() {
            [] => DEFAULT_PORT,
            [port] => *port,
            many => many.get(i).copied().unwrap_or(DEFAULT_PORT),
        };
        let (connect_to, host_name) = match (addr, host) {
            (Some(addr), Some(Host::Tcp(name))) => (tcp_addr(addr), Some(name.clone())),
            (Some(addr), _) => (tcp_addr(addr), None),
            (None, Some(host)) => (host.clone(), None),
            (None, None) => (Host::Tcp(DEFAULT_HOST.to_owned()), None),
        };
        let password = match &shared_password {
            Some(password) => Some(password.clone()),
            None => {
                let contents = passfile.get_or_insert_with(|| read_passfile(config, &vars));
                contents.as_deref().and_then(|contents| {
                    // libpq matches the name the user gave, not the address
                    // it stands for.
                    let (key, unix) = match (host, addr) {
                        (Some(Host::Tcp(name)), _) => (name.clone(), false),
                        (Some(Host::Unix(path)), _) => (path.to_string_lossy().into_owned(), true),
                        (None, Some(addr)) => (addr.to_string(), false),
                        (None, None) => (DEFAULT_HOST.to_owned(), false),
                    };
                    pgpass::lookup(
                        contents,
                        &pgpass::Query {
                            host: &key,
                            unix,
                            port,
                            dbname: &dbname,
                            user: &user,
                        },
                    )
                })
            }
        };
        targets.push(Target {
            host: connect_to,
            port,
            password,
            host_name,
        });
    }

    Ok(ResolvedConfig {
        targets,
        user,
        dbname,
        application_name,
        options,
        connect_timeout: Some(connect_timeout).filter(|t| !t.is_zero()),
        ssl_mode,
        target_session_attrs,
        load_balance_hosts,
        keepalives: config.keepalives,
        keepalives_idle: config.keepalives_idle.filter(|d| !d.is_zero()),
        keepalives_interval: config.keepalives_interval.filter(|d| !d.is_zero()),
        keepalives_count: config.keepalives_count.filter(|&n| n != 0),
        tcp_user_timeout: config.tcp_user_timeout.filter(|d| !d.is_zero()),
        query_timeout: config.query_timeout.filter(|d| !d.is_zero()),
        coalesce_sync: config.coalesce_sync,
        statement_cache_capacity: config.statement_cache_capacity,
        query_mode: config.query_mode,
        max_message_size: config.max_message_size,
        scram_max_iterations: config.scram_max_iterations,
        params: config.params.clone(),
        ssl_cert,
        ssl_key,
        ssl_root_cert,
        ssl_password: non_empty(config.ssl_password.as_deref()),
        ssl_crl,
        ssl_crl_dir,
        channel_binding,
        ssl_negotiation,
        require_auth,
        min_protocol_version,
        max_protocol_version,
    })
}

/// `sslrootcert=system` means "verify against the system's trusted roots",
/// which only makes sense with host name checks: as in libpq 16, it makes
/// verify-full the default and refuses any weaker explicit mode.
fn effective_ssl_mode(
    explicit: Option<SslMode>,
    root_cert: Option<&std::path::Path>,
) -> Result<SslMode, ConfigError> {
    let system = root_cert.is_some_and(|p| p.as_os_str() == "system");
    match explicit {
        None if system => Ok(SslMode::VerifyFull),
        Some(mode) if system && mode != SslMode::VerifyFull => Err(ConfigError::new(
            "sslrootcert",
            format!(
                "weak sslmode \"{mode}\" may not be used with sslrootcert=system \
                 (use \"verify-full\")"
            ),
        )),
        other => Ok(other.unwrap_or_default()),
    }
}

/// Checks that the host, address and port lists line up, and returns how
/// many servers they describe. One port may serve all hosts; otherwise each
/// host needs its own.
pub(super) fn target_count(
    hosts: usize,
    hostaddrs: usize,
    ports: usize,
) -> Result<usize, ConfigError> {
    if hosts != 0 && hostaddrs != 0 && hosts != hostaddrs {
        return Err(ConfigError::new(
            "hostaddr",
            format!("could not match {hosts} host names to {hostaddrs} hostaddr values"),
        ));
    }
    let count = hosts.max(hostaddrs).max(1);
    if ports > 1 && ports != count {
        return Err(ConfigError::new(
            "port",
            format!("could not match {ports} port numbers to {count} hosts"),
        ));
    }
    Ok(count)
}

fn tcp_addr(addr: IpAddr) -> Host {
    Host::Tcp(addr.to_string())
}

/// The password file to use: `passfile=`, else `PGPASSFILE`, else the
/// per-user default.
fn read_passfile(config: &Config, vars: &Vars<'_>) -> Option<Vec<u8>> {
    let path = config
        .passfile
        .clone()
        .filter(|p| !p.as_os_str().is_empty())
        .or_else(|| vars.get("PGPASSFILE").map(PathBuf::from))
        .or_else(|| {
            if cfg!(windows) {
                vars.get("APPDATA")
                    .map(|dir| PathBuf::from(dir).join("postgresql").join("pgpass.conf"))
            } else {
                vars.0.home_dir().map(|home| home.join(".pgpass"))
            }
        })?;
    pgpass::load(vars.0, &path)
}

/// Rejects limits that would make every connection fail.
fn validate_limits(config: &Config) -> Result<(), ConfigError> {
    if config.max_message_size == 0 {
        return Err(ConfigError::new(
            "max_message_size",
            "max_message_size must be positive",
        ));
    }
    if config.scram_max_iterations == 0 {
        return Err(ConfigError::new(
            "scram_max_iterations",
            "scram_max_iterations must be positive",
        ));
    }
    Ok(())
}

/// Startup-message strings are NUL-terminated, so a NUL inside would cut
/// the value short or shift every later field.
fn validate_text(value: &str, what: &str) -> Result<(), ConfigError> {
    if value.contains('\0') {
        return Err(ConfigError::new(
            what,
            format!("{what} contains a NUL byte, which the protocol cannot carry"),
        ));
    }
    Ok(())
}

fn validate_params(params: &[(String, String)]) -> Result<(), ConfigError> {
    for (name, value) in params {
        if name.is_empty() {
            return Err(ConfigError::new("", "startup parameter name is empty"));
        }
        if RESERVED_PARAMS.contains(&name.as_str()) || name.starts_with("_pq_.") {
            return Err(ConfigError::new(
                name.as_str(),
                format!(
                    "startup parameter \"{name}\" cannot be set with param(): \
                     pgpipe sends it from its own setting"
                ),
            ));
        }
        validate_text(name, "startup parameter name")?;
        validate_text(value, &format!("startup parameter \"{name}\""))?;
    }
    Ok(())
}
