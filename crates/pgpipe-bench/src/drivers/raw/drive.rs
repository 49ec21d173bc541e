//! The raw floor's hot loop: keep N operations in flight on one
//! connection, parse replies in place from large reads, count and check.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Instant;

use bytes::Buf;
use hdrhistogram::Histogram;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use super::{error_text, rows, RawCheck, RawConn};
use crate::checks;
use crate::checks::RowsCheck;
use crate::error::BenchError;
use crate::families::techempower::{self, World};
use crate::histogram;

impl RawConn {
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
    fn check_row(
        &self,
        key: i32,
        body: &[u8],
        rows_check: &mut RowsCheck,
    ) -> Result<(), BenchError> {
        match self.spec.check {
            RawCheck::Count => Ok(()),
            RawCheck::Rows(table) => rows::check(table, rows_check, body),
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
        let mut rows_check = RowsCheck::default();
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
                        let body = &self.rbuf[pos + 5..pos + 1 + len];
                        self.check_row(key, body, &mut rows_check)?;
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
                        if let RawCheck::Rows(table) = self.spec.check {
                            std::mem::take(&mut rows_check).finish(table.has_ids())?;
                        }
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
