//! The shared lane's admission line: first come, first served once the
//! lane is full.
//!
//! Off unless [`PoolConfig::shared_line_at`](crate::PoolConfig::shared_line_at)
//! sets a depth. A statement placed on a lane connection waits behind that
//! connection's whole pipeline. While every lane connection already holds
//! that many statements, a task with none in flight would only add to a pipeline
//! that may slow after it was chosen (its backend preempted on a busy
//! server, a lock): it waits here instead, in arrival order, and goes
//! where room frees first. So a slow connection takes fewer new requests,
//! and a request's wait is bounded by the line ahead of it, not by which
//! pipeline it happened to land on. A task already admitted (with
//! statements in flight) never waits: its statements stay together.
//!
//! Measured at saturation (`pgpipe-bench http --mix queries-20
//! --connections 64`), the per-statement p99 was twice tokio-postgres
//! with deadpool's without the line: the lane's four backends never ran
//! dry, so the kernel preempted them (thousands of involuntary switches a
//! second) and every request queued behind a preempted backend waited for
//! it. See docs/benchmarks.md for the figures with the line, and for its
//! price (a sixth of the rate of many single-statement tasks on a narrow
//! lane, the bench's `pool 256x8-line64`), which is why it is a setting.
//!
//! Room is counted in statements: the free places left below the depth
//! on every lane connection, less the statements of tasks admitted but
//! not yet placed. A task admitted from the line brings every statement
//! that waited in its place, and reserves room for them as it goes in, so
//! the next in line does not take room that is already spoken for (on a
//! multi-thread runtime it may look before they are placed, and a task
//! behind a request of 140 statements went in beside it). Room for many
//! small tasks still admits many: each admission wakes the next, which
//! goes in if room is left after the reservations.
//!
//! Statements outside a tokio task (`block_on`) have no caller to queue,
//! and a lane of one connection keeps no line (its pipeline is already
//! first come, first served). A task's statements that start after it was
//! admitted, in a later poll, are not in its reservation: the bound is
//! soft by those.
//!
//! Several statements of one task wait as one place in line; the place is
//! given up when the last of them is dropped (a timeout, a cancelled
//! request), and the next in line is woken if it became first.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, MutexGuard};
use std::task::{Context, Waker};

use tokio::task;

/// A task waiting for its turn.
struct Place {
    /// Names this place, not its task: a task may wait again later, in a
    /// new place, while a statement still holds a share of the old one.
    ticket: u64,
    task: task::Id,
    /// Its waiting statements' wakers: the task's own when it polls them
    /// itself (`join!`, a small `try_join_all`), one each under a
    /// `FuturesUnordered`. All are woken when it is the task's turn.
    wakers: Vec<Waker>,
    /// The task's statements waiting in this place.
    waiting: usize,
}

impl Place {
    fn wake(&self) {
        for waker in &self.wakers {
            waker.wake_by_ref();
        }
    }
}

#[derive(Default)]
struct Places {
    queue: VecDeque<Place>,
    next_ticket: u64,
}

impl Places {
    fn find(&self, ticket: u64) -> Option<usize> {
        self.queue.iter().position(|p| p.ticket == ticket)
    }

    /// Takes one share off place `i`; removes it (and says so) at zero.
    fn give_up_share(&mut self, i: usize) -> bool {
        let place = &mut self.queue[i];
        place.waiting = place.waiting.saturating_sub(1);
        if place.waiting == 0 {
            self.queue.remove(i);
            true
        } else {
            false
        }
    }
}

/// The tasks waiting for room on the lane, in arrival order, and the room
/// promised to those let in.
#[derive(Default)]
pub(crate) struct Line {
    places: Mutex<Places>,
    /// `places.queue.len()`, read without the lock on every statement's end.
    len: AtomicUsize,
    /// Statements of tasks admitted from the line that have not leased
    /// yet: room the next in line must leave them.
    reserved: AtomicUsize,
}

/// Where one statement stands with the line; kept by its wait.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) enum Standing {
    /// Not in line (yet, or any more).
    #[default]
    Out,
    /// Holds a share of the place with this ticket. Once that place is
    /// gone the share became a reservation: its task was admitted.
    In(u64),
}

