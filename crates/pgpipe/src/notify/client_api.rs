//! The LISTEN/NOTIFY methods of [`Client`].

use super::subscription::{Notifications, Owner};
use super::{check_channel, listen_sql, DEFAULT_BUFFER};
use crate::{Client, Error};

impl Client {
    /// Every notification that arrives on this connection from now on (for
    /// channels LISTENed to with [`listen`](Self::listen) or plain SQL), in
    /// a buffer of 1024 (see [`Notifications`]). Without a subscriber,
    /// notifications are counted in
    /// [`ClientStats::notifications_dropped`](crate::ClientStats) and
    /// dropped.
    ///
    /// The stream ends with an error when the connection closes; for
    /// notifications that survive reconnects use a [`Listener`](crate::Listener).
    pub fn notifications(&self) -> Notifications {
        let hub = self.shared().notifications.hub(false);
        let (sub, _) = hub.subscribe(None, DEFAULT_BUFFER);
        close_if_gone(self, &hub);
        Notifications::new(sub, hub, Owner::Nobody)
    }

    /// LISTENs to `channel` on this connection and returns its
    /// notifications (see [`Notifications`]). The channel name is quoted,
    /// so any name is safe. Dropping the last subscription of a channel
    /// UNLISTENs it.
    ///
    /// On a connection shared by many tasks prefer a [`Listener`](crate::Listener):
    /// it has a connection of its own and survives reconnects.
    ///
    /// ```no_run
    /// # async fn f(client: &pgpipe::Client) -> Result<(), pgpipe::Error> {
    /// let mut events = client.listen("new_mail").await?;
    /// client.notify("new_mail", "mailbox 7").await?;
    /// let event = events.next().await;
    /// # Ok(()) }
    /// ```
    pub async fn listen(&self, channel: &str) -> Result<Notifications, Error> {
        let listen = self.listen_untraced(channel);
        crate::observe::traced("listen", Some(self.shared()), None, |_| 0, listen).await
    }

    async fn listen_untraced(&self, channel: &str) -> Result<Notifications, Error> {
        check_channel(channel)?;
        let hub = self.shared().notifications.hub(false);
        let (sub, fresh) = hub.subscribe(Some(&[channel.to_owned()]), DEFAULT_BUFFER);
        close_if_gone(self, &hub);
        let subscription = Notifications::new(sub, hub, Owner::Client(self.shared().clone()));
        if !fresh.is_empty() {
            self.batch_execute(&listen_sql(&fresh)?).await?;
        }
        Ok(subscription)
    }

    /// Sends a notification with `pg_notify($1, $2)`: the channel and
    /// payload are parameters, never SQL text.
    pub async fn notify(&self, channel: &str, payload: &str) -> Result<(), Error> {
        let notify = self.execute("SELECT pg_notify($1, $2)", (channel, payload));
        crate::observe::traced("notify", Some(self.shared()), None, |_| 0, notify)
            .await
            .map(drop)
    }
}

/// A subscription made after the connection closed would wait forever: end
/// it at once (the driver closed the hubs it knew of).
fn close_if_gone(client: &Client, hub: &super::Hub) {
    if client.is_closed() {
        hub.close(crate::ErrorKind::Closed, "the connection is closed");
    }
}
