//! Fan-out of notifications to subscribers, each with a bounded queue.
//!
//! The driver calls [`Hub::deliver`] from its poll loop, so nothing here
//! waits: a subscriber whose queue is full loses the notification and is
//! told so with a `Gap { reason: Lagged(n) }` in its place.

use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Poll, Waker};

use super::event::{Event, GapReason, Notification};
use crate::error::ErrorKind;
use crate::session::NotificationSink;
use crate::Error;

/// Counters shared by a hub's subscribers (see [`ListenerStats`](crate::ListenerStats)).
#[derive(Default, Debug)]
pub(crate) struct HubCounters {
    pub(crate) delivered: AtomicU64,
    pub(crate) lagged: AtomicU64,
    pub(crate) gaps: AtomicU64,
    /// The most notifications any one subscriber held unread.
    pub(crate) peak_queued: AtomicUsize,
}

struct SubscriberState {
    queue: VecDeque<Event>,
    /// Notifications in `queue` (gaps not counted).
    queued: usize,
    /// Notifications dropped since the last gap was queued or yielded.
    lagged: u64,
    waker: Option<Waker>,
    /// Why no more events will come (the connection of a client-bound
    /// subscription ended).
    closed: Option<(ErrorKind, String)>,
    /// The closing error was handed out; next comes the end.
    ended: bool,
}

/// One subscriber's bounded queue.
pub(crate) struct Subscriber {
    state: Mutex<SubscriberState>,
    bound: usize,
    counters: Arc<HubCounters>,
}

impl Subscriber {
    fn lock(&self) -> MutexGuard<'_, SubscriberState> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn push(&self, n: &Notification) {
        let waker = {
            let mut st = self.lock();
            if st.closed.is_some() {
                return;
            }
            if st.queued >= self.bound {
                st.lagged += 1;
                self.counters.lagged.fetch_add(1, Ordering::Relaxed);
                return;
            }
            if st.lagged > 0 {
                // The gap goes where the lost notifications were.
                let lost = std::mem::take(&mut st.lagged);
                st.queue.push_back(Event::Gap {
                    reason: GapReason::Lagged(lost),
                });
                self.counters.gaps.fetch_add(1, Ordering::Relaxed);
            }
            st.queue.push_back(Event::Notification(n.clone()));
            st.queued += 1;
            self.counters.delivered.fetch_add(1, Ordering::Relaxed);
            self.counters
                .peak_queued
                .fetch_max(st.queued, Ordering::Relaxed);
            st.waker.take()
        };
        if let Some(w) = waker {
            w.wake();
        }
    }

    fn push_gap(&self, reason: GapReason) {
        let waker = {
            let mut st = self.lock();
            let repeated = matches!(
                st.queue.back(),
                Some(Event::Gap { reason: r }) if *r == reason
            );
            if st.closed.is_some() || repeated {
                return;
            }
            st.queue.push_back(Event::Gap { reason });
            self.counters.gaps.fetch_add(1, Ordering::Relaxed);
            st.waker.take()
        };
        if let Some(w) = waker {
            w.wake();
        }
    }

    fn close(&self, kind: ErrorKind, reason: &str) {
        let waker = {
            let mut st = self.lock();
            st.closed.get_or_insert_with(|| (kind, reason.to_owned()));
            st.waker.take()
        };
        if let Some(w) = waker {
            w.wake();
        }
    }

    /// The next event; the closing error once, then the end.
    pub(crate) fn poll_next(&self, cx: &mut Context<'_>) -> Poll<Option<Result<Event, Error>>> {
        let mut st = self.lock();
        if let Some(event) = st.queue.pop_front() {
            if matches!(event, Event::Notification(_)) {
                st.queued -= 1;
            }
            return Poll::Ready(Some(Ok(event)));
        }
        if st.lagged > 0 {
            let lost = std::mem::take(&mut st.lagged);
            self.counters.gaps.fetch_add(1, Ordering::Relaxed);
            return Poll::Ready(Some(Ok(Event::Gap {
                reason: GapReason::Lagged(lost),
            })));
        }
        if let Some((kind, reason)) = &st.closed {
            if st.ended {
                return Poll::Ready(None);
            }
            let e = Error::new(*kind, reason.clone());
            st.ended = true;
            return Poll::Ready(Some(Err(e)));
        }
        match &st.waker {
            Some(w) if w.will_wake(cx.waker()) => {}
            _ => st.waker = Some(cx.waker().clone()),
        }
        Poll::Pending
    }

    /// Notifications queued unread.
    pub(crate) fn queued(&self) -> usize {
        self.lock().queued
    }
}

