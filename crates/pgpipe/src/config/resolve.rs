//! Turning a [`Config`] into a [`ResolvedConfig`]: settings first, then
//! libpq's environment variables, then the password file (now, or for a
//! connect only when the server asks: `password_file`), then defaults.

use std::net::IpAddr;
use std::path::PathBuf;
use std::time::Duration;

use super::password_file::PasswordFile;
use super::{
    fields, params, pgpass, validate, Config, ConfigError, Environment, Host, ResolvedConfig,
    Secret, SslMode, Target, DEFAULT_HOST, DEFAULT_PORT,
};

/// The bound on a connection attempt when none is configured.
const DEFAULT_CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// Reads environment variables, treating empty ones as unset.
struct Vars<'a>(&'a dyn Environment);

impl Vars<'_> {
    fn get(&self, name: &str) -> Option<String> {
        self.0.var(name).filter(|v| !v.is_empty())
    }
}

fn non_empty(s: Option<&str>) -> Option<String> {
    s.filter(|s| !s.is_empty()).map(str::to_owned)
}

/// When the password file is read.
pub(super) enum PassFiles {
    /// While resolving, through the [`Environment`]: each target's
    /// `password` holds the file's entry, as [`Config::resolve`] promises.
    Env,
    /// Not while resolving: the [`PasswordFile`] returned beside the
    /// result says where to look, and a connect looks only if the server
    /// asks for a password (see `password_file`).
    Deferred,
}

