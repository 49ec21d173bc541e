//! The messages subscribers send to a [`Listener`](crate::Listener)'s task.
//! A file of its own so that subscriptions and the listener both depend on
//! it, not on each other.

use tokio::sync::oneshot;

use crate::Error;

/// What subscribers ask the listener's task to do.
pub(crate) enum Command {
    Listen {
        channels: Vec<String>,
        ack: oneshot::Sender<Result<(), Error>>,
    },
    Unlisten(Vec<String>),
}
