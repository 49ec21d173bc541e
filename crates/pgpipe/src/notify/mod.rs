//! LISTEN/NOTIFY: notifications on a client ([`Client::notifications`],
//! [`Client::listen`]), and the reconnecting [`Listener`] with its own
//! connection. Every subscriber has a bounded buffer.
//!
//! [`Client::notifications`]: crate::Client::notifications
//! [`Client::listen`]: crate::Client::listen

mod client_api;
mod command;
mod event;
mod hub;
mod listener;
mod subscription;

pub use event::{Event, GapReason, Notification};
pub(crate) use hub::Hub;
pub use listener::{Listener, ListenerBuilder, ListenerStats};
pub use subscription::Notifications;

use crate::error::ErrorKind;
use crate::sql::quote_ident;
use crate::Error;

/// Notifications a subscriber may hold unread unless configured.
pub(crate) const DEFAULT_BUFFER: usize = 1024;

/// PostgreSQL truncates identifiers to 63 bytes; a longer channel name
/// would be LISTENed to under another name, and its notifications would
/// never match.
const MAX_CHANNEL_LEN: usize = 63;

pub(crate) fn check_channel(channel: &str) -> Result<(), Error> {
    if channel.len() > MAX_CHANNEL_LEN {
        return Err(Error::new(
            ErrorKind::InvalidUse,
            format!(
                "the channel name {channel:?} is longer than {MAX_CHANNEL_LEN} bytes (the server would truncate it)"
            ),
        ));
    }
    quote_ident("channel", channel)
        .map(drop)
        .map_err(Error::from)
}

pub(crate) fn listen_sql(channels: &[String]) -> Result<String, Error> {
    statements("LISTEN", channels)
}

pub(crate) fn unlisten_sql(channels: &[String]) -> Result<String, Error> {
    statements("UNLISTEN", channels)
}

fn statements(verb: &str, channels: &[String]) -> Result<String, Error> {
    let mut sql = String::new();
    for channel in channels {
        check_channel(channel)?;
        sql.push_str(verb);
        sql.push(' ');
        crate::sql::push_quoted_ident(&mut sql, "channel", channel)?;
        sql.push_str("; ");
    }
    Ok(sql)
}
