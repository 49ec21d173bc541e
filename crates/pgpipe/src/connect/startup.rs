//! The startup handshake: StartupMessage, authentication, and the server's
//! parameters up to the first ReadyForQuery.

use bytes::{Bytes, BytesMut};
use pgpipe_proto::auth::{md5, scram};
use pgpipe_proto::backend::{Decoder, Message};
use pgpipe_proto::frontend::Encoder;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use crate::config::{AuthMethod, ChannelBinding, ResolvedConfig};
use crate::connect::require_auth;
use crate::connect::{Password, ServerParameters, Socket};
use crate::error::{message_name, DbError, ErrorKind};
use crate::Error;

/// What the handshake learned about the session.
pub(crate) struct Session {
    pub(crate) process_id: i32,
    /// `None` when the server sent no BackendKeyData.
    pub(crate) secret_key: Option<Bytes>,
    pub(crate) parameters: ServerParameters,
    /// Bytes read past the handshake (normally none).
    pub(crate) leftover: BytesMut,
}

struct Framed<'a> {
    socket: &'a mut Socket,
    decoder: Decoder,
    read_buf: BytesMut,
    write_buf: BytesMut,
}

impl Framed<'_> {
    async fn send(&mut self) -> Result<(), Error> {
        self.socket.write_all(&self.write_buf).await.map_err(|e| {
            Error::new(ErrorKind::Connect, "sending the startup packet").with_source(e)
        })?;
        self.write_buf.clear();
        Ok(())
    }

    async fn recv(&mut self) -> Result<Message, Error> {
        loop {
            if let Some(msg) = self
                .decoder
                .decode(&mut self.read_buf)
                .map_err(|e| Error::protocol(e.to_string()))?
            {
                return Ok(msg);
            }
            self.read_buf.reserve(4096);
            let n = self
                .socket
                .read_buf(&mut self.read_buf)
                .await
                .map_err(|e| {
                    Error::new(ErrorKind::Connect, "reading the server's startup reply")
                        .with_source(e)
                })?;
            if n == 0 {
                return Err(Error::new(
                    ErrorKind::Connect,
                    "the server closed the connection during startup",
                ));
            }
        }
    }
}

/// Runs the handshake on a freshly connected socket.
pub(crate) async fn handshake(
    socket: &mut Socket,
    config: &ResolvedConfig,
    password: &Password<'_>,
    encoder: Encoder,
    decoder: Decoder,
) -> Result<Session, Error> {
    let mut framed = Framed {
        socket,
        decoder,
        read_buf: BytesMut::with_capacity(8192),
        write_buf: BytesMut::with_capacity(256),
    };

    let mut params: Vec<(&str, &str)> = vec![
        ("user", &config.user),
        ("database", &config.dbname),
        // pgpipe decodes text as UTF-8 and sends dates in ISO form; pin both so
        // a server or role default cannot change what the bytes mean.
        ("client_encoding", "UTF8"),
        ("DateStyle", "ISO, MDY"),
    ];
    if let Some(app) = &config.application_name {
        params.push(("application_name", app));
    }
    if let Some(options) = &config.options {
        params.push(("options", options));
    }
    for (k, v) in &config.params {
        params.push((k, v));
    }
    let version = (3 << 16) | i32::from(config.max_protocol_version.minor());
    encoder
        .startup_version(version, &params, &mut framed.write_buf)
        .map_err(|e| {
            Error::new(ErrorKind::Config, "encoding the startup message").with_source(e)
        })?;
    framed.send().await?;

    authenticate(&mut framed, config, password, encoder).await?;

    let mut session = Session {
        process_id: 0,
        secret_key: None,
        parameters: ServerParameters::default(),
        leftover: BytesMut::new(),
    };
    loop {
        match framed.recv().await? {
            Message::BackendKeyData {
                process_id,
                secret_key,
            } => {
                session.process_id = process_id;
                session.secret_key = Some(secret_key);
            }
            Message::ParameterStatus(p) => {
                session.parameters.set(p.name(), p.value());
            }
            Message::NoticeResponse(fields) => {
                if let Ok(notice) = DbError::parse(&fields) {
                    tracing::info!(target: "pgpipe::notice", "{}", notice.message());
                }
            }
            Message::ErrorResponse(fields) => {
                return Err(server_error(&fields, ErrorKind::Connect))
            }
            Message::ReadyForQuery(_) => break,
            other => {
                return Err(Error::protocol(format!(
                    "unexpected message during startup: {}",
                    message_name(&other)
                )))
            }
        }
    }
    session.leftover = framed.read_buf;
    Ok(session)
}

