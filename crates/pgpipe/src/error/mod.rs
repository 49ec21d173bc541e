//! pgpipe's one error type.

mod db;
mod sqlstate;

use std::fmt;

pub use db::{DbError, ErrorPosition};
pub use sqlstate::SqlState;

type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// What kind of failure an [`Error`] is. Match on it to decide what to do;
/// new kinds may be added.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ErrorKind {
    /// The connection string or configuration is invalid.
    Config,
    /// Could not establish a connection (refused, unreachable, DNS, timeout
    /// while connecting).
    Connect,
    /// Authentication failed: wrong password, a method pgpipe does not
    /// support, or a server that failed to prove it knows the password.
    Auth,
    /// An I/O error on an established connection.
    Io,
    /// The connection is closed; nothing more can be sent on it.
    Closed,
    /// The server reported an error ([`Error::as_db_error`] has every field).
    Db,
    /// A wait exceeded its bound.
    Timeout,
    /// The server broke the protocol (a malformed or unexpected message).
    /// The connection is closed.
    Protocol,
    /// A parameter value could not be encoded or does not match the
    /// statement's parameter type.
    Encode,
    /// A column value could not be converted to the requested Rust type.
    Decode,
    /// The number of parameters given differs from the number the statement
    /// takes.
    ParameterCount,
    /// A column index or name does not exist in the row.
    ColumnNotFound,
    /// The result has a different number of columns than the Rust type
    /// it is read into takes (see [`FromRow`](crate::FromRow)).
    ColumnCount,
    /// `query_one` got zero or several rows, `query_opt` got several.
    RowCount,
    /// The API was used in a way that cannot work: a statement on another
    /// connection than the one that prepared it, a portal outside a
    /// transaction block.
    InvalidUse,
    /// The server asked for something this version of pgpipe does not do
    /// (an authentication method, COPY through a query method, ...).
    Unsupported,
    /// TLS could not be set up as `sslmode` demands: the server does not
    /// support it, the handshake failed, or the server's certificate failed
    /// a check (the message says which one).
    Tls,
    /// A statement was refused without being sent because its transaction
    /// is already aborted (an earlier statement failed, or BEGIN did): roll
    /// the transaction back, or roll back to a savepoint.
    TransactionAborted,
    /// COMMIT was answered with `ROLLBACK`: the transaction had failed, and
    /// nothing of it was committed.
    RolledBack,
    /// The connection was lost while COMMIT was in flight, or COMMIT got no
    /// answer within the query timeout (and the connection was closed): the
    /// transaction may or may not have been committed. Never retry
    /// blindly; check.
    OutcomeUnknown,
    /// A cluster (`pgpipe::cluster::Cluster`) could not route a request: a
    /// shard id it does not know, a key its shard map does not cover or
    /// cannot take, a resolver that failed, or no host of the shard in the
    /// role asked for (the message says which).
    Routing,
}

/// The error type of every fallible pgpipe operation.
///
/// ```no_run
/// # async fn f(client: &pgpipe::Client) {
/// use pgpipe::{ErrorKind, SqlState};
///
/// match client.execute("INSERT INTO users (email) VALUES ($1)", ("a@example.com",)).await {
///     Ok(_) => {}
///     Err(e) if e.code() == Some(&SqlState::UNIQUE_VIOLATION) => { /* already there */ }
///     Err(e) if e.kind() == ErrorKind::Closed => { /* reconnect */ }
///     Err(e) => eprintln!("{e}"),
/// }
/// # }
/// ```
pub struct Error(Box<Inner>);

struct Inner {
    kind: ErrorKind,
    message: String,
    db: Option<DbError>,
    source: Option<BoxError>,
}

impl Error {
    pub(crate) fn new(kind: ErrorKind, message: impl Into<String>) -> Error {
        Error(Box::new(Inner {
            kind,
            message: message.into(),
            db: None,
            source: None,
        }))
    }

    pub(crate) fn with_source(mut self, source: impl Into<BoxError>) -> Error {
        self.0.source = Some(source.into());
        self
    }

    pub(crate) fn db(db: DbError) -> Error {
        let mut e = Error::new(ErrorKind::Db, String::new());
        e.0.db = Some(db);
        e
    }

    pub(crate) fn with_kind(mut self, kind: ErrorKind) -> Error {
        self.0.kind = kind;
        self
    }

    /// Adds context in front of the message ("statement 3 of the batch: ...").
    pub(crate) fn context(mut self, context: impl fmt::Display) -> Error {
        self.0.message = if self.0.message.is_empty() {
            context.to_string()
        } else {
            format!("{context}: {}", self.0.message)
        };
        self
    }

