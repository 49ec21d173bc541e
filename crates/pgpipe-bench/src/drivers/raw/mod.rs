//! The `raw` floor: a minimal client with its own few lines of protocol
//! code. Trust (or cleartext password) startup, the statement prepared once,
//! then pre-encoded Bind/Execute/Sync requests written in large coalesced
//! writes; replies are read in large reads and only counted (ReadyForQuery
//! ends a request, DataRow is counted, a point select's id is compared).
//! For N concurrent "tasks" it keeps N requests outstanding.

use std::collections::VecDeque;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::{Buf, BufMut, BytesMut};
use hdrhistogram::Histogram;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};

mod spec;

pub use spec::{RawCheck, RawSpec};

use crate::catalog::Workload;
use crate::checks;
use crate::drivers::techempower::{self, World};
use crate::error::BenchError;
use crate::histogram;
use crate::shape::Shape;

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

    fn push_request(&mut self, key: i32) {
        let at = self.wbuf.len();
        self.wbuf.extend_from_slice(&self.template);
        if let Some(k) = self.key_at {
            self.wbuf[at + k..at + k + 4].copy_from_slice(&key.to_be_bytes());
        }
    }

    /// Queues the requests of operation `n` of `task`; each gets an
    /// in-flight entry (sent at `t`, its key, whether it ends the operation).
    fn push_op(&mut self, task: usize, n: u64, t: Instant, inflight: &mut VecDeque<InFlight>) {
        let key = checks::key(task, n);
        let count = self.spec.requests_per_op.max(1);
        let keys = (count > 1).then(|| techempower::randoms(key).0);
        for i in 0..count {
            let k = keys
                .as_ref()
                .and_then(|ks| ks.get(i).copied())
                .unwrap_or(key);
            self.push_request(k);
            inflight.push_back(InFlight {
                sent: t,
                key: k,
                last: i + 1 == count,
            });
        }
    }

    /// Checks one DataRow of the request for `key`.
    fn check_row(&self, key: i32, body: &[u8]) -> Result<(), BenchError> {
        match self.spec.check {
            RawCheck::Count => Ok(()),
            // ncols(2) len(4) id(4) len(4) v(8)
            RawCheck::Point => {
                let (Some(id), Some(v)) = (body.get(6..10), body.get(14..22)) else {
                    return Err(BenchError::new("raw: short DataRow"));
                };
                let id = i32::from_be_bytes([id[0], id[1], id[2], id[3]]);
                let mut b = [0u8; 8];
                b.copy_from_slice(v);
                checks::point(key, id, i64::from_be_bytes(b))
            }
            // ncols(2) len(4) id(4) len(4) randomnumber(4)
            RawCheck::World => {
                let (Some(id), Some(r)) = (body.get(6..10), body.get(14..18)) else {
                    return Err(BenchError::new("raw: short DataRow"));
                };
                let world = World {
                    id: i32::from_be_bytes([id[0], id[1], id[2], id[3]]),
                    randomnumber: i32::from_be_bytes([r[0], r[1], r[2], r[3]]),
                };
                techempower::check_worlds(&[key], &[world]).map(|_| ())
            }
        }
    }

    /// Keeps `outstanding` operations in flight until `stop` is set, then
    /// drains. Returns (operations completed, latency histogram).
    pub async fn drive(
        &mut self,
        task: usize,
        outstanding: usize,
        stop: Arc<AtomicBool>,
    ) -> Result<(u64, Histogram<u64>), BenchError> {
        let mut hist = histogram::new_histogram();
        let mut inflight: VecDeque<InFlight> =
            VecDeque::with_capacity(outstanding * self.spec.requests_per_op.max(1));
        let expected_rows = self.spec.rows_per_request;
        let mut sent: u64 = 0;
        let mut done: u64 = 0;
        let mut rows: u64 = 0;
        let now = Instant::now();
        for _ in 0..outstanding.max(1) {
            self.push_op(task, sent, now, &mut inflight);
            sent += 1;
        }
        while !inflight.is_empty() {
            if !self.wbuf.is_empty() {
                self.stream.write_all(&self.wbuf).await?;
                self.wbuf.clear();
            }
            self.rbuf.reserve(128 * 1024);
            if self.stream.read_buf(&mut self.rbuf).await? == 0 {
                return Err(BenchError::new("raw: server closed the connection"));
            }
            let mut pos = 0;
            let mut now = None;
            loop {
                let avail = &self.rbuf[pos..];
                if avail.len() < 5 {
                    break;
                }
                let len = u32::from_be_bytes([avail[1], avail[2], avail[3], avail[4]]) as usize;
                if len < 4 {
                    return Err(BenchError::new("raw: bad message length"));
                }
                if avail.len() < 1 + len {
                    break;
                }
                let tag = avail[0];
                match tag {
                    b'D' => {
                        rows += 1;
                        let key = inflight.front().map_or(0, |f| f.key);
                        self.check_row(key, &self.rbuf[pos + 5..pos + 1 + len])?;
                    }
                    b'Z' => {
                        let Some(req) = inflight.pop_front() else {
                            return Err(BenchError::new("raw: unexpected ReadyForQuery"));
                        };
                        if rows != expected_rows {
                            return Err(BenchError::new(format!(
                                "raw: request returned {rows} rows, expected {expected_rows}"
                            )));
                        }
                        rows = 0;
                        if req.last {
                            let t = *now.get_or_insert_with(Instant::now);
                            histogram::record(&mut hist, t - req.sent);
                            done += 1;
                            if !stop.load(Ordering::Relaxed) {
                                self.push_op(task, sent, t, &mut inflight);
                                sent += 1;
                            }
                        }
                    }
                    b'E' => {
                        let body = &self.rbuf[pos + 5..pos + 1 + len];
                        return Err(BenchError::new(format!("raw: {}", error_text(body))));
                    }
                    _ => {}
                }
                pos += 1 + len;
            }
            self.rbuf.advance(pos);
        }
        Ok((done, hist))
    }
}

/// One request in flight.
struct InFlight {
    sent: Instant,
    key: i32,
    /// The last request of its operation.
    last: bool,
}