/// Where a statement stands in [`Line::poll_turn`].
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Turn {
    /// It may lease now.
    Go,
    /// It waits to be woken.
    Wait,
}

impl Line {
    fn places(&self) -> MutexGuard<'_, Places> {
        self.places.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Whether no task waits (a hint: read without the lock).
    pub(crate) fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// How many tasks wait.
    pub(crate) fn len(&self) -> usize {
        self.len.load(Ordering::SeqCst)
    }

    /// Statements of admitted tasks that have not leased yet.
    pub(crate) fn reserved(&self) -> usize {
        self.reserved.load(Ordering::SeqCst)
    }

    fn set_len(&self, places: &Places) {
        self.len.store(places.queue.len(), Ordering::SeqCst);
    }

    fn reserve(&self, n: usize) {
        self.reserved.fetch_add(n, Ordering::SeqCst);
    }

    fn release_one(&self) {
        // Saturating: a miscount must not turn into a full lane forever.
        let _ = self
            .reserved
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1));
    }

    /// One poll of task `id`'s statement: `Go` when the task was admitted
    /// meanwhile (`admitted()`), or it is first in line and the lane has
    /// room once the reservations are left (`room(reserved)`), in which
    /// case its place leaves the line and reserves room for the place's
    /// other statements; else it takes or shares the task's place and
    /// waits to be woken. `standing` is this statement's, kept between
    /// polls.
    pub(crate) fn poll_turn(
        &self,
        id: task::Id,
        standing: &mut Standing,
        cx: &Context<'_>,
        admitted: impl Fn() -> bool,
        room: impl Fn(usize) -> bool,
    ) -> Turn {
        let mut places = self.places();
        let mut at = None;
        if let Standing::In(ticket) = *standing {
            at = places.find(ticket);
            if at.is_none() {
                // Its place was admitted: the reservation is used now
                // (this statement leases, or queues afresh below).
                self.release_one();
                *standing = Standing::Out;
            }
        }
        if admitted() {
            // A sibling statement got the task in: this one joins it.
            if let Some(i) = at {
                places.give_up_share(i);
            }
            *standing = Standing::Out;
            self.set_len(&places);
            return Turn::Go;
        }
        let i = match at {
            Some(i) => i,
            None => match places.queue.iter().position(|p| p.task == id) {
                Some(i) => {
                    places.queue[i].waiting += 1;
                    i
                }
                None => {
                    let ticket = places.next_ticket;
                    places.next_ticket += 1;
                    places.queue.push_back(Place {
                        ticket,
                        task: id,
                        wakers: Vec::new(),
                        waiting: 1,
                    });
                    places.queue.len() - 1
                }
            },
        };
        let place = &mut places.queue[i];
        *standing = Standing::In(place.ticket);
        if !place.wakers.iter().any(|w| w.will_wake(cx.waker())) {
            place.wakers.push(cx.waker().clone());
        }
        // Published before looking for room: a statement ending after the
        // look sees a waiter and wakes the first in line.
        self.set_len(&places);
        if i == 0 && room(self.reserved()) {
            if let Some(place) = places.queue.pop_front() {
                // This statement leases at once; the others follow when
                // woken, into room kept for them.
                self.reserve(place.waiting - 1);
                for waker in &place.wakers {
                    if !waker.will_wake(cx.waker()) {
                        waker.wake_by_ref();
                    }
                }
            }
            // Room for one is often room for many (a read answers a batch
            // of statements, and each answer woke only the first in line):
            // the next looks too, and goes in if room is left after this
            // task's reservation. Without this, single-statement tasks
            // were admitted one per batch and the pipelines ran dry (a
            // fifth of the rate of 256 such tasks on a lane of two).
            if let Some(next) = places.queue.front() {
                next.wake();
            }
            *standing = Standing::Out;
            self.set_len(&places);
            return Turn::Go;
        }
        Turn::Wait
    }

    /// A waiting statement went away (timed out, cancelled): its share of
    /// the place is given up, and the place with the last share, or the
    /// room reserved for it if its task was admitted. Whoever may now go
    /// first is woken to look for room.
    pub(crate) fn leave(&self, standing: Standing) {
        let Standing::In(ticket) = standing else {
            return;
        };
        let mut places = self.places();
        match places.find(ticket) {
            Some(i) => {
                let gone = places.give_up_share(i);
                self.set_len(&places);
                if gone && i == 0 {
                    if let Some(first) = places.queue.front() {
                        first.wake();
                    }
                }
            }
            None => {
                self.release_one();
                if let Some(first) = places.queue.front() {
                    first.wake();
                }
            }
        }
    }

    /// Room may have freed: the first in line looks again.
    pub(crate) fn wake_first(&self) {
        if let Some(first) = self.places().queue.front() {
            first.wake();
        }
    }

    /// The lane was cleared (the pool closed): everyone looks again, and
    /// finds the lane empty.
    pub(crate) fn wake_all(&self) {
        for place in self.places().queue.iter() {
            place.wake();
        }
    }
}

