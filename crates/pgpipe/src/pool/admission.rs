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
//! price (a fifth of the rate of many single-statement tasks on a narrow
//! lane), which is why it is a setting.
//!
//! The bound is soft: a task admitted from the line places its statements
//! as it polls them, so on a multi-thread runtime the next in line may be
//! admitted before they are all counted, one task more than the room
//! allowed. Statements outside a tokio task (`block_on`) have no caller
//! to queue, and a lane of one connection keeps no line (its pipeline is
//! already first come, first served).
//!
//! Several statements of one task wait as one place in line; the place is given up when the last of them is
//! dropped (a timeout, a cancelled request), and the next in line is woken
//! if it became first.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, MutexGuard};
use std::task::{Context, Waker};

use tokio::task;

/// A task waiting for its turn.
struct Place {
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

/// The tasks waiting for room on the lane, in arrival order.
#[derive(Default)]
pub(crate) struct Line {
    places: Mutex<VecDeque<Place>>,
    /// `places.len()`, read without the lock on every statement's end.
    len: AtomicUsize,
}

/// Where a statement stands in [`Line::poll_turn`].
pub(crate) enum Turn {
    /// It may lease now.
    Go,
    /// It waits; `joined` says it holds a share of its task's place.
    Wait,
}

impl Line {
    fn places(&self) -> MutexGuard<'_, VecDeque<Place>> {
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

    fn set_len(&self, places: &VecDeque<Place>) {
        self.len.store(places.len(), Ordering::SeqCst);
    }

    /// One poll of task `id`'s statement: `Go` when the task was admitted
    /// meanwhile (`admitted()`), or it is first in line and the lane has
    /// room (`room()`), in which case it leaves the line; else it takes or
    /// shares the task's place and waits to be woken. `joined` tracks
    /// whether this statement counts in its task's place.
    pub(crate) fn poll_turn(
        &self,
        id: task::Id,
        joined: &mut bool,
        cx: &Context<'_>,
        admitted: impl Fn() -> bool,
        room: impl Fn() -> bool,
    ) -> Turn {
        let mut places = self.places();
        let at = places.iter().position(|p| p.task == id);
        if admitted() {
            // A sibling statement got the task in: this one joins it.
            if let (Some(i), true) = (at, *joined) {
                Self::give_up_share(&mut places, i);
            }
            *joined = false;
            self.set_len(&places);
            return Turn::Go;
        }
        let i = match at {
            Some(i) => {
                let place = &mut places[i];
                if !place.wakers.iter().any(|w| w.will_wake(cx.waker())) {
                    place.wakers.push(cx.waker().clone());
                }
                if !*joined {
                    place.waiting += 1;
                }
                i
            }
            None => {
                places.push_back(Place {
                    task: id,
                    wakers: vec![cx.waker().clone()],
                    waiting: 1,
                });
                places.len() - 1
            }
        };
        *joined = true;
        // Published before looking for room: a statement ending after the
        // look sees a waiter and wakes the first in line.
        self.set_len(&places);
        if i == 0 && room() {
            // The task's other waiting statements follow this one in
            // (they find it admitted once this one has leased).
            if let Some(place) = places.pop_front() {
                for waker in &place.wakers {
                    if !waker.will_wake(cx.waker()) {
                        waker.wake_by_ref();
                    }
                }
            }
            // Room for one is often room for many (a read answers a batch
            // of statements, and each answer woke only the first in line):
            // the next looks too, and finds out once this task's
            // statements are counted. Without this, single-statement tasks
            // were admitted one per batch and the pipelines ran dry (a
            // quarter of the rate of 256 such tasks on a lane of two).
            if let Some(next) = places.front() {
                next.wake();
            }
            *joined = false;
            self.set_len(&places);
            return Turn::Go;
        }
        Turn::Wait
    }

    /// A waiting statement of task `id` went away (timed out, cancelled):
    /// its share of the place is given up, and the place with the last
    /// share. The next first in line is woken to look for room.
    pub(crate) fn leave(&self, id: task::Id) {
        let mut places = self.places();
        if let Some(i) = places.iter().position(|p| p.task == id) {
            let gone = Self::give_up_share(&mut places, i);
            self.set_len(&places);
            if gone && i == 0 {
                if let Some(first) = places.front() {
                    first.wake();
                }
            }
        }
    }

    /// Takes one share off place `i`; removes it (and says so) at zero.
    fn give_up_share(places: &mut VecDeque<Place>, i: usize) -> bool {
        places[i].waiting = places[i].waiting.saturating_sub(1);
        if places[i].waiting == 0 {
            places.remove(i);
            true
        } else {
            false
        }
    }

    /// Room may have freed: the first in line looks again.
    pub(crate) fn wake_first(&self) {
        if let Some(first) = self.places().front() {
            first.wake();
        }
    }

    /// The lane was cleared (the pool closed): everyone looks again, and
    /// finds the lane empty.
    pub(crate) fn wake_all(&self) {
        for place in self.places().iter() {
            place.wake();
        }
    }
}
