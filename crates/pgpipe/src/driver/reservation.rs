//! Reservations: a session (a transaction, a COPY) that has the
//! connection to itself. Its requests go out at once, the BEGIN of a
//! transaction travelling in front of its first statement; every other
//! handle's requests are encoded meanwhile but held back, and follow when
//! the session ends (or give up after a bound).

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use bytes::BytesMut;
use pgpipe_proto::frontend::Encoder;
use tokio::sync::OwnedSemaphorePermit;

use crate::driver::coalesce;
use crate::driver::{Responses, Shared, Slot};
use crate::error::ErrorKind;
use crate::Error;

/// How [`Shared::end_session`] ended a session.
pub(crate) enum SessionEnd {
    /// The last statement was queued; its response follows.
    Sent(Responses),
    /// BEGIN never left: no transaction exists on the server.
    NeverBegun,
    /// BEGIN failed on the server: no transaction exists, and the
    /// statement that carried it did not run.
    BeginFailed,
    /// The session did not hold the connection (already ended).
    NotHeld,
}

/// Who sends a request: every [`Client`](crate::Client) handle carries one.
/// `NONE` for ordinary handles; a transaction's handle carries the id of
/// its reservation, so that its requests go out at once while other
/// handles' requests wait behind it.
pub(crate) type SessionId = u64;

/// The session id of handles that hold no reservation.
pub(crate) const NO_SESSION: SessionId = 0;

/// What a request is, which decides how a reservation treats it.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Request {
    /// A statement through the extended protocol: a pending BEGIN travels
    /// in front of it (sharing its Sync); refused without a round trip in
    /// a failed transaction.
    Statement,
    /// Transaction control sent by pgpipe itself (SAVEPOINT, ROLLBACK TO,
    /// COMMIT): a pending BEGIN travels in front of it; never refused.
    Control,
    /// A simple Query message: a pending BEGIN must have been flushed first
    /// (the server skips a Query after a failed unsynced message, which
    /// would leave it unanswered); never refused, so that a user can still
    /// roll back to a savepoint by hand.
    Simple,
    /// Housekeeping nobody waits for (closing a statement or portal).
    Detached,
}

/// A connection held by one session (a transaction): its requests go into
/// the write buffer; everyone else's are encoded into `deferred` and
/// follow once the session ends, so they never run inside it.
pub(super) struct Reservation {
    pub(super) session: SessionId,
    /// The BEGIN statement while it has not been sent: it is written in
    /// front of the session's next request and shares that request's Sync,
    /// so a failed BEGIN makes the server skip the request instead of
    /// running it outside the transaction.
    pub(super) begin: Option<Box<str>>,
    /// Set when a BEGIN sent in front of a request failed: later requests
    /// of the session must not run (they would run outside a transaction).
    pub(super) begin_failed: Arc<AtomicBool>,
    pub(super) deferred_buf: BytesMut,
    pub(super) deferred_slots: Vec<Arc<Slot>>,
    /// Where each deferred request (or batch) ends, in `deferred_buf` and
    /// `deferred_slots`: one withdrawn by its caller is cut out whole.
    pub(super) deferred_units: Vec<(usize, usize)>,
}

impl Reservation {
    /// Marks the end of a request (or batch) just deferred.
    pub(super) fn end_unit(&mut self) {
        self.deferred_units
            .push((self.deferred_buf.len(), self.deferred_slots.len()));
    }
}

/// How long a request may wait behind another session's reservation when
/// the connection has no query timeout (see [`Shared::held_bound`]).
pub(crate) const DEFAULT_HELD_BOUND: Duration = Duration::from_secs(30);

impl Shared {
    /// Waits until no other session holds the connection, then reserves it
    /// for a new session. `begin` is not sent now: it goes out in front of
    /// the session's first request, sharing its Sync (no round trip of its
    /// own). Cancel safe: nothing is reserved until the future completes.
    pub(crate) async fn reserve(&self, begin: Box<str>) -> Result<SessionId, Error> {
        self.reserve_for(Some(begin)).await
    }

    /// Reserves the connection for a session that is no transaction (a
    /// COPY): no BEGIN; end it with [`release`](Self::release). Cancel
    /// safe like [`reserve`](Self::reserve).
    pub(crate) async fn reserve_plain(&self) -> Result<SessionId, Error> {
        self.reserve_for(None).await
    }

    async fn reserve_for(&self, begin: Option<Box<str>>) -> Result<SessionId, Error> {
        let session = self.next_session.fetch_add(1, Ordering::Relaxed);
        let bound = self.held_bound();
        let deadline = tokio::time::Instant::now() + bound;
        loop {
            let notified = self.released.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            {
                let mut q = self.lock();
                if let Some(reason) = &q.closed {
                    return Err(Error::closed().context(reason));
                }
                if q.reservation.is_none() {
                    q.reservation = Some(Reservation {
                        session,
                        begin,
                        begin_failed: Arc::default(),
                        deferred_buf: BytesMut::new(),
                        deferred_slots: Vec::new(),
                        deferred_units: Vec::new(),
                    });
                    return Ok(session);
                }
            }
            if tokio::time::timeout_at(deadline, notified).await.is_err() {
                return Err(Error::new(
                    ErrorKind::Timeout,
                    crate::driver::responses::held_error(bound),
                ));
            }
        }
    }

    /// Whether `session` holds the connection now.
    pub(crate) fn holds(&self, session: SessionId) -> bool {
        session != NO_SESSION
            && self
                .lock()
                .reservation
                .as_ref()
                .is_some_and(|r| r.session == session)
    }

