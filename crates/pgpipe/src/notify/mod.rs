//! LISTEN/NOTIFY: notifications on a client, and the reconnecting
//! [`Listener`].

mod event;

pub use event::{Event, GapReason, Notification};
