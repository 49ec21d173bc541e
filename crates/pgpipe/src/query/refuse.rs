//! Recognising `COPY ... FROM STDIN` before it is sent through a query
//! method (extended protocol), where it cannot be refused after the fact.
//!
//! Why before: once the server has answered Execute with CopyInResponse it
//! is in copy-in mode, where it ignores Sync. A CopyFail sent then makes it
//! skip everything up to the *next* Sync, which belongs to the request
//! pipelined behind the COPY (another task's query): that request would get
//! no answer or a wrong one. So such a statement is never sent: its caller
//! gets an error naming [`Client::copy_in`](crate::Client::copy_in).

use crate::error::ErrorKind;
use crate::Error;

/// The error for a `COPY ... FROM STDIN` given to a query method.
pub(crate) fn copy_from_stdin_refused() -> Error {
    Error::new(
        ErrorKind::Unsupported,
        "COPY ... FROM STDIN cannot run through a query method: use client.copy_in(sql) \
         (or copy_in_rows for typed binary rows)",
    )
}

/// The server answered a query method with CopyInResponse although the
/// statement was not recognised as `COPY ... FROM STDIN` beforehand: the
/// requests pipelined behind it can no longer be answered reliably (see
/// the module docs), so the connection is closed and every caller gets an
/// error instead of another's answer.
pub(crate) fn copy_in_reached_the_server(shared: &crate::session::Session) -> Error {
    shared.abort(copy_from_stdin_refused().context(
        "the server started a COPY FROM STDIN for a query method; the connection is closed",
    ))
}

/// Errors if `sql` is a `COPY ... FROM STDIN` statement. Cheap for every
/// other statement: only SQL whose first word is COPY is scanned further.
pub(crate) fn refuse_copy_from_stdin(sql: &str) -> Result<(), Error> {
    if crate::sql::is_copy_from_stdin(sql) {
        Err(copy_from_stdin_refused())
    } else {
        Ok(())
    }
}
