//! The replay server (`--server replay`): a tiny fake PostgreSQL server in
//! the tool that answers every extended-protocol query with a response
//! captured once from the real server, at memory speed, so that a client's
//! own decoding cost shows without the server in the way. The `rows-*`
//! workloads get it as a second variant, `replay`.

mod capture;
mod protocol;
mod server;

pub use capture::{capture_for, Capture};
pub use server::ReplayServer;
