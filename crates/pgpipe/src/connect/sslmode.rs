//! libpq's `sslmode` as a plan of connection attempts, and the SSLRequest
//! exchange that starts TLS on a fresh TCP connection.
//!
//! | sslmode | first attempt | on `N` to SSLRequest | retried once, on a new connection |
//! | --- | --- | --- | --- |
//! | `disable` | plain | - | never |
//! | `allow` | plain | - | with TLS (as `require`), if the server refused the plain session during startup |
//! | `prefer` (default) | SSLRequest | plain on the same connection | plain, if TLS was set up and the handshake or startup then failed |
//! | `require`, `verify-ca`, `verify-full` | SSLRequest (or direct TLS) | error | never |
//!
//! Unix-domain sockets never use TLS, whatever the mode, as in libpq.
//!
//! Unlike libpq, `prefer` skips the SSLRequest to a host that answered `N`
//! within the last minute (see `refusals`) and goes plain at once, as the
//! `N` would have made it; the other modes always ask.

use bytes::BytesMut;
use pgpipe_proto::frontend;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use crate::config::{SslMode, SslNegotiation};
use crate::error::ErrorKind;
use crate::Error;

/// How one connection attempt sets up its transport.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Transport {
    /// No TLS.
    Plain,
    /// SSLRequest first; `fallback_plain` continues without TLS when the
    /// server answers `N` (prefer), otherwise that is an error.
    SslRequest { fallback_plain: bool },
    /// TLS from the first byte, ALPN `postgresql` required (PostgreSQL 17).
    Direct,
}

/// The attempts to make, in order, for one target; `refused_recently`:
/// the host answered `N` to SSLRequest a short while ago (only `prefer`
/// acts on it, by not asking again).
pub(crate) fn plan(
    mode: SslMode,
    negotiation: SslNegotiation,
    unix: bool,
    refused_recently: bool,
) -> Vec<Transport> {
    if unix {
        if mode != SslMode::Disable {
            tracing::debug!(
                "sslmode={mode}: Unix-domain sockets never use TLS (as in libpq); connecting plain"
            );
        }
        return vec![Transport::Plain];
    }
    let tls = match negotiation {
        SslNegotiation::Direct => Transport::Direct,
        SslNegotiation::Postgres => Transport::SslRequest {
            fallback_plain: false,
        },
    };
    match mode {
        SslMode::Disable => vec![Transport::Plain],
        SslMode::Allow => vec![Transport::Plain, tls],
        SslMode::Prefer if refused_recently => vec![Transport::Plain],
        SslMode::Prefer => vec![
            Transport::SslRequest {
                fallback_plain: true,
            },
            Transport::Plain,
        ],
        SslMode::Require | SslMode::VerifyCa | SslMode::VerifyFull => vec![tls],
    }
}

/// Whether a failed attempt is one libpq retries with the next transport:
/// `allow` retries when the server refused the plain session (an error
/// during startup); `prefer` when TLS was in use and the handshake or the
/// startup failed. Never for timeouts, unreachable hosts or protocol errors.
pub(crate) fn retry_next(mode: SslMode, failure: &AttemptFailure) -> bool {
    match mode {
        SslMode::Allow => !failure.tls_used && failure.server_refused,
        SslMode::Prefer => failure.tls_used && (failure.server_refused || failure.tls_failed),
        _ => false,
    }
}

/// An attempt's error with what is needed to decide on a retry.
#[derive(Debug)]
pub(crate) struct AttemptFailure {
    pub(crate) error: Error,
    /// TLS had been started (SSLRequest answered `S`, or direct).
    pub(crate) tls_used: bool,
    /// The TLS handshake itself failed (certificate, ALPN, ...).
    pub(crate) tls_failed: bool,
    /// The server sent an ErrorResponse during startup (e.g. no pg_hba.conf
    /// entry for an unencrypted connection, a wrong password).
    pub(crate) server_refused: bool,
}

impl AttemptFailure {
    pub(crate) fn other(error: Error, tls_used: bool) -> AttemptFailure {
        AttemptFailure {
            server_refused: error.is_db()
                || (error.kind() == ErrorKind::Auth && error.as_db_error().is_some()),
            error,
            tls_used,
            tls_failed: false,
        }
    }
}

