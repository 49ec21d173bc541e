//! Coalesced Sync (opt-in): statements from different callers that the
//! driver writes in one go share one Sync.
//!
//! PostgreSQL ends an implicit transaction and flushes its output at every
//! Sync, which caps a connection near one statement per server flush. A
//! group of statements under one Sync costs the server one commit and one
//! flush, but it also runs them in one implicit transaction: if one fails,
//! the ones before it are rolled back and the ones after it are skipped.
//! So:
//!
//! - A request joins the group being built at the end of the write buffer
//!   (encoded without its Sync); any other write seals the group (appends
//!   the Sync) first, and so does the driver when it takes the buffer.
//!   Nothing waits for company: a lone member is an ordinary request.
//! - From the second member on, the group's response goes to one carrier
//!   [`Slot`] in the queue; at the group's ReadyForQuery the driver splits
//!   it per member ([`settle`]) and only then hands each caller its part, so
//!   nothing is reported done before it is committed.
//! - If a member failed, its caller gets the error; every other member is
//!   sent again on its own Sync, once (a member refused with 25001, "cannot
//!   run inside a transaction block", is sent again too). Inside an explicit
//!   transaction block (status not idle at the end) the members before the
//!   failure did run and stay: only those after it are sent again.
//! - After a failure, the callers of all the group's members (the failed
//!   one too) are woken together, in the group's order, when the last of
//!   them has its answer ([`Hold`]), so that their next statements form
//!   one group again instead of one group per caller.
//!
//! Which requests may join is decided here too ([`eligible_sql`],
//! [`plain_statement`]): one unnamed or already-prepared statement (no
//! Parse of a named statement, which is not transactional and could not be
//! sent twice; no Close), never transaction control, SET, COPY and the like.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock, Weak};

use bytes::{Bytes, BytesMut};
use pgpipe_proto::backend::{tag, ErrorFields, TransactionStatus};
use pgpipe_proto::frame::frames;
use pgpipe_proto::frontend::SYNC;

use crate::driver::Slot;
use crate::Error;

/// One statement of a group: its caller's slot and its bytes (without the
/// Sync), kept to send it again on its own if a neighbour fails.
pub(crate) struct Member {
    slot: Arc<Slot>,
    bytes: Bytes,
}

/// The members of a group, in the order they were written.
#[derive(Default)]
pub(crate) struct Group {
    members: Mutex<Vec<Member>>,
}

impl Group {
    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<Member>> {
        self.members.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// How many requests this group stands for.
    pub(crate) fn len(&self) -> usize {
        self.lock().len()
    }

    /// Every member's slot (the connection failed: each caller is told).
    pub(crate) fn slots(&self) -> Vec<Arc<Slot>> {
        self.lock().iter().map(|m| m.slot.clone()).collect()
    }
}

/// The group being built at the end of the write buffer (queue side).
#[derive(Default)]
pub(crate) struct Open {
    /// The only member so far: its slot (the last one queued) and where its
    /// bytes start in the write buffer (they run to its end). Copied only
    /// when a second member makes it a group.
    first: Option<(Arc<Slot>, usize)>,
    /// From the second member on: the carrier, the last slot queued.
    carrier: Option<Arc<Slot>>,
    /// How many members it has.
    members: usize,
    /// Where the members' bytes are kept to be sent again: each member's
    /// is split off as it joins, so a group's share one allocation.
    kept: BytesMut,
}

impl Open {
    fn is_open(&self) -> bool {
        self.first.is_some() || self.carrier.is_some()
    }

    /// Ends the group; what is left of `kept` serves the next ones.
    fn end(&mut self) {
        self.first = None;
        self.carrier = None;
        self.members = 0;
    }

