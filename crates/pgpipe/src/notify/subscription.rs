//! [`Notifications`]: one subscriber's stream of events.

use std::future::poll_fn;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use futures_core::Stream;
use tokio::sync::mpsc;

use super::command::Command;
use super::event::Event;
use super::hub::{Hub, Subscriber};
use super::unlisten_sql;
use crate::driver::NO_SESSION;
use crate::session::Session;
use crate::Error;

/// Who issues UNLISTEN when the last subscriber of a channel goes.
pub(crate) enum Owner {
    /// A plain client connection: UNLISTEN is queued on it.
    Client(Arc<Session>),
    /// A [`Listener`](crate::Listener): its task UNLISTENs (and stays alive
    /// while subscriptions exist).
    Listener(mpsc::UnboundedSender<Command>),
    /// Nothing to undo ([`Client::notifications`](crate::Client::notifications)).
    Nobody,
}

/// A stream of [`Event`]s for one subscriber: notifications of the
/// channels it subscribed to, in the order the server sent them, and a
/// [`Event::Gap`] wherever some may have been lost.
///
/// Its buffer is bounded (1024 notifications unless configured): a
/// subscriber that falls that far behind loses the newest notifications
/// and reads `Gap { reason: Lagged(n) }` where they were, instead of
/// growing memory. Implements [`Stream`]; [`next`](Self::next) is the same
/// without a stream-extension trait.
///
/// A subscription on a plain [`Client`](crate::Client) ends with an error
/// when its connection closes; one from a [`Listener`](crate::Listener)
/// lives across reconnections. Dropping it unsubscribes (and UNLISTENs a
/// channel nobody else subscribes to).
pub struct Notifications {
    sub: Arc<Subscriber>,
    hub: Arc<Hub>,
    owner: Owner,
}

impl Notifications {
    pub(crate) fn new(sub: Arc<Subscriber>, hub: Arc<Hub>, owner: Owner) -> Notifications {
        Notifications { sub, hub, owner }
    }

    /// The next event; `None` once the subscription has ended.
    pub async fn next(&mut self) -> Option<Result<Event, Error>> {
        poll_fn(|cx| self.sub.poll_next(cx)).await
    }

    /// Notifications buffered and not yet read.
    pub fn buffered(&self) -> usize {
        self.sub.queued()
    }
}

impl Stream for Notifications {
    type Item = Result<Event, Error>;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        self.sub.poll_next(cx)
    }
}

impl Drop for Notifications {
    fn drop(&mut self) {
        let orphaned = self.hub.unsubscribe(&self.sub);
        if orphaned.is_empty() {
            return;
        }
        match &self.owner {
            Owner::Client(shared) => {
                if let Ok(sql) = unlisten_sql(&orphaned) {
                    // Best effort: if the connection is gone, so is the LISTEN.
                    let _ = shared.send_detached(NO_SESSION, |enc, buf| {
                        enc.query(&sql, buf).map_err(crate::query::encode_error)
                    });
                }
            }
            Owner::Listener(commands) => {
                let _ = commands.send(Command::Unlisten(orphaned));
            }
            Owner::Nobody => {}
        }
    }
}

impl std::fmt::Debug for Notifications {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Notifications")
            .field("buffered", &self.buffered())
            .finish()
    }
}
