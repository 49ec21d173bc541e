//! The one task that owns the socket, and the plumbing every handle shares
//! with it: the request queue and write buffer ([`Shared`]), the reply
//! hand-off ([`Slot`], [`Responses`]), and the byte stream it owns.

mod closing;
mod coalesce;
mod connection;
mod copy_data;
mod counters;
mod events;
mod gate;
mod low_water;
mod queue;
mod reservation;
mod responses;
mod shared;
mod slot;
mod statement_cache;
mod tail_timer;
mod transport;

pub(crate) use coalesce::eligible_sql as coalescible;
pub use connection::Connection;
pub(crate) use events::Events;
pub(crate) use reservation::{Request, SessionEnd, SessionId, NO_SESSION};
pub(crate) use responses::Responses;
pub(crate) use shared::Shared;
pub(crate) use slot::Slot;
pub(crate) use statement_cache::{FxHasher, StatementCache};
pub(crate) use transport::Transport;
