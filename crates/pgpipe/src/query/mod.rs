//! The extended-query path and what it returns: encoding statements, the
//! statement cache, reading responses into lazy rows, batches, portals,
//! streams, prepared statements, the simple-query protocol and `FromRow`.

mod abandon;
mod batch;
mod builder;
mod catalog;
mod conn;
pub(crate) mod control;
mod delegate;
mod encode;
mod exec;
pub(crate) mod from_row;
mod generic;
mod portal;
mod prepare;
mod refuse;
mod reply;
mod response;
mod row;
mod row_batch;
mod run;
mod server_types;
mod simple_query;
mod statement;
mod stream;

pub use crate::types::column::Column;
pub(crate) use abandon::cancel_abandoned;
pub use batch::{Batch, BatchResult};
pub use builder::{BuiltQuery, Ident, QueryBuilder, Separated, MAX_PARAMS};
pub(crate) use conn::ConnRef;
pub(crate) use delegate::delegate_queries;
pub(crate) use encode::{
    bind_to, check_prepared, encode_error, encode_statement, param_type_error, send_query,
    send_query_with, sql_of, Plan,
};
pub use encode::{StatementRef, ToStatement};
pub use from_row::FromRow;
pub(crate) use generic::{impl_generic_client, Lent, Sealed};
pub use generic::{GenericClient, GenericSession};
pub use portal::Portal;
pub(crate) use reply::{Event, Reply};
pub(crate) use response::read_response;
pub use row::{Row, RowIndex};
pub use row_batch::{RowBatch, RowRef};
pub use simple_query::{SimpleQueryMessage, SimpleQueryRow};
pub use statement::Statement;
pub use stream::RowStream;