#[cfg(test)]
mod tests {
    use std::cell::Cell;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;
    use std::task::{Context, Wake, Waker};

    use tokio::task;

    use super::{Line, Standing, Turn};

    /// Counts its wake-ups.
    #[derive(Default)]
    struct Count(AtomicUsize);

    impl Wake for Count {
        fn wake(self: Arc<Self>) {
            self.0.fetch_add(1, Ordering::SeqCst);
        }
        fn wake_by_ref(self: &Arc<Self>) {
            self.0.fetch_add(1, Ordering::SeqCst);
        }
    }

    impl Count {
        fn get(&self) -> usize {
            self.0.load(Ordering::SeqCst)
        }
    }

    /// `n` distinct task ids (only a runtime hands them out).
    fn task_ids(n: usize) -> Vec<task::Id> {
        let rt = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        rt.block_on(async {
            let mut ids = Vec::new();
            for _ in 0..n {
                ids.push(tokio::spawn(async { task::id() }).await.unwrap());
            }
            ids
        })
    }

    /// The lane as the line sees it: `free` places below the depth;
    /// a statement that goes in takes one.
    struct Lane {
        line: Line,
        free: Cell<usize>,
    }

    impl Lane {
        fn new() -> Lane {
            Lane {
                line: Line::default(),
                free: Cell::new(0),
            }
        }

        fn poll(
            &self,
            id: task::Id,
            standing: &mut Standing,
            waker: &Waker,
            admitted: bool,
        ) -> Turn {
            let cx = Context::from_waker(waker);
            let turn = self.line.poll_turn(
                id,
                standing,
                &cx,
                || admitted,
                |reserved| self.free.get() > reserved,
            );
            if turn == Turn::Go {
                self.free.set(self.free.get().saturating_sub(1));
            }
            turn
        }
    }

    /// A full lane where task `a` waits with `n` statements, then task
    /// `b` with one.
    struct TwoInLine {
        lane: Lane,
        a: task::Id,
        b: task::Id,
        a_waker: Waker,
        a_statements: Vec<Standing>,
        b_count: Arc<Count>,
        b_waker: Waker,
        b_statement: Standing,
    }

    fn two_in_line(n: usize) -> TwoInLine {
        let ids = task_ids(2);
        let b_count = Arc::new(Count::default());
        let mut t = TwoInLine {
            lane: Lane::new(),
            a: ids[0],
            b: ids[1],
            a_waker: Waker::from(Arc::new(Count::default())),
            a_statements: vec![Standing::Out; n],
            b_waker: Waker::from(b_count.clone()),
            b_count,
            b_statement: Standing::Out,
        };
        for s in &mut t.a_statements {
            assert_eq!(t.lane.poll(t.a, s, &t.a_waker, false), Turn::Wait);
        }
        assert_eq!(
            t.lane.poll(t.b, &mut t.b_statement, &t.b_waker, false),
            Turn::Wait
        );
        assert_eq!(t.lane.line.len(), 2);
        t
    }

