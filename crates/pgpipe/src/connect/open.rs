//! Opening one authenticated session: reach a host, negotiate TLS as
//! `sslmode` asks, run the startup handshake. What the caller gets back is
//! the stream and the startup facts; starting the driver is `client/`'s.

use bytes::BytesMut;
use pgpipe_proto::backend::Decoder;
use pgpipe_proto::frontend::Encoder;
use tokio::net::{TcpStream, UnixStream};

use std::time::Instant;

use crate::config::{Host, LoadBalanceHosts, QueryMode, ResolvedConfig, SslMode, Target};
use crate::connect::refusals;
use crate::connect::sslmode::{self, AttemptFailure, Transport};
use crate::connect::{handshake, CancelTls, CancelToken, Password, Socket};
use crate::error::ErrorKind;
use crate::Error;

/// An authenticated session, ready for a driver.
pub(crate) struct Opened {
    pub(crate) socket: Socket,
    /// The server's parameters (ParameterStatus) at startup.
    pub(crate) parameters: crate::connect::ServerParameters,
    /// Where and how to send a CancelRequest for this session.
    pub(crate) cancel: CancelToken,
    pub(crate) encoder: Encoder,
    pub(crate) decoder: Decoder,
    /// Bytes read past the handshake (normally none).
    pub(crate) leftover: BytesMut,
}

/// The indices of the hosts in the order to try them
/// (`load_balance_hosts`).
pub(crate) fn order(resolved: &ResolvedConfig) -> Vec<usize> {
    let mut order: Vec<usize> = (0..resolved.targets.len()).collect();
    if resolved.load_balance_hosts == LoadBalanceHosts::Random {
        shuffle(&mut order);
    }
    order
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

pub(crate) fn check_supported(config: &ResolvedConfig) -> Result<(), Error> {
    if config.query_mode == QueryMode::Simple {
        return Err(Error::new(
            ErrorKind::Config,
            "query_mode=simple is not supported yet; use cached (the default) or unnamed",
        ));
    }
    Ok(())
}

/// A target as an address to show in messages.
pub(crate) fn describe(target: &Target) -> String {
    Described(target).to_string()
}

/// [`describe`] without the `String`: formatted only when a message that
/// shows it is (the debug logs are off in most processes, and a connect
/// that succeeds shows no error).
struct Described<'a>(&'a Target);

impl std::fmt::Display for Described<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let target = self.0;
        match &target.host {
            Host::Tcp(h) if h.contains(':') => write!(f, "[{h}]:{}", target.port),
            Host::Tcp(h) => write!(f, "{h}:{}", target.port),
            Host::Unix(dir) => write!(f, "{}/.s.PGSQL.{}", dir.display(), target.port),
        }
    }
}

/// Opens an authenticated session on `target`, trying the transports
/// `sslmode` allows in turn; `password` is asked only if the server wants
/// one.
pub(crate) async fn open(
    config: &ResolvedConfig,
    target: &Target,
    password: &Password<'_>,
) -> Result<Opened, Error> {
    let where_ = Described(target);
    let unix = matches!(target.host, Host::Unix(_));
    let refused_recently = match &target.host {
        Host::Tcp(host) if config.ssl_mode == SslMode::Prefer => {
            refusals::shared().refused(host, target.port, Instant::now())
        }
        _ => false,
    };
    if refused_recently {
        tracing::debug!(
            "sslmode=prefer: {where_} refused TLS less than {:?} ago; not asking again",
            refusals::REMEMBER_FOR
        );
    }
    let plan = sslmode::plan(
        config.ssl_mode,
        config.ssl_negotiation,
        unix,
        refused_recently,
    );
    let mut result = Err(Error::new(ErrorKind::Connect, "no connection attempt"));
    for (i, transport) in plan.iter().enumerate() {
        tracing::debug!(
            "connecting to {where_}: sslmode={}, attempt {} of {}: {transport:?}",
            config.ssl_mode,
            i + 1,
            plan.len()
        );
        match bounded_attempt(config, target, password, *transport).await {
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
    password: &Password<'_>,
    transport: Transport,
) -> Result<Opened, AttemptFailure> {
    let attempt = attempt(config, target, password, transport);
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
    password: &Password<'_>,
    transport: Transport,
) -> Result<Opened, AttemptFailure> {
    let (mut socket, tls) = open_transport(config, target, transport).await?;
    let tls_used = socket.is_tls();
    let encoder = Encoder::default();
    let decoder = Decoder::new(config.max_message_size);
    let startup = handshake(&mut socket, config, password, encoder, decoder)
        .await
        .map_err(|e| AttemptFailure::other(e, tls_used))?;
    let cancel = CancelToken {
        host: target.host.clone(),
        port: target.port,
        process_id: startup.process_id,
        secret_key: startup.secret_key,
        timeout: config.connect_timeout,
        tls: tls.filter(|_| tls_used),
    };
    Ok(Opened {
        socket,
        parameters: startup.parameters,
        cancel,
        encoder,
        decoder,
        leftover: startup.leftover,
    })
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
    let setup = TlsSetup::shared(config, &host).map_err(plain_failure)?;
    let direct = transport == Transport::Direct;
    if let Transport::SslRequest { fallback_plain } = transport {
        let answer = ssl_request(&mut tcp).await.map_err(plain_failure)?;
        remember(target, &answer);
        match answer {
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
        setup,
        direct,
        ssl_mode: config.ssl_mode,
    };
    Ok((Socket::Tls(Box::new(stream)), Some(cancel)))
}

#[cfg(not(feature = "tls"))]
async fn start_tls(
    config: &ResolvedConfig,
    target: &Target,
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
        let answer = ssl_request(&mut tcp).await.map_err(plain_failure)?;
        remember(target, &answer);
        if answer == SslAnswer::Refused {
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

/// Keeps the answer to SSLRequest for `prefer`'s next connects (see
/// `refusals`).
fn remember(target: &Target, answer: &sslmode::SslAnswer) {
    let Host::Tcp(host) = &target.host else {
        return;
    };
    match answer {
        sslmode::SslAnswer::Refused => refusals::shared().record(host, target.port, Instant::now()),
        sslmode::SslAnswer::Accepted => refusals::shared().forget(host, target.port),
    }
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
pub(crate) fn combine(mut failures: Vec<Error>) -> Error {
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
