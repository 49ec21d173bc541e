//! Cancelling a running query: CancelRequest on a new connection to the same
//! server, and client-side query timeouts built on it.

use std::time::Duration;

use bytes::BytesMut;
use pgpipe_proto::frontend;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpStream, UnixStream};

use crate::config::Host;
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
    pub(crate) secret_key: i32,
    pub(crate) timeout: Option<Duration>,
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
        let mut request = BytesMut::with_capacity(16);
        frontend::cancel_request(self.process_id, self.secret_key, &mut request);
        let connect_err = |e| {
            Error::new(ErrorKind::Connect, "connecting to send a cancel request").with_source(e)
        };
        let io_err = |e| Error::io("sending a cancel request", e);
        let mut sink = [0u8; 64];
        match &self.host {
            Host::Tcp(host) => {
                let mut s = TcpStream::connect((host.as_str(), self.port))
                    .await
                    .map_err(connect_err)?;
                s.write_all(&request).await.map_err(io_err)?;
                // The server answers nothing and closes when done.
                while s.read(&mut sink).await.map_err(io_err)? > 0 {}
            }
            Host::Unix(dir) => {
                let path = dir.join(format!(".s.PGSQL.{}", self.port));
                let mut s = UnixStream::connect(&path).await.map_err(connect_err)?;
                s.write_all(&request).await.map_err(io_err)?;
                while s.read(&mut sink).await.map_err(io_err)? > 0 {}
            }
        }
        Ok(())
    }
}