/// Which subscribers want which channel.
#[derive(Default)]
struct Routes {
    by_channel: HashMap<String, Vec<Arc<Subscriber>>>,
    /// Subscribers of every notification on the connection.
    everything: Vec<Arc<Subscriber>>,
}

/// The subscribers of one connection (or of a [`Listener`](crate::Listener)
/// across its reconnections).
pub(crate) struct Hub {
    routes: Mutex<Routes>,
    pub(crate) counters: Arc<HubCounters>,
    /// Set for a listener's hub: it outlives each connection, so the end of
    /// one does not end its subscriptions.
    pub(crate) survives_reconnects: bool,
}

impl Hub {
    pub(crate) fn new(survives_reconnects: bool) -> Hub {
        Hub {
            routes: Mutex::default(),
            counters: Arc::default(),
            survives_reconnects,
        }
    }

    fn routes(&self) -> MutexGuard<'_, Routes> {
        self.routes.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// A new subscriber of `channels` (every channel if `None`); returns
    /// it and the channels nobody subscribed to before (to LISTEN to).
    pub(crate) fn subscribe(
        &self,
        channels: Option<&[String]>,
        bound: usize,
    ) -> (Arc<Subscriber>, Vec<String>) {
        let sub = Arc::new(Subscriber {
            state: Mutex::new(SubscriberState {
                queue: VecDeque::new(),
                queued: 0,
                lagged: 0,
                waker: None,
                closed: None,
                ended: false,
            }),
            bound: bound.max(1),
            counters: self.counters.clone(),
        });
        let mut fresh = Vec::new();
        let mut routes = self.routes();
        match channels {
            None => routes.everything.push(sub.clone()),
            Some(channels) => {
                for channel in channels {
                    let subs = routes.by_channel.entry(channel.clone()).or_default();
                    if subs.is_empty() {
                        fresh.push(channel.clone());
                    }
                    if !subs.iter().any(|s| Arc::ptr_eq(s, &sub)) {
                        subs.push(sub.clone());
                    }
                }
            }
        }
        (sub, fresh)
    }

    /// Removes a subscriber; returns the channels nobody listens to now.
    pub(crate) fn unsubscribe(&self, sub: &Arc<Subscriber>) -> Vec<String> {
        let mut routes = self.routes();
        routes.everything.retain(|s| !Arc::ptr_eq(s, sub));
        let mut orphaned = Vec::new();
        routes.by_channel.retain(|channel, subs| {
            let before = subs.len();
            subs.retain(|s| !Arc::ptr_eq(s, sub));
            if subs.is_empty() && before > 0 {
                orphaned.push(channel.clone());
                return false;
            }
            true
        });
        orphaned
    }

    /// Every channel someone subscribes to.
    pub(crate) fn channels(&self) -> Vec<String> {
        self.routes().by_channel.keys().cloned().collect()
    }

    /// Driver side: hands a notification to its channel's subscribers.
    pub(crate) fn deliver(&self, n: Notification) {
        let routes = self.routes();
        for sub in routes.everything.iter() {
            sub.push(&n);
        }
        if let Some(subs) = routes.by_channel.get(n.channel()) {
            for sub in subs {
                sub.push(&n);
            }
        }
    }

    /// Tells every subscriber, once each, that notifications may be lost.
    pub(crate) fn gap(&self, reason: GapReason) {
        let routes = self.routes();
        let mut seen: Vec<*const Subscriber> = Vec::new();
        let all = routes
            .everything
            .iter()
            .chain(routes.by_channel.values().flatten());
        for sub in all {
            let ptr = Arc::as_ptr(sub);
            if !seen.contains(&ptr) {
                seen.push(ptr);
                sub.push_gap(reason);
            }
        }
    }

    /// Ends every subscription with an error (the connection is gone).
    pub(crate) fn close(&self, kind: ErrorKind, reason: &str) {
        let routes = self.routes();
        for sub in routes
            .everything
            .iter()
            .chain(routes.by_channel.values().flatten())
        {
            sub.close(kind, reason);
        }
    }
}

impl NotificationSink for Hub {
    fn route(&self, n: &pgpipe_proto::backend::Notification) {
        self.deliver(Notification::new(n.channel(), n.payload(), n.process_id));
    }

    /// Subscriptions bound to the connection end with `reason`; a
    /// listener's hub carries on with its next connection.
    fn connection_closed(&self, kind: ErrorKind, reason: &str) {
        if !self.survives_reconnects {
            self.close(kind, reason);
        }
    }

    fn into_any(self: Arc<Self>) -> Arc<dyn std::any::Any + Send + Sync> {
        self
    }
}
