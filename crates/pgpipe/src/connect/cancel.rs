//! Cancelling a running query: CancelRequest on a new connection to the same
//! server (over TLS when the connection used it, as libpq 17 does), and
//! client-side query timeouts built on it.

use std::time::Duration;

#[cfg(feature = "tls")]
use std::sync::Arc;

use bytes::{Bytes, BytesMut};
use pgpipe_proto::frontend;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::net::{TcpStream, UnixStream};

use crate::config::{Host, SslMode};
use crate::error::ErrorKind;
use crate::Error;

/// Bound on the whole cancel exchange when no connect timeout is set.
const DEFAULT_CANCEL_TIMEOUT: Duration = Duration::from_secs(10);

/// Cancels whatever the connection it came from is running, from anywhere
/// (another task, a signal handler's task, a watchdog). Get one with
/// [`Client::cancel_token`](crate::Client::cancel_token).
///
/// A cancel is not aimed at one query: it interrupts what the backend is
/// executing when it arrives, or nothing if the backend is idle. For a
/// cancel that targets one query and can never hit the next one, use
/// [`Client::with_timeout`](crate::Client::with_timeout).
///
/// ```no_run
/// # async fn f(client: &pgpipe::Client) -> Result<(), pgpipe::Error> {
/// let token = client.cancel_token();
/// tokio::spawn(async move {
///     tokio::time::sleep(std::time::Duration::from_secs(5)).await;
///     let _ = token.cancel().await;
/// });
/// let err = client.execute("SELECT pg_sleep(60)", ()).await.unwrap_err();
/// assert_eq!(err.code(), Some(&pgpipe::SqlState::QUERY_CANCELED));
/// # Ok(()) }
/// ```
#[derive(Debug, Clone)]
pub struct CancelToken {
    pub(crate) host: Host,
    pub(crate) port: u16,
    pub(crate) process_id: i32,
    /// The key from BackendKeyData: 4 bytes (protocol 3.0) to 256 (3.2);
    /// `None` when the server sent none (cancelling is then impossible).
    pub(crate) secret_key: Option<Bytes>,
    pub(crate) timeout: Option<Duration>,
    /// How the connection set up TLS, repeated for the cancel connection.
    pub(crate) tls: Option<CancelTls>,
}

/// The TLS settings of the connection a [`CancelToken`] came from.
#[derive(Clone)]
pub(crate) struct CancelTls {
    #[cfg(feature = "tls")]
    pub(crate) setup: Arc<crate::connect::tls::TlsSetup>,
    pub(crate) direct: bool,
    pub(crate) ssl_mode: SslMode,
}

impl std::fmt::Debug for CancelTls {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CancelTls")
            .field("direct", &self.direct)
            .field("ssl_mode", &self.ssl_mode)
            .finish()
    }
}

impl CancelToken {
    /// Sends the CancelRequest and waits (bounded by the connect timeout,
    /// 10 s if none) until the server has processed it: it closes the
    /// cancel connection after signalling the backend.
    pub async fn cancel(&self) -> Result<(), Error> {
        let limit = self.timeout.unwrap_or(DEFAULT_CANCEL_TIMEOUT);
        match tokio::time::timeout(limit, self.exchange()).await {
            Ok(r) => r,
            Err(_) => Err(Error::new(
                ErrorKind::Timeout,
                format!("sending a cancel request timed out after {limit:?}"),
            )),
        }
    }

    async fn exchange(&self) -> Result<(), Error> {
        let key = self.secret_key.as_ref().ok_or_else(|| {
            Error::new(
                ErrorKind::InvalidUse,
                "cannot cancel: the server sent no cancel key (BackendKeyData) for this connection",
            )
        })?;
        let mut request = BytesMut::with_capacity(12 + key.len());
        frontend::cancel_request(self.process_id, key, &mut request);
        let connect_err = |e| {
            Error::new(ErrorKind::Connect, "connecting to send a cancel request").with_source(e)
        };
        match &self.host {
            Host::Tcp(host) => {
                let tcp = TcpStream::connect((host.as_str(), self.port))
                    .await
                    .map_err(connect_err)?;
                let _ = tcp.set_nodelay(true);
                match &self.tls {
                    Some(tls) => self.send_over_tls(tls, tcp, &request).await,
                    None => send(tcp, &request).await,
                }
            }
            Host::Unix(dir) => {
                let path = dir.join(format!(".s.PGSQL.{}", self.port));
                send(
                    UnixStream::connect(&path).await.map_err(connect_err)?,
                    &request,
                )
                .await
            }
        }
    }

    /// The cancel connection negotiates TLS as the main one did: the key
    /// must not travel in clear text where the session was protected.
    #[cfg(feature = "tls")]
    async fn send_over_tls(
        &self,
        tls: &CancelTls,
        mut tcp: TcpStream,
        request: &[u8],
    ) -> Result<(), Error> {
        use crate::connect::sslmode::{ssl_request, SslAnswer};
        if !tls.direct {
            match ssl_request(&mut tcp).await? {
                SslAnswer::Accepted => {}
                // The server did TLS a moment ago; under prefer/allow libpq
                // would go on in clear, stricter modes refuse.
                SslAnswer::Refused if matches!(tls.ssl_mode, SslMode::Prefer | SslMode::Allow) => {
                    return send(tcp, request).await
                }
                SslAnswer::Refused => {
                    return Err(Error::new(
                        ErrorKind::Tls,
                        format!(
                        "the server refused TLS for the cancel request, which sslmode={} requires",
                        tls.ssl_mode
                    ),
                    ))
                }
            }
        }
        let stream = tls.setup.handshake(tcp, tls.direct).await?;
        send(stream, request).await
    }

    #[cfg(not(feature = "tls"))]
    async fn send_over_tls(
        &self,
        _tls: &CancelTls,
        tcp: TcpStream,
        request: &[u8],
    ) -> Result<(), Error> {
        send(tcp, request).await
    }
}

/// Writes the request, then waits until the server closes: it answers
/// nothing and closes once it has signalled the backend.
async fn send<S: AsyncRead + AsyncWrite + Unpin>(mut s: S, request: &[u8]) -> Result<(), Error> {
    let io_err = |e| Error::io("sending a cancel request", e);
    s.write_all(request).await.map_err(io_err)?;
    s.flush().await.map_err(io_err)?;
    let mut sink = [0u8; 64];
    loop {
        match s.read(&mut sink).await {
            Ok(0) => return Ok(()),
            Ok(_) => {}
            // A TLS server closing without close_notify is still "done".
            Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => return Ok(()),
            Err(e) => return Err(io_err(e)),
        }
    }
}

impl CancelToken {
    /// The protocol 3.0 view of the cancel key (the first four bytes as a
    /// big-endian integer), 0 when there is none.
    pub(crate) fn legacy_secret_key(&self) -> i32 {
        match self.secret_key.as_deref() {
            Some([a, b, c, d, ..]) => i32::from_be_bytes([*a, *b, *c, *d]),
            _ => 0,
        }
    }
}
