//! How the driver reports what the server sends unasked (notices,
//! notifications, parameter changes) to the session above it, without
//! knowing what the session does with them.

use pgpipe_proto::backend::Notification;

use crate::error::{DbError, ErrorKind};

/// The session's side of the driver's asynchronous messages. Called on
/// the driver's task: implementations must not block.
pub(crate) trait Events: Send + Sync {
    /// A NoticeResponse.
    fn notice(&self, notice: &DbError);
    /// A ParameterStatus: `name` is now `value`.
    fn parameter(&self, name: &str, value: &str);
    /// A NotificationResponse (LISTEN/NOTIFY).
    fn notification(&self, notification: &Notification);
    /// The connection is gone, with `kind` and `reason`.
    fn closed(&self, kind: ErrorKind, reason: &str);
}