    /// A copy of `bytes` (a member's), sharing `kept`'s allocation.
    fn keep(&mut self, bytes: &[u8]) -> Bytes {
        // Room for groups of point selects in one allocation.
        const CHUNK: usize = 4096;
        if self.kept.capacity() < bytes.len() {
            self.kept.reserve(bytes.len().max(CHUNK));
        }
        self.kept.extend_from_slice(bytes);
        self.kept.split().freeze()
    }
}

/// Ends the group at the end of `buf` with its Sync, if one is open. Every
/// write to the buffer that is not a joining member calls this first.
pub(crate) fn seal(open: &mut Open, buf: &mut BytesMut) {
    if open.is_open() {
        buf.extend_from_slice(SYNC);
        open.end();
    }
}

/// Like [`seal`], with the Sync put at `at`, in front of a request already
/// encoded there (one that turned out unable to join).
fn seal_at(open: &mut Open, buf: &mut BytesMut, at: usize) {
    if open.is_open() {
        let tail = buf.split_off(at);
        buf.extend_from_slice(SYNC);
        buf.unsplit(tail);
        open.end();
    }
}

/// Forgets the open group (the write buffer was discarded).
pub(crate) fn reset(open: &mut Open) {
    open.end();
}

/// Called with a request just encoded at `buf[start..]` (ending in its own
/// Sync) whose caller asked for coalescing: joins it to the open group (its
/// Sync removed) and returns true, or, if its messages can't be sent twice,
/// seals the open group in front of it and returns false (the caller queues
/// `slot` as usual). An open group of `cap` members (see [`GroupSize`]) is
/// sealed first: the request starts the next one.
pub(crate) fn join(
    open: &mut Open,
    buf: &mut BytesMut,
    slots: &mut VecDeque<Arc<Slot>>,
    start: usize,
    slot: &Arc<Slot>,
    cap: usize,
) -> bool {
    if !plain_statement(&buf[start..]) {
        seal_at(open, buf, start);
        return false;
    }
    let start = if open.members >= cap {
        seal_at(open, buf, start);
        start + SYNC.len()
    } else {
        start
    };
    open.members += 1;
    buf.truncate(buf.len() - SYNC.len());
    if let Some(carrier) = open.carrier.clone() {
        let member = Member {
            slot: slot.clone(),
            bytes: open.keep(&buf[start..]),
        };
        if let Some(group) = carrier.group() {
            group.lock().push(member);
        }
    } else if let Some((first_slot, first_start)) = open.first.take() {
        // The first member's slot is the last queued and its bytes run up
        // to this one's (anything written after it would have sealed the
        // group): the carrier takes its place.
        let last = slots.pop_back();
        debug_assert!(last.is_some_and(|s| Arc::ptr_eq(&s, &first_slot)));
        let first = Member {
            slot: first_slot,
            bytes: open.keep(&buf[first_start..start]),
        };
        let member = Member {
            slot: slot.clone(),
            bytes: open.keep(&buf[start..]),
        };
        let carrier = Arc::new(Slot::carrier(Group {
            members: Mutex::new(vec![first, member]),
        }));
        slots.push_back(carrier.clone());
        open.carrier = Some(carrier);
    } else {
        slots.push_back(slot.clone());
        open.first = Some((slot.clone(), start));
    }
    true
}

/// Whether `sql` may share a Sync: not transaction control (BEGIN, START,
/// COMMIT, END, ROLLBACK, ABORT, SAVEPOINT, RELEASE, PREPARE TRANSACTION),
/// not session state (SET, RESET, DISCARD, LISTEN, UNLISTEN, DEALLOCATE),
/// not COPY (a COPY FROM STDIN would wait for data the group can't send).
pub(crate) fn eligible_sql(sql: &str) -> bool {
    let word = crate::sql::first_keyword(sql);
    const NEVER: &[&str] = &[
        "begin",
        "start",
        "commit",
        "end",
        "rollback",
        "abort",
        "savepoint",
        "release",
        "prepare",
        "set",
        "reset",
        "discard",
        "listen",
        "unlisten",
        "deallocate",
        "copy",
    ];
    !word.is_empty() && !NEVER.iter().any(|w| w.eq_ignore_ascii_case(word))
}

/// Whether `bytes` is one statement that can be sent twice: Parse of the
/// unnamed statement, Bind, Describe, one Execute, then a Sync at the end.
pub(crate) fn plain_statement(bytes: &[u8]) -> bool {
    let mut executes = 0;
    for frame in frames(bytes) {
        let Ok(frame) = frame else {
            return false;
        };
        match frame.tag {
            // Parse: the statement name comes first; empty is unnamed.
            b'P' if frame.body.first() == Some(&0) => {}
            b'B' | b'D' => {}
            b'E' => executes += 1,
            b'S' if frame.end == bytes.len() => return executes == 1,
            _ => return false,
        }
    }
    false
}

/// What [`settle`] decided for a group.
pub(crate) struct Settled {
    /// Members whose callers get their answer now, with their part.
    answered: Vec<(Arc<Slot>, Bytes)>,
    /// The group's ReadyForQuery, which ends every answered member's part.
    rfq: Bytes,
    /// Members to send again, each on its own Sync, in their order: those
    /// that ran and were rolled back (a second run must not be rolled back
    /// by a neighbour again) and any refused with 25001.
    pub(crate) again: Vec<(Arc<Slot>, Bytes)>,
    /// Members the server skipped after the failure: they never ran, so
    /// they may share a Sync again, like any new request.
    pub(crate) rejoin: Vec<(Arc<Slot>, Bytes)>,
    /// Every member in the group's order, kept when one failed: their
    /// callers are woken in that order (see [`Settled::hold_together`]).
    in_order: Vec<Arc<Slot>>,
}

impl Settled {
    /// How many members get their answer now.
    pub(crate) fn delivered(&self) -> usize {
        self.answered.len()
    }

