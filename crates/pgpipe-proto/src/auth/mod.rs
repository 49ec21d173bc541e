//! Authentication exchanges as sans-IO state machines.
//!
//! Nothing here performs I/O: the client feeds in the payloads of the server's
//! authentication messages and sends back what these types produce.
//!
//! - [`md5`]: the legacy `AuthenticationMD5Password` hash.
//! - [`scram`]: SCRAM-SHA-256 and SCRAM-SHA-256-PLUS (`AuthenticationSASL`).

pub mod md5;
pub mod scram;
