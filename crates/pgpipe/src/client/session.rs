//! The session-level methods of [`Client`]: LISTEN/NOTIFY, portals and
//! user-defined types, each a delegation to its module.

use pgpipe_types::{Params, Type};

use super::Client;
use crate::notify::Notifications;
use crate::query::{Portal, ToStatement};
use crate::Error;

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
        self.conn().notifications()
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
        self.conn().listen(channel).await
    }

    /// Sends a notification with `pg_notify($1, $2)`: the channel and
    /// payload are parameters, never SQL text.
    pub async fn notify(&self, channel: &str, payload: &str) -> Result<(), Error> {
        self.conn().notify(channel, payload).await
    }

    /// Binds a statement to a new [`Portal`] without running it. Must be
    /// called inside a transaction block.
    ///
    /// Cancel safe (see [`Client`]); a portal whose creation was cancelled
    /// ends with the transaction.
    pub async fn bind_portal<S, P>(&self, statement: &S, params: P) -> Result<Portal, Error>
    where
        S: ToStatement + ?Sized,
        P: Params,
    {
        self.conn().bind_portal(statement, params).await
    }

    /// Looks up a user-defined type by name (`"mail.attach"`, or unqualified
    /// through the search path) and keeps its description, with its array
    /// type, for this connection. Types are also looked up on first use, so
    /// this is optional; call it at startup to fail fast on a missing type
    /// (like ozo's `register_types<attach>()`).
    ///
    /// ```no_run
    /// # async fn f(client: &pgpipe::Client) -> Result<(), pgpipe::Error> {
    /// let attach = client.register_type("mail.attach").await?;
    /// println!("{attach} has OID {}", attach.oid());
    /// # Ok(()) }
    /// ```
    ///
    /// Cancel safe (see [`Client`]).
    pub async fn register_type(&self, name: &str) -> Result<Type, Error> {
        self.conn().register_type(name).await
    }

    /// Forgets every user-defined type this connection has looked up, so
    /// the next use looks them up again (after DDL that dropped and
    /// recreated types). Done automatically when the server reports a type
    /// that no longer exists.
    pub fn clear_type_cache(&self) {
        self.conn().clear_type_cache()
    }
}