async fn authenticate(
    framed: &mut Framed<'_>,
    config: &ResolvedConfig,
    password: &Password<'_>,
    encoder: Encoder,
) -> Result<(), Error> {
    // Asked only here, when the server wants a password: the password
    // file is not read for a server that never asks.
    let need_password = || {
        password.get().ok_or_else(|| {
            Error::new(
                ErrorKind::Auth,
                format!(
                    "the server asks a password for user {:?} but none was given \
                     (set it in the URL, PGPASSWORD or ~/.pgpass)",
                    config.user
                ),
            )
        })
    };
    let encode_err =
        |e| Error::new(ErrorKind::Auth, "encoding the password message").with_source(e);
    let mut request = framed.recv().await?;
    if let Message::NegotiateProtocolVersion(negotiated) = &request {
        check_negotiated(config, negotiated)?;
        request = framed.recv().await?;
    }
    match request {
        Message::AuthenticationOk => return require_auth::check(config, AuthMethod::None),
        Message::AuthenticationCleartextPassword => {
            require_auth::check(config, AuthMethod::Password)?;
            encoder
                .password(&need_password()?, &mut framed.write_buf)
                .map_err(encode_err)?;
            framed.send().await?;
        }
        Message::AuthenticationMd5Password { salt } => {
            require_auth::check(config, AuthMethod::Md5)?;
            let hash = md5::password_hash(config.user.as_bytes(), &need_password()?, salt);
            encoder
                .password(hash.as_bytes(), &mut framed.write_buf)
                .map_err(encode_err)?;
            framed.send().await?;
        }
        Message::AuthenticationSasl(mechanisms) => {
            require_auth::check(config, AuthMethod::ScramSha256)?;
            let offered: Vec<&str> = mechanisms.iter().collect();
            // Only SCRAM binds to the channel: the server certificate is
            // parsed and hashed here, not for every TLS connect (about
            // 23,000 instructions that trust or password auth never use).
            let channel = tls_server_end_point(framed.socket);
            let binding = choose_binding(config, &offered, channel)?;
            scram_exchange(
                framed,
                &need_password()?,
                config.scram_max_iterations,
                encoder,
                binding,
            )
            .await?;
        }
        Message::ErrorResponse(fields) => return Err(server_error(&fields, ErrorKind::Connect)),
        Message::AuthenticationGss | Message::AuthenticationGssContinue(_) => {
            require_auth::check(config, AuthMethod::Gss)?;
            return Err(unsupported_method());
        }
        Message::AuthenticationSspi => {
            require_auth::check(config, AuthMethod::Sspi)?;
            return Err(unsupported_method());
        }
        Message::AuthenticationKerberosV5 | Message::AuthenticationScmCredential => {
            return Err(unsupported_method())
        }
        other => {
            return Err(Error::protocol(format!(
                "unexpected message during authentication: {}",
                message_name(&other)
            )))
        }
    }
    match framed.recv().await? {
        Message::AuthenticationOk => Ok(()),
        Message::ErrorResponse(fields) => Err(server_error(&fields, ErrorKind::Auth)),
        other => Err(Error::protocol(format!(
            "expected AuthenticationOk, got {}",
            message_name(&other)
        ))),
    }
}

fn unsupported_method() -> Error {
    Error::new(
        ErrorKind::Unsupported,
        "the server asks for Kerberos/GSSAPI/SSPI/SCM authentication, which pgpipe does not support",
    )
}

/// The server answered our protocol request with the newest minor version
/// it speaks (a server older than 18 answers 3.2 this way): go on at that
/// version unless `min_protocol_version` forbids.
fn check_negotiated(
    config: &ResolvedConfig,
    negotiated: &pgpipe_proto::backend::NegotiateProtocolVersion,
) -> Result<(), Error> {
    let asked = config.max_protocol_version.minor();
    let (major, newest) = negotiated.newest_version();
    if let Some(option) = negotiated.unrecognized_options().next() {
        return Err(Error::protocol(format!(
            "the server did not recognize protocol option \"{option}\", which pgpipe never sends"
        )));
    }
    if major != 3 || newest >= asked {
        return Err(Error::protocol(format!(
            "NegotiateProtocolVersion offers {major}.{newest} in answer to a request for 3.{asked}"
        )));
    }
    let min = config.min_protocol_version.minor();
    if newest < min {
        return Err(Error::new(
            ErrorKind::Unsupported,
            format!(
                "the server supports protocol 3.{newest} at most, but min_protocol_version is {}",
                config.min_protocol_version
            ),
        ));
    }
    tracing::debug!(
        "the server speaks protocol 3.{newest}, not 3.{asked}: continuing at 3.{newest}"
    );
    Ok(())
}

