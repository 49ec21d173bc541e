//! Reading one extended-query response: rows, the command's row count, and
//! what the statement cache must learn from it.

use std::sync::Arc;

use pgpipe_proto::backend::{tag, CommandComplete, Message};

use crate::driver::{Responses, Shared};
use crate::error::{DbError, ErrorKind, SqlState};
use crate::query::{Column, Row};
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
    shared: &Shared,
    responses: &mut Responses,
    mut columns: Option<Arc<[Column]>>,
    mut on_row: impl FnMut(Row),
) -> Outcome {
    let mut error: Option<Error> = None;
    let mut affected = 0;
    let mut parsed = false;
    let mut bound = false;
    loop {
        let (tag, body) = match responses.next_raw().await {
            Ok(m) => m,
            Err(e) => {
                // A server error read before the connection ended explains
                // it (a FATAL such as 57P01 from pg_terminate_backend is
                // followed by the server closing the socket): report that,
                // not just "closed".
                let e = match error {
                    Some(db) if db.is_db() => db,
                    _ => e,
                };
                return Outcome {
                    result: Err(e),
                    columns,
                    parsed,
                };
            }
        };
        match tag {
            tag::DATA_ROW => {
                let Some(cols) = &columns else {
                    error.get_or_insert_with(|| Error::protocol("DataRow before RowDescription"));
                    continue;
                };
                match Row::from_body(cols, body) {
                    Ok(row) => on_row(row),
                    Err(e) => {
                        error.get_or_insert(e);
                    }
                }
            }
            tag::READY_FOR_QUERY => break,
            tag::PARSE_COMPLETE => parsed = true,
            tag::BIND_COMPLETE => bound = true,
            tag::COMMAND_COMPLETE => match CommandComplete::rows_in_body(&body) {
                Ok(rows) => affected = rows.unwrap_or(0),
                Err(e) => {
                    error.get_or_insert_with(|| Error::protocol(e.to_string()));
                }
            },
            _ => match Message::parse(tag, body) {
                Ok(Message::RowDescription(desc)) => {
                    columns = Some(
                        desc.fields()
                            .map(|f| Column::from_field(&f, &shared.types))
                            .collect(),
                    );
                }
                Ok(Message::NoData) => columns = Some(Arc::from(Vec::new())),
                Ok(Message::EmptyQueryResponse)
                | Ok(Message::PortalSuspended)
                | Ok(Message::CloseComplete) => {}
                Ok(Message::CopyInResponse(_)) => {
                    error.get_or_insert(crate::copy::copy_in_reached_the_server(shared));
                }
                Ok(Message::CopyOutResponse(_))
                | Ok(Message::CopyData(_))
                | Ok(Message::CopyDone) => {
                    error.get_or_insert_with(|| {
                        Error::new(
                            ErrorKind::Unsupported,
                            "COPY TO STDOUT is not supported through query methods yet",
                        )
                    });
                }
                Ok(Message::ErrorResponse(fields)) => {
                    let e = match DbError::parse(&fields) {
                        Ok(db) => {
                            // The server found the parameter count wrong at Bind:
                            // report it as the caller's mistake it is.
                            let wrong_count =
                                parsed && !bound && *db.code() == SqlState::PROTOCOL_VIOLATION;
                            let pooler = pooler_hint(&db);
                            let e = Error::db(db);
                            if let Some(hint) = pooler {
                                e.context(hint)
                            } else if wrong_count {
                                e.with_kind(ErrorKind::ParameterCount)
                                    .context("wrong number of parameters")
                            } else {
                                e
                            }
                        }
                        Err(msg) => Error::protocol(msg),
                    };
                    error.get_or_insert(e);
                }
                Ok(other) => {
                    error.get_or_insert_with(|| Error::unexpected(&other, "in a query response"));
                }
                Err(e) => {
                    error.get_or_insert_with(|| Error::protocol(e.to_string()));
                }
            },
        }
    }
    let result = match error {
        Some(e) => Err(shared.request_failed(e)),
        None => Ok(affected),
    };
    Outcome {
        result,
        columns,
        parsed,
    }
}

/// 26000 ("prepared statement ... does not exist") or 42P05 ("... already
/// exists") about one of pgpipe's own statement names: on a connection of
/// its own, pgpipe never causes either, so something in between shares
/// server sessions. Say what to do about it.
fn pooler_hint(db: &DbError) -> Option<&'static str> {
    let code = db.code();
    let ours = db.message().contains("\"pgpipe_");
    (ours
        && (*code == SqlState::INVALID_SQL_STATEMENT_NAME
            || *code == SqlState::DUPLICATE_PSTATEMENT))
        .then_some(
            "a named statement was not found where pgpipe prepared it; if a connection \
             pooler in transaction mode (such as PgBouncer) sits between pgpipe and the \
             server, use query_mode=unnamed",
        )
}
