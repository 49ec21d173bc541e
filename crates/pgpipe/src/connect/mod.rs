//! Opening a connection: resolving hosts, the startup handshake and
//! authentication, multi-host and `target_session_attrs`.

mod cancel;
mod open;
mod require_auth;
pub(crate) mod sslmode;
mod startup;
#[cfg(feature = "tls")]
pub(crate) mod tls;
#[cfg(feature = "tls")]
mod x509;

pub(crate) use cancel::CancelTls;
pub use cancel::CancelToken;
pub use open::{connect, connect_with_driver};
pub(crate) use startup::handshake;