    /// When some members must run again: makes every member's caller, the
    /// failed one's too, wait for the last of them (see [`Hold`]).
    ///
    /// They are woken in the group's order, so their next statements keep
    /// it: moving the failed caller to the front (or back) would sort the
    /// group by how recently each caller failed, and a caller that fails
    /// periodically would then keep failing at the same end of the group
    /// (at the back, every neighbour before it runs twice).
    pub(crate) fn hold_together(&self) {
        if !self.in_order.is_empty() {
            Hold::start(self.in_order.iter());
        }
    }

    /// Hands each answered member its part and a ReadyForQuery of its own
    /// (the driver counts them finished first: a woken caller must not see
    /// its request still pending), with the carrier's clock readings
    /// (`stamps`, when it was timed) for its queue and server times.
    pub(crate) fn hand_over(self, stamps: Option<crate::observe::Stamps>) {
        for (slot, part) in self.answered {
            if let Some(stamps) = stamps {
                slot.set_stamps(stamps);
            }
            slot.deliver_chunks([part, self.rfq.clone()], true);
        }
    }
}

/// The group's response (`response`: every message up to and including its
/// ReadyForQuery) split per member: the members answered now with their
/// parts (see [`Settled::hand_over`]), and those that must run again. A response that does not fit the members is a protocol
/// error.
pub(crate) fn settle(group: &Group, response: Bytes) -> Result<Settled, Error> {
    let members = std::mem::take(&mut *group.lock());
    let mismatch = || Error::protocol("a coalesced group's response does not match its statements");
    // Walk the messages: each member's part ends at its CommandComplete,
    // EmptyQueryResponse, PortalSuspended or ErrorResponse.
    let mut parts: Vec<(usize, usize)> = Vec::with_capacity(members.len());
    let mut failed: Option<(usize, bool)> = None;
    let mut part_start = 0usize;
    let mut status = None;
    let mut walk = frames(&response);
    for frame in walk.by_ref() {
        let frame = frame.map_err(|_| mismatch())?;
        match frame.tag {
            tag::READY_FOR_QUERY => {
                status = frame
                    .body
                    .first()
                    .copied()
                    .and_then(TransactionStatus::from_byte);
                break;
            }
            tag::COMMAND_COMPLETE
            | tag::EMPTY_QUERY_RESPONSE
            | tag::PORTAL_SUSPENDED
            | tag::ERROR_RESPONSE => {
                if failed.is_some() || parts.len() == members.len() {
                    return Err(mismatch());
                }
                if frame.tag == tag::ERROR_RESPONSE {
                    // 25001: refused inside a transaction block (VACUUM...):
                    // the group made the block; alone it may well run.
                    let alone = ErrorFields::sqlstate_in_body(frame.body) == Some(b"25001");
                    failed = Some((parts.len(), alone));
                }
                parts.push((part_start, frame.end));
                part_start = frame.end;
            }
            _ => {}
        }
    }
    let at = walk.position();
    let Some(status) = status else {
        return Err(mismatch());
    };
    if at != response.len() || (failed.is_none() && parts.len() != members.len()) {
        return Err(mismatch());
    }
    let mut settled = Settled {
        answered: Vec::with_capacity(members.len()),
        rfq: response.slice(at - 6..at),
        again: Vec::new(),
        rejoin: Vec::new(),
        in_order: Vec::new(),
    };
    if failed.is_some() {
        settled.in_order = members.iter().map(|m| m.slot.clone()).collect();
    }
    for (i, member) in members.into_iter().enumerate() {
        let again = match failed {
            None => false,
            // Outside a transaction block the whole group was rolled back.
            Some((k, alone)) if status == TransactionStatus::Idle => i != k || alone,
            // Inside one, what ran before the failure stays.
            Some((k, _)) => i > k,
        };
        if again {
            let skipped =
                status == TransactionStatus::Idle && matches!(failed, Some((k, _)) if i > k);
            if skipped {
                settled.rejoin.push((member.slot, member.bytes));
            } else {
                settled.again.push((member.slot, member.bytes));
            }
            continue;
        }
        let Some(&(from, to)) = parts.get(i) else {
            return Err(mismatch());
        };
        settled
            .answered
            .push((member.slot, response.slice(from..to)));
    }
    Ok(settled)
}

/// How many statements a group may hold: [`GroupSize::MAX`], or fewer
/// while statements fail.
///
/// A cap even without failures: with every statement of the connection in
/// one group, the server sits idle while the client reads the group's
/// answers and sends the next group, and the client sits idle while the
/// server runs it. Two or more groups in flight overlap the two. Measured on
/// one connection with 64 callers (docs/benchmarks.md): groups of 32 run
/// 3.5x tokio-postgres's point selects, one group of 64 2.5x. Past 32 a
/// Sync (about the cost of one more point select on the server) is spread
/// so thin that a larger group saves nothing.
///
/// Fewer while statements fail: a failure costs each member before it a
/// second run on its own Sync, about half the group. With a share `p` of
/// statements failing, a group of `g` pays `1 / g` Syncs a statement for
/// its own Sync and about `p * g / 2` for the runs again; the sum is least
/// at `g = sqrt(2 / p)`: 14 at 1 %, 45 (so 32) at 0.1 %.
///
/// Only the driver records (one writer), so plain loads and stores do.
#[derive(Default)]
pub(crate) struct GroupSize {
    /// Statements of groups that ended, halved with `failed` every
    /// [`GroupSize::WINDOW`] statements so that old groups fade out.
    statements: AtomicUsize,
    /// Groups among them where a statement failed.
    failed: AtomicUsize,
}

impl GroupSize {
    /// The most statements a group holds.
    pub(crate) const MAX: usize = 32;
    const WINDOW: usize = 4096;

