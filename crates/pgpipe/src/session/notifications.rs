//! Where a connection's notifications (LISTEN/NOTIFY) go, and the
//! callback for its notices.

use std::any::Any;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, RwLock};

use crate::error::{DbError, ErrorKind};

/// A callback for NoticeResponse messages.
pub(crate) type NoticeHandler = Arc<dyn Fn(&DbError) + Send + Sync>;

/// Who takes a connection's notifications (the subscribers' hub, in
/// `notify/`): the session hands them over without knowing who listens.
pub(crate) trait NotificationSink: Any + Send + Sync {
    /// A notification arrived (called from the driver's poll: must not wait).
    fn route(&self, notification: &pgpipe_proto::backend::Notification);
    /// The connection is gone, for `reason`.
    fn connection_closed(&self, kind: ErrorKind, reason: &str);
    /// For [`NotificationRoute::sink`] to hand back the sink's own type.
    fn into_any(self: Arc<Self>) -> Arc<dyn Any + Send + Sync>;
}

/// Where the driver hands notifications: the subscribers of
/// [`Client::notifications`](crate::Client::notifications),
/// [`Client::listen`](crate::Client::listen) or a
/// [`Listener`](crate::Listener), or nowhere (then they are counted and
/// dropped).
#[derive(Default)]
pub(crate) struct NotificationRoute {
    sink: RwLock<Option<Arc<dyn NotificationSink>>>,
    /// Notifications dropped because nobody subscribed.
    pub(crate) dropped: AtomicU64,
}

impl NotificationRoute {
    /// Hands a notification to the subscribers, or counts it
    /// (one debug line for the first, not one per message).
    pub(crate) fn deliver(&self, n: &pgpipe_proto::backend::Notification) {
        let sink = self.sink.read().unwrap_or_else(|e| e.into_inner()).clone();
        match sink {
            Some(sink) => sink.route(n),
            None => {
                if self.dropped.fetch_add(1, Ordering::Relaxed) == 0 {
                    tracing::debug!(
                        channel = n.channel(),
                        "notification received but nobody subscribed on this connection \
                         (Client::notifications); dropping this and later ones (counted in \
                         ClientStats::notifications_dropped)"
                    );
                }
            }
        }
    }

    /// The sink of this connection, made by `make` on first use (one of
    /// another type is replaced; there is only the hub).
    pub(crate) fn sink<S: NotificationSink>(&self, make: impl FnOnce() -> S) -> Arc<S> {
        let mut sink = self.sink.write().unwrap_or_else(|e| e.into_inner());
        if let Some(current) = sink.as_ref() {
            if let Ok(same) = current.clone().into_any().downcast::<S>() {
                return same;
            }
        }
        let made = Arc::new(make());
        *sink = Some(made.clone());
        made
    }

    /// Routes to `sink` (a listener's, which outlives connections).
    pub(crate) fn set_sink(&self, sink: Arc<dyn NotificationSink>) {
        *self.sink.write().unwrap_or_else(|e| e.into_inner()) = Some(sink);
    }

    /// The connection is gone: the sink is told, and unhooked.
    pub(crate) fn close(&self, kind: ErrorKind, reason: &str) {
        let sink = self.sink.write().unwrap_or_else(|e| e.into_inner()).take();
        if let Some(sink) = sink {
            sink.connection_closed(kind, reason);
        }
    }
}
