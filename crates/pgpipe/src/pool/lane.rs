//! The shared lane: the connections that serve `Pool::query` and friends.
//!
//! Each holds a pool slot for as long as it is in the lane. A statement
//! goes to the lane connection where it can expect the shortest wait: an
//! idle one, else the fewest statements in flight times that connection's
//! measured time per answer (see [`pace`](super::pace); read under a short
//! read lock, no await inside it), so a burst spreads over the lane, a
//! single caller always finds the same warm connection, and a connection
//! slowed by its backend or stalled by a lock gets less new work. When
//! every lane connection already has [`GROW_AT`] statements in flight and
//! the lane is below its target size,
//! a background task adds one (through an ordinary acquire, so it queues
//! fairly behind checkouts).
//!
//! Once every lane connection has work, a task's statements stay together:
//! while a task has statements in flight on a lane connection, its next
//! ones go to the same connection (see [`Callers`]). Spread over the lane,
//! a request of 20 statements issued together waited for the slowest of
//! every connection's pipeline and for each backend's scheduling stalls,
//! and at saturation its p99 was twice tokio-postgres with deadpool's (one
//! connection per request). While some lane connection is idle a task's
//! statements still spread: that is free parallelism and delays nobody.

use std::collections::HashMap;
use std::future::Future;
use std::hash::BuildHasherDefault;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, RwLock, RwLockReadGuard, RwLockWriteGuard};
use std::task::{Context, Poll};
use std::time::Duration;

use tokio::sync::{Notify, OwnedSemaphorePermit};
use tokio::task;
use tokio::time::Instant;

use super::admission::{Line, Standing, Turn};
use super::conn::Conn;
use super::pace::{self, Pace};
use super::stats::CloseReason;
use crate::driver::FxHasher;
use crate::{Client, Error, TransactionStatus};

/// Statements in flight on the quickest lane connection (every one busy)
/// from which the lane grows. One connection pipelines well, but a backend
/// runs one statement at a time: a statement that has to queue behind another is
/// better served by a second backend while the lane may still grow (with 2
/// callers of a 400 µs statement, growing only at 2 queued kept both on one
/// backend and halved throughput in the bench's `ozo` workload).
const GROW_AT: usize = 1;

pub(crate) struct LaneConn {
    // Field order matters: the connection closes before the slot frees.
    conn: Conn,
    _permit: OwnedSemaphorePermit,
    in_flight: AtomicUsize,
    /// How fast it answers while it has work.
    pace: Pace,
    /// Milliseconds since the lane's epoch of the latest statement.
    last_used_ms: AtomicU64,
    /// Taken out of the lane: no caller's statements may follow it here.
    retired: AtomicBool,
}

/// Which lane connection each task's statements in flight went to, and how
/// many of them are there: a task's next statement joins them while every
/// lane connection has work. An entry lives as long as its statements
/// (leases), so the map holds at most one per task with statements in
/// flight. Statements outside a tokio task (`block_on`) have no caller.
/// Hashed with FxHash: a task id is a counter, not attacker-chosen, and
/// the map is touched twice per shared statement.
type Callers = HashMap<task::Id, Pinned, BuildHasherDefault<FxHasher>>;

struct Pinned {
    conn: Arc<LaneConn>,
    statements: usize,
}

pub(crate) struct Lane {
    conns: RwLock<Vec<Arc<LaneConn>>>,
    callers: Mutex<Callers>,
    /// New tasks waiting for room (see [`admission`](super::admission)).
    line: Line,
    /// Statements in flight from which a lane connection has no room for
    /// a new task (`usize::MAX`: no line).
    room: usize,
    growing: AtomicBool,
    /// Woken when a connection joins or a growth ends, for callers waiting
    /// on a cold lane ([`Lane::wait_for_growth`]).
    changed: Notify,
    target: usize,
    epoch: Instant,
}

/// What [`Lane::lease_in_turn`] gives a statement.
pub(crate) enum Leased<'a> {
    /// A connection, and whether the lane should grow.
    Lease(Lease<'a>, bool),
    /// The lane has no connection; whether it should grow.
    Empty(bool),
    /// The task must wait for its turn ([`Lane::turn`]): every lane
    /// connection is full, or others wait already.
    Wait(task::Id),
}