    #[test]
    fn an_admitted_task_keeps_room_for_its_other_statements() {
        let mut t = two_in_line(3);
        let lane = &t.lane;

        // Room for three: the first task goes in and keeps two places for
        // its other statements; the next is woken, looks, and waits.
        lane.free.set(3);
        assert_eq!(
            lane.poll(t.a, &mut t.a_statements[0], &t.a_waker, false),
            Turn::Go
        );
        assert_eq!(lane.line.reserved(), 2);
        assert_eq!(t.b_count.get(), 1, "the next in line looks too");
        assert_eq!(
            lane.poll(t.b, &mut t.b_statement, &t.b_waker, false),
            Turn::Wait
        );

        // The other two follow into their places.
        for s in &mut t.a_statements[1..] {
            assert_eq!(lane.poll(t.a, s, &t.a_waker, true), Turn::Go);
            assert_eq!(*s, Standing::Out);
        }
        assert_eq!(lane.line.reserved(), 0);
        assert_eq!(lane.line.len(), 1);
        assert_eq!(
            lane.poll(t.b, &mut t.b_statement, &t.b_waker, false),
            Turn::Wait
        );

        // One place frees: the waiting task goes in.
        lane.free.set(1);
        assert_eq!(
            lane.poll(t.b, &mut t.b_statement, &t.b_waker, false),
            Turn::Go
        );
        assert!(lane.line.is_empty());
    }

    #[test]
    fn room_for_many_admits_many_small_tasks_one_after_another() {
        let ids = task_ids(5);
        let lane = Lane::new();
        let counts: Vec<Arc<Count>> = (0..5).map(|_| Arc::new(Count::default())).collect();
        let wakers: Vec<Waker> = counts.iter().map(|c| Waker::from(c.clone())).collect();
        let mut standings = [Standing::Out; 5];
        for i in 0..5 {
            assert_eq!(
                lane.poll(ids[i], &mut standings[i], &wakers[i], false),
                Turn::Wait
            );
        }

        // Room for three single-statement tasks: each admission wakes the
        // next, and three go in; the fourth finds the room taken.
        lane.free.set(3);
        for i in 0..3 {
            assert_eq!(
                lane.poll(ids[i], &mut standings[i], &wakers[i], false),
                Turn::Go
            );
            assert_eq!(counts[i + 1].get(), 1, "task {} was not woken", i + 1);
        }
        assert_eq!(
            lane.poll(ids[3], &mut standings[3], &wakers[3], false),
            Turn::Wait
        );
        assert_eq!(lane.line.len(), 2);
        assert_eq!(lane.line.reserved(), 0);
    }

    #[test]
    fn a_statement_that_goes_away_after_admission_gives_its_room_back() {
        let mut t = two_in_line(2);
        let lane = &t.lane;
        lane.free.set(2);
        assert_eq!(
            lane.poll(t.a, &mut t.a_statements[0], &t.a_waker, false),
            Turn::Go
        );
        assert_eq!(lane.line.reserved(), 1);
        assert_eq!(
            lane.poll(t.b, &mut t.b_statement, &t.b_waker, false),
            Turn::Wait
        );
        let woken = t.b_count.get();

        // The second statement is cancelled before it leases: its room
        // goes back, and the waiting task is woken to take it.
        lane.line.leave(t.a_statements[1]);
        assert_eq!(lane.line.reserved(), 0);
        assert_eq!(t.b_count.get(), woken + 1);
        assert_eq!(
            lane.poll(t.b, &mut t.b_statement, &t.b_waker, false),
            Turn::Go
        );
    }

    #[test]
    fn a_statement_leaving_its_place_before_the_turn_keeps_the_others_in_line() {
        let mut t = two_in_line(2);
        let lane = &t.lane;

        // One of the first task's two statements goes: the place stays
        // (first in line) with one share; with the other, it goes.
        lane.line.leave(t.a_statements[0]);
        assert_eq!(lane.line.len(), 2);
        lane.line.leave(t.a_statements[1]);
        assert_eq!(lane.line.len(), 1);
        assert_eq!(lane.line.reserved(), 0);
        lane.free.set(1);
        assert_eq!(
            lane.poll(t.b, &mut t.b_statement, &t.b_waker, false),
            Turn::Go
        );
    }
}
