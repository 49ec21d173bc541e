//! The one reply reader: every path that reads the server's answer to a
//! request (query, query_stream, portals, prepare, batches, the simple
//! protocol, COPY, transaction control) turns backend messages into
//! [`Event`]s here, and server errors into `Error`s only here, so one
//! server error reads the same whichever method ran the statement.
//!
//! Rows pass through untouched (the DataRow body as it was read), so
//! reading a reply costs no allocation or copy per row.

use bytes::Bytes;
use pgpipe_proto::backend::{
    tag, CommandComplete, CopyResponse, ErrorFields, Message, ParameterDescription, RowDescription,
};

use crate::error::{DbError, ErrorKind, SqlState};
use crate::Error;

/// One backend message of a reply, as the reading paths use it.
pub(crate) enum Event {
    /// DataRow: the row's body, to be read in place.
    Row(Bytes),
    /// RowDescription: the result's columns.
    Columns(RowDescription),
    /// NoData: the statement returns no rows.
    NoRows,
    /// ParameterDescription (a Describe of a statement).
    Params(ParameterDescription),
    /// CommandComplete: the statement ended; `rows` is the count its tag
    /// carries (0 when it carries none), `tag` the tag's text.
    Complete { rows: u64, tag: Bytes },
    /// EmptyQueryResponse: the statement was empty.
    Empty,
    /// PortalSuspended: the row limit of an Execute was reached.
    Suspended,
    /// ParseComplete, BindComplete or CloseComplete: a step the reader
    /// keeps track of itself.
    Step,
    /// CopyInResponse: the server waits for COPY data.
    CopyIn,
    /// CopyOutResponse: COPY data follows.
    CopyOut(CopyResponse),
    /// CopyData (its bytes are read on the COPY path itself).
    CopyData,
    /// CopyDone.
    CopyDone,
    /// ReadyForQuery: the reply is complete (the driver keeps the
    /// transaction status it carries).
    Ready,
    /// ErrorResponse, or a malformed message: the error is recorded (the
    /// first one of a reply wins), see [`Reply::error`].
    Failed,
    /// Any other message; [`Reply::unexpected`] records it as a protocol
    /// error where it has no place.
    Other(Message),
}

/// The state of reading one reply: where its statement is (for what a
/// server error means) and the first error.
#[derive(Default)]
pub(crate) struct Reply {
    /// The request binds parameters (Bind), so the server may find their
    /// count wrong.
    binds: bool,
    /// The current statement's ParseComplete was read.
    parsed: bool,
    /// The current statement's BindComplete was read.
    bound: bool,
    error: Option<Error>,
}

impl Reply {
    /// A reply to a request with Bind messages (a statement's execution,
    /// a batch, a portal's creation).
    pub(crate) fn extended() -> Reply {
        Reply {
            binds: true,
            ..Reply::default()
        }
    }

    /// A reply to a request without Bind: a simple Query, a Parse and
    /// Describe, an Execute of an open portal, COPY data.
    pub(crate) fn without_bind() -> Reply {
        Reply::default()
    }

    /// Reads one message.
    #[inline]
    pub(crate) fn event(&mut self, t: u8, body: Bytes) -> Event {
        // The per-row message first, without parsing.
        if t == tag::DATA_ROW {
            return Event::Row(body);
        }
        match t {
            tag::PARSE_COMPLETE => {
                self.parsed = true;
                return Event::Step;
            }
            tag::BIND_COMPLETE => {
                self.bound = true;
                return Event::Step;
            }
            tag::CLOSE_COMPLETE => return Event::Step,
            tag::READY_FOR_QUERY => {
                // The reply ends here whatever the status byte says; a
                // malformed one is still reported.
                if let Err(e) = Message::parse(t, body) {
                    self.fail(Error::protocol(e.to_string()));
                }
                return Event::Ready;
            }
            tag::COMMAND_COMPLETE => {
                self.next_statement();
                return match CommandComplete::rows_in_body(&body) {
                    Ok(rows) => Event::Complete {
                        rows: rows.unwrap_or(0),
                        tag: body,
                    },
                    Err(e) => self.failed(Error::protocol(e.to_string())),
                };
            }
            _ => {}
        }
        match Message::parse(t, body) {
            Ok(Message::RowDescription(desc)) => Event::Columns(desc),
            Ok(Message::NoData) => Event::NoRows,
            Ok(Message::ParameterDescription(desc)) => Event::Params(desc),
            Ok(Message::EmptyQueryResponse) => {
                self.next_statement();
                Event::Empty
            }
            Ok(Message::PortalSuspended) => {
                self.next_statement();
                Event::Suspended
            }
            Ok(Message::CopyInResponse(_)) => Event::CopyIn,
            Ok(Message::CopyOutResponse(r)) => Event::CopyOut(r),
            Ok(Message::CopyData(_)) => Event::CopyData,
            Ok(Message::CopyDone) => Event::CopyDone,
            Ok(Message::ErrorResponse(fields)) => {
                let e = self.server_error(&fields);
                self.next_statement();
                self.failed(e)
            }
            Ok(other) => Event::Other(other),
            Err(e) => self.failed(Error::protocol(e.to_string())),
        }
    }