/// How [`Lane::wait_for_growth`] ended without a lease.
pub(crate) enum NoLease {
    /// No growth is in progress (or it ended without a connection).
    NotGrowing,
    /// The deadline passed first.
    TimedOut,
}

/// A statement's hold on a lane connection; counts it as in flight until
/// dropped (also when the statement's future is cancelled).
pub(crate) struct Lease<'a> {
    conn: Arc<LaneConn>,
    lane: &'a Lane,
    /// The task whose pinned statements this one counts among.
    caller: Option<task::Id>,
}

impl Lane {
    pub(crate) fn new(target: usize, line_at: Option<usize>) -> Lane {
        Lane {
            conns: RwLock::new(Vec::with_capacity(target)),
            callers: Mutex::new(HashMap::default()),
            line: Line::default(),
            room: line_at.unwrap_or(usize::MAX),
            growing: AtomicBool::new(false),
            changed: Notify::new(),
            target,
            epoch: Instant::now(),
        }
    }

    fn read(&self) -> RwLockReadGuard<'_, Vec<Arc<LaneConn>>> {
        self.conns.read().unwrap_or_else(|e| e.into_inner())
    }

    fn write(&self) -> RwLockWriteGuard<'_, Vec<Arc<LaneConn>>> {
        self.conns.write().unwrap_or_else(|e| e.into_inner())
    }

    fn callers(&self) -> MutexGuard<'_, Callers> {
        self.callers.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub(crate) fn len(&self) -> usize {
        self.read().len()
    }

    /// Tasks waiting in the line.
    pub(crate) fn waiting(&self) -> usize {
        self.line.len()
    }

    fn now_ms(&self) -> u64 {
        self.epoch.elapsed().as_millis() as u64
    }

    fn now_us(&self) -> u64 {
        self.epoch.elapsed().as_micros() as u64
    }

    /// The connection of `conns` where a new statement can expect the
    /// shortest wait ([`pace::quickest`]); closed ones are not skipped here.
    fn quickest(conns: &[Arc<LaneConn>], now_us: u64) -> Option<&Arc<LaneConn>> {
        let loads = conns
            .iter()
            .map(|c| c.pace.load(c.in_flight.load(Ordering::Relaxed), now_us));
        pace::quickest(loads).map(|i| &conns[i])
    }

    /// Leases a live connection: the one the current task's statements in
    /// flight went to while every lane connection has work, else the one
    /// with the shortest expected wait; also says whether the lane should
    /// grow. `None` when the lane is empty. Never queues: for callers the
    /// line does not apply to (a cold lane's first statements).
    pub(crate) fn lease(&self) -> (Option<Lease<'_>>, bool) {
        match self.lease_in_turn(true) {
            Leased::Lease(lease, grow) => (Some(lease), grow),
            Leased::Empty(grow) => (None, grow),
            Leased::Wait(_) => unreachable!("an admitted caller never waits"),
        }
    }

    /// Like [`lease`](Self::lease), but a task with nothing in flight on
    /// the lane, unless `admitted`, is told to wait for its turn while the
    /// lane is full or others wait (see [`admission`](super::admission)).
    pub(crate) fn lease_in_turn(&self, admitted: bool) -> Leased<'_> {
        let caller = task::try_id();
        let now_us = self.now_us();
        loop {
            let (best, len, room) = {
                let conns = self.read();
                let best = Self::quickest(&conns, now_us).cloned();
                // Only a new task on a lane of several connections is
                // asked to take its turn; no one else pays for the count.
                let asks_turn = !admitted && caller.is_some() && conns.len() > 1;
                let room = asks_turn && self.has_room(&conns, || self.line.reserved());
                (best, conns.len(), room)
            };
            let Some(best) = best else {
                return Leased::Empty(self.target > 0);
            };
            // A connection the server closed is skipped, not handed out:
            // a statement started after a termination must not fail.
            if best.conn.client.is_closed() {
                self.remove(&best, CloseReason::Broken);
                continue;
            }
            let least = best.in_flight.load(Ordering::Relaxed);
            // One connection leaves no choice: no map to keep, no line.
            let (conn, caller) = match caller {
                Some(id) if len > 1 => {
                    // A new task goes in while there is room and nobody waits
                    // ahead of it.
                    let may_go = admitted || (room && self.line.is_empty());
                    let must_wait = !may_go;
                    match self.pin(id, best, least, must_wait) {
                        Some(placed) => placed,
                        None => return Leased::Wait(id),
                    }
                }
                _ => (best, None),
            };
            if conn.in_flight.fetch_add(1, Ordering::SeqCst) == 0 {
                conn.pace.started(now_us);
            }
            conn.last_used_ms.store(now_us / 1000, Ordering::Relaxed);
            let grow = len < self.target && least >= GROW_AT;
            return Leased::Lease(
                Lease {
                    conn,
                    lane: self,
                    caller,
                },
                grow,
            );
        }
    }

    /// Whether a new task's statements may start on `conns` now: there is
    /// no line, the lane can still grow, or the lane's connections have
    /// places left below the line's depth beyond the `reserved` ones.
    /// The count is read only past the early return: with no line it is
    /// never written, and the common path should not touch it.
    fn has_room(&self, conns: &[Arc<LaneConn>], reserved: impl FnOnce() -> usize) -> bool {
        if self.room == usize::MAX || conns.len() < self.target {
            return true;
        }
        let free: usize = conns
            .iter()
            .map(|c| self.room.saturating_sub(c.in_flight.load(Ordering::SeqCst)))
            .sum();
        free > reserved()
    }

    /// The line's depth (`usize::MAX`: no line).
    pub(crate) fn line_depth(&self) -> usize {
        self.room
    }

    /// Waits until task `id` may lease: it was admitted meanwhile (a
    /// sibling statement went first), or it is first in line and there is
    /// room. Unbounded by itself: the caller bounds it.
    pub(crate) fn turn(&self, id: task::Id) -> TurnWait<'_> {
        TurnWait {
            lane: self,
            id,
            standing: Standing::Out,
        }
    }

    /// Whether task `id` has statements in flight on a live connection.
    fn is_admitted(&self, id: task::Id) -> bool {
        self.callers().get(&id).is_some_and(|pinned| {
            !pinned.conn.retired.load(Ordering::Relaxed) && !pinned.conn.conn.client.is_closed()
        })
    }

    /// The client of the quickest live lane connection, for a caller
    /// that must not count as use (a cluster's role probe): neither its
    /// in-flight count nor its last use is touched, so the connection goes
    /// idle and is reaped as if the caller never ran. `None` when the lane
    /// has no live connection.
    pub(crate) fn unleased_client(&self) -> Option<Client> {
        // Rare (once per probe interval): the list may be copied.
        let live: Vec<Arc<LaneConn>> = self
            .read()
            .iter()
            .filter(|c| !c.conn.client.is_closed())
            .cloned()
            .collect();
        Self::quickest(&live, self.now_us()).map(|c| c.conn.client.clone())
    }

    /// Where task `id`'s statement goes, given the quickest connection
    /// `best` with `least` statements in flight (0 only when it is idle):
    /// with the task's others while every connection has work (counted there), to `best` when it
    /// is idle (not counted: the task's others stay where they are), and
    /// to `best` as the task's new place when it has none live, unless it
    /// `must_wait` for its turn (`None`).
    fn pin(
        &self,
        id: task::Id,
        best: Arc<LaneConn>,
        least: usize,
        must_wait: bool,
    ) -> Option<(Arc<LaneConn>, Option<task::Id>)> {
        let mut callers = self.callers();
        match callers.get_mut(&id) {
            Some(pinned)
                if !pinned.conn.retired.load(Ordering::Relaxed)
                    && !pinned.conn.conn.client.is_closed() =>
            {
                if least == 0 {
                    return Some((best, None));
                }
                pinned.statements += 1;
                Some((pinned.conn.clone(), Some(id)))
            }
            _ if must_wait => None,
            _ => {
                callers.insert(
                    id,
                    Pinned {
                        conn: best.clone(),
                        statements: 1,
                    },
                );
                Some((best, Some(id)))
            }
        }
    }

    /// Claims the right to grow the lane (one growth at a time).
    pub(crate) fn start_growing(&self) -> bool {
        self.growing
            .compare_exchange(false, true, Ordering::AcqRel, Ordering::Relaxed)
            .is_ok()
    }

    pub(crate) fn done_growing(&self) {
        self.growing.store(false, Ordering::Release);
        self.changed.notify_waiters();
    }

    /// On a cold lane whose first connection is opening: waits until it
    /// joins (and leases it) or the growth ends without one, at most until
    /// `deadline`. Waiting instead of opening a connection of one's own
    /// keeps a cold pool at one connection (a checkout opened meanwhile
    /// would sit idle until `idle_timeout`: per host of a cluster, twice
    /// the connections).
    pub(crate) async fn wait_for_growth(&self, deadline: Instant) -> Result<Lease<'_>, NoLease> {
        loop {
            // Registered before looking, so a push in between wakes us.
            let changed = self.changed.notified();
            tokio::pin!(changed);
            changed.as_mut().enable();
            if let (Some(lease), _) = self.lease() {
                return Ok(lease);
            }
            if !self.growing.load(Ordering::Acquire) {
                return Err(NoLease::NotGrowing);
            }
            if tokio::time::timeout_at(deadline, changed).await.is_err() {
                return Err(NoLease::TimedOut);
            }
        }
    }

    /// Adds a connection unless the lane is full or the pool closed
    /// (checked under the lane's lock, so `clear` cannot miss it); gives it
    /// back otherwise.
    pub(crate) fn push(
        &self,
        conn: Conn,
        permit: OwnedSemaphorePermit,
        pool_closed: impl Fn() -> bool,
    ) -> Result<(), Box<(Conn, OwnedSemaphorePermit)>> {
        let mut conns = self.write();
        if conns.len() >= self.target || pool_closed() {
            return Err(Box::new((conn, permit)));
        }
        conns.push(Arc::new(LaneConn {
            conn,
            _permit: permit,
            in_flight: AtomicUsize::new(0),
            pace: Pace::default(),
            last_used_ms: AtomicU64::new(self.now_ms()),
            retired: AtomicBool::new(false),
        }));
        drop(conns);
        self.changed.notify_waiters();
        self.line.wake_first();
        Ok(())
    }

    /// Takes a connection out of the lane; it closes once the statements in
    /// flight on it have their answers.
    fn remove(&self, conn: &Arc<LaneConn>, reason: CloseReason) {
        let mut conns = self.write();
        let before = conns.len();
        conns.retain(|c| !Arc::ptr_eq(c, conn));
        if conns.len() != before {
            conn.retire(reason);
            // Below its size the lane has room (it grows back).
            drop(conns);
            self.line.wake_first();
        }
    }

    pub(crate) fn clear(&self, reason: CloseReason) {
        let conns = std::mem::take(&mut *self.write());
        for c in &conns {
            c.retire(reason);
        }
        self.line.wake_all();
    }

    /// When the lane connection unused longest (nothing in flight) was
    /// last used, if there is one.
    pub(crate) fn oldest_unused(&self) -> Option<Instant> {
        self.read()
            .iter()
            .filter(|c| c.in_flight.load(Ordering::Relaxed) == 0)
            .map(|c| c.last_used_ms.load(Ordering::Relaxed))
            .min()
            .map(|ms| self.epoch + Duration::from_millis(ms))
    }

    /// Closes the lane connection unused longest, to give its place in a
    /// connection budget to another pool; whether there was one. A
    /// statement that leased it just now still gets its answer (the
    /// connection closes after it).
    pub(crate) fn evict_unused(&self) -> bool {
        let evicted = {
            let mut conns = self.write();
            let oldest = conns
                .iter()
                .enumerate()
                .filter(|(_, c)| c.in_flight.load(Ordering::Relaxed) == 0)
                .min_by_key(|(_, c)| c.last_used_ms.load(Ordering::Relaxed))
                .map(|(i, _)| i);
            oldest.map(|i| conns.swap_remove(i))
        };
        match evicted {
            Some(c) => {
                c.retire(CloseReason::Idle);
                true
            }
            None => false,
        }
    }

    /// Retires broken connections, those past their lifetime, and idle ones
    /// (nothing in flight for `idle_timeout`).
    pub(crate) fn reap(&self, now: Instant, idle_timeout: Option<Duration>) {
        let now_ms = self.now_ms();
        let mut retired = Vec::new();
        let mut conns = self.write();
        conns.retain(|c| {
            let reason = if c.conn.client.is_closed() {
                CloseReason::Broken
            } else if c.conn.expired(now) {
                CloseReason::Lifetime
            } else if c.in_flight.load(Ordering::Relaxed) == 0
                && idle_timeout.is_some_and(|t| {
                    now_ms.saturating_sub(c.last_used_ms.load(Ordering::Relaxed))
                        >= t.as_millis() as u64
                })
            {
                CloseReason::Idle
            } else {
                return true;
            };
            c.retire(reason);
            retired.push(c.clone());
            false
        });
        // Closing takes each connection's own lock: not under ours.
        drop(conns);
        if !retired.is_empty() {
            self.line.wake_first();
        }
        drop(retired);
    }
}

