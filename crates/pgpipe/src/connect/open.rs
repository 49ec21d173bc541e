//! Opening a connection: resolve the configuration, reach a host, run the
//! handshake, start the driver.

use std::sync::Arc;

use pgpipe_proto::backend::Decoder;
use pgpipe_proto::frontend::Encoder;
use tokio::net::{TcpStream, UnixStream};

use crate::config::{
    Config, Host, LoadBalanceHosts, ProcessEnvironment, QueryMode, ResolvedConfig, Target,
    TargetSessionAttrs,
};
use crate::connect::handshake;
use crate::connect::sslmode::{self, AttemptFailure, Transport};
use crate::connect::{CancelTls, CancelToken};
use crate::driver::Connection;
use crate::driver::Shared;
use crate::driver::Socket;
use crate::error::ErrorKind;
use crate::session::Session;
use crate::{Client, Error, SimpleQueryMessage};

/// Connects to the server described by `url` (a `postgres://` URL or a
/// `key=value` conninfo string) and spawns the connection driver on the
/// current tokio runtime.
///
/// Values missing from the string come from the `PG*` environment variables
/// and `~/.pgpass`, as with libpq.
///
/// ```no_run
/// # async fn f() -> Result<(), pgpipe::Error> {
/// let client = pgpipe::connect("postgres://app:secret@localhost/app").await?;
/// let row = client.query_one("SELECT $1::int4 + 1", (41i32,)).await?;
/// assert_eq!(row.get::<i32, _>(0), 42);
/// # Ok(()) }
/// ```
///
/// # Panics
///
/// Outside a tokio runtime (it spawns the driver); use
/// [`connect_with_driver`] to run the driver yourself.
pub async fn connect(url: &str) -> Result<Client, Error> {
    Config::parse(url).map_err(Error::from)?.connect().await
}

/// Like [`connect`], but returns the connection driver instead of spawning
/// it: poll it (e.g. spawn it on your executor) for the client to work.
///
/// # Drop behavior
///
/// The returned [`Connection`] is the connection: if it is dropped before
/// it completes (dropped unpolled, its task aborted, or the runtime that
/// runs it shut down), the connection ends at once, and every pending and
/// every later request of the [`Client`] (and its clones) fails right away
/// with an [`ErrorKind::Closed`] error
/// ([`Error::is_closed`]), never hangs. A client used from another runtime
/// than the driver's thus fails cleanly once that runtime is gone.
pub async fn connect_with_driver(url: &str) -> Result<(Client, Connection), Error> {
    Config::parse(url)
        .map_err(Error::from)?
        .connect_with_driver()
        .await
}

impl Config {
    /// Connects and spawns the driver on the current tokio runtime. See
    /// [`connect`].
    pub async fn connect(&self) -> Result<Client, Error> {
        let (client, connection) = self.connect_with_driver().await?;
        tokio::spawn(async move {
            if let Err(e) = connection.await {
                tracing::debug!("connection closed with an error: {e}");
            }
        });
        Ok(client)
    }

    /// Connects and returns the driver for you to poll. See
    /// [`connect_with_driver`].
    pub async fn connect_with_driver(&self) -> Result<(Client, Connection), Error> {
        let connect = self.connect_untraced();
        crate::observe::traced("connect", None, None, |_| 0, connect).await
    }

    async fn connect_untraced(&self) -> Result<(Client, Connection), Error> {
        let resolved = self.resolve(&ProcessEnvironment).map_err(Error::from)?;
        check_supported(&resolved)?;
        let mut targets: Vec<&Target> = resolved.targets.iter().collect();
        if resolved.load_balance_hosts == LoadBalanceHosts::Random {
            shuffle(&mut targets);
        }
        // prefer-standby: a standby if any host is one, else whatever answers.
        let passes: &[TargetSessionAttrs] = match resolved.target_session_attrs {
            TargetSessionAttrs::PreferStandby => {
                &[TargetSessionAttrs::Standby, TargetSessionAttrs::Any]
            }
            ref other => std::slice::from_ref(other),
        };
        let mut failures = Vec::new();
        for wanted in passes {
            for target in &targets {
                let (client, mut connection) = match connect_target(&resolved, target).await {
                    Ok(pair) => pair,
                    Err(e) => {
                        failures.push(e);
                        continue;
                    }
                };
                match session_matches(&client, &mut connection, *wanted).await {
                    Ok(true) => return Ok((client, connection)),
                    // Dropping both closes the socket: the server sees EOF.
                    Ok(false) => failures.push(Error::new(
                        ErrorKind::Connect,
                        format!(
                            "{} does not match target_session_attrs={}",
                            describe(target),
                            wanted.as_str()
                        ),
                    )),
                    Err(e) => failures.push(e.context(format!("checking {}", describe(target)))),
                }
            }
        }
        Err(combine(failures))
    }
}

