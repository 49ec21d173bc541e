//! Sans-IO implementation of the PostgreSQL frontend/backend protocol, version 3.
//!
//! This crate does no I/O and knows nothing about tokio: it turns messages into
//! bytes ([`frontend`]), bytes into messages ([`backend`]), and runs the
//! authentication exchanges ([`auth`]) as plain state machines. The `pgpipe`
//! client drives it over a socket; tests and the fake server drive it over
//! in-memory buffers.

#![warn(missing_docs)]
#![forbid(unsafe_code)]
#![warn(missing_debug_implementations)]
#![warn(unreachable_pub)]

pub mod auth;
pub mod backend;
pub mod copy_binary;
mod error;
pub mod frame;
pub mod frontend;
pub mod put;

pub use error::{DecodeError, DecodeErrorKind, EncodeError};

/// A PostgreSQL object identifier, as used for types on the wire.
pub type Oid = u32;

/// The default largest message the decoder accepts (1 GiB), matching the
/// server's own limit on a single field value.
pub const DEFAULT_MAX_MESSAGE_LEN: usize = 1 << 30;
