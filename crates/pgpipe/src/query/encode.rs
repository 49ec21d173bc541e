//! The extended-query path: encoding a statement (from the cache or with
//! Parse + Describe) and the names a query method accepts.

use std::sync::Arc;

use bytes::BytesMut;
use pgpipe_proto::frontend::{self, Encoder, Target};
use pgpipe_proto::EncodeError;
use pgpipe_types::{Params, Type};
use tokio::sync::OwnedSemaphorePermit;

use crate::driver::Responses;
use crate::driver::StatementCache;
use crate::driver::{coalescible, Request, SessionId};
use crate::error::ErrorKind;
use crate::query::Column;
use crate::query::Statement;
use crate::session::Session;
use crate::Error;

/// Binary for every parameter and every result column.
const BINARY: &[i16] = &[1];

/// What a query runs: SQL text or a prepared [`Statement`].
///
/// Implemented for `str`, `String` and `Statement`, so every query method
/// takes either.
pub trait ToStatement: sealed::Sealed {
    #[doc(hidden)]
    fn to_statement(&self) -> StatementRef<'_>;
}

/// A borrowed statement reference (see [`ToStatement`]).
#[doc(hidden)]
#[derive(Clone, Copy, Debug)]
pub enum StatementRef<'a> {
    Sql(&'a str),
    Prepared(&'a Statement),
}

/// The SQL text of a statement, for `db.query.text`.
pub(crate) fn sql_of<'a>(statement: &StatementRef<'a>) -> Option<&'a str> {
    Some(match statement {
        StatementRef::Sql(sql) => sql,
        StatementRef::Prepared(stmt) => stmt.sql(),
    })
}

mod sealed {
    pub trait Sealed {}
    impl Sealed for str {}
    impl Sealed for String {}
    impl Sealed for crate::Statement {}
    impl<T: Sealed + ?Sized> Sealed for &T {}
}

impl ToStatement for str {
    fn to_statement(&self) -> StatementRef<'_> {
        StatementRef::Sql(self)
    }
}

impl ToStatement for String {
    fn to_statement(&self) -> StatementRef<'_> {
        StatementRef::Sql(self)
    }
}

impl ToStatement for Statement {
    fn to_statement(&self) -> StatementRef<'_> {
        StatementRef::Prepared(self)
    }
}

impl<T: ToStatement + ?Sized> ToStatement for &T {
    fn to_statement(&self) -> StatementRef<'_> {
        (**self).to_statement()
    }
}

pub(crate) fn encode_error(e: EncodeError) -> Error {
    match e {
        EncodeError::Parameter { index, source } => Error::new(
            ErrorKind::Encode,
            format!("parameter ${} could not be encoded", index + 1),
        )
        .with_source(source),
        EncodeError::TooManyItems { .. } => Error::new(ErrorKind::ParameterCount, e.to_string()),
        other => Error::new(ErrorKind::Encode, "could not encode the request").with_source(other),
    }
}

fn bind<P: Params + ?Sized>(
    enc: &Encoder,
    statement: &str,
    params: &P,
    types: Option<&[Type]>,
    columns: Option<&[Column]>,
    buf: &mut BytesMut,
) -> Result<(), Error> {
    bind_to(enc, "", statement, params, types, columns, buf)
}

/// Bind into a named portal; binary parameters and results, but text for
/// result columns whose type has no binary output (when the statement's
/// `columns` are known).
pub(crate) fn bind_to<P: Params + ?Sized>(
    enc: &Encoder,
    portal: &str,
    statement: &str,
    params: &P,
    types: Option<&[Type]>,
    columns: Option<&[Column]>,
    buf: &mut BytesMut,
) -> Result<(), Error> {
    let text_formats;
    let result_formats = match columns {
        Some(cols) if cols.iter().any(|c| c.type_().text_output_only()) => {
            // The server refuses binary output of these ("no binary output
            // function"); every other column stays binary.
            text_formats = cols
                .iter()
                .map(|c| i16::from(!c.type_().text_output_only()))
                .collect::<Vec<i16>>();
            &text_formats[..]
        }
        _ => BINARY,
    };
    enc.bind(
        portal,
        statement,
        BINARY,
        params.len(),
        |w| params.encode(types, w),
        result_formats,
        buf,
    )
    .map_err(encode_error)
}

/// How a request was sent, which decides how its response is read and
/// what the statement cache learns from it.
pub(crate) enum Plan {
    /// The unnamed statement: Parse + Bind + Describe + Execute + Sync.
    Unnamed,
    /// A user's prepared statement: columns known.
    Prepared(Arc<[Column]>),
    /// A statement from the cache.
    Cached {
        name: Arc<str>,
        /// `None` until the first execution described them.
        columns: Option<Arc<[Column]>>,
        /// This request carried the Parse that creates the statement.
        parses: bool,
    },
}

impl Plan {
    pub(crate) fn columns(&self) -> Option<Arc<[Column]>> {
        match self {
            Plan::Unnamed => None,
            Plan::Prepared(c) => Some(c.clone()),
            Plan::Cached { columns, .. } => columns.clone(),
        }
    }
}

/// Queues one statement with its own Sync. SQL text costs one round trip
/// even the first time: Parse + Bind + Describe + Execute + Sync leave
/// together, parameter types taken from the Rust values; after that the
/// statement cache skips Parse and Describe.
pub(crate) fn send_query<P: Params + ?Sized>(
    shared: &Arc<Session>,
    session: SessionId,
    permit: OwnedSemaphorePermit,
    statement: StatementRef<'_>,
    params: &P,
) -> Result<(Responses, Plan), Error> {
    send_query_with(shared, session, permit, statement, params, false)
}

