//! Reading one extended-query response: rows, the command's row count, and
//! what the statement cache must learn from it.

use std::sync::Arc;

use bytes::Bytes;
use pgpipe_proto::backend::tag;

use crate::driver::Responses;
use crate::error::ErrorKind;
use crate::query::reply::{Event, Reply};
use crate::query::{Column, Row};
use crate::session::Session;
use crate::Error;

/// What reading a response found out.
pub(crate) struct Outcome {
    /// Rows affected or returned (CommandComplete), or the error.
    pub(crate) result: Result<u64, Error>,
    /// The columns of the result, as described or as known beforehand.
    pub(crate) columns: Option<Arc<[Column]>>,
    /// ParseComplete was received.
    pub(crate) parsed: bool,
}

/// Reads one extended-query response to its end, handing each row to
/// `on_row`.
pub(crate) async fn read_response(
    shared: &Session,
    responses: &mut Responses,
    mut columns: Option<Arc<[Column]>>,
    mut on_row: impl FnMut(Row),
) -> Outcome {
    let mut reply = Reply::extended();
    let mut affected = 0;
    let mut parsed = false;
    loop {
        let (tag, body) = match responses.next_raw().await {
            Ok(m) => m,
            Err(e) => {
                return Outcome {
                    result: Err(reply.cut_short(e)),
                    columns,
                    parsed,
                };
            }
        };
        // DataRows are read here, before the reply reader sees them, and
        // the run of them already in hand without a poll each: a result of
        // 50,000 rows runs this loop 50,000 times, and a future's round
        // plus `Reply::event` per row cost 15 % more client CPU per
        // collected row. Rows carry no state the reader tracks; errors
        // still go through `reply`.
        if tag == tag::DATA_ROW {
            take_row(&columns, body, &mut reply, &mut on_row);
            while let Some(body) = responses.next_buffered_row() {
                take_row(&columns, body, &mut reply, &mut on_row);
            }
            continue;
        }
        parsed |= tag == tag::PARSE_COMPLETE;
        match reply.event(tag, body) {
            Event::Row(body) => take_row(&columns, body, &mut reply, &mut on_row),
            Event::Ready => break,
            Event::Complete { rows, .. } => affected = rows,
            Event::Columns(desc) => {
                columns = Some(
                    desc.fields()
                        .map(|f| Column::from_field(&f, &shared.types))
                        .collect(),
                );
            }
            Event::NoRows => columns = Some(Arc::from(Vec::new())),
            Event::Step | Event::Empty | Event::Suspended | Event::Failed => {}
            Event::CopyIn => reply.fail(super::refuse::copy_in_reached_the_server(shared)),
            Event::CopyOut(_) | Event::CopyData | Event::CopyDone => {
                reply.fail(Error::new(
                    ErrorKind::Unsupported,
                    "COPY TO STDOUT is not supported through query methods yet",
                ));
            }
            Event::Params(_) => reply.fail(Error::protocol(
                "unexpected ParameterDescription in a query response",
            )),
            Event::Other(other) => reply.unexpected(&other, "in a query response"),
        }
    }
    let result = match reply.take_error() {
        Some(e) => Err(shared.request_failed(e)),
        None => Ok(affected),
    };
    Outcome {
        result,
        columns,
        parsed,
    }
}

/// Hands the row of a DataRow `body` to `on_row`, or records why it cannot.
#[inline(always)]
fn take_row(
    columns: &Option<Arc<[Column]>>,
    body: Bytes,
    reply: &mut Reply,
    on_row: &mut impl FnMut(Row),
) {
    let Some(cols) = columns else {
        reply.fail(Error::protocol("DataRow before RowDescription"));
        return;
    };
    match Row::from_body(cols, body) {
        Ok(row) => on_row(row),
        Err(e) => reply.fail(e),
    }
}
