//! The `raw` floor: a minimal client with its own few lines of protocol
//! code. Trust (or cleartext password) startup, the statement prepared once,
//! then pre-encoded Bind/Execute/Sync requests written in large coalesced
//! writes; replies are read in large reads and parsed in place
//! (ReadyForQuery ends a request; a point select's id and value are
//! compared; a `rows-*` row has every value decoded and checked as the
//! drivers check theirs).
//! For N concurrent "tasks" it keeps N requests outstanding.

use std::pin::Pin;
use std::time::Duration;

use bytes::{Buf, BufMut, BytesMut};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};

pub mod copy;
mod copy_wire;
mod drive;
mod rows;
mod spec;

pub use copy_wire::encoded_rows;
pub use rows::RowsTable;
pub use spec::{RawCheck, RawSpec};

use crate::error::BenchError;
use crate::shape::Shape;
use crate::workload::Workload;

trait Stream: AsyncRead + AsyncWrite + Send + Unpin {}
impl<T: AsyncRead + AsyncWrite + Send + Unpin> Stream for T {}

const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
const INT4_OID: u32 = 23;

/// One raw connection, ready to send the workload's requests.
pub struct RawConn {
    stream: Pin<Box<dyn Stream>>,
    rbuf: BytesMut,
    wbuf: BytesMut,
    /// One encoded request (Bind/Execute/Sync, with Parse when unprepared).
    template: Vec<u8>,
    /// Where the int4 key sits in `template`, for point selects.
    key_at: Option<usize>,
    spec: RawSpec,
}

/// The workload and buffer sizes; the socket is a trait object with no `Debug`.
impl std::fmt::Debug for RawConn {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RawConn")
            .field("spec", &self.spec)
            .field("read_buffered", &self.rbuf.len())
            .field("write_buffered", &self.wbuf.len())
            .finish_non_exhaustive()
    }
}

fn put_cstr(buf: &mut BytesMut, s: &str) {
    buf.put_slice(s.as_bytes());
    buf.put_u8(0);
}

/// Appends a message: tag, length, then what `body` writes.
fn message(buf: &mut BytesMut, tag: u8, body: impl FnOnce(&mut BytesMut)) {
    buf.put_u8(tag);
    let at = buf.len();
    buf.put_u32(0);
    body(buf);
    let len = (buf.len() - at) as u32;
    buf[at..at + 4].copy_from_slice(&len.to_be_bytes());
}

fn parse_msg(buf: &mut BytesMut, name: &str, sql: &str, with_param: bool) {
    message(buf, b'P', |b| {
        put_cstr(b, name);
        put_cstr(b, sql);
        if with_param {
            b.put_i16(1);
            b.put_u32(INT4_OID);
        } else {
            b.put_i16(0);
        }
    });
}

/// Encodes one request of `spec`; returns it and the key's offset.
fn encode_request(spec: &RawSpec) -> (Vec<u8>, Option<usize>) {
    let mut buf = BytesMut::new();
    let stmt = if spec.unprepared {
        parse_msg(&mut buf, "", &spec.sql, spec.with_param);
        ""
    } else {
        "s"
    };
    let mut key_at = None;
    message(&mut buf, b'B', |b| {
        put_cstr(b, "");
        put_cstr(b, stmt);
        if spec.with_param {
            b.put_i16(1);
            b.put_i16(1);
            b.put_i16(1);
            b.put_i32(4);
            key_at = Some(b.len());
            b.put_i32(0);
        } else {
            b.put_i16(0);
            b.put_i16(0);
        }
        b.put_i16(1);
        b.put_i16(1);
    });
    message(&mut buf, b'E', |b| {
        put_cstr(b, "");
        b.put_i32(0);
    });
    message(&mut buf, b'S', |_| {});
    (buf.to_vec(), key_at)
}

/// The `M` field of an ErrorResponse body.
fn error_text(body: &[u8]) -> String {
    let mut rest = body;
    while let Some((&code, tail)) = rest.split_first() {
        let end = tail.iter().position(|&c| c == 0).unwrap_or(tail.len());
        if code == b'M' {
            return String::from_utf8_lossy(&tail[..end]).into_owned();
        }
        rest = tail.get(end + 1..).unwrap_or(&[]);
    }
    "server error".to_string()
}

impl RawConn {
    /// Connects (TCP or Unix socket, from a libpq-style URL), logs in and
    /// prepares the workload's statement (its plain variant).
    pub async fn connect(url: &str, workload: Workload) -> Result<RawConn, BenchError> {
        RawConn::connect_with(url, RawSpec::new(workload, Shape::Plain)?).await
    }

