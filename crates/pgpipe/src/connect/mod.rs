//! Opening a connection: resolving hosts, the startup handshake and
//! authentication, multi-host and `target_session_attrs`.

mod open;
mod startup;

pub use open::{connect, connect_with_driver};
pub(crate) use startup::{handshake, message_name};
