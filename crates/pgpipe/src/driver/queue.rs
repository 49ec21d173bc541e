//! The request queue: the write buffer callers encode into, the response
//! slots waiting to be written, and the gather policy that decides when
//! the driver takes them.

use std::collections::VecDeque;
use std::sync::Arc;
use std::task::Waker;

use bytes::BytesMut;

use crate::driver::coalesce;
use crate::driver::reservation::Reservation;
use crate::driver::Slot;
use crate::driver::StatementCache;

/// Requests that may be queued or awaiting their answer on one connection.
pub(crate) const MAX_IN_FLIGHT: usize = 4096;

/// Requests in flight from which new requests gather in the write buffer
/// instead of going out one write each (see [`gathers`]), on a
/// current-thread runtime.
const GATHER_DEPTH: usize = 16;

/// The same on a multi-thread runtime, where a held request waits longer
/// for its release (see [`gathers`]): deep enough that the server still
/// has a millisecond or more of work when the held requests would be
/// needed. Measured (docs/benchmarks.md, "Issue 30, part 1: gathering
/// again on the multi-thread runtime, deeper"): at 256 tasks on one
/// connection, 64 cut the client's read and write calls per statement
/// from 1.44-1.52 to 0.95-0.97 and its CPU per statement from 1.03-1.19x
/// tokio-postgres's to 0.90-0.92x; two connections of 64 tasks never
/// reach it (16 starved their backends there).
const GATHER_DEPTH_MULTI_THREAD: usize = 64;

/// The most requests that gather: they go out together once this many
/// wait.
const GATHER_MAX: usize = 8;

/// The most bytes gathered before they are written anyway.
const GATHER_BYTES: usize = 16 * 1024;

/// Whether `slots` queued requests in `bytes` of write buffer are as many
/// as may gather: the driver writes them, and the queue wakes it when a
/// request crosses this line (see [`gathers`]).
pub(crate) fn gathered_enough(slots: usize, bytes: usize) -> bool {
    slots >= GATHER_MAX || bytes >= GATHER_BYTES
}

/// Whether the queued requests wait for company instead of being
/// written now. Under a deep pipeline each answer wakes one caller,
/// whose next request would otherwise be one write (one `send`, and on
/// loopback the server's side of TCP too) per statement: most of a
/// per-statement client's CPU. So while at least `depth` requests
/// ([`gather_depth`]) are in flight and the socket is drained, up to
/// [`GATHER_MAX`] new ones gather and go out in one write; they go as
/// soon as that many wait or fewer are in flight (checked after every
/// read). That costs no latency: the server runs requests in order,
/// so a new one could not start before those in flight anyway, and
/// when it is written many of them are still ahead of it. The cap is
/// what keeps that margin: letting every answered caller's request
/// wait until only 16 were left starved the backends whenever this
/// thread was descheduled (two connections on a busy 2-core machine
/// fell from 120k to 85-90k statements/s). It cannot deadlock: what is
/// in flight completes without any later write, except for what
/// `flush_now` marks (COPY data, CopyFail, Terminate, a session's
/// end), and a session's own statements are never held. Not when the
/// driver is behind (its last read filled what it asked for): the server may
/// then be idle, waiting. `in_flight`: requests written and not yet
/// answered; `caught_up`: the driver's last read drained the socket.
///
/// The depth is [`GATHER_DEPTH`] on a current-thread runtime and
/// [`GATHER_DEPTH_MULTI_THREAD`] on a multi-thread one. There the held
/// requests go at the driver's next read, and that waits for a worker to
/// poll tokio's I/O driver, which a worker busy with the answered callers
/// does only when it runs out of tasks (or every few dozen polls): with too
/// shallow a margin the server runs dry meanwhile. Measured with 16 there
/// (`pipeline 2conn`, two connections of 64 tasks, 2 cores): the backends
/// switched 0.13 times per statement instead of 0.04, the client
/// 0.38-0.42 times instead of 0.13-0.21, and the rate fell from 48-50k to
/// 36-47k statements/s; on one thread gathering saves about a seventh of
/// the client's CPU per statement at the same rate (docs/benchmarks.md,
/// "Issue 30, part 1: gathered writes only on one thread, and parks per
/// operation").
pub(super) fn gathers(q: &Queue, in_flight: usize, depth: usize, caught_up: bool) -> bool {
    // Terminate sets `flush_now` too.
    caught_up
        && in_flight >= depth
        && !gathered_enough(q.slots.len(), q.write_buf.len())
        && !q.flush_now
        && !q.is_reserved()
}

