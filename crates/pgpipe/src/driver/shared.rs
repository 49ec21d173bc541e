//! State shared between every `Client` handle of a connection and its driver.
//!
//! Callers encode their request straight into one write buffer under a short
//! lock (never held across an await or a syscall) and queue a [`Slot`] for
//! the response; the driver swaps the buffer out and writes it in one go, so
//! requests that arrive together leave together (implicit pipelining).

use std::collections::VecDeque;
use std::sync::atomic::AtomicBool;
use std::sync::atomic::{AtomicU64, AtomicU8, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use bytes::BytesMut;
use pgpipe_proto::backend::TransactionStatus;
use pgpipe_proto::frontend::Encoder;
use tokio::sync::{Notify, OwnedSemaphorePermit, Semaphore};

use crate::driver::coalesce;
use crate::driver::counters::random_tag;
pub(crate) use crate::driver::counters::Counters;
use crate::driver::queue::{gathered_enough, Queue, MAX_IN_FLIGHT};
use crate::driver::reservation::{encode_unsynced, Request, SessionId, NO_SESSION};
use crate::driver::StatementCache;
use crate::driver::{Responses, Slot};
use crate::error::ErrorKind;
use crate::Error;

pub(crate) struct Shared {
    queue: Mutex<Queue>,
    pub(super) permits: Arc<Semaphore>,
    pub(crate) encoder: Encoder,
    pub(crate) process_id: i32,
    pub(crate) secret_key: i32,
    next_statement_id: AtomicU64,
    /// A random tag in every statement and portal name of this connection.
    /// Behind a pooler in transaction mode, server connections are shared
    /// by many clients: with names unique to the connection, a statement
    /// prepared by another client can never be executed in place of ours
    /// (the server answers 26000 "does not exist" instead).
    name_tag: u64,
    peak_buffered: AtomicUsize,
    /// The status of the last ReadyForQuery (a `TransactionStatus` as `u8`).
    transaction_status: AtomicU8,
    /// Requests queued or sent whose answer has not ended yet.
    pub(super) outstanding: AtomicUsize,
    /// Mirrors `Queue::closed.is_some()` for lock-free reads.
    pub(super) closed_flag: std::sync::atomic::AtomicBool,
    /// The default client-side query timeout.
    pub(crate) query_timeout: Option<Duration>,
    /// Woken when a reservation ends.
    pub(super) released: Notify,
    /// Whether handles share Syncs by default (`coalesce_sync`).
    pub(crate) coalesce: bool,
    /// Socket syscalls of the driver, for [`Client::stats`](crate::Client::stats).
    pub(crate) counters: Counters,
    /// How many statements a coalesced group may hold.
    pub(crate) group_size: coalesce::GroupSize,
    pub(super) next_session: AtomicU64,
}

impl Shared {
    pub(crate) fn new(
        statement_cache_capacity: usize,
        encoder: Encoder,
        process_id: i32,
        secret_key: i32,
        query_timeout: Option<Duration>,
    ) -> Shared {
        Shared {
            queue: Mutex::new(Queue {
                write_buf: BytesMut::with_capacity(8 * 1024),
                slots: VecDeque::new(),
                closed: None,
                terminating: false,
                abort: None,
                driver_waker: None,
                write_gate: false,
                flush_now: false,
                cache: StatementCache::new(statement_cache_capacity),
                reservation: None,
                no_cache: StatementCache::new(0),
                writer_waker: None,
                group: coalesce::Open::default(),
            }),
            permits: Arc::new(Semaphore::new(MAX_IN_FLIGHT)),
            encoder,
            process_id,
            secret_key,
            next_statement_id: AtomicU64::new(0),
            name_tag: random_tag(),
            peak_buffered: AtomicUsize::new(0),
            transaction_status: AtomicU8::new(TransactionStatus::Idle as u8),
            outstanding: AtomicUsize::new(0),
            closed_flag: std::sync::atomic::AtomicBool::new(false),
            query_timeout,
            released: Notify::new(),
            coalesce: false,
            counters: Counters::default(),
            group_size: coalesce::GroupSize::default(),
            next_session: AtomicU64::new(NO_SESSION + 1),
        }
    }

    pub(crate) fn lock(&self) -> MutexGuard<'_, Queue> {
        self.queue.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Encodes a request into the write buffer and queues its response slot.
    /// If encoding fails the buffer is restored: nothing half-written is sent.
    /// Waits for a place in the bounded request queue: when
    /// [`MAX_IN_FLIGHT`] requests are queued or unanswered, callers wait
    /// here instead of growing memory without limit.
    pub(crate) async fn permit(&self) -> Result<OwnedSemaphorePermit, Error> {
        self.permits
            .clone()
            .acquire_owned()
            .await
            .map_err(|_| self.closed_error())
    }

    /// Queues a request, after waiting for a place in the queue.
    pub(crate) async fn send<F>(
        &self,
        session: SessionId,
        kind: Request,
        encode: F,
    ) -> Result<Responses, Error>
    where
        F: FnOnce(&Encoder, &mut BytesMut) -> Result<(), Error>,
    {
        let permit = self.permit().await?;
        self.send_cached(session, kind, Some(permit), |enc, buf, _| encode(enc, buf))
            .map(|(r, ())| r)
    }

    /// Like [`send`](Self::send), with the statement cache at hand.
    pub(crate) fn send_cached<F, R>(
        &self,
        session: SessionId,
        kind: Request,
        permit: Option<OwnedSemaphorePermit>,
        encode: F,
    ) -> Result<(Responses, R), Error>
    where
        F: FnOnce(&Encoder, &mut BytesMut, &mut StatementCache) -> Result<R, Error>,
    {
        self.send_statement(session, kind, permit, false, encode)
    }

    /// Like [`send_cached`](Self::send_cached); with `coalesce`, the
    /// request may share its Sync with its neighbours in the write buffer
    /// (see [`coalesce`]): `encode` must write one statement ending in a
    /// Sync, which is removed if it joins a group.
    pub(crate) fn send_statement<F, R>(
        &self,
        session: SessionId,
        kind: Request,
        permit: Option<OwnedSemaphorePermit>,
        coalesce: bool,
        encode: F,
    ) -> Result<(Responses, R), Error>
    where
        F: FnOnce(&Encoder, &mut BytesMut, &mut StatementCache) -> Result<R, Error>,
    {
        let slot = Arc::new(Slot::new(permit));
        let (r, begin, held) = self.enqueue(session, kind, [slot.clone()], coalesce, encode)?;
        let mut responses = Responses::new(slot);
        if let Some(watch) = begin {
            responses.begin_in_front(watch);
        }
        if held {
            responses.held_until(self.held_bound());
        }
        Ok((responses, r))
    }

    pub(crate) fn with_cache<R>(&self, f: impl FnOnce(&mut StatementCache) -> R) -> R {
        f(&mut self.lock().cache)
    }

    /// Like [`send`](Self::send) for requests nobody waits for (closing a
    /// statement): the driver consumes and discards the response.
    /// Runs outside async code (from `Drop`), so it takes no queue place:
    /// closing statements is rare and tiny.
    pub(crate) fn send_detached<F>(&self, session: SessionId, encode: F) -> Result<(), Error>
    where
        F: FnOnce(&Encoder, &mut BytesMut) -> Result<(), Error>,
    {
        drop(
            self.send_cached(session, Request::Detached, None, |enc, buf, _| {
                encode(enc, buf)
            })?,
        );
        Ok(())
    }

    /// Queues several requests in one step (one write for all of them);
    /// `encode` writes them in the order of `permits`, each ending in a Sync.
    pub(crate) fn send_many<F, R>(
        &self,
        session: SessionId,
        permits: Vec<OwnedSemaphorePermit>,
        encode: F,
    ) -> Result<(Vec<Responses>, R), Error>
    where
        F: FnOnce(&Encoder, &mut BytesMut, &mut StatementCache) -> Result<R, Error>,
    {
        let slots: Vec<Arc<Slot>> = permits
            .into_iter()
            .map(|p| Arc::new(Slot::new(Some(p))))
            .collect();
        let (r, begin, held) = self.enqueue(
            session,
            Request::Statement,
            slots.iter().cloned(),
            false,
            encode,
        )?;
        let mut responses: Vec<Responses> = slots.into_iter().map(Responses::new).collect();
        if held {
            let bound = self.held_bound();
            for r in &mut responses {
                r.held_until(bound);
            }
        }
        if let (Some(watch), Some(first)) = (begin, responses.first_mut()) {
            first.begin_in_front(watch);
        }
        Ok((responses, r))
    }

    /// Encodes a request under the queue lock and queues its slots. Returns
    /// what `encode` returned and, when a pending BEGIN went out in front of
    /// the request, the flag its response reports a failed BEGIN through.
    fn enqueue<F, R>(
        &self,
        session: SessionId,
        kind: Request,
        slots: impl IntoIterator<Item = Arc<Slot>>,
        coalesce: bool,
        encode: F,
    ) -> Result<(R, Option<Arc<AtomicBool>>, bool), Error>
    where
        F: FnOnce(&Encoder, &mut BytesMut, &mut StatementCache) -> Result<R, Error>,
    {
        let (waker, r, begin) = {
            let mut guard = self.lock();
            let q = &mut *guard;
            if let Some(reason) = &q.closed {
                return Err(Error::closed().context(reason));
            }
            let mut begin = None;
            if let Some(held) = &mut q.reservation {
                if held.session != session {
                    // Another session has the connection: encode now (so a
                    // bad parameter still fails here), send when it ends.
                    let start = held.deferred_buf.len();
                    let r = match encode(&self.encoder, &mut held.deferred_buf, &mut q.no_cache) {
                        Ok(r) => r,
                        Err(e) => {
                            held.deferred_buf.truncate(start);
                            return Err(e);
                        }
                    };
                    let before = held.deferred_slots.len();
                    for slot in slots {
                        slot.hold_back();
                        held.deferred_slots.push(slot);
                    }
                    held.end_unit();
                    self.outstanding
                        .fetch_add(held.deferred_slots.len() - before, Ordering::Relaxed);
                    return Ok((r, None, true));
                }
                if kind == Request::Statement {
                    if held.begin_failed.load(Ordering::Relaxed) {
                        return Err(Error::new(
                            ErrorKind::TransactionAborted,
                            "the transaction's BEGIN failed; nothing more runs in it: roll it back",
                        ));
                    }
                    // The status is exact only with nothing of ours in
                    // flight (a queued ROLLBACK TO may be about to clear
                    // it); otherwise the server itself will refuse.
                    let ours_in_flight =
                        self.outstanding.load(Ordering::Relaxed) - held.deferred_slots.len();
                    if ours_in_flight == 0 && self.transaction_status() == TransactionStatus::Failed
                    {
                        return Err(Error::new(
                            ErrorKind::TransactionAborted,
                            "the transaction is aborted (an earlier statement failed): roll it \
                             back, or roll back to a savepoint",
                        ));
                    }
                }
                if matches!(kind, Request::Statement | Request::Control) {
                    if let Some(sql) = &held.begin {
                        begin = Some((sql.clone(), held.begin_failed.clone()));
                    }
                }
            }
            // Never inside a transaction: no reservation, and the session
            // idle as far as we know (a group that still lands in a block
            // opened by hand is settled by the block's rules).
            let coalesce = coalesce
                && q.reservation.is_none()
                && begin.is_none()
                && self.transaction_status() == TransactionStatus::Idle;
            if !coalesce {
                coalesce::seal(&mut q.group, &mut q.write_buf);
            }
            let start = q.write_buf.len();
            let slots_before = q.slots.len();
            let encoded = (|| {
                if let Some((sql, _)) = &begin {
                    encode_unsynced(&self.encoder, sql, &mut q.write_buf)?;
                }
                encode(&self.encoder, &mut q.write_buf, &mut q.cache)
            })();
            let r = match encoded {
                Ok(r) => r,
                Err(e) => {
                    q.write_buf.truncate(start);
                    return Err(e);
                }
            };
            if begin.is_some() {
                if let Some(held) = &mut q.reservation {
                    held.begin = None;
                }
            }
            let mut added = 0;
            for slot in slots {
                added += 1;
                if coalesce
                    && coalesce::join(
                        &mut q.group,
                        &mut q.write_buf,
                        &mut q.slots,
                        start,
                        &slot,
                        self.group_size.cap(),
                    )
                {
                    continue;
                }
                q.slots.push_back(slot);
            }
            self.outstanding.fetch_add(added, Ordering::Relaxed);
            // Wake only on the idle-to-busy transition: if bytes were already
            // waiting, the driver has been woken for them and will take ours
            // too. Unless they were gathering and now reach the most that
            // gather (by count or bytes, a batch may jump past it): then they
            // go now, not at the next read.
            let waker = if start == 0
                || (!gathered_enough(slots_before, start)
                    && gathered_enough(q.slots.len(), q.write_buf.len()))
            {
                q.driver_waker.take()
            } else {
                None
            };
            (waker, r, begin.map(|(_, watch)| watch))
        };
        if let Some(w) = waker {
            w.wake();
        }
        Ok((r, begin, false))
    }

    /// Driver side: queues the members of a coalesced group that must run
    /// again, each on its own Sync (see [`coalesce::settle`]); fails them
    /// if the connection is closing. Returns whether they go out now: not
    /// when they fail or wait behind a session (then nobody may be held
    /// for them: a session's end can depend on anyone).
    pub(crate) fn send_again(
        &self,
        mut again: Vec<(Arc<Slot>, bytes::Bytes)>,
        rejoin: Vec<(Arc<Slot>, bytes::Bytes)>,
    ) -> bool {
        if again.is_empty() && rejoin.is_empty() {
            return false;
        }
        let mut q = self.lock();
        if let Some(reason) = q.closed.clone() {
            drop(q);
            again.extend(rejoin);
            let n = again.len();
            for (slot, _) in again {
                slot.fail(ErrorKind::Closed, &reason);
            }
            self.finished(n);
            return false;
        }
        let q = &mut *q;
        if let Some(held) = &mut q.reservation {
            // A session (transaction or COPY) took the connection while the
            // group was in flight: its statements may already be written,
            // so a member sent now would run inside its transaction. Such
            // members wait behind the session, like any other handle's
            // request (they are already counted as outstanding), each on
            // its own Sync: a group left open in the deferred buffer would
            // lose its Sync.
            again.extend(rejoin);
            let mut parked = coalesce::Open::default();
            let mut slots = std::collections::VecDeque::new();
            coalesce::send_again(&mut parked, &mut held.deferred_buf, &mut slots, again);
            held.deferred_slots.extend(slots);
            held.end_unit();
            return false;
        }
        coalesce::send_again(&mut q.group, &mut q.write_buf, &mut q.slots, again);
        let cap = self.group_size.cap();
        coalesce::rejoin(&mut q.group, &mut q.write_buf, &mut q.slots, rejoin, cap);
        true
    }

    /// Waits for `n` places in the request queue, taken all at once so
    /// that two waiting batches can never each hold part of what they need.
    pub(crate) async fn permits(&self, n: usize) -> Result<Vec<OwnedSemaphorePermit>, Error> {
        if n == 0 {
            return Ok(Vec::new());
        }
        if n > MAX_IN_FLIGHT {
            return Err(Error::new(
                crate::ErrorKind::Encode,
                format!("a batch of {n} statements is larger than the request queue ({MAX_IN_FLIGHT}); split it"),
            ));
        }
        let mut all = self
            .permits
            .clone()
            .acquire_many_owned(n as u32)
            .await
            .map_err(|_| self.closed_error())?;
        let mut out = Vec::with_capacity(n);
        for _ in 1..n {
            out.extend(all.split(1));
        }
        out.push(all);
        Ok(out)
    }

    pub(crate) fn outstanding(&self) -> usize {
        self.outstanding.load(Ordering::Relaxed)
    }

    /// The driver finished (or failed) `n` requests.
    pub(crate) fn finished(&self, n: usize) {
        self.outstanding.fetch_sub(n, Ordering::Relaxed);
    }

    /// Records the status of the latest ReadyForQuery.
    pub(crate) fn set_transaction_status(&self, status: TransactionStatus) {
        self.transaction_status
            .store(status as u8, Ordering::Relaxed);
    }

    /// The status of the latest ReadyForQuery.
    pub(crate) fn transaction_status(&self) -> TransactionStatus {
        match self.transaction_status.load(Ordering::Relaxed) {
            x if x == TransactionStatus::InTransaction as u8 => TransactionStatus::InTransaction,
            x if x == TransactionStatus::Failed as u8 => TransactionStatus::Failed,
            _ => TransactionStatus::Idle,
        }
    }

    pub(crate) fn record_buffered(&self, bytes: usize) {
        self.peak_buffered.fetch_max(bytes, Ordering::Relaxed);
    }

    pub(crate) fn peak_buffered(&self) -> usize {
        self.peak_buffered.load(Ordering::Relaxed)
    }

    pub(crate) fn next_statement_name(&self) -> String {
        let id = self.next_statement_id.fetch_add(1, Ordering::Relaxed);
        format!("pgpipe_{:x}_s{id}", self.name_tag)
    }

    pub(crate) fn next_portal_name(&self) -> String {
        let id = self.next_statement_id.fetch_add(1, Ordering::Relaxed);
        format!("pgpipe_{:x}_p{id}", self.name_tag)
    }
}
