//! What one server session knows above the driver: the server's
//! parameters, the notice handler, where notifications go, the types
//! looked up in its catalog, the columns of its COPY targets, and its
//! cancel key. The
//! driver reports notices, notifications and parameter changes here
//! through [`Events`]; a [`Session`] dereferences to the driver's
//! [`Shared`] state, so a handle reaches both through one pointer.

mod drop_cancel;
mod notifications;

use std::collections::HashMap;
use std::ops::Deref;
use std::sync::{Arc, Mutex, OnceLock, RwLock};

use pgpipe_proto::backend::Notification;

use crate::connect::{CancelToken, ServerParameters};
use crate::driver::{Events, Shared};
use crate::error::{DbError, ErrorKind};
use crate::observe::{ConnInfo, Target};
use crate::types::column::Column;
use crate::types::TypeRegistry;

pub(crate) use drop_cancel::cancel_dropped;
pub(crate) use notifications::{NoticeHandler, NotificationRoute, NotificationSink};

/// One connection's session state, above its driver.
pub(crate) struct Session {
    driver: Arc<Shared>,
    /// Where to send a CancelRequest.
    pub(crate) cancel: CancelToken,
    /// The server's parameters (ParameterStatus), as last reported.
    parameters: RwLock<ServerParameters>,
    pub(crate) notice_handler: RwLock<Option<NoticeHandler>>,
    /// User-defined types looked up on this connection.
    pub(crate) types: TypeRegistry,
    /// `db.namespace`, `server.address` and `server.port` of its
    /// operations; set once at connect.
    pub(crate) target: OnceLock<Arc<Target>>,
    /// Where notifications (LISTEN/NOTIFY) arriving on this connection go,
    /// and how many were dropped because nobody asked for them.
    pub(crate) notifications: NotificationRoute,
    /// The described columns of typed COPY targets (`SELECT cols FROM
    /// table`), so that each typed COPY checks its rows without a round
    /// trip; an entry is dropped when a COPY into it fails.
    pub(crate) copy_targets: Mutex<HashMap<String, Arc<[Column]>>>,
}

impl Session {
    pub(crate) fn new(
        driver: Arc<Shared>,
        parameters: ServerParameters,
        cancel: CancelToken,
    ) -> Session {
        Session {
            driver,
            cancel,
            parameters: RwLock::new(parameters),
            notice_handler: RwLock::new(None),
            types: TypeRegistry::default(),
            target: OnceLock::new(),
            notifications: NotificationRoute::default(),
            copy_targets: Mutex::default(),
        }
    }

    /// A server parameter's value, as last reported.
    pub(crate) fn parameter(&self, name: &str) -> Option<String> {
        self.parameters
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .get(name)
            .map(str::to_owned)
    }
}

impl Deref for Session {
    type Target = Shared;

    fn deref(&self) -> &Shared {
        &self.driver
    }
}

impl ConnInfo for Session {
    fn target(&self) -> Option<&Arc<Target>> {
        self.target.get()
    }

    fn in_flight(&self) -> usize {
        self.driver.outstanding()
    }
}

impl Events for Session {
    fn notice(&self, notice: &DbError) {
        tracing::info!(
            target: "pgpipe::notice",
            severity = notice.severity(),
            code = notice.code().code(),
            "{}",
            notice.message()
        );
        let handler = self
            .notice_handler
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .clone();
        if let Some(handler) = handler {
            handler(notice);
        }
    }

    fn parameter(&self, name: &str, value: &str) {
        tracing::debug!(name, value, "server parameter changed");
        self.parameters
            .write()
            .unwrap_or_else(|e| e.into_inner())
            .set(name, value);
    }

    fn notification(&self, notification: &Notification) {
        self.notifications.deliver(notification);
    }

    fn closed(&self, kind: ErrorKind, reason: &str) {
        self.notifications.close(kind, reason);
    }
}