/// The requests in flight from which new ones gather (see [`gathers`])
/// under the runtime polling the driver: [`GATHER_DEPTH`] on a
/// current-thread runtime, [`GATHER_DEPTH_MULTI_THREAD`] otherwise (also
/// outside any runtime, where nobody knows how soon the next poll comes).
pub(super) fn gather_depth() -> usize {
    let current_thread = tokio::runtime::Handle::try_current()
        .is_ok_and(|h| h.runtime_flavor() == tokio::runtime::RuntimeFlavor::CurrentThread);
    if current_thread {
        GATHER_DEPTH
    } else {
        GATHER_DEPTH_MULTI_THREAD
    }
}

/// What callers queue for the driver, under the one short lock of
/// [`Shared`](crate::driver::Shared).
pub(crate) struct Queue {
    pub(crate) write_buf: BytesMut,
    pub(crate) slots: VecDeque<Arc<Slot>>,
    /// Why the connection can take no more requests.
    pub(crate) closed: Option<String>,
    /// Terminate was queued: the driver finishes once it is written and
    /// every request in flight is answered (or the server hangs up).
    pub(crate) terminating: bool,
    /// A caller found the server breaking the protocol (or gave up on a
    /// query the server would not end): the driver closes the connection,
    /// failing the other requests with this kind and reason.
    pub(crate) abort: Option<(crate::ErrorKind, String)>,
    pub(crate) driver_waker: Option<Waker>,
    /// While set the driver sends nothing new: a cancel for the only
    /// request in flight is under way and must not hit a later one.
    pub(crate) write_gate: bool,
    /// Something in the write buffer must reach the server now: bytes a
    /// request in flight waits for (COPY data, CopyDone, CopyFail),
    /// Terminate, or a session's end. The driver never lets such a buffer
    /// gather (see [`gathers`]). Cleared when the driver takes
    /// the buffer.
    pub(crate) flush_now: bool,
    /// Lives under the same lock as the write buffer: a lookup and the
    /// request that relies on it are one atomic step.
    pub(crate) cache: StatementCache,
    /// A session (transaction, COPY) that has the connection to itself.
    pub(super) reservation: Option<Reservation>,
    /// Handed to requests encoded while another session holds the
    /// connection: they are sent later, after the session's own requests,
    /// so they must not rely on (or create) cached statements whose Parse
    /// would travel in a different order.
    pub(super) no_cache: StatementCache,
    /// A COPY IN writer waiting for the write buffer to drain below its
    /// bound (see [`Shared::poll_write_room`](crate::driver::Shared::poll_write_room)): woken when the driver takes
    /// the buffer.
    pub(crate) writer_waker: Option<Waker>,
    /// The coalesced group open at the end of `write_buf`, if any.
    pub(crate) group: coalesce::Open,
}

impl Queue {
    /// Ends a coalesced group open at the end of the write buffer.
    pub(crate) fn seal_group(&mut self) {
        coalesce::seal(&mut self.group, &mut self.write_buf);
    }

    /// Whether a session (transaction, COPY) has the connection: its
    /// statements are never held back (see [`gathers`]).
    pub(crate) fn is_reserved(&self) -> bool {
        self.reservation.is_some()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_gather_from_16_in_flight_on_one_thread() {
        let rt = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        assert_eq!(rt.block_on(async { gather_depth() }), GATHER_DEPTH);
        assert_eq!(GATHER_DEPTH, 16);
    }

    #[test]
    fn requests_gather_only_from_64_in_flight_on_a_multi_thread_runtime() {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .build()
            .unwrap();
        assert_eq!(
            rt.block_on(async { tokio::spawn(async { gather_depth() }).await.unwrap() }),
            GATHER_DEPTH_MULTI_THREAD
        );
        assert_eq!(GATHER_DEPTH_MULTI_THREAD, 64);
        // Outside any runtime nobody knows how soon the next poll comes.
        assert_eq!(gather_depth(), GATHER_DEPTH_MULTI_THREAD);
    }
}
