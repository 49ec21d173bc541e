//! The result of resolving a configuration: [`ResolvedConfig`] and its
//! [`Target`]s.

use std::path::PathBuf;
use std::time::Duration;

use super::{
    ChannelBinding, Host, LoadBalanceHosts, ProtocolVersion, QueryMode, RequireAuth, Secret,
    SslMode, SslNegotiation, TargetSessionAttrs,
};

/// One server to try: where to connect and which password to offer.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct Target {
    /// Where to connect. When `hostaddr` was given, this is that numeric
    /// address, so no name lookup is needed.
    pub host: Host,
    /// The TCP port, or the number in the Unix socket's file name.
    pub port: u16,
    /// The password for this server: the configured one, `PGPASSWORD`, or
    /// the password file's entry for this host, port, database and user.
    pub password: Option<Secret<Vec<u8>>>,
    /// The host name given alongside a `hostaddr`, which the address stands
    /// in for; `None` when `host` is the name itself. The password file was
    /// matched against it; certificate verification should use it.
    pub host_name: Option<String>,
}

/// Every connection setting with its final value, ready for connecting.
///
/// Produced by [`Config::resolve`](super::Config::resolve). Its `Debug`
/// output shows every setting; the secrets are [`Secret`]s and print as
/// `Secret(***)`. The TLS file settings are `None` when
/// neither the configuration nor the environment names a file; the TLS code
/// decides which default locations to look at.
#[derive(Clone, PartialEq, Eq, Debug)]
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
    pub ssl_password: Option<Secret<String>>,
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
