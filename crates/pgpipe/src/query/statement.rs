//! Prepared statements.

use std::fmt;
use std::sync::{Arc, Weak};

use pgpipe_proto::frontend::{self, Target};
use pgpipe_types::Type;

use crate::driver::NO_SESSION;
use crate::query::Column;
use crate::session::Session;
use crate::Error;

struct Inner {
    name: String,
    sql: String,
    params: Vec<Type>,
    columns: Arc<[Column]>,
    /// Whether its SQL is a `COPY ... FROM STDIN` (refused by the query
    /// methods) and whether it may share a Sync: read from the SQL once
    /// here instead of on every execution.
    copies_from_stdin: bool,
    coalescible: bool,
    /// The connection it was prepared on; closing it on drop needs it, but a
    /// statement must not keep a connection alive.
    shared: Weak<Session>,
}

/// A statement prepared on the server with [`Client::prepare`](crate::Client::prepare).
///
/// Cheap to clone. The server-side statement is closed when the last clone
/// is dropped. A statement belongs to the connection that prepared it.
#[derive(Clone)]
pub struct Statement(Arc<Inner>);

impl Statement {
    pub(crate) fn new(
        name: String,
        sql: String,
        params: Vec<Type>,
        columns: Arc<[Column]>,
        shared: &Arc<Session>,
    ) -> Statement {
        Statement(Arc::new(Inner {
            copies_from_stdin: crate::sql::is_copy_from_stdin(&sql),
            coalescible: crate::driver::coalescible(&sql),
            name,
            sql,
            params,
            columns,
            shared: Arc::downgrade(shared),
        }))
    }

    /// The statement with its types described (only while not yet shared).
    pub(crate) fn with_types(mut self, params: Vec<Type>, columns: Arc<[Column]>) -> Statement {
        if let Some(inner) = Arc::get_mut(&mut self.0) {
            inner.params = params;
            inner.columns = columns;
        }
        self
    }

    /// The server-side name.
    pub fn name(&self) -> &str {
        &self.0.name
    }
    /// The SQL text.
    pub fn sql(&self) -> &str {
        &self.0.sql
    }

    /// Whether the SQL is a `COPY ... FROM STDIN`.
    pub(crate) fn copies_from_stdin(&self) -> bool {
        self.0.copies_from_stdin
    }

    /// Whether it may share a Sync in coalesced mode.
    pub(crate) fn coalescible(&self) -> bool {
        self.0.coalescible
    }
    /// The parameter types the server inferred or was told.
    pub fn params(&self) -> &[Type] {
        &self.0.params
    }
    /// The result columns (empty for statements that return no rows).
    pub fn columns(&self) -> &[Column] {
        &self.0.columns
    }
    pub(crate) fn shared_columns(&self) -> &Arc<[Column]> {
        &self.0.columns
    }
    pub(crate) fn belongs_to(&self, shared: &Arc<Session>) -> bool {
        std::ptr::eq(self.0.shared.as_ptr(), Arc::as_ptr(shared))
    }
}

impl Drop for Inner {
    fn drop(&mut self) {
        if let Some(shared) = self.shared.upgrade() {
            // Best effort: if the connection is closed the statement is gone anyway.
            let _ = shared.send_detached(NO_SESSION, |enc, buf| {
                enc.close(Target::Statement, &self.name, buf)
                    .map_err(|e| Error::protocol(e.to_string()))?;
                frontend::sync(buf);
                Ok(())
            });
        }
    }
}

impl fmt::Debug for Statement {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Statement")
            .field("name", &self.0.name)
            .field("sql", &self.0.sql)
            .field("params", &self.0.params)
            .field("columns", &self.0.columns)
            .finish()
    }
}