    /// Records `e` unless an error is already recorded.
    pub(crate) fn fail(&mut self, e: Error) {
        self.error.get_or_insert(e);
    }

    fn failed(&mut self, e: Error) -> Event {
        self.fail(e);
        Event::Failed
    }

    /// Records `msg` as a message that has no place `during` this reply.
    pub(crate) fn unexpected(&mut self, msg: &Message, during: &str) {
        if self.error.is_none() {
            self.error = Some(Error::unexpected(msg, during));
        }
    }

    /// Records `event` as a message that has no place `during` this reply
    /// (an `Event::Failed` has recorded its error already).
    pub(crate) fn unexpected_event(&mut self, event: Event, during: &str) {
        let name = match event {
            Event::Failed => return,
            Event::Other(msg) => return self.unexpected(&msg, during),
            Event::Row(_) => tag::name(tag::DATA_ROW),
            Event::Columns(_) => tag::name(tag::ROW_DESCRIPTION),
            Event::NoRows => tag::name(tag::NO_DATA),
            Event::Params(_) => tag::name(tag::PARAMETER_DESCRIPTION),
            Event::Complete { .. } => tag::name(tag::COMMAND_COMPLETE),
            Event::Empty => tag::name(tag::EMPTY_QUERY_RESPONSE),
            Event::Suspended => tag::name(tag::PORTAL_SUSPENDED),
            Event::Step => Some("ParseComplete, BindComplete or CloseComplete"),
            Event::CopyIn => tag::name(tag::COPY_IN_RESPONSE),
            Event::CopyOut(_) => tag::name(tag::COPY_OUT_RESPONSE),
            Event::CopyData => tag::name(tag::COPY_DATA),
            Event::CopyDone => tag::name(tag::COPY_DONE),
            Event::Ready => tag::name(tag::READY_FOR_QUERY),
        };
        let name = name.unwrap_or("an unknown message");
        self.fail(Error::protocol(format!("unexpected {name} {during}")));
    }

    /// The first error of the reply so far.
    pub(crate) fn error(&self) -> Option<&Error> {
        self.error.as_ref()
    }

    /// Takes the first error of the reply so far.
    pub(crate) fn take_error(&mut self) -> Option<Error> {
        self.error.take()
    }

    /// Whether the current statement's ParseComplete was read.
    pub(crate) fn parsed(&self) -> bool {
        self.parsed
    }

    /// The error for a reply cut short by `transport` (the connection
    /// ended): a server error read before it explains it better (a FATAL
    /// such as 57P01 from pg_terminate_backend is followed by the server
    /// closing the socket), so that one is reported.
    pub(crate) fn cut_short(&mut self, transport: Error) -> Error {
        match self.error.take() {
            Some(db) if db.is_db() => db,
            _ => transport,
        }
    }

    fn next_statement(&mut self) {
        self.parsed = false;
        self.bound = false;
    }

    /// What a server error means here: a wrong parameter count found at
    /// Bind is the caller's mistake; an unknown statement of pgpipe's
    /// naming points at a pooler in between.
    fn server_error(&self, fields: &ErrorFields) -> Error {
        let db = match DbError::parse(fields) {
            Ok(db) => db,
            Err(msg) => return Error::protocol(msg),
        };
        // The server found the parameter count wrong at Bind (the only
        // protocol violation pgpipe's well-formed messages meet there).
        let wrong_count = self.binds && !self.bound && *db.code() == SqlState::PROTOCOL_VIOLATION;
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