    /// A message that has no place in the response being read.
    pub(crate) fn unexpected(msg: &pgpipe_proto::backend::Message, during: &str) -> Error {
        Error::protocol(format!("unexpected {} {during}", message_name(msg)))
    }

    pub(crate) fn closed() -> Error {
        Error::new(ErrorKind::Closed, "the connection is closed")
    }

    pub(crate) fn io(what: &str, e: std::io::Error) -> Error {
        Error::new(ErrorKind::Io, what).with_source(e)
    }

    pub(crate) fn protocol(message: impl Into<String>) -> Error {
        Error::new(ErrorKind::Protocol, message)
    }

    /// Kind of failure.
    pub fn kind(&self) -> ErrorKind {
        self.0.kind
    }

    /// Whether the connection is closed (or was found closed by this call).
    pub fn is_closed(&self) -> bool {
        self.0.kind == ErrorKind::Closed
    }

    /// Whether a wait exceeded its bound.
    pub fn is_timeout(&self) -> bool {
        self.0.kind == ErrorKind::Timeout
    }

    /// Whether the connection was lost while COMMIT was in flight, so the
    /// transaction may or may not have been committed
    /// ([`ErrorKind::OutcomeUnknown`]).
    pub fn is_outcome_unknown(&self) -> bool {
        self.0.kind == ErrorKind::OutcomeUnknown
    }

    /// Whether re-running the whole transaction may succeed: the server
    /// reported a serialization failure (40001) or a deadlock (40P01), at a
    /// statement or at COMMIT, and rolled the transaction back.
    pub fn is_retryable_transaction(&self) -> bool {
        matches!(
            self.code(),
            Some(c) if *c == SqlState::T_R_SERIALIZATION_FAILURE || *c == SqlState::T_R_DEADLOCK_DETECTED
        )
    }

    /// Whether the server reported this error.
    pub fn is_db(&self) -> bool {
        self.0.db.is_some()
    }

    /// The server's error report, when the server reported this error.
    pub fn as_db_error(&self) -> Option<&DbError> {
        self.0.db.as_ref()
    }

    /// The SQLSTATE code, when the server reported this error.
    pub fn code(&self) -> Option<&SqlState> {
        self.0.db.as_ref().map(DbError::code)
    }
}

impl fmt::Debug for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut s = f.debug_struct("Error");
        s.field("kind", &self.0.kind);
        if !self.0.message.is_empty() {
            s.field("message", &self.0.message);
        }
        if let Some(db) = &self.0.db {
            s.field("db", db);
        }
        if let Some(source) = &self.0.source {
            s.field("source", source);
        }
        s.finish()
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut sep = "";
        if !self.0.message.is_empty() {
            f.write_str(&self.0.message)?;
            sep = ": ";
        }
        if let Some(db) = &self.0.db {
            write!(f, "{sep}{db}")?;
        } else if let Some(source) = &self.0.source {
            write!(f, "{sep}{source}")?;
        }
        Ok(())
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        if let Some(db) = &self.0.db {
            return Some(db);
        }
        self.0.source.as_deref().map(|e| e as _)
    }
}

/// The name of a backend message, for error messages ("unexpected
/// DataRow during startup").
pub(crate) fn message_name(msg: &pgpipe_proto::backend::Message) -> &'static str {
    pgpipe_proto::backend::tag::name(msg.tag()).unwrap_or("an unknown message")
}

impl From<crate::sql::InvalidIdent> for Error {
    fn from(e: crate::sql::InvalidIdent) -> Error {
        Error::new(ErrorKind::InvalidUse, e.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn display_joins_message_and_source() {
        let e = Error::io(
            "writing to the server",
            std::io::Error::other("broken pipe"),
        );
        assert_eq!(e.to_string(), "writing to the server: broken pipe");
        assert_eq!(e.kind(), ErrorKind::Io);
        assert!(!e.is_closed());
        assert!(Error::closed().is_closed());
        let e = Error::closed().context("statement 2 of the batch");
        assert_eq!(
            e.to_string(),
            "statement 2 of the batch: the connection is closed"
        );
    }

    #[test]
    fn errors_are_send_sync_and_small() {
        fn assert_send_sync<T: Send + Sync + 'static>() {}
        assert_send_sync::<Error>();
        assert_eq!(std::mem::size_of::<Error>(), std::mem::size_of::<usize>());
    }
}
