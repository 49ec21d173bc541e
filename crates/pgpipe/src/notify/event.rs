//! What a subscriber receives: notifications, and gaps where some may have
//! been lost.

use std::fmt;

/// One NOTIFY delivered to a LISTENing session.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Notification {
    channel: String,
    payload: String,
    process_id: i32,
}

impl Notification {
    pub(crate) fn new(channel: &str, payload: &str, process_id: i32) -> Notification {
        Notification {
            channel: channel.to_owned(),
            payload: payload.to_owned(),
            process_id,
        }
    }

    /// The channel it was sent on (as the server spells it).
    pub fn channel(&self) -> &str {
        &self.channel
    }

    /// The payload (empty if none was given).
    pub fn payload(&self) -> &str {
        &self.payload
    }

    /// The process ID of the backend that sent it.
    pub fn process_id(&self) -> i32 {
        self.process_id
    }
}

/// What a notification stream yields.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Event {
    /// A notification.
    Notification(Notification),
    /// Notifications may have been lost here: resynchronise from the
    /// database before trusting incremental events again.
    Gap {
        /// Why.
        reason: GapReason,
    },
}

/// Why a [`Event::Gap`] was yielded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum GapReason {
    /// The subscriber fell behind: this many notifications were dropped
    /// because its buffer was full.
    Lagged(u64),
    /// The listener's connection was lost and has been re-established
    /// (every LISTEN re-issued); notifications sent meanwhile are lost.
    Reconnected,
}

impl fmt::Display for GapReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            GapReason::Lagged(n) => write!(f, "lagged: {n} notifications dropped"),
            GapReason::Reconnected => f.write_str("the connection was lost and re-established"),
        }
    }
}
