//! The startup handshake: StartupMessage, authentication, and the server's
//! parameters up to the first ReadyForQuery.

use std::collections::HashMap;

use bytes::BytesMut;
use pgpipe_proto::auth::{md5, scram};
use pgpipe_proto::backend::{Decoder, Message};
use pgpipe_proto::frontend::Encoder;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use crate::config::ResolvedConfig;
use crate::driver::Socket;
use crate::error::{DbError, ErrorKind};
use crate::Error;

/// What the handshake learned about the session.
pub(crate) struct Session {
    pub(crate) process_id: i32,
    pub(crate) secret_key: i32,
    pub(crate) parameters: HashMap<String, String>,
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
    password: Option<&[u8]>,
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
    encoder
        .startup(&params, &mut framed.write_buf)
        .map_err(|e| {
            Error::new(ErrorKind::Config, "encoding the startup message").with_source(e)
        })?;
    framed.send().await?;

    authenticate(&mut framed, config, password, encoder).await?;

    let mut session = Session {
        process_id: 0,
        secret_key: 0,
        parameters: HashMap::new(),
        leftover: BytesMut::new(),
    };
    loop {
        match framed.recv().await? {
            Message::BackendKeyData {
                process_id,
                secret_key,
            } => {
                session.process_id = process_id;
                session.secret_key = secret_key;
            }
            Message::ParameterStatus(p) => {
                session
                    .parameters
                    .insert(p.name().to_owned(), p.value().to_owned());
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
    password: Option<&[u8]>,
    encoder: Encoder,
) -> Result<(), Error> {
    let need_password = || {
        password.ok_or_else(|| {
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
    match framed.recv().await? {
        Message::AuthenticationOk => return Ok(()),
        Message::AuthenticationCleartextPassword => {
            encoder
                .password(need_password()?, &mut framed.write_buf)
                .map_err(encode_err)?;
            framed.send().await?;
        }
        Message::AuthenticationMd5Password { salt } => {
            let hash = md5::password_hash(config.user.as_bytes(), need_password()?, salt);
            encoder
                .password(hash.as_bytes(), &mut framed.write_buf)
                .map_err(encode_err)?;
            framed.send().await?;
        }
        Message::AuthenticationSasl(mechanisms) => {
            if !mechanisms.iter().any(|m| m == scram::SCRAM_SHA_256) {
                let offered: Vec<_> = mechanisms.iter().collect();
                return Err(Error::new(
                    ErrorKind::Auth,
                    format!("the server offers SASL mechanisms {offered:?}; pgpipe supports SCRAM-SHA-256"),
                ));
            }
            scram_exchange(framed, need_password()?, config.scram_max_iterations, encoder).await?;
        }
        Message::ErrorResponse(fields) => return Err(server_error(&fields, ErrorKind::Connect)),
        Message::AuthenticationKerberosV5
        | Message::AuthenticationScmCredential
        | Message::AuthenticationGss
        | Message::AuthenticationSspi
        | Message::AuthenticationGssContinue(_) => {
            return Err(Error::new(
                ErrorKind::Unsupported,
                "the server asks for Kerberos/GSSAPI/SSPI/SCM authentication, which pgpipe does not support",
            ))
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

async fn scram_exchange(
    framed: &mut Framed<'_>,
    password: &[u8],
    max_iterations: u32,
    encoder: Encoder,
) -> Result<(), Error> {
    let auth_err = |e: scram::ScramError| {
        Error::new(ErrorKind::Auth, "SCRAM-SHA-256 authentication failed").with_source(e)
    };
    let encode_err = |e| Error::new(ErrorKind::Auth, "encoding a SASL message").with_source(e);
    let mut scram = scram::ScramSha256::new(password, scram::ChannelBinding::Unsupported)
        .max_iterations(max_iterations);
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

pub(crate) fn message_name(msg: &Message) -> &'static str {
    pgpipe_proto::backend::tag::name(msg.tag()).unwrap_or("an unknown message")
}
