//! A tiny blocking PostgreSQL client for test setup: startup, trust /
//! cleartext / MD5 / SCRAM authentication, simple queries with text results.
//!
//! Its own framing and message handling are independent of pgpipe's client,
//! so setup works while the client under test is broken; the authentication
//! arithmetic (MD5, SCRAM-SHA-256) is pgpipe-proto's, so logging in to the
//! test cluster exercises it against a real server.

use std::io::{self, Read, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::os::unix::net::UnixStream;
use std::path::PathBuf;
use std::time::Duration;

use pgpipe_proto::auth::md5;
use pgpipe_proto::auth::scram::{ChannelBinding, ScramSha256};

use crate::error::TestkitError;

/// The longest message accepted; setup queries return small results, so a
/// larger length means a broken stream, not data.
const MAX_MESSAGE: usize = 256 * 1024 * 1024;

/// Where a server listens.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Endpoint {
    /// The socket file (`<dir>/.s.PGSQL.<port>`).
    Unix(PathBuf),
    /// Host name or address, and port.
    Tcp(String, u16),
}

impl Endpoint {
    /// `host` starting with `/` is a socket directory, as in libpq.
    pub(crate) fn from_host(host: &str, port: u16) -> Endpoint {
        if host.starts_with('/') {
            Endpoint::Unix(PathBuf::from(host).join(format!(".s.PGSQL.{port}")))
        } else {
            Endpoint::Tcp(host.to_string(), port)
        }
    }
}

impl std::fmt::Display for Endpoint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Endpoint::Unix(path) => write!(f, "{}", path.display()),
            Endpoint::Tcp(host, port) => write!(f, "{host}:{port}"),
        }
    }
}

/// Who logs in where.
#[derive(Debug, Clone)]
pub(crate) struct Login {
    pub endpoint: Endpoint,
    pub user: String,
    pub password: Option<String>,
    pub dbname: String,
    /// Bounds the TCP connect and every socket read and write.
    pub timeout: Duration,
}

enum Stream {
    Tcp(TcpStream),
    Unix(UnixStream),
}

impl Read for Stream {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            Stream::Tcp(s) => s.read(buf),
            Stream::Unix(s) => s.read(buf),
        }
    }
}

impl Write for Stream {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            Stream::Tcp(s) => s.write(buf),
            Stream::Unix(s) => s.write(buf),
        }
    }
    fn flush(&mut self) -> io::Result<()> {
        match self {
            Stream::Tcp(s) => s.flush(),
            Stream::Unix(s) => s.flush(),
        }
    }
}

/// Text rows: one `Vec` per row, `None` for NULL.
pub(crate) type Rows = Vec<Vec<Option<String>>>;

/// One open session.
pub(crate) struct MiniClient {
    stream: Stream,
    where_: String,
    parameters: Vec<(String, String)>,
}

impl MiniClient {
    /// Connects and authenticates; returns once the server is ReadyForQuery.
    pub(crate) fn connect(login: &Login) -> Result<MiniClient, TestkitError> {
        let where_ = format!(
            "{} as {} (database {})",
            login.endpoint, login.user, login.dbname
        );
        let ctx = |e: TestkitError| e.context(format!("connecting to {where_}"));
        let stream = open(&login.endpoint, login.timeout)
            .map_err(|e| ctx(TestkitError::io("connect", e)))?;
        let mut client = MiniClient {
            stream,
            where_: where_.clone(),
            parameters: Vec::new(),
        };
        client.startup(login).map_err(ctx)?;
        Ok(client)
    }

    /// A server parameter reported at startup (server_version, ...).
    pub(crate) fn parameter(&self, name: &str) -> Option<&str> {
        self.parameters
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }

    fn startup(&mut self, login: &Login) -> Result<(), TestkitError> {
        let mut body = 196_608i32.to_be_bytes().to_vec(); // protocol 3.0
        for (k, v) in [
            ("user", login.user.as_str()),
            ("database", login.dbname.as_str()),
            ("client_encoding", "UTF8"),
            ("application_name", "pgpipe-testkit"),
        ] {
            cstr(&mut body, k);
            cstr(&mut body, v);
        }
        body.push(0);
        let mut msg = ((body.len() + 4) as i32).to_be_bytes().to_vec();
        msg.extend_from_slice(&body);
        self.write(&msg)?;

        let mut scram: Option<ScramSha256> = None;
        loop {
            let (tag, body) = self.read()?;
            match tag {
                b'R' => {
                    let code = be_i32(&body, 0)?;
                    let password = || {
                        login.password.clone().ok_or_else(|| {
                            TestkitError::new("the server asks for a password and none was given")
                        })
                    };
                    match code {
                        0 => {}
                        3 => {
                            let pw = password()?;
                            self.send(b'p', &nul_terminated(&pw))?;
                        }
                        5 => {
                            let salt: [u8; 4] = body
                                .get(4..8)
                                .and_then(|s| s.try_into().ok())
                                .ok_or_else(|| TestkitError::new("AuthenticationMD5Password without a salt"))?;
                            let answer = md5::password_hash(
                                login.user.as_bytes(),
                                password()?.as_bytes(),
                                salt,
                            );
                            self.send(b'p', &nul_terminated(&answer))?;
                        }
                        10 => {
                            let offers_scram = body[4..]
                                .split(|&b| b == 0)
                                .any(|m| m == b"SCRAM-SHA-256");
                            if !offers_scram {
                                return Err(TestkitError::new(
                                    "the server offers no SASL mechanism the testkit supports (SCRAM-SHA-256)",
                                ));
                            }
                            let client =
                                ScramSha256::new(password()?.as_bytes(), ChannelBinding::Unsupported);
                            let first = client.message();
                            let mut out = nul_terminated(client.mechanism());
                            out.extend_from_slice(&(first.len() as i32).to_be_bytes());
                            out.extend_from_slice(first);
                            self.send(b'p', &out)?;
                            scram = Some(client);
                        }
                        11 => {
                            let client = scram
                                .as_mut()
                                .ok_or_else(|| TestkitError::new("SASLContinue before SASL started"))?;
                            client
                                .update(&body[4..])
                                .map_err(|e| TestkitError::new(e.to_string()))?;
                            self.send(b'p', client.message())?;
                        }
                        12 => {
                            let client = scram
                                .as_mut()
                                .ok_or_else(|| TestkitError::new("SASLFinal before SASL started"))?;
                            client
                                .finish(&body[4..])
                                .map_err(|e| TestkitError::new(e.to_string()))?;
                        }
                        other => {
                            return Err(TestkitError::new(format!(
                                "the server asks for authentication method {other}, which the testkit's \
                                 setup client does not support (it supports trust, password, md5, scram-sha-256)"
                            )))
                        }
                    }
                }
                b'S' => {
                    let mut parts = body.split(|&b| b == 0);
                    let k = String::from_utf8_lossy(parts.next().unwrap_or_default()).into_owned();
                    let v = String::from_utf8_lossy(parts.next().unwrap_or_default()).into_owned();
                    self.parameters.retain(|(name, _)| *name != k);
                    self.parameters.push((k, v));
                }
                b'K' | b'N' => {}
                b'E' => return Err(server_error(&body)),
                b'Z' => return Ok(()),
                other => return Err(unexpected(other, "during startup")),
            }
        }
    }

    /// Runs `sql` (one or more statements) with the simple query protocol and
    /// returns the rows of every result, in order. The first error is returned
    /// after the server is ready again.
    pub(crate) fn simple_query(&mut self, sql: &str) -> Result<Rows, TestkitError> {
        let where_ = self.where_.clone();
        let ctx = |e: TestkitError| e.context(format!("running `{}` on {where_}", abbreviate(sql)));
        self.send(b'Q', &nul_terminated(sql)).map_err(ctx)?;
        let mut rows = Vec::new();
        let mut error = None;
        loop {
            let (tag, body) = self.read().map_err(ctx)?;
            match tag {
                b'D' => rows.push(parse_data_row(&body).map_err(ctx)?),
                b'E' => error = error.or(Some(server_error(&body))),
                // COPY FROM STDIN has no data here: refuse it rather than hang.
                b'G' => self
                    .send(
                        b'f',
                        &nul_terminated("the testkit's setup client cannot COPY FROM STDIN"),
                    )
                    .map_err(ctx)?,
                b'Z' => break,
                // RowDescription, CommandComplete, EmptyQuery, notices, COPY OUT data...
                _ => {}
            }
        }
        match error {
            Some(e) => Err(ctx(e)),
            None => Ok(rows),
        }
    }

    fn send(&mut self, tag: u8, body: &[u8]) -> Result<(), TestkitError> {
        let mut msg = Vec::with_capacity(body.len() + 5);
        msg.push(tag);
        msg.extend_from_slice(&((body.len() + 4) as i32).to_be_bytes());
        msg.extend_from_slice(body);
        self.write(&msg)
    }

    fn write(&mut self, bytes: &[u8]) -> Result<(), TestkitError> {
        self.stream
            .write_all(bytes)
            .and_then(|_| self.stream.flush())
            .map_err(|e| TestkitError::io("write", e))
    }

    fn read(&mut self) -> Result<(u8, Vec<u8>), TestkitError> {
        let mut header = [0u8; 5];
        self.stream.read_exact(&mut header).map_err(read_error)?;
        let len = i32::from_be_bytes([header[1], header[2], header[3], header[4]]);
        let len = usize::try_from(len)
            .ok()
            .filter(|l| (4..=MAX_MESSAGE).contains(l))
            .ok_or_else(|| {
                TestkitError::new(format!(
                    "message '{}' with a bad length {len}",
                    header[0] as char
                ))
            })?;
        let mut body = vec![0u8; len - 4];
        self.stream.read_exact(&mut body).map_err(read_error)?;
        Ok((header[0], body))
    }
}

impl Drop for MiniClient {
    fn drop(&mut self) {
        // Terminate, so the server logs no "unexpected EOF" for every setup query.
        let _ = self.stream.write_all(&[b'X', 0, 0, 0, 4]);
    }
}