    /// Whether `session`'s BEGIN has not been sent yet.
    pub(crate) fn begin_pending(&self, session: SessionId) -> bool {
        self.lock()
            .reservation
            .as_ref()
            .is_some_and(|r| r.session == session && r.begin.is_some())
    }

    /// Ends `session`'s hold on the connection, without waiting: `last`
    /// (COMMIT or ROLLBACK) is queued unless the BEGIN never left (then no
    /// transaction exists on the server), and every request that other
    /// handles queued meanwhile follows it. Returns the response to `last`
    /// when one was queued; `Ok(None)` when there was nothing to end
    /// (BEGIN never left, or it failed: then no transaction exists).
    pub(crate) fn end_session<F>(
        &self,
        session: SessionId,
        permit: Option<OwnedSemaphorePermit>,
        last: F,
    ) -> Result<SessionEnd, Error>
    where
        F: FnOnce(&Encoder, &mut BytesMut) -> Result<(), Error>,
    {
        let (waker, result) = {
            let mut guard = self.lock();
            let q = &mut *guard;
            let Some(held) = q.reservation.take_if(|r| r.session == session) else {
                return Ok(SessionEnd::NotHeld);
            };
            if let Some(reason) = &q.closed {
                return Err(Error::closed().context(reason));
            }
            coalesce::seal(&mut q.group, &mut q.write_buf);
            let start = q.write_buf.len();
            let mut result = Ok(if held.begin_failed.load(Ordering::Relaxed) {
                SessionEnd::BeginFailed
            } else {
                SessionEnd::NeverBegun
            });
            if held.begin.is_none() && !held.begin_failed.load(Ordering::Relaxed) {
                let slot = Arc::new(Slot::new(permit));
                match last(&self.encoder, &mut q.write_buf) {
                    Ok(()) => {
                        q.slots.push_back(slot.clone());
                        self.outstanding.fetch_add(1, Ordering::Relaxed);
                        result = Ok(SessionEnd::Sent(Responses::new(slot)));
                    }
                    Err(e) => {
                        q.write_buf.truncate(start);
                        result = Err(e);
                    }
                }
            }
            self.flush_deferred(&mut q.write_buf, &mut q.slots, held);
            q.flush_now = true;
            let waker = if start == 0 && !q.write_buf.is_empty() {
                q.driver_waker.take()
            } else {
                None
            };
            (waker, result)
        };
        self.released.notify_waiters();
        if let Some(w) = waker {
            w.wake();
        }
        result
    }

    /// Ends a session reserved with [`reserve_plain`](Self::reserve_plain),
    /// without waiting: the requests other handles queued meanwhile follow
    /// whatever the session wrote last. Nothing happens if `session` does
    /// not hold the connection.
    pub(crate) fn release(&self, session: SessionId) {
        let waker = {
            let mut guard = self.lock();
            let q = &mut *guard;
            let Some(held) = q.reservation.take_if(|r| r.session == session) else {
                return;
            };
            let start = q.write_buf.len();
            self.flush_deferred(&mut q.write_buf, &mut q.slots, held);
            q.flush_now = true;
            if start == 0 && !q.write_buf.is_empty() {
                q.driver_waker.take()
            } else {
                None
            }
        };
        self.released.notify_waiters();
        if let Some(w) = waker {
            w.wake();
        }
    }

    /// Queues what other handles deferred behind a session that ends, in
    /// order, except the requests their callers withdrew (a batch is cut
    /// out whole: its other members fail with the same reason).
    fn flush_deferred(
        &self,
        write_buf: &mut BytesMut,
        queued: &mut VecDeque<Arc<Slot>>,
        held: Reservation,
    ) {
        let mut cut = 0;
        let (mut bytes_from, mut slots_from) = (0, 0);
        let mut slots = held.deferred_slots.into_iter();
        for (bytes_to, slots_to) in held.deferred_units {
            let unit: Vec<Arc<Slot>> = slots.by_ref().take(slots_to - slots_from).collect();
            let mut send = true;
            for slot in &unit {
                send &= slot.release_held();
            }
            if send {
                write_buf.extend_from_slice(&held.deferred_buf[bytes_from..bytes_to]);
                queued.extend(unit);
            } else {
                for slot in &unit {
                    slot.fail(
                        ErrorKind::Timeout,
                        "a request sent with this one in one batch gave up while held behind \
                         a transaction (or COPY); none of the batch was sent",
                    );
                    cut += slot.requests();
                }
            }
            (bytes_from, slots_from) = (bytes_to, slots_to);
        }
        if cut > 0 {
            self.finished(cut);
        }
    }

    /// How long a request (or a new transaction) may wait behind another
    /// session's reservation before it gives up: the connection's query
    /// timeout, else [`DEFAULT_HELD_BOUND`].
    pub(crate) fn held_bound(&self) -> Duration {
        self.query_timeout.unwrap_or(DEFAULT_HELD_BOUND)
    }
}

/// Parse + Bind + Execute of `sql` on the unnamed statement and portal,
/// without a Sync: it shares the Sync of whatever follows, so if it fails
/// the server skips the rest up to that Sync.
pub(super) fn encode_unsynced(enc: &Encoder, sql: &str, buf: &mut BytesMut) -> Result<(), Error> {
    // BEGIN has no parameters: only a statement too long for a message fails.
    let err = |e| Error::new(ErrorKind::Encode, "could not encode BEGIN").with_source(e);
    enc.parse("", sql, &[], buf).map_err(err)?;
    enc.bind("", "", &[], 0, |_| Ok(()), &[], buf)
        .map_err(err)?;
    enc.execute("", 0, buf).map_err(err)
}