/// The server's answer to SSLRequest.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum SslAnswer {
    /// `S`: go ahead with the TLS handshake.
    Accepted,
    /// `N`: the server does not do TLS.
    Refused,
}

/// Sends SSLRequest and reads the one-byte answer.
///
/// Hostile-server rules: bytes after `S` that arrive before our handshake
/// could be injected by a man in the middle and would be taken as TLS-protected
/// (CVE-2021-23222): refused. An ErrorResponse (`E`) is not shown, since the
/// server is not authenticated yet (CVE-2024-10977): it only means "no TLS".
/// Anything else is a protocol error.
pub(crate) async fn ssl_request(tcp: &mut TcpStream) -> Result<SslAnswer, Error> {
    let mut request = BytesMut::with_capacity(8);
    frontend::ssl_request(&mut request);
    tcp.write_all(&request)
        .await
        .map_err(|e| Error::new(ErrorKind::Connect, "sending SSLRequest").with_source(e))?;
    // Read more than one byte on purpose: anything beyond the answer that
    // is already here was sent before the handshake.
    let mut answer = [0u8; 64];
    let n = tcp.read(&mut answer).await.map_err(|e| {
        Error::new(ErrorKind::Connect, "reading the answer to SSLRequest").with_source(e)
    })?;
    match (n, answer[0]) {
        (0, _) => Err(Error::new(
            ErrorKind::Connect,
            "the server closed the connection in answer to SSLRequest",
        )),
        (1, b'S') => Ok(SslAnswer::Accepted),
        (_, b'S') => Err(Error::protocol(format!(
            "received {} bytes of unencrypted data after the server's SSL response \
             (possible man-in-the-middle injection); the connection is refused",
            n - 1
        ))),
        (1, b'N') => Ok(SslAnswer::Refused),
        (_, b'N') => Err(Error::protocol(
            "received unexpected data after the server's refusal of SSL",
        )),
        (_, b'E') => Err(Error::new(
            ErrorKind::Tls,
            "server does not support TLS: it sent an error response to SSLRequest \
             (its text is not shown: the server is not authenticated at this point)",
        )),
        (_, other) => Err(Error::protocol(format!(
            "unexpected answer to SSLRequest: byte 0x{other:02x} (expected 'S' or 'N')"
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plans_follow_libpq() {
        use SslNegotiation::*;
        let tls = Transport::SslRequest {
            fallback_plain: false,
        };
        assert_eq!(
            plan(SslMode::Disable, Postgres, false, false),
            [Transport::Plain]
        );
        assert_eq!(
            plan(SslMode::Allow, Postgres, false, false),
            [Transport::Plain, tls]
        );
        assert_eq!(
            plan(SslMode::Prefer, Postgres, false, false),
            [
                Transport::SslRequest {
                    fallback_plain: true
                },
                Transport::Plain
            ]
        );
        assert_eq!(plan(SslMode::Require, Postgres, false, false), [tls]);
        assert_eq!(
            plan(SslMode::VerifyFull, Direct, false, false),
            [Transport::Direct]
        );
        assert_eq!(
            plan(SslMode::VerifyFull, Postgres, true, false),
            [Transport::Plain]
        );
    }

    #[test]
    fn a_remembered_refusal_only_spares_prefer_the_question() {
        use SslNegotiation::*;
        assert_eq!(
            plan(SslMode::Prefer, Postgres, false, true),
            [Transport::Plain]
        );
        let tls = Transport::SslRequest {
            fallback_plain: false,
        };
        for mode in [SslMode::Require, SslMode::VerifyCa, SslMode::VerifyFull] {
            assert_eq!(plan(mode, Postgres, false, true), [tls], "{mode}");
            assert_eq!(plan(mode, Direct, false, true), [Transport::Direct]);
        }
        assert_eq!(
            plan(SslMode::Allow, Postgres, false, true),
            [Transport::Plain, tls]
        );
        assert_eq!(
            plan(SslMode::Disable, Postgres, false, true),
            [Transport::Plain]
        );
    }
}
