//! The raw floor of the `copy` workload: the rows pre-encoded once as
//! binary COPY data in 64 KiB CopyData messages, written to the socket in
//! one go per operation; COPY OUT read in large reads and only skipped
//! (the server's CommandComplete gives the row count). What is left is the
//! server's cost and the kernel's: the ceiling any client can reach.

use std::sync::{Arc, OnceLock};
use std::time::UNIX_EPOCH;

use bytes::{Buf, BufMut, BytesMut};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use super::{message, put_cstr, RawConn};
use crate::error::BenchError;

/// Microseconds from the Unix epoch to PostgreSQL's (2000-01-01).
const PG_EPOCH_MICROS: i64 = 946_684_800_000_000;

/// Payload bytes per CopyData message, as the clients measured use.
const CHUNK: usize = 64 * 1024;

/// The workload's rows as binary COPY data, framed as CopyData messages,
/// encoded once per process (not measured).
pub fn encoded_rows() -> Arc<Vec<u8>> {
    static DATA: OnceLock<Arc<Vec<u8>>> = OnceLock::new();
    DATA.get_or_init(|| {
        let rows = crate::families::copy::rows();
        let mut payload = BytesMut::with_capacity(rows.len() * 48);
        payload.put_slice(b"PGCOPY\n\xff\r\n\0");
        payload.put_i32(0);
        payload.put_i32(0);
        for (id, name, score, at) in rows.iter() {
            let micros = at
                .duration_since(UNIX_EPOCH)
                .map(|d| d.as_micros() as i64)
                .unwrap_or(0);
            payload.put_i16(4);
            payload.put_i32(8);
            payload.put_i64(*id);
            payload.put_i32(name.len() as i32);
            payload.put_slice(name.as_bytes());
            payload.put_i32(8);
            payload.put_f64(*score);
            payload.put_i32(8);
            payload.put_i64(micros - PG_EPOCH_MICROS);
        }
        payload.put_i16(-1);
        let mut framed = BytesMut::with_capacity(payload.len() + payload.len() / CHUNK * 5 + 5);
        for piece in payload.chunks(CHUNK) {
            message(&mut framed, b'd', |b| b.put_slice(piece));
        }
        Arc::new(framed.to_vec())
    })
    .clone()
}

impl RawConn {
    /// Runs `sql` (simple query protocol) and waits for ReadyForQuery.
    pub async fn simple(&mut self, sql: &str) -> Result<(), BenchError> {
        let mut m = BytesMut::new();
        message(&mut m, b'Q', |b| put_cstr(b, sql));
        self.stream.write_all(&m).await?;
        self.until_ready().await.map(drop)
    }

    /// `COPY ... FROM STDIN` of `data` (CopyData messages); returns the
    /// server's row count.
    pub async fn copy_in(&mut self, sql: &str, data: &[u8]) -> Result<u64, BenchError> {
        let mut m = BytesMut::new();
        message(&mut m, b'Q', |b| put_cstr(b, sql));
        self.stream.write_all(&m).await?;
        loop {
            let (tag, body) = self.read_message().await?;
            match tag {
                b'G' => break,
                b'E' => {
                    return Err(BenchError::new(format!(
                        "raw: copy: {}",
                        super::error_text(&body)
                    )))
                }
                _ => {}
            }
        }
        self.stream.write_all(data).await?;
        let mut done = BytesMut::new();
        message(&mut done, b'c', |_| {});
        self.stream.write_all(&done).await?;
        self.until_ready().await
    }

    /// `COPY ... TO STDOUT`: skips the data; returns the server's row
    /// count.
    pub async fn copy_out(&mut self, sql: &str) -> Result<u64, BenchError> {
        let mut m = BytesMut::new();
        message(&mut m, b'Q', |b| put_cstr(b, sql));
        self.stream.write_all(&m).await?;
        self.until_ready().await
    }

    /// Reads to ReadyForQuery, skipping every message in place; returns the
    /// count of the last `COPY n` CommandComplete (0 without one).
    async fn until_ready(&mut self) -> Result<u64, BenchError> {
        let mut rows = 0;
        let mut error = None;
        loop {
            while self.rbuf.len() >= 5 {
                let len =
                    u32::from_be_bytes([self.rbuf[1], self.rbuf[2], self.rbuf[3], self.rbuf[4]])
                        as usize;
                if len < 4 {
                    return Err(BenchError::new("raw: bad message length"));
                }
                if self.rbuf.len() <= len {
                    break;
                }
                let tag = self.rbuf[0];
                match tag {
                    b'C' => {
                        let text = String::from_utf8_lossy(&self.rbuf[5..len]).into_owned();
                        if let Some(n) = text.trim_end_matches('\0').strip_prefix("COPY ") {
                            rows = n.parse().unwrap_or(0);
                        }
                    }
                    b'E' => error = Some(super::error_text(&self.rbuf[5..1 + len])),
                    b'Z' => {
                        self.rbuf.advance(1 + len);
                        return match error {
                            Some(e) => Err(BenchError::new(format!("raw: {e}"))),
                            None => Ok(rows),
                        };
                    }
                    _ => {}
                }
                self.rbuf.advance(1 + len);
            }
            self.rbuf.reserve(256 * 1024);
            if self.stream.read_buf(&mut self.rbuf).await? == 0 {
                return Err(BenchError::new("raw: server closed the connection"));
            }
        }
    }
}