impl LaneConn {
    /// Marks it out of the lane (callers pinned to it move on) and why it
    /// closes.
    fn retire(&self, reason: CloseReason) {
        self.retired.store(true, Ordering::Relaxed);
        self.conn.set_reason(reason);
    }
}

impl Lease<'_> {
    pub(crate) fn client(&self) -> &Client {
        &self.conn.conn.client
    }

    /// Looks at the connection after a statement: one found closed leaves
    /// the lane, and so does one left inside a transaction (someone ran
    /// BEGIN through `Pool::execute`): the other statements sharing it must
    /// not run in that transaction.
    ///
    /// A statement that timed out retires the connection too: it could not
    /// be cancelled (others share the connection), so it still holds up
    /// everything pipelined behind it, and on a dead link (no RST, no FIN)
    /// the connection would otherwise stay in the lane, timing out every
    /// statement handed to it, forever.
    pub(crate) fn finish(self, error: Option<&Error>) {
        let client = self.client();
        if error.is_some_and(|e| client.is_closed() || e.is_timeout()) {
            self.lane.remove(&self.conn, CloseReason::Broken);
        } else if client.transaction_status() != TransactionStatus::Idle {
            tracing::warn!(
                target: "pgpipe::pool",
                backend_pid = client.backend_pid(),
                "a statement run through Pool::query/execute left a transaction open; \
                 closing that shared connection (use Pool::transaction or Pool::get for transactions)"
            );
            self.lane.remove(&self.conn, CloseReason::Broken);
        }
    }
}

