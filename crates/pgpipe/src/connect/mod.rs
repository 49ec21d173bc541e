//! Opening an authenticated session: resolving hosts, the socket, TLS,
//! the startup handshake and authentication; cancel requests.

mod cancel;
pub(crate) mod open;
mod parameters;
mod password;
mod refusals;
mod require_auth;
mod socket;
pub(crate) mod sslmode;
mod startup;
#[cfg(feature = "tls")]
pub(crate) mod tls;
#[cfg(feature = "tls")]
mod x509;

pub(crate) use cancel::CancelTls;
pub use cancel::CancelToken;
pub(crate) use parameters::ServerParameters;
pub(crate) use password::Password;
pub(crate) use socket::Socket;
pub(crate) use startup::handshake;