    /// Driver side: a group of `members` statements ended, `failed` or not.
    pub(crate) fn record(&self, members: usize, failed: bool) {
        let mut statements = self.statements.load(Ordering::Relaxed) + members;
        let mut failures = self.failed.load(Ordering::Relaxed) + usize::from(failed);
        if statements >= Self::WINDOW {
            statements /= 2;
            failures /= 2;
        }
        self.statements.store(statements, Ordering::Relaxed);
        self.failed.store(failures, Ordering::Relaxed);
    }

    /// The most statements a group may hold now.
    pub(crate) fn cap(&self) -> usize {
        let failures = self.failed.load(Ordering::Relaxed);
        if failures == 0 {
            return Self::MAX;
        }
        let statements = self.statements.load(Ordering::Relaxed).max(1);
        let best = (2.0 * statements as f64 / failures as f64).sqrt() as usize;
        best.clamp(2, Self::MAX)
    }
}

/// The members of a group where one failed (the failed one, those sent
/// again alone and those that rejoin together): their callers are woken
/// together, once the last of them has its answer.
///
/// Each member sent alone ends at its own ReadyForQuery, one server flush
/// apart, and the failed one has its answer first. Woken one by one, their
/// callers would send their next statements one by one too, in groups of
/// one or two, and the connection would stay split into small groups long
/// after the failure: with 1 % failing statements on 64 callers, groups
/// averaged 4.9 statements instead of 64. Held, they come back as one
/// group. The wait adds no round trip: they were written together, so the
/// last answer is at most the server's time for them behind the first.
pub(crate) struct Hold {
    /// Members still waiting for their answer, plus one while
    /// [`Hold::start`] is still adding them.
    remaining: AtomicUsize,
    /// The members that joined, set once they all have.
    members: OnceLock<Vec<Weak<Slot>>>,
}

impl Hold {
    /// Holds the callers of `slots`, except those already held by another
    /// hold (that one wakes them) or already ended.
    pub(crate) fn start<'a>(slots: impl Iterator<Item = &'a Arc<Slot>>) {
        let hold = Arc::new(Hold {
            remaining: AtomicUsize::new(1),
            members: OnceLock::new(),
        });
        let mut members = Vec::new();
        for slot in slots {
            hold.remaining.fetch_add(1, Ordering::AcqRel);
            if slot.join_hold(&hold) {
                members.push(Arc::downgrade(slot));
            } else {
                hold.remaining.fetch_sub(1, Ordering::AcqRel);
            }
        }
        let _ = hold.members.set(members);
        hold.member_done();
    }