/// [`send_query`], sharing its Sync with its neighbours when `coalesce` is
/// set and the statement may (not transaction control, SET, COPY...: see
/// the driver's `coalesce` module).
pub(crate) fn send_query_with<P: Params + ?Sized>(
    shared: &Arc<Session>,
    session: SessionId,
    permit: OwnedSemaphorePermit,
    statement: StatementRef<'_>,
    params: &P,
    coalesce: bool,
) -> Result<(Responses, Plan), Error> {
    if let StatementRef::Prepared(stmt) = statement {
        check_prepared(shared, stmt, params)?;
    }
    let coalesce = coalesce
        && match statement {
            StatementRef::Sql(sql) => coalescible(sql),
            StatementRef::Prepared(stmt) => stmt.coalescible(),
        };
    shared.send_statement(
        session,
        Request::Statement,
        Some(permit),
        coalesce,
        |enc, buf, cache| encode_statement(shared, enc, buf, cache, statement, params, true),
    )
}

/// Encodes one statement: from the cache if it is there (Bind + Execute),
/// else Parse + Bind + Describe + Execute; `sync` ends it with its own Sync.
/// The caller checks a prepared statement's parameters first.
pub(crate) fn encode_statement<P: Params + ?Sized>(
    shared: &Session,
    enc: &Encoder,
    buf: &mut BytesMut,
    cache: &mut StatementCache,
    statement: StatementRef<'_>,
    params: &P,
    sync: bool,
) -> Result<Plan, Error> {
    let end = |buf: &mut BytesMut| -> Result<(), Error> {
        enc.execute("", 0, buf).map_err(encode_error)?;
        if sync {
            frontend::sync(buf);
        }
        Ok(())
    };
    let sql = match statement {
        StatementRef::Prepared(stmt) => {
            if stmt.copies_from_stdin() {
                return Err(super::refuse::copy_from_stdin_refused());
            }
            let columns = &stmt.shared_columns()[..];
            bind(
                enc,
                stmt.name(),
                params,
                Some(stmt.params()),
                Some(columns),
                buf,
            )?;
            end(buf)?;
            return Ok(Plan::Prepared(stmt.shared_columns().clone()));
        }
        StatementRef::Sql(sql) => sql,
    };
    params.with_type_oids(|oids| {
        if !cache.enabled() {
            super::refuse::refuse_copy_from_stdin(sql)?;
            enc.parse("", sql, oids, buf).map_err(encode_error)?;
            bind(enc, "", params, None, None, buf)?;
            enc.describe(Target::Portal, "", buf)
                .map_err(encode_error)?;
            end(buf)?;
            return Ok(Plan::Unnamed);
        }
        if let Some(hit) = cache.get(sql, oids) {
            bind(enc, &hit.name, params, None, hit.columns.as_deref(), buf)?;
            if hit.columns.is_none() {
                // An earlier request parsed it but its answer is not in
                // yet: ask for the columns again.
                enc.describe(Target::Portal, "", buf)
                    .map_err(encode_error)?;
            }
            end(buf)?;
            return Ok(Plan::Cached {
                name: hit.name,
                columns: hit.columns,
                parses: false,
            });
        }
        // Checked before it enters the cache, so a hit needs no check.
        super::refuse::refuse_copy_from_stdin(sql)?;
        let name: Arc<str> = shared.next_statement_name().into();
        let evicted = cache.insert(sql, oids, name.clone());
        let encoded = (|| {
            if let Some(evicted) = &evicted {
                // Before our Sync, so its CloseComplete is ours to read.
                enc.close(Target::Statement, evicted, buf)
                    .map_err(encode_error)?;
            }
            enc.parse(&name, sql, oids, buf).map_err(encode_error)?;
            bind(enc, &name, params, None, None, buf)?;
            enc.describe(Target::Portal, "", buf)
                .map_err(encode_error)?;
            end(buf)
        })();
        if let Err(e) = encoded {
            // Nothing is sent: the new entry must not point at a statement
            // the server never saw. (An evicted statement then stays open on
            // the server until the connection ends.)
            cache.remove(&name);
            return Err(e);
        }
        Ok(Plan::Cached {
            name,
            columns: None,
            parses: true,
        })
    })
}

pub(crate) fn check_prepared<P: Params + ?Sized>(
    shared: &Arc<Session>,
    stmt: &Statement,
    params: &P,
) -> Result<(), Error> {
    if !stmt.belongs_to(shared) {
        return Err(Error::new(
            ErrorKind::InvalidUse,
            format!(
                "statement {:?} was prepared on another connection",
                stmt.name()
            ),
        ));
    }
    if params.len() != stmt.params().len() {
        return Err(Error::new(
            ErrorKind::ParameterCount,
            format!(
                "the statement takes {} parameter(s) but {} were given: {}",
                stmt.params().len(),
                params.len(),
                stmt.sql()
            ),
        ));
    }
    params
        .check_types(stmt.params())
        .map_err(|(i, rust)| param_type_error(i, rust, &stmt.params()[i]))
}

/// A parameter value refused by the type the statement has for it.
pub(crate) fn param_type_error(index: usize, rust: &str, ty: &Type) -> Error {
    Error::new(
        ErrorKind::Encode,
        format!(
            "parameter ${}: Rust type {rust} cannot be sent as PostgreSQL type {ty}",
            index + 1
        ),
    )
}