/// Whether a fresh session is what `wanted` asks for. PostgreSQL 14+
/// reports `in_hot_standby` and `default_transaction_read_only` at startup;
/// older servers are asked.
async fn session_matches(
    client: &Client,
    connection: &mut Connection,
    wanted: TargetSessionAttrs,
) -> Result<bool, Error> {
    if wanted == TargetSessionAttrs::Any {
        return Ok(true);
    }
    let reported = (
        client.parameter("in_hot_standby"),
        client.parameter("default_transaction_read_only"),
    );
    let (hot_standby, read_only) = match reported {
        (Some(hot), Some(ro)) => (hot == "on", ro == "on"),
        _ => {
            // The driver is not spawned yet: poll it while the query runs.
            let ask = client.simple_query(
                "SELECT pg_is_in_recovery()::text, current_setting('transaction_read_only')",
            );
            let rows = tokio::select! {
                rows = ask => rows?,
                end = &mut *connection => {
                    end?;
                    return Err(Error::closed());
                }
            };
            let row = rows
                .iter()
                .find_map(|m| match m {
                    SimpleQueryMessage::Row(r) => Some(r),
                    _ => None,
                })
                .ok_or_else(|| Error::protocol("the session check returned no row"))?;
            (
                row.try_get(0)? == Some("true"),
                row.try_get(1)? == Some("on"),
            )
        }
    };
    Ok(match wanted {
        TargetSessionAttrs::Any => true,
        TargetSessionAttrs::ReadWrite => !hot_standby && !read_only,
        TargetSessionAttrs::ReadOnly => hot_standby || read_only,
        TargetSessionAttrs::Primary => !hot_standby,
        TargetSessionAttrs::Standby | TargetSessionAttrs::PreferStandby => hot_standby,
    })
}

/// Fisher-Yates with the standard library's per-process random hasher keys:
/// good enough to spread clients over hosts, no RNG dependency.
fn shuffle<T>(items: &mut [T]) {
    use std::hash::{BuildHasher, Hasher};
    let state = std::collections::hash_map::RandomState::new();
    for i in (1..items.len()).rev() {
        let mut h = state.build_hasher();
        h.write_usize(i);
        let j = (h.finish() % (i as u64 + 1)) as usize;
        items.swap(i, j);
    }
}

fn check_supported(config: &ResolvedConfig) -> Result<(), Error> {
    if config.query_mode == QueryMode::Simple {
        return Err(Error::new(
            ErrorKind::Config,
            "query_mode=simple is not supported yet; use cached (the default) or unnamed",
        ));
    }
    Ok(())
}

fn describe(target: &Target) -> String {
    match &target.host {
        Host::Tcp(h) if h.contains(':') => format!("[{h}]:{}", target.port),
        Host::Tcp(h) => format!("{h}:{}", target.port),
        Host::Unix(dir) => format!("{}/.s.PGSQL.{}", dir.display(), target.port),
    }
}

async fn connect_target(
    config: &ResolvedConfig,
    target: &Target,
) -> Result<(Client, Connection), Error> {
    let where_ = describe(target);
    let unix = matches!(target.host, Host::Unix(_));
    let plan = sslmode::plan(config.ssl_mode, config.ssl_negotiation, unix);
    let mut result = Err(Error::new(ErrorKind::Connect, "no connection attempt"));
    for (i, transport) in plan.iter().enumerate() {
        tracing::debug!(
            "connecting to {where_}: sslmode={}, attempt {} of {}: {transport:?}",
            config.ssl_mode,
            i + 1,
            plan.len()
        );
        match bounded_attempt(config, target, *transport).await {
            Ok(pair) => return Ok(pair),
            Err(failure) => {
                let retry = i + 1 < plan.len() && sslmode::retry_next(config.ssl_mode, &failure);
                if retry {
                    tracing::debug!(
                        "sslmode={}: retrying {where_} with {:?} after: {}",
                        config.ssl_mode,
                        plan[i + 1],
                        failure.error
                    );
                    continue;
                }
                result = Err(failure.error);
                break;
            }
        }
    }
    result.map_err(|e| e.context(format!("could not connect to {where_}")))
}