pub(super) fn resolve(
    config: &Config,
    env: &dyn Environment,
    pass_files: PassFiles,
) -> Result<(ResolvedConfig, PasswordFile), ConfigError> {
    let vars = Vars(env);
    // The settings with the environment filled in, row by row from the
    // parameter table; what remains unset gets its default below.
    let mut merged = config.clone();
    fields::apply_env(&mut merged, &|name| vars.get(name))?;
    vars.get("PGCLIENTENCODING")
        .map_or(Ok(()), |v| params::check_client_encoding(&v))
        .map_err(|e| e.in_env_var("PGCLIENTENCODING"))?;
    let config = &merged;

    if config.ports.contains(&0) {
        return Err(ConfigError::new(
            "0",
            "invalid port \"0\": expected a number from 1 to 65535",
        ));
    }
    let count = target_count(
        config.hosts.len(),
        config.hostaddrs.len(),
        config.ports.len(),
    )?;

    let user = non_empty(config.user.as_deref())
        .or_else(|| vars.get("USER"))
        .or_else(|| vars.get("LOGNAME"))
        .or_else(|| vars.get("USERNAME"))
        .ok_or_else(|| ConfigError::new("user", "no user given and USER is not set"))?;
    let dbname = non_empty(config.dbname.as_deref()).unwrap_or_else(|| user.clone());
    let application_name = non_empty(config.application_name.as_deref())
        .or_else(|| non_empty(config.fallback_application_name.as_deref()));
    let options = non_empty(config.options.as_deref());

    let ssl_mode = effective_ssl_mode(config.ssl_mode, config.ssl_root_cert.as_deref())?;
    let channel_binding = config.channel_binding.unwrap_or_default();
    let ssl_negotiation = config.ssl_negotiation.unwrap_or_default();
    let min_protocol_version = config.min_protocol_version.unwrap_or_default();
    // libpq 18: asking for a minimum above 3.0 raises the default maximum.
    let max_protocol_version = config.max_protocol_version.unwrap_or(min_protocol_version);
    validate::combination(
        ssl_mode,
        channel_binding,
        ssl_negotiation,
        min_protocol_version,
        max_protocol_version,
    )?;
    validate::limits(config)?;
    validate::text(&user, "user")?;
    validate::text(&dbname, "dbname")?;
    if let Some(name) = &application_name {
        validate::text(name, "application_name")?;
    }
    if let Some(options) = &options {
        validate::text(options, "options")?;
    }
    validate::params(&config.params)?;

    let shared_password = config.password.clone().filter(|p| !p.expose().is_empty());
    if shared_password
        .as_ref()
        .is_some_and(|p| p.expose().contains(&0))
    {
        return Err(ConfigError::new(
            "password",
            "password contains a NUL byte, which the protocol cannot carry",
        ));
    }

    let mut deferred = PasswordFile::default();
    if shared_password.is_none() && matches!(pass_files, PassFiles::Deferred) {
        deferred.wanted = true;
        deferred.path = configured_passfile(config).cloned();
    }
    // Read at most once, and only if some target lacks a password.
    let mut passfile: Option<Option<pgpass::PassFile>> = None;
    let mut targets = Vec::with_capacity(count);
    for i in 0..count {
        let host = config.hosts.get(i);
        let addr = config.hostaddrs.get(i).copied().flatten();
        let port = match config.ports.as_slice() {
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
        let password = match (&shared_password, &pass_files) {
            (Some(password), _) => Some(password.clone()),
            (None, PassFiles::Deferred) => {
                // The one name PasswordFile cannot tell from the target.
                if let (Some(_), Some(Host::Unix(dir))) = (addr, host) {
                    deferred.keys.push((i, dir.to_string_lossy().into_owned()));
                }
                None
            }
            (None, PassFiles::Env) => {
                let file = passfile.get_or_insert_with(|| read_passfile(config, &vars));
                file.as_ref().and_then(|file| {
                    // libpq matches the name the user gave, not the address
                    // it stands for.
                    let (key, unix) = match (host, addr) {
                        (Some(Host::Tcp(name)), _) => (name.clone(), false),
                        (Some(Host::Unix(path)), _) => (path.to_string_lossy().into_owned(), true),
                        (None, Some(addr)) => (addr.to_string(), false),
                        (None, None) => (DEFAULT_HOST.to_owned(), false),
                    };
                    let query = pgpass::Query {
                        host: &key,
                        unix,
                        port,
                        dbname: &dbname,
                        user: &user,
                    };
                    file.lookup(&query).map(Secret::new)
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

    let resolved = ResolvedConfig {
        targets,
        user,
        dbname,
        application_name,
        options,
        connect_timeout: Some(config.connect_timeout.unwrap_or(DEFAULT_CONNECT_TIMEOUT))
            .filter(|t| !t.is_zero()),
        ssl_mode,
        target_session_attrs: config.target_session_attrs.unwrap_or_default(),
        load_balance_hosts: config.load_balance_hosts.unwrap_or_default(),
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
        ssl_cert: config.ssl_cert.clone(),
        ssl_key: config.ssl_key.clone(),
        ssl_root_cert: config.ssl_root_cert.clone(),
        ssl_password: config
            .ssl_password
            .clone()
            .filter(|p| !p.expose().is_empty()),
        ssl_crl: config.ssl_crl.clone(),
        ssl_crl_dir: config.ssl_crl_dir.clone(),
        channel_binding,
        ssl_negotiation,
        require_auth: config.require_auth.unwrap_or_default(),
        min_protocol_version,
        max_protocol_version,
    };
    Ok((resolved, deferred))
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

/// `passfile=` (or `PGPASSFILE`, merged into it), if set.
fn configured_passfile(config: &Config) -> Option<&PathBuf> {
    config
        .passfile
        .as_ref()
        .filter(|p| !p.as_os_str().is_empty())
}

/// The per-user password file: `~/.pgpass` (`%APPDATA%` on Windows).
pub(super) fn default_passfile(env: &dyn Environment) -> Option<PathBuf> {
    if cfg!(windows) {
        Vars(env)
            .get("APPDATA")
            .map(|dir| PathBuf::from(dir).join("postgresql").join("pgpass.conf"))
    } else {
        env.home_dir().map(|home| home.join(".pgpass"))
    }
}

/// The password file to use: `passfile=` (or `PGPASSFILE`), else the
/// per-user default; read through the environment.
fn read_passfile(config: &Config, vars: &Vars<'_>) -> Option<pgpass::PassFile> {
    let path = match configured_passfile(config) {
        Some(path) => path.clone(),
        None => default_passfile(vars.0)?,
    };
    pgpass::load(vars.0, &path)
}