    /// One member has its answer (or its connection failed); the last one
    /// wakes every caller.
    pub(crate) fn member_done(&self) {
        if self.remaining.fetch_sub(1, Ordering::AcqRel) != 1 {
            return;
        }
        let members = self.members.get().map(Vec::as_slice).unwrap_or_default();
        for member in members.iter().filter_map(Weak::upgrade) {
            member.wake_caller();
        }
    }
}

/// Queues `again` (from [`settle`]) at the end of the write buffer, each
/// with its own Sync, sealing any group open there first.
pub(crate) fn send_again(
    open: &mut Open,
    buf: &mut BytesMut,
    slots: &mut VecDeque<Arc<Slot>>,
    again: Vec<(Arc<Slot>, Bytes)>,
) {
    seal(open, buf);
    for (slot, bytes) in again {
        buf.extend_from_slice(&bytes);
        buf.extend_from_slice(SYNC);
        slots.push_back(slot);
    }
}

/// Queues `rejoin` (from [`settle`]: members that never ran) at the end of
/// the write buffer as new requests that may share a Sync: they form a
/// group of their own, which later requests may join until the driver
/// takes the buffer. A member skipped again by another failure is skipped,
/// not run, so nothing here runs a statement twice; each round removes the
/// failing member, so the rounds end.
pub(crate) fn rejoin(
    open: &mut Open,
    buf: &mut BytesMut,
    slots: &mut VecDeque<Arc<Slot>>,
    rejoin: Vec<(Arc<Slot>, Bytes)>,
    cap: usize,
) {
    for (slot, bytes) in rejoin {
        let start = buf.len();
        buf.extend_from_slice(&bytes);
        buf.extend_from_slice(SYNC);
        if !join(open, buf, slots, start, &slot, cap) {
            slots.push_back(slot);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn transaction_control_and_session_state_never_join() {
        for sql in [
            "BEGIN",
            "  begin isolation level serializable",
            "-- note\nCOMMIT",
            "/* x */ rollback",
            // One nested comment, then BEGIN: the word inside is no keyword.
            "/* a /* b */ c */ BEGIN",
            "SAVEPOINT a",
            "set search_path = x",
            "COPY t FROM STDIN",
            "START TRANSACTION",
            "",
            "   ",
        ] {
            assert!(!eligible_sql(sql), "{sql:?}");
        }
        for sql in [
            "SELECT 1",
            "insert into t values ($1)",
            "(SELECT 1)",
            "WITH x AS (SELECT 1) SELECT * FROM x",
            "VACUUM t",
            // A word that starts like SET is not SET.
            "settings_table_select()",
        ] {
            assert!(eligible_sql(sql), "{sql:?}");
        }
    }

    fn msg(t: u8, body: &[u8]) -> Vec<u8> {
        let mut v = vec![t];
        v.extend_from_slice(&(body.len() as u32 + 4).to_be_bytes());
        v.extend_from_slice(body);
        v
    }

    #[test]
    fn only_one_unnamed_or_bound_statement_can_be_sent_twice() {
        let unnamed = [
            msg(b'P', b"\0SELECT 1\0\0\0"),
            msg(b'B', b"\0\0\0\0\0\0\0\0"),
            msg(b'D', b"P\0"),
            msg(b'E', b"\0\0\0\0\0"),
            SYNC.to_vec(),
        ]
        .concat();
        assert!(plain_statement(&unnamed));
        let named = [
            msg(b'P', b"s1\0SELECT 1\0\0\0"),
            msg(b'E', b"\0\0\0\0\0"),
            SYNC.to_vec(),
        ]
        .concat();
        assert!(!plain_statement(&named));
        let close = [msg(b'C', b"Ss1\0"), msg(b'E', b"\0\0\0\0\0"), SYNC.to_vec()].concat();
        assert!(!plain_statement(&close));
        let two = [
            msg(b'E', b"\0\0\0\0\0"),
            msg(b'E', b"\0\0\0\0\0"),
            SYNC.to_vec(),
        ]
        .concat();
        assert!(!plain_statement(&two));
        assert!(!plain_statement(&unnamed[..unnamed.len() - 5]));
        assert!(!plain_statement(b"S\0\0"));
    }

    fn response(parts: &[Vec<u8>], status: u8) -> Bytes {
        let mut v = parts.concat();
        v.extend_from_slice(&msg(b'Z', &[status]));
        Bytes::from(v)
    }

    fn group(n: usize) -> (Group, Vec<Arc<Slot>>) {
        let slots: Vec<Arc<Slot>> = (0..n).map(|_| Arc::new(Slot::new(None))).collect();
        let g = Group::default();
        for (i, s) in slots.iter().enumerate() {
            g.lock().push(Member {
                slot: s.clone(),
                bytes: Bytes::from(vec![i as u8]),
            });
        }
        (g, slots)
    }

    #[test]
    fn a_failure_sends_every_neighbour_again_outside_a_block() {
        let (g, slots) = group(3);
        let ok = [msg(b'2', b""), msg(b'C', b"SELECT 1\0")].concat();
        let err = msg(b'E', b"SERROR\0C22012\0Mdivision by zero\0\0");
        let settled = settle(&g, response(&[ok, err], b'I')).unwrap();
        assert_eq!(settled.delivered(), 1);
        // Member 0 ran and was rolled back: alone. Member 2 was skipped:
        // it never ran, so it may share a Sync again.
        let again: Vec<u8> = settled.again.iter().map(|(_, b)| b[0]).collect();
        assert_eq!(again, [0]);
        let rejoin: Vec<u8> = settled.rejoin.iter().map(|(_, b)| b[0]).collect();
        assert_eq!(rejoin, [2]);
        settled.hand_over(None);
        assert!(slots[1].is_done());
        assert!(!slots[0].is_done() && !slots[2].is_done());
    }

    #[test]
    fn a_25001_failure_runs_alone_again() {
        let (g, _) = group(2);
        let ok = msg(b'C', b"SELECT 1\0");
        let err = msg(b'E', b"SERROR\0C25001\0Mno\0\0");
        let settled = settle(&g, response(&[ok, err], b'I')).unwrap();
        assert_eq!(settled.delivered(), 0);
        assert_eq!(settled.again.len(), 2);
    }

    #[test]
    fn inside_a_block_what_ran_before_the_failure_stays() {
        let (g, slots) = group(3);
        let ok = msg(b'C', b"SELECT 1\0");
        let err = msg(b'E', b"SERROR\0C22012\0Mx\0\0");
        let settled = settle(&g, response(&[ok, err], b'E')).unwrap();
        assert_eq!(settled.delivered(), 2);
        assert_eq!(settled.again.len(), 1);
        settled.hand_over(None);
        assert!(slots[0].is_done() && slots[1].is_done());
    }

    #[test]
    fn skipped_members_rejoin_as_one_open_group() {
        let stmt = [msg(b'B', b"\0\0"), msg(b'E', b"\0\0\0\0\0")].concat();
        let members: Vec<Arc<Slot>> = (0..3).map(|_| Arc::new(Slot::new(None))).collect();
        let mut open = Open::default();
        let mut buf = BytesMut::new();
        let mut queue = VecDeque::new();
        rejoin(
            &mut open,
            &mut buf,
            &mut queue,
            members
                .iter()
                .map(|s| (s.clone(), Bytes::from(stmt.clone())))
                .collect(),
            GroupSize::MAX,
        );
        // One carrier for the three, and no Sync yet: later requests may
        // still join until the driver takes the buffer.
        assert_eq!(queue.len(), 1);
        assert_eq!(queue[0].group().map(Group::len), Some(3));
        assert_eq!(buf.len(), 3 * stmt.len());
        seal(&mut open, &mut buf);
        assert!(buf.ends_with(SYNC));
        assert_eq!(buf.len(), 3 * stmt.len() + SYNC.len());
    }

    #[test]
    fn a_full_group_is_sealed_and_the_next_statement_starts_another() {
        let stmt = [msg(b'B', b"\0\0"), msg(b'E', b"\0\0\0\0\0")].concat();
        let mut open = Open::default();
        let mut buf = BytesMut::new();
        let mut queue = VecDeque::new();
        for _ in 0..5 {
            let start = buf.len();
            buf.extend_from_slice(&stmt);
            buf.extend_from_slice(SYNC);
            let slot = Arc::new(Slot::new(None));
            if !join(&mut open, &mut buf, &mut queue, start, &slot, 2) {
                queue.push_back(slot);
            }
        }
        seal(&mut open, &mut buf);
        // Groups of 2, 2 and 1: three Syncs, each member's bytes whole.
        let sizes: Vec<usize> = queue
            .iter()
            .map(|s| s.group().map_or(1, Group::len))
            .collect();
        assert_eq!(sizes, [2, 2, 1]);
        let (b, s) = (stmt.as_slice(), SYNC);
        assert_eq!(buf, [b, b, s, b, b, s, b, s].concat());
        for carrier in queue.iter().filter_map(|s| s.group()) {
            for member in carrier.lock().iter() {
                assert_eq!(member.bytes, stmt);
            }
        }
    }

    #[test]
    fn groups_shrink_while_statements_fail_and_grow_back() {
        let size = GroupSize::default();
        assert_eq!(size.cap(), GroupSize::MAX);
        // One group in ten fails, groups of 10: 1 % of statements.
        for i in 0..1000 {
            size.record(10, i % 10 == 0);
        }
        assert_eq!(size.cap(), 14, "sqrt(2 / 1 %)");
        // Failures everywhere: the smallest group that still shares a Sync.
        for _ in 0..1000 {
            size.record(2, true);
        }
        assert_eq!(size.cap(), 2);
        // Failures stop: old ones fade out until the cap is back at its top.
        for _ in 0..1000 {
            size.record(32, false);
        }
        assert_eq!(size.cap(), GroupSize::MAX);
    }

    #[test]
    fn a_response_that_does_not_fit_is_a_protocol_error() {
        let ok = msg(b'C', b"SELECT 1\0");
        let (g, _) = group(2);
        assert!(settle(&g, response(std::slice::from_ref(&ok), b'I')).is_err());
        let (g, _) = group(1);
        assert!(settle(&g, response(&[ok.clone(), ok.clone()], b'I')).is_err());
        let (g, _) = group(1);
        assert!(settle(&g, Bytes::from(ok)).is_err());
    }
}

#[cfg(test)]
mod hold_tests {
    use std::sync::atomic::AtomicUsize;
    use std::sync::Arc;
    use std::task::{Context, Poll, Wake, Waker};

    use bytes::Bytes;

    use super::Hold;
    use crate::driver::{Responses, Slot};
    use crate::error::ErrorKind;

    #[derive(Default)]
    struct CountingWaker(AtomicUsize);

    impl Wake for CountingWaker {
        fn wake(self: Arc<Self>) {
            self.0.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        }
    }

    /// A waiting caller per slot, each with a waker that counts its wakes
    /// (and its reader, kept: a dropped one abandons the slot).
    fn waiting_callers(n: usize) -> Vec<(Arc<Slot>, Arc<CountingWaker>, Responses)> {
        (0..n)
            .map(|_| {
                let slot = Arc::new(Slot::new(None));
                let counter = Arc::new(CountingWaker::default());
                let waker = Waker::from(counter.clone());
                let mut responses = Responses::new(slot.clone());
                let pending = responses.poll_fill(&mut Context::from_waker(&waker));
                assert!(matches!(pending, Poll::Pending));
                (slot, counter, responses)
            })
            .collect()
    }

    fn wakes(counter: &CountingWaker) -> usize {
        counter.0.load(std::sync::atomic::Ordering::SeqCst)
    }

    fn answer(slot: &Slot) {
        slot.deliver(Bytes::from_static(b"C\0\0\0\x0dSELECT 1\0"), false);
        slot.deliver(Bytes::from_static(b"Z\0\0\0\x05I"), true);
    }

    #[test]
    fn held_callers_wake_together_when_the_last_one_has_its_answer() {
        let callers = waiting_callers(3);
        Hold::start(callers.iter().map(|(slot, _, _)| slot));
        answer(&callers[2].0);
        answer(&callers[0].0);
        assert!(callers.iter().all(|(_, c, _)| wakes(c) == 0));
        assert!(callers[0].0.is_done(), "answered while held");
        answer(&callers[1].0);
        assert!(callers.iter().all(|(_, c, _)| wakes(c) == 1));
    }

    #[test]
    fn a_failure_wakes_its_caller_at_once_and_counts_towards_the_hold() {
        let callers = waiting_callers(3);
        Hold::start(callers.iter().map(|(slot, _, _)| slot));
        callers[1].0.fail(ErrorKind::Closed, "connection closed");
        assert_eq!(wakes(&callers[1].1), 1);
        assert_eq!(wakes(&callers[0].1), 0);
        answer(&callers[0].0);
        answer(&callers[2].0);
        assert_eq!(wakes(&callers[0].1), 1);
        assert_eq!(wakes(&callers[2].1), 1);
    }

    #[test]
    fn a_slot_already_ended_or_held_does_not_delay_a_new_hold() {
        let callers = waiting_callers(4);
        answer(&callers[0].0);
        assert_eq!(wakes(&callers[0].1), 1);
        // Slots 1 and 2 are held by a first hold...
        Hold::start(callers[1..3].iter().map(|(slot, _, _)| slot));
        // ...and sent again with 3: only 3 waits for the new hold.
        Hold::start(callers.iter().map(|(slot, _, _)| slot));
        answer(&callers[3].0);
        assert_eq!(wakes(&callers[3].1), 1);
        answer(&callers[1].0);
        assert_eq!(wakes(&callers[1].1), 0);
        answer(&callers[2].0);
        assert_eq!(wakes(&callers[1].1), 1);
        assert_eq!(wakes(&callers[2].1), 1);
    }

    /// A waker that logs its caller's number when woken.
    struct LoggingWaker(usize, Arc<std::sync::Mutex<Vec<usize>>>);

    impl Wake for LoggingWaker {
        fn wake(self: Arc<Self>) {
            self.1.lock().unwrap().push(self.0);
        }
    }

    #[test]
    fn after_a_failure_every_caller_wakes_at_the_end_in_the_group_order() {
        let log = Arc::new(std::sync::Mutex::new(Vec::new()));
        let group = super::Group::default();
        let mut readers = Vec::new();
        let mut slots = Vec::new();
        for i in 0..4 {
            let slot = Arc::new(Slot::new(None));
            let waker = Waker::from(Arc::new(LoggingWaker(i, log.clone())));
            let mut responses = Responses::new(slot.clone());
            assert!(responses
                .poll_fill(&mut Context::from_waker(&waker))
                .is_pending());
            group.lock().push(super::Member {
                slot: slot.clone(),
                bytes: Bytes::from(vec![i as u8]),
            });
            readers.push(responses);
            slots.push(slot);
        }
        // Member 2 fails: 0 and 1 run again alone, 3 rejoins.
        let mut response = Vec::new();
        for part in [&b"C\0\0\0\x0dSELECT 1\0"[..], b"C\0\0\0\x0dSELECT 1\0"] {
            response.extend_from_slice(part);
        }
        response.extend_from_slice(b"E\0\0\0\x13SERROR\0C22012\0\0");
        response.extend_from_slice(b"Z\0\0\0\x05I");
        let mut settled = super::settle(&group, Bytes::from(response)).unwrap();
        assert_eq!((settled.again.len(), settled.rejoin.len()), (2, 1));
        settled.hold_together();
        let resent: Vec<_> = settled
            .again
            .drain(..)
            .chain(settled.rejoin.drain(..))
            .collect();
        settled.hand_over(None);
        assert!(slots[2].is_done(), "the failed member has its error");
        for (slot, _) in resent.iter().rev() {
            assert!(
                log.lock().unwrap().is_empty(),
                "woken before the last answer"
            );
            answer(slot);
        }
        assert_eq!(*log.lock().unwrap(), [0, 1, 2, 3]);
    }

    #[test]
    fn a_lone_member_wakes_at_its_own_answer() {
        let callers = waiting_callers(1);
        Hold::start(callers.iter().map(|(slot, _, _)| slot));
        answer(&callers[0].0);
        assert_eq!(wakes(&callers[0].1), 1);
    }
}
