//! Forwarding one direction of one connection through the faults.

use std::io;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use tokio::net::TcpStream;
use tokio::sync::{mpsc, watch};
use tokio::time::Instant;

use super::faults::Direction;
use super::rng::Rng;
use super::Settings;

/// How much the proxy reads ahead of what it delivered, per direction: small,
/// so that a black-holed or slow link pushes back on the sender quickly.
const CHUNKS_AHEAD: usize = 8;
const CHUNK_SIZE: usize = 16 * 1024;

/// How one direction ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum End {
    /// The sender finished; everything was delivered and the receiver saw
    /// the end of the stream.
    Eof,
    /// `close_after` ran out: close the whole connection.
    Close,
    /// A socket failed (reset by its peer): reset the other side too.
    Reset,
}

/// Reads `src`, delivers to `dst` according to the settings of `dir`.
pub(crate) async fn pump(
    src: Arc<TcpStream>,
    dst: Arc<TcpStream>,
    dir: Direction,
    settings: watch::Receiver<Settings>,
    held: Arc<AtomicBool>,
    delivered: Arc<AtomicU64>,
    writes: Arc<AtomicU64>,
) -> End {
    let i = dir.index();
    let read_failed = AtomicBool::new(false);
    let (tx, mut chunks) = mpsc::channel::<(Instant, Vec<u8>)>(CHUNKS_AHEAD);

    let reader_settings = settings.clone();
    let reader = async {
        let tx = tx;
        let mut rng = Rng::new();
        let mut last = Instant::now();
        let mut buf = vec![0u8; CHUNK_SIZE];
        loop {
            match read(&src, &mut buf).await {
                Ok(0) => return,
                Ok(n) => {
                    let (latency, jitter) = {
                        let s = reader_settings.borrow();
                        (s.dirs[i].latency, s.dirs[i].jitter)
                    };
                    let extra = Duration::from_micros(rng.up_to(jitter.as_micros() as u64));
                    let at = (Instant::now() + latency + extra).max(last);
                    last = at;
                    if tx.send((at, buf[..n].to_vec())).await.is_err() {
                        return;
                    }
                }
                Err(_) => {
                    read_failed.store(true, Ordering::Relaxed);
                    return;
                }
            }
        }
    };

    let mut settings = settings;
    let writer = async {
        let mut generation = settings.borrow().generation[i];
        let mut sent: u64 = 0;
        loop {
            let item = tokio::select! {
                item = chunks.recv() => item,
                changed = settings.changed() => {
                    if changed.is_err() {
                        return End::Close;
                    }
                    let s = settings.borrow_and_update();
                    if s.generation[i] != generation {
                        generation = s.generation[i];
                        sent = 0;
                    }
                    if s.dirs[i].close_after.is_some_and(|n| sent >= n) {
                        return End::Close;
                    }
                    continue;
                }
            };
            let Some((at, data)) = item else {
                let _ = socket2::SockRef::from(&*dst).shutdown(std::net::Shutdown::Write);
                return End::Eof;
            };
            tokio::time::sleep_until(at).await;
            let mut off = 0;
            while off < data.len() {
                let faults = {
                    let s = settings.borrow_and_update();
                    if s.generation[i] != generation {
                        generation = s.generation[i];
                        sent = 0;
                    }
                    s.dirs[i].clone()
                };
                let stalled = faults.stall_after.is_some_and(|n| sent >= n);
                if faults.black_hole || stalled || held.load(Ordering::SeqCst) {
                    if settings.changed().await.is_err() {
                        return End::Close;
                    }
                    continue;
                }
                let mut n = data.len() - off;
                if let Some(limit) = faults.close_after {
                    if sent >= limit {
                        return End::Close;
                    }
                    n = n.min((limit - sent) as usize);
                }
                if let Some(limit) = faults.stall_after {
                    n = n.min((limit - sent) as usize);
                }
                if let Some(slice) = faults.slice {
                    n = n.min(slice.max(1));
                }
                if let Some(rate) = faults.bandwidth {
                    let secs = n as f64 / rate.max(1) as f64;
                    tokio::time::sleep(Duration::from_secs_f64(secs)).await;
                }
                if write_all(&dst, &data[off..off + n]).await.is_err() {
                    return End::Reset;
                }
                writes.fetch_add(1, Ordering::Relaxed);
                off += n;
                sent += n as u64;
                delivered.fetch_add(n as u64, Ordering::Relaxed);
                if faults.close_after == Some(sent) {
                    return End::Close;
                }
            }
        }
    };

    tokio::pin!(reader, writer);
    let mut reading = true;
    loop {
        tokio::select! {
            () = &mut reader, if reading => reading = false,
            end = &mut writer => {
                return if end == End::Eof && read_failed.load(Ordering::Relaxed) { End::Reset } else { end };
            }
        }
    }
}

async fn read(s: &TcpStream, buf: &mut [u8]) -> io::Result<usize> {
    loop {
        s.readable().await?;
        match s.try_read(buf) {
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => continue,
            other => return other,
        }
    }
}

async fn write_all(s: &TcpStream, mut buf: &[u8]) -> io::Result<()> {
    while !buf.is_empty() {
        s.writable().await?;
        match s.try_write(buf) {
            Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
            Ok(n) => buf = &buf[n..],
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => continue,
            Err(e) => return Err(e),
        }
    }
    Ok(())
}
