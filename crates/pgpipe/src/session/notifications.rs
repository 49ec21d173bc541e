//! Where a connection's notifications (LISTEN/NOTIFY) go, and the
//! callback for its notices.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, RwLock};

use crate::error::{DbError, ErrorKind};

/// A callback for NoticeResponse messages.
pub(crate) type NoticeHandler = Arc<dyn Fn(&DbError) + Send + Sync>;

/// Where the driver hands notifications: the subscribers of
/// [`Client::notifications`](crate::Client::notifications),
/// [`Client::listen`](crate::Client::listen) or a
/// [`Listener`](crate::Listener), or nowhere (then they are counted and
/// dropped).
#[derive(Default)]
pub(crate) struct NotificationRoute {
    pub(crate) hub: RwLock<Option<Arc<crate::notify::Hub>>>,
    /// Notifications dropped because nobody subscribed.
    pub(crate) dropped: AtomicU64,
}

impl NotificationRoute {
    /// Hands a notification to the subscribers, or counts it
    /// (one debug line for the first, not one per message).
    pub(crate) fn deliver(&self, n: &pgpipe_proto::backend::Notification) {
        let hub = self.hub.read().unwrap_or_else(|e| e.into_inner()).clone();
        match hub {
            Some(hub) => hub.deliver(crate::notify::Notification::new(
                n.channel(),
                n.payload(),
                n.process_id,
            )),
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

    /// The hub of this connection, made on first use.
    pub(crate) fn hub(&self, survives_reconnects: bool) -> Arc<crate::notify::Hub> {
        let mut hub = self.hub.write().unwrap_or_else(|e| e.into_inner());
        hub.get_or_insert_with(|| Arc::new(crate::notify::Hub::new(survives_reconnects)))
            .clone()
    }

    /// Routes to `hub` (a listener's, which outlives connections).
    pub(crate) fn set_hub(&self, hub: Arc<crate::notify::Hub>) {
        *self.hub.write().unwrap_or_else(|e| e.into_inner()) = Some(hub);
    }

    /// The connection is gone: subscriptions bound to it end with `reason`
    /// (a listener's carry on with its next connection).
    pub(crate) fn close(&self, kind: ErrorKind, reason: &str) {
        let hub = self.hub.write().unwrap_or_else(|e| e.into_inner()).take();
        if let Some(hub) = hub {
            if !hub.survives_reconnects {
                hub.close(kind, reason);
            }
        }
    }
}
