//! The LISTEN/NOTIFY methods of [`Client`].

use super::subscription::{Notifications, Owner};
use super::{check_channel, listen_sql, Hub, DEFAULT_BUFFER};
use crate::query::ConnRef;
use crate::Error;

impl ConnRef {
    /// What [`Client::notifications`](crate::Client::notifications) runs.
    pub(crate) fn notifications(&self) -> Notifications {
        let hub = self.shared().notifications.sink(|| Hub::new(false));
        let (sub, _) = hub.subscribe(None, DEFAULT_BUFFER);
        close_if_gone(self, &hub);
        Notifications::new(sub, hub, Owner::Nobody)
    }

    /// What [`Client::listen`](crate::Client::listen) runs.
    pub(crate) async fn listen(&self, channel: &str) -> Result<Notifications, Error> {
        let listen = self.listen_untraced(channel);
        crate::observe::traced("listen", Some(self.shared()), None, |_| 0, listen).await
    }

    async fn listen_untraced(&self, channel: &str) -> Result<Notifications, Error> {
        check_channel(channel)?;
        let hub = self.shared().notifications.sink(|| Hub::new(false));
        let (sub, fresh) = hub.subscribe(Some(&[channel.to_owned()]), DEFAULT_BUFFER);
        close_if_gone(self, &hub);
        let subscription = Notifications::new(sub, hub, Owner::Client(self.shared().clone()));
        if !fresh.is_empty() {
            self.batch_execute(&listen_sql(&fresh)?).await?;
        }
        Ok(subscription)
    }

    /// What [`Client::notify`](crate::Client::notify) runs.
    pub(crate) async fn notify(&self, channel: &str, payload: &str) -> Result<(), Error> {
        let notify = self.execute("SELECT pg_notify($1, $2)", (channel, payload));
        crate::observe::traced("notify", Some(self.shared()), None, |_| 0, notify)
            .await
            .map(drop)
    }
}

/// A subscription made after the connection closed would wait forever: end
/// it at once (the driver closed the hubs it knew of).
fn close_if_gone(client: &ConnRef, hub: &super::Hub) {
    if client.is_closed() {
        hub.close(crate::ErrorKind::Closed, "the connection is closed");
    }
}
