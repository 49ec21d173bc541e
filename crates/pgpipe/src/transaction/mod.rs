//! Transactions as types: [`Transaction`] (with savepoints as nested
//! transactions), its [`TransactionBuilder`], and the
//! [`RetryPolicy`] of the retry helper.
//!
//! A transaction has the connection to itself: while it is open, requests
//! from other handles of the same [`Client`](crate::Client) are encoded but
//! held back, and go out right after its COMMIT or ROLLBACK, never inside
//! it. BEGIN is not sent on its own: it travels in front of the
//! transaction's first statement and shares that statement's Sync, so a
//! transaction costs no round trip for BEGIN, and if BEGIN fails the
//! statement does not run outside the transaction.

mod builder;
mod retry;
#[allow(clippy::module_inception)]
mod transaction;
mod upsert;

pub use builder::{IsolationLevel, TransactionBuilder};
pub use retry::{Retried, RetryFuture, RetryPolicy};
pub use transaction::Transaction;
pub use upsert::GenericUpsert;
pub(crate) use upsert::{delegate_upsert, upsert_rows};