fn open(endpoint: &Endpoint, timeout: Duration) -> io::Result<Stream> {
    let stream = match endpoint {
        Endpoint::Unix(path) => {
            // A local connect does not block on the network; only reads can hang.
            let s = UnixStream::connect(path)?;
            s.set_read_timeout(Some(timeout))?;
            s.set_write_timeout(Some(timeout))?;
            Stream::Unix(s)
        }
        Endpoint::Tcp(host, port) => {
            let mut last = io::Error::new(
                io::ErrorKind::NotFound,
                format!("`{host}` resolves to no address"),
            );
            let mut found = None;
            for addr in (host.as_str(), *port).to_socket_addrs()? {
                match TcpStream::connect_timeout(&addr, timeout) {
                    Ok(s) => {
                        found = Some(s);
                        break;
                    }
                    Err(e) => last = e,
                }
            }
            let s = found.ok_or(last)?;
            s.set_read_timeout(Some(timeout))?;
            s.set_write_timeout(Some(timeout))?;
            s.set_nodelay(true)?;
            Stream::Tcp(s)
        }
    };
    Ok(stream)
}

fn read_error(e: io::Error) -> TestkitError {
    match e.kind() {
        io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut => {
            TestkitError::new("the server did not answer in time")
        }
        io::ErrorKind::UnexpectedEof => TestkitError::new("the server closed the connection"),
        _ => TestkitError::io("read", e),
    }
}

fn unexpected(tag: u8, when: &str) -> TestkitError {
    TestkitError::new(format!(
        "unexpected message '{}' {when}",
        tag.escape_ascii()
    ))
}

/// ErrorResponse -> TestkitError with SQLSTATE, message, detail and hint.
fn server_error(body: &[u8]) -> TestkitError {
    let mut code = String::new();
    let mut parts = Vec::new();
    for field in body.split(|&b| b == 0).filter(|f| !f.is_empty()) {
        let value = String::from_utf8_lossy(&field[1..]).into_owned();
        match field[0] {
            b'C' => code = value,
            b'M' => parts.insert(0, value),
            b'D' => parts.push(format!("DETAIL: {value}")),
            b'H' => parts.push(format!("HINT: {value}")),
            _ => {}
        }
    }
    let message = format!("server error {code}: {}", parts.join("; "));
    TestkitError::server(message, code)
}

fn parse_data_row(body: &[u8]) -> Result<Vec<Option<String>>, TestkitError> {
    let bad = || TestkitError::new("malformed DataRow");
    let count = body.get(0..2).ok_or_else(bad)?;
    let count = i16::from_be_bytes([count[0], count[1]]);
    let mut pos = 2;
    let mut row = Vec::new();
    for _ in 0..count.max(0) {
        let len = be_i32(body, pos).map_err(|_| bad())?;
        pos += 4;
        if len < 0 {
            row.push(None);
            continue;
        }
        let end = pos
            .checked_add(len as usize)
            .filter(|&e| e <= body.len())
            .ok_or_else(bad)?;
        row.push(Some(String::from_utf8_lossy(&body[pos..end]).into_owned()));
        pos = end;
    }
    Ok(row)
}

fn be_i32(body: &[u8], at: usize) -> Result<i32, TestkitError> {
    body.get(at..at + 4)
        .map(|b| i32::from_be_bytes([b[0], b[1], b[2], b[3]]))
        .ok_or_else(|| TestkitError::new("message too short"))
}

fn cstr(out: &mut Vec<u8>, s: &str) {
    out.extend_from_slice(s.as_bytes());
    out.push(0);
}

fn nul_terminated(s: &str) -> Vec<u8> {
    let mut v = Vec::with_capacity(s.len() + 1);
    cstr(&mut v, s);
    v
}

/// The first line of `sql`, at most 80 characters, for error messages.
fn abbreviate(sql: &str) -> String {
    let line = sql.trim().lines().next().unwrap_or_default();
    let mut short: String = line.chars().take(80).collect();
    if short.len() < sql.trim().len() {
        short.push_str("...");
    }
    short
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn error_fields_are_kept() {
        let body = b"SFATAL\0C28P01\0Mpassword authentication failed for user \"x\"\0\0";
        let e = server_error(body);
        assert_eq!(e.code(), Some("28P01"));
        assert!(
            e.to_string().contains("password authentication failed"),
            "{e}"
        );
    }

    #[test]
    fn data_rows_with_nulls_and_garbage() {
        let mut body = vec![0, 2];
        body.extend_from_slice(&2i32.to_be_bytes());
        body.extend_from_slice(b"hi");
        body.extend_from_slice(&(-1i32).to_be_bytes());
        assert_eq!(
            parse_data_row(&body).unwrap(),
            vec![Some("hi".to_string()), None]
        );
        assert!(parse_data_row(&[0, 1, 0, 0, 0, 9, b'x']).is_err());
        assert!(parse_data_row(&[0]).is_err());
    }

    #[test]
    fn abbreviate_long_sql() {
        assert_eq!(abbreviate("SELECT 1"), "SELECT 1");
        assert_eq!(abbreviate("SELECT 1;\nSELECT 2"), "SELECT 1;...");
    }
}