    /// The same for any spec.
    pub async fn connect_with(url: &str, spec: RawSpec) -> Result<RawConn, BenchError> {
        let config: tokio_postgres::Config = url
            .parse()
            .map_err(|e| BenchError::new(format!("raw: bad URL: {e}")))?;
        let host = config
            .get_hosts()
            .first()
            .cloned()
            .unwrap_or(tokio_postgres::config::Host::Tcp("localhost".into()));
        let port = config.get_ports().first().copied().unwrap_or(5432);
        let user = config
            .get_user()
            .ok_or_else(|| BenchError::new("raw: the URL names no user"))?
            .to_string();
        let dbname = config.get_dbname().unwrap_or(&user).to_string();
        let password = config.get_password().map(|p| p.to_vec());
        let stream: Pin<Box<dyn Stream>> = match host {
            tokio_postgres::config::Host::Tcp(h) => {
                let s = tokio::time::timeout(
                    CONNECT_TIMEOUT,
                    tokio::net::TcpStream::connect((h.as_str(), port)),
                )
                .await
                .map_err(|_| BenchError::new("raw: connect timed out"))??;
                s.set_nodelay(true)?;
                Box::pin(s)
            }
            tokio_postgres::config::Host::Unix(dir) => {
                let path = dir.join(format!(".s.PGSQL.{port}"));
                let s =
                    tokio::time::timeout(CONNECT_TIMEOUT, tokio::net::UnixStream::connect(path))
                        .await
                        .map_err(|_| BenchError::new("raw: connect timed out"))??;
                Box::pin(s)
            }
        };
        let (template, key_at) = encode_request(&spec);
        let mut conn = RawConn {
            stream,
            rbuf: BytesMut::with_capacity(256 * 1024),
            wbuf: BytesMut::with_capacity(64 * 1024),
            template,
            key_at,
            spec,
        };
        tokio::time::timeout(CONNECT_TIMEOUT, conn.startup(&user, &dbname, password))
            .await
            .map_err(|_| BenchError::new("raw: startup timed out"))??;
        Ok(conn)
    }

    async fn startup(
        &mut self,
        user: &str,
        dbname: &str,
        password: Option<Vec<u8>>,
    ) -> Result<(), BenchError> {
        let mut buf = BytesMut::new();
        buf.put_u32(0);
        buf.put_u32(196_608);
        put_cstr(&mut buf, "user");
        put_cstr(&mut buf, user);
        put_cstr(&mut buf, "database");
        put_cstr(&mut buf, dbname);
        buf.put_u8(0);
        let len = buf.len() as u32;
        buf[..4].copy_from_slice(&len.to_be_bytes());
        self.stream.write_all(&buf).await?;
        loop {
            let (tag, body) = self.read_message().await?;
            match tag {
                b'R' => {
                    let code = body
                        .get(..4)
                        .map(|b| u32::from_be_bytes([b[0], b[1], b[2], b[3]]));
                    match (code, &password) {
                        (Some(0), _) => {}
                        (Some(3), Some(pw)) => {
                            let mut m = BytesMut::new();
                            message(&mut m, b'p', |b| {
                                b.put_slice(pw);
                                b.put_u8(0);
                            });
                            self.stream.write_all(&m).await?;
                        }
                        _ => return Err(BenchError::new(
                            "raw: only trust and cleartext-password authentication are supported",
                        )),
                    }
                }
                b'E' => return Err(BenchError::new(format!("raw: {}", error_text(&body)))),
                b'Z' => break,
                _ => {}
            }
        }
        if !self.spec.unprepared {
            let mut m = BytesMut::new();
            parse_msg(&mut m, "s", &self.spec.sql, self.spec.with_param);
            message(&mut m, b'S', |_| {});
            self.stream.write_all(&m).await?;
            loop {
                let (tag, body) = self.read_message().await?;
                match tag {
                    b'E' => {
                        return Err(BenchError::new(format!(
                            "raw: prepare: {}",
                            error_text(&body)
                        )))
                    }
                    b'Z' => break,
                    _ => {}
                }
            }
        }
        Ok(())
    }

    /// Reads one whole message (setup only; the hot loop parses in place).
    async fn read_message(&mut self) -> Result<(u8, Vec<u8>), BenchError> {
        loop {
            if self.rbuf.len() >= 5 {
                let len =
                    u32::from_be_bytes([self.rbuf[1], self.rbuf[2], self.rbuf[3], self.rbuf[4]])
                        as usize;
                if len < 4 {
                    return Err(BenchError::new("raw: bad message length"));
                }
                if self.rbuf.len() > len {
                    let tag = self.rbuf[0];
                    let body = self.rbuf[5..1 + len].to_vec();
                    self.rbuf.advance(1 + len);
                    return Ok((tag, body));
                }
            }
            self.rbuf.reserve(64 * 1024);
            if self.stream.read_buf(&mut self.rbuf).await? == 0 {
                return Err(BenchError::new("raw: server closed the connection"));
            }
        }
    }

    /// Runs the prepared statement once (binary results) and returns the
    /// server's answer as wire messages: the RowDescription of a statement
    /// Describe, and the DataRows plus CommandComplete of the Execute (for
    /// the replay server).
    pub async fn capture(&mut self) -> Result<(Vec<u8>, Vec<u8>), BenchError> {
        let mut m = BytesMut::new();
        message(&mut m, b'D', |b| {
            b.put_u8(b'S');
            put_cstr(b, "s");
        });
        m.extend_from_slice(&self.template);
        self.stream.write_all(&m).await?;
        let (mut desc, mut rows) = (Vec::new(), Vec::new());
        loop {
            let (tag, body) = self.read_message().await?;
            let out = match tag {
                b'T' => &mut desc,
                b'D' | b'C' => &mut rows,
                b'E' => return Err(BenchError::new(format!("raw: {}", error_text(&body)))),
                b'Z' => break,
                _ => continue,
            };
            out.push(tag);
            out.extend_from_slice(&(body.len() as u32 + 4).to_be_bytes());
            out.extend_from_slice(&body);
        }
        if desc.is_empty() || rows.is_empty() {
            return Err(BenchError::new("raw: the capture returned no rows"));
        }
        Ok((desc, rows))
    }
}