/// One attempt, bounded by `connect_timeout`.
async fn bounded_attempt(
    config: &ResolvedConfig,
    target: &Target,
    transport: Transport,
) -> Result<(Client, Connection), AttemptFailure> {
    let attempt = attempt(config, target, transport);
    match config.connect_timeout {
        Some(limit) if !limit.is_zero() => match tokio::time::timeout(limit, attempt).await {
            Ok(r) => r,
            Err(_) => Err(AttemptFailure::other(
                Error::new(
                    ErrorKind::Timeout,
                    format!("connecting timed out after {limit:?} (connect_timeout)"),
                ),
                false,
            )),
        },
        _ => attempt.await,
    }
}

async fn attempt(
    config: &ResolvedConfig,
    target: &Target,
    transport: Transport,
) -> Result<(Client, Connection), AttemptFailure> {
    let (mut socket, tls) = open_transport(config, target, transport).await?;
    let tls_used = socket.is_tls();
    let encoder = Encoder::default();
    let decoder = Decoder::new(config.max_message_size);
    let session = handshake(
        &mut socket,
        config,
        target.password.as_ref().map(|p| p.expose().as_slice()),
        encoder,
        decoder,
    )
    .await
    .map_err(|e| AttemptFailure::other(e, tls_used))?;
    // Unnamed mode never creates a named statement: no cache at all.
    let cache_capacity = match config.query_mode {
        QueryMode::Unnamed => 0,
        _ => config.statement_cache_capacity,
    };
    let cancel = CancelToken {
        host: target.host.clone(),
        port: target.port,
        process_id: session.process_id,
        secret_key: session.secret_key,
        timeout: config.connect_timeout,
        tls: tls.filter(|_| tls_used),
    };
    let (process_id, secret_key) = (cancel.process_id, cancel.legacy_secret_key());
    let mut shared = Shared::new(
        cache_capacity,
        encoder,
        process_id,
        secret_key,
        config.query_timeout,
    );
    shared.coalesce = config.coalesce_sync;
    let shared = Arc::new(shared);
    let state = Arc::new(Session::new(shared.clone(), session.parameters, cancel));
    let _ = state.database.set(config.dbname.clone());
    let connection = Connection::new(socket, shared, state.clone(), decoder, session.leftover);
    Ok((Client::new(state), connection))
}

/// Connects and sets up the transport the attempt asks for.
async fn open_transport(
    config: &ResolvedConfig,
    target: &Target,
    transport: Transport,
) -> Result<(Socket, Option<CancelTls>), AttemptFailure> {
    let plain_failure = |e| AttemptFailure::other(e, false);
    let socket = open_socket(config, target).await.map_err(plain_failure)?;
    let tcp = match (socket, transport) {
        (socket, Transport::Plain) | (socket @ Socket::Unix(_), _) => return Ok((socket, None)),
        (Socket::Tcp(tcp), _) => tcp,
        #[cfg(feature = "tls")]
        (Socket::Tls(_), _) => {
            return Err(plain_failure(Error::protocol(
                "TLS socket before negotiation",
            )))
        }
    };
    start_tls(config, target, transport, tcp).await
}

#[cfg(feature = "tls")]
async fn start_tls(
    config: &ResolvedConfig,
    target: &Target,
    transport: Transport,
    mut tcp: TcpStream,
) -> Result<(Socket, Option<CancelTls>), AttemptFailure> {
    use crate::connect::sslmode::{ssl_request, SslAnswer};
    use crate::connect::tls::TlsSetup;
    let plain_failure = |e| AttemptFailure::other(e, false);
    let host = verification_host(target);
    let setup = TlsSetup::new(config, &host).map_err(plain_failure)?;
    let direct = transport == Transport::Direct;
    if let Transport::SslRequest { fallback_plain } = transport {
        match ssl_request(&mut tcp).await.map_err(plain_failure)? {
            SslAnswer::Accepted => {}
            SslAnswer::Refused if fallback_plain => {
                tracing::debug!(
                    "sslmode={}: the server refused TLS; continuing without it",
                    config.ssl_mode
                );
                return Ok((Socket::Tcp(tcp), None));
            }
            SslAnswer::Refused => {
                return Err(plain_failure(Error::new(
                    ErrorKind::Tls,
                    format!(
                        "server does not support TLS, but sslmode={} requires it",
                        config.ssl_mode
                    ),
                )))
            }
        }
    }
    let stream = setup
        .handshake(tcp, direct)
        .await
        .map_err(|error| AttemptFailure {
            error,
            tls_used: true,
            tls_failed: true,
            server_refused: false,
        })?;
    tracing::debug!(
        "TLS established ({:?}, {:?})",
        stream.get_ref().1.protocol_version(),
        stream
            .get_ref()
            .1
            .negotiated_cipher_suite()
            .map(|s| s.suite())
    );
    let cancel = CancelTls {
        setup: Arc::new(setup),
        direct,
        ssl_mode: config.ssl_mode,
    };
    Ok((Socket::Tls(Box::new(stream)), Some(cancel)))
}

