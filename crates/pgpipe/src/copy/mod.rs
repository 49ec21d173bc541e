//! COPY: raw data in ([`CopyIn`]) and out ([`CopyOut`]) in any format the
//! statement names, typed binary rows in ([`BinaryCopyWriter`]) and out
//! ([`CopyOutRows`]), and the bulk upsert helper
//! ([`Client::upsert_rows`](crate::Client::upsert_rows)).

mod client_api;
mod copy_in;
mod copy_out;
mod framed;
mod generic;
mod sql;
mod to_row;
mod typed;
mod upsert;

pub use copy_in::CopyIn;
pub use copy_out::{CopyOut, CopyOutReader};
pub use generic::GenericCopy;
pub(crate) use generic::{copy_in, copy_in_rows, copy_out, copy_out_rows, delegate_copy};
pub use to_row::ToRow;
pub use typed::{BinaryCopyWriter, CopyOutRows};
pub(crate) use upsert::Upsert;
pub use upsert::{OnConflict, UpsertCounts};