/// libpq's choice of SCRAM mechanism and GS2 flag:
///
/// * TLS in use, binding not disabled, server offers SCRAM-SHA-256-PLUS:
///   bind to the certificate (`p=tls-server-end-point`).
/// * Otherwise plain SCRAM-SHA-256, flag `y` over TLS (we could bind but
///   the server did not offer it: lets the server detect a stripped PLUS)
///   and `n` without TLS or with binding disabled.
/// * `channel_binding=require` accepts only the first; a server offering
///   PLUS without TLS is refused (nothing to bind: a downgrade attempt).
fn choose_binding(
    config: &ResolvedConfig,
    offered: &[&str],
    channel: Option<Option<Vec<u8>>>,
) -> Result<scram::ChannelBinding, Error> {
    let plus = offered.contains(&scram::SCRAM_SHA_256_PLUS);
    let plain = offered.contains(&scram::SCRAM_SHA_256);
    let require = config.channel_binding == ChannelBinding::Require;
    let disabled = config.channel_binding == ChannelBinding::Disable;
    let auth_err = |msg: String| Error::new(ErrorKind::Auth, msg);
    match channel {
        None if plus => {
            return Err(auth_err(
                "server offered SCRAM-SHA-256-PLUS authentication over a non-TLS connection".into(),
            ))
        }
        None if require => {
            return Err(auth_err(
                "channel binding required, but TLS is not in use (channel_binding=require)".into(),
            ))
        }
        Some(Some(hash)) if plus && !disabled => {
            return Ok(scram::ChannelBinding::TlsServerEndPoint(hash))
        }
        Some(None) if plus && require => {
            return Err(auth_err(
                "channel binding required, but the server certificate's signature algorithm \
                 (such as Ed25519) defines no hash for tls-server-end-point"
                    .into(),
            ))
        }
        _ if require => {
            return Err(auth_err(format!(
                "channel binding required, but the server offered no mechanism supporting it \
                 (offered: {offered:?})"
            )))
        }
        _ => {}
    }
    if !plain {
        return Err(Error::new(
            ErrorKind::Unsupported,
            format!(
                "the server offers SASL mechanisms {offered:?}; pgpipe supports SCRAM-SHA-256 \
                 and SCRAM-SHA-256-PLUS"
            ),
        ));
    }
    Ok(match channel {
        // TLS without a usable certificate hash: claim no binding support,
        // or a server that offered PLUS would (rightly) suspect a downgrade.
        Some(Some(_)) if !disabled && !plus => scram::ChannelBinding::Unrequested,
        _ => scram::ChannelBinding::Unsupported,
    })
}

async fn scram_exchange(
    framed: &mut Framed<'_>,
    password: &[u8],
    max_iterations: u32,
    encoder: Encoder,
    binding: scram::ChannelBinding,
) -> Result<(), Error> {
    let mut scram = scram::ScramSha256::new(password, binding).max_iterations(max_iterations);
    let mechanism = scram.mechanism();
    tracing::debug!("authenticating with {mechanism}");
    let auth_err = |e: scram::ScramError| {
        Error::new(
            ErrorKind::Auth,
            format!("{mechanism} authentication failed"),
        )
        .with_source(e)
    };
    let encode_err = |e| Error::new(ErrorKind::Auth, "encoding a SASL message").with_source(e);
    encoder
        .sasl_initial_response(scram.mechanism(), scram.message(), &mut framed.write_buf)
        .map_err(encode_err)?;
    framed.send().await?;

    let server_first = match framed.recv().await? {
        Message::AuthenticationSaslContinue(data) => data,
        Message::ErrorResponse(fields) => return Err(server_error(&fields, ErrorKind::Auth)),
        other => {
            return Err(Error::protocol(format!(
                "expected AuthenticationSASLContinue, got {}",
                message_name(&other)
            )))
        }
    };
    scram.update(&server_first).map_err(auth_err)?;
    encoder
        .sasl_response(scram.message(), &mut framed.write_buf)
        .map_err(encode_err)?;
    framed.send().await?;

    let server_final = match framed.recv().await? {
        Message::AuthenticationSaslFinal(data) => data,
        Message::ErrorResponse(fields) => return Err(server_error(&fields, ErrorKind::Auth)),
        other => {
            return Err(Error::protocol(format!(
                "expected AuthenticationSASLFinal, got {}",
                message_name(&other)
            )))
        }
    };
    scram.finish(&server_final).map_err(auth_err)
}

/// A server error during startup. Authentication failures (class 28) are
/// reported as [`ErrorKind::Auth`] with the server's report attached.
fn server_error(fields: &pgpipe_proto::backend::ErrorFields, default: ErrorKind) -> Error {
    match DbError::parse(fields) {
        Ok(db) => {
            let kind = if db.code().code().starts_with("28") {
                ErrorKind::Auth
            } else {
                default
            };
            Error::db(db).with_kind(kind)
        }
        Err(e) => Error::protocol(e),
    }
}

/// The `tls-server-end-point` channel-binding data: `None` without TLS,
/// `Some(None)` when the server certificate's signature algorithm has no
/// defined hash (Ed25519), `Some(Some(hash))` otherwise.
fn tls_server_end_point(socket: &Socket) -> Option<Option<Vec<u8>>> {
    match socket {
        #[cfg(feature = "tls")]
        Socket::Tls(stream) => Some(crate::connect::tls::server_end_point(stream)),
        _ => None,
    }
}