impl Drop for Lease<'_> {
    fn drop(&mut self) {
        if let Some(id) = self.caller {
            let mut callers = self.lane.callers();
            if let Some(pinned) = callers.get_mut(&id) {
                // The task may have moved on from a retired connection.
                if Arc::ptr_eq(&pinned.conn, &self.conn) {
                    pinned.statements = pinned.statements.saturating_sub(1);
                    if pinned.statements == 0 {
                        callers.remove(&id);
                    }
                }
            }
        }
        // Sequentially consistent with the line's length: either this
        // sees a task that joined the line, or that task sees the room.
        let before = self.conn.in_flight.fetch_sub(1, Ordering::SeqCst);
        // A lease counted itself in: `before` is at least 1.
        let left = before.saturating_sub(1);
        self.conn.pace.answered(left);
        if left < self.lane.room && !self.lane.line.is_empty() {
            self.lane.line.wake_first();
        }
    }
}

/// A new task's statement waiting for its turn on a full lane
/// ([`Lane::turn`]); gives up its share of the task's place when dropped
/// before its turn.
pub(crate) struct TurnWait<'a> {
    lane: &'a Lane,
    id: task::Id,
    standing: Standing,
}

impl Future for TurnWait<'_> {
    type Output = ();

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        let this = &mut *self;
        let lane = this.lane;
        let turn = lane.line.poll_turn(
            this.id,
            &mut this.standing,
            cx,
            || lane.is_admitted(this.id),
            |reserved| lane.has_room(&lane.read(), || reserved),
        );
        match turn {
            Turn::Go => Poll::Ready(()),
            Turn::Wait => Poll::Pending,
        }
    }
}

impl Drop for TurnWait<'_> {
    fn drop(&mut self) {
        self.lane.line.leave(self.standing);
    }
}
