//! The replay server: its own thread and single-threaded runtime on a
//! loopback port; each connection gets a trust startup and then every
//! Parse / Bind / Describe / Execute / Sync is answered from the capture.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicI32, Ordering};
use std::sync::Arc;
use std::time::Duration;

use bytes::{Buf, BytesMut};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::oneshot;

use super::capture::Capture;
use super::protocol::{self, message};
use crate::error::BenchError;

/// Largest frontend message accepted.
const MAX_MESSAGE: usize = 64 << 20;
/// An idle connection is closed after this long without a message.
const IDLE: Duration = Duration::from_secs(300);

/// A running replay server; stopped on drop.
#[derive(Debug)]
pub struct ReplayServer {
    addr: SocketAddr,
    stop: Option<oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl ReplayServer {
    /// Starts serving `capture` on 127.0.0.1 (a free port).
    pub fn start(capture: Arc<Capture>) -> Result<ReplayServer, BenchError> {
        let listener = std::net::TcpListener::bind("127.0.0.1:0")?;
        listener.set_nonblocking(true)?;
        let addr = listener.local_addr()?;
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()?;
        let (stop, stopped) = oneshot::channel::<()>();
        let thread = std::thread::Builder::new()
            .name("replay-server".into())
            .spawn(move || {
                runtime.block_on(serve(listener, capture, stopped));
                runtime.shutdown_timeout(Duration::from_millis(200));
            })?;
        Ok(ReplayServer {
            addr,
            stop: Some(stop),
            thread: Some(thread),
        })
    }

    /// The address it listens on.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// A URL for this server with the user and database of `real_url`.
    pub fn url_like(&self, real_url: &str) -> Result<String, BenchError> {
        let config: tokio_postgres::Config = real_url
            .parse()
            .map_err(|e| BenchError::new(format!("replay: bad URL: {e}")))?;
        let user = config.get_user().unwrap_or("postgres");
        let db = config.get_dbname().unwrap_or(user);
        Ok(format!(
            "postgres://{user}@127.0.0.1:{}/{db}?sslmode=disable",
            self.addr.port()
        ))
    }
}

impl Drop for ReplayServer {
    fn drop(&mut self) {
        if let Some(s) = self.stop.take() {
            let _ = s.send(());
        }
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

async fn serve(
    listener: std::net::TcpListener,
    capture: Arc<Capture>,
    mut stopped: oneshot::Receiver<()>,
) {
    let Ok(listener) = TcpListener::from_std(listener) else {
        return;
    };
    let pids = AtomicI32::new(1000);
    loop {
        tokio::select! {
            _ = &mut stopped => return,
            accepted = listener.accept() => {
                if let Ok((socket, _)) = accepted {
                    let _ = socket.set_nodelay(true);
                    let capture = capture.clone();
                    let pid = pids.fetch_add(1, Ordering::Relaxed);
                    tokio::spawn(async move {
                        let _ = connection(socket, capture, pid).await;
                    });
                }
            }
        }
    }
}

/// Reads until `buf` holds `n` bytes; false at end of stream.
async fn fill(socket: &mut TcpStream, buf: &mut BytesMut, n: usize) -> Result<bool, BenchError> {
    while buf.len() < n {
        buf.reserve(n - buf.len() + 8192);
        let read = tokio::time::timeout(IDLE, socket.read_buf(buf))
            .await
            .map_err(|_| BenchError::new("replay: idle connection"))??;
        if read == 0 {
            return Ok(false);
        }
    }
    Ok(true)
}

/// The startup packet (answering SSL/GSS requests with `N`); false when the
/// client went away or sent a cancel request.
async fn startup(socket: &mut TcpStream, buf: &mut BytesMut) -> Result<bool, BenchError> {
    loop {
        if !fill(socket, buf, 8).await? {
            return Ok(false);
        }
        let len = u32::from_be_bytes([buf[0], buf[1], buf[2], buf[3]]) as usize;
        if !(8..=10_000).contains(&len) {
            return Err(BenchError::new("replay: bad startup length"));
        }
        if !fill(socket, buf, len).await? {
            return Ok(false);
        }
        let code = u32::from_be_bytes([buf[4], buf[5], buf[6], buf[7]]);
        buf.advance(len);
        match code {
            80_877_103 | 80_877_104 => socket.write_all(b"N").await?,
            80_877_102 => return Ok(false),
            _ => return Ok(true),
        }
    }
}

async fn connection(
    mut socket: TcpStream,
    capture: Arc<Capture>,
    pid: i32,
) -> Result<(), BenchError> {
    let mut inbuf = BytesMut::with_capacity(64 * 1024);
    let mut out = BytesMut::with_capacity(64 * 1024);
    if !startup(&mut socket, &mut inbuf).await? {
        return Ok(());
    }
    protocol::startup_reply(&mut out, pid);
    let mut params: Vec<u32> = Vec::new();
    loop {
        // Answer every complete message already read, then flush once.
        while inbuf.len() >= 5 {
            let len = u32::from_be_bytes([inbuf[1], inbuf[2], inbuf[3], inbuf[4]]) as usize;
            if !(4..=MAX_MESSAGE).contains(&len) {
                return Err(BenchError::new("replay: bad message length"));
            }
            if inbuf.len() < 1 + len {
                break;
            }
            let tag = inbuf[0];
            let msg = inbuf.split_to(1 + len);
            let body = &msg[5..];
            match tag {
                b'P' => {
                    params = protocol::parse_param_oids(body);
                    message(&mut out, b'1', |_| {});
                }
                b'B' => message(&mut out, b'2', |_| {}),
                b'C' => message(&mut out, b'3', |_| {}),
                b'D' if body.first() == Some(&b'S') => {
                    protocol::parameter_description(&mut out, &params);
                    out.extend_from_slice(&capture.statement_desc);
                }
                b'D' => out.extend_from_slice(&capture.portal_desc),
                b'E' => {
                    // The captured rows go out as they are, without a copy.
                    socket.write_all(&out).await?;
                    out.clear();
                    socket.write_all(&capture.rows).await?;
                }
                b'S' => protocol::ready(&mut out),
                b'H' => {}
                b'X' => return Ok(()),
                b'Q' => {
                    message(&mut out, b'I', |_| {});
                    protocol::ready(&mut out);
                }
                other => {
                    protocol::error(
                        &mut out,
                        "0A000",
                        &format!("replay server: unsupported message {:?}", other as char),
                    );
                    socket.write_all(&out).await?;
                    return Ok(());
                }
            }
        }
        if !out.is_empty() {
            socket.write_all(&out).await?;
            out.clear();
        }
        let need = if inbuf.len() >= 5 {
            1 + u32::from_be_bytes([inbuf[1], inbuf[2], inbuf[3], inbuf[4]]) as usize
        } else {
            5
        };
        if !fill(&mut socket, &mut inbuf, need).await? {
            return Ok(());
        }
    }
}