#[cfg(not(feature = "tls"))]
async fn start_tls(
    config: &ResolvedConfig,
    _target: &Target,
    transport: Transport,
    mut tcp: TcpStream,
) -> Result<(Socket, Option<CancelTls>), AttemptFailure> {
    // Without the `tls` feature only prefer can proceed: ask, and go on
    // plain if the server says no (a yes cannot be honoured).
    let plain_failure = |e| AttemptFailure::other(e, false);
    if let Transport::SslRequest {
        fallback_plain: true,
    } = transport
    {
        use crate::connect::sslmode::{ssl_request, SslAnswer};
        if ssl_request(&mut tcp).await.map_err(plain_failure)? == SslAnswer::Refused {
            return Ok((Socket::Tcp(tcp), None));
        }
    }
    Err(plain_failure(Error::new(
        ErrorKind::Config,
        format!(
            "sslmode={} needs TLS, but pgpipe was built without its `tls` feature",
            config.ssl_mode
        ),
    )))
}

/// The name verify-full checks: the host name given alongside a
/// `hostaddr`, else the host itself.
#[cfg(feature = "tls")]
fn verification_host(target: &Target) -> String {
    match (&target.host_name, &target.host) {
        (Some(name), _) => name.clone(),
        (None, Host::Tcp(host)) => host.clone(),
        (None, Host::Unix(dir)) => dir.display().to_string(),
    }
}

async fn open_socket(config: &ResolvedConfig, target: &Target) -> Result<Socket, Error> {
    match &target.host {
        Host::Unix(dir) => {
            let path = dir.join(format!(".s.PGSQL.{}", target.port));
            let stream = UnixStream::connect(&path)
                .await
                .map_err(|e| Error::new(ErrorKind::Connect, "").with_source(e))?;
            Ok(Socket::Unix(stream))
        }
        Host::Tcp(host) => {
            let addrs = tokio::net::lookup_host((host.as_str(), target.port))
                .await
                .map_err(|e| {
                    Error::new(ErrorKind::Connect, "resolving the host name").with_source(e)
                })?;
            // A name may resolve to several addresses; name the one that
            // failed unless the host already was that address.
            let literal = host.parse::<std::net::IpAddr>().is_ok();
            let mut last = None;
            for addr in addrs {
                match TcpStream::connect(addr).await {
                    Ok(stream) => {
                        configure_tcp(&stream, config)?;
                        return Ok(Socket::Tcp(stream));
                    }
                    Err(e) => {
                        let e = Error::new(ErrorKind::Connect, "").with_source(e);
                        last = Some(if literal { e } else { e.context(addr) });
                    }
                }
            }
            Err(last.unwrap_or_else(|| {
                Error::new(ErrorKind::Connect, "the host name resolved to no address")
            }))
        }
    }
}

fn configure_tcp(stream: &TcpStream, config: &ResolvedConfig) -> Result<(), Error> {
    let sock_err = |e| Error::new(ErrorKind::Connect, "configuring the socket").with_source(e);
    // Requests are already coalesced by the driver; Nagle would only add delay.
    stream.set_nodelay(true).map_err(sock_err)?;
    let sock = socket2::SockRef::from(stream);
    if config.keepalives {
        let mut keepalive = socket2::TcpKeepalive::new();
        if let Some(idle) = config.keepalives_idle {
            keepalive = keepalive.with_time(idle);
        }
        #[cfg(any(target_os = "linux", target_os = "android"))]
        {
            if let Some(interval) = config.keepalives_interval {
                keepalive = keepalive.with_interval(interval);
            }
            if let Some(count) = config.keepalives_count {
                keepalive = keepalive.with_retries(count);
            }
        }
        sock.set_tcp_keepalive(&keepalive).map_err(sock_err)?;
    }
    #[cfg(any(target_os = "linux", target_os = "android"))]
    if let Some(timeout) = config.tcp_user_timeout {
        sock.set_tcp_user_timeout(Some(timeout)).map_err(sock_err)?;
    }
    Ok(())
}

/// One error for all the hosts that were tried.
fn combine(mut failures: Vec<Error>) -> Error {
    match failures.len() {
        0 => Error::new(ErrorKind::Config, "no host to connect to"),
        1 => failures.remove(0),
        _ => {
            let kind = failures
                .last()
                .map(Error::kind)
                .unwrap_or(ErrorKind::Connect);
            let all: Vec<String> = failures.iter().map(ToString::to_string).collect();
            Error::new(kind, format!("every host failed: {}", all.join("; ")))
        }
    }
}
