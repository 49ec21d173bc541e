//! The server's own error and notice reports, with every field it sends.

use std::fmt;

use pgpipe_proto::backend::ErrorFields;

use super::SqlState;

/// Where in the query text an error was found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ErrorPosition {
    /// A 1-based character position in the query the client sent.
    Original(u32),
    /// A position in a query the server generated internally.
    Internal {
        /// 1-based character position in `query`.
        position: u32,
        /// The internally generated query.
        query: String,
    },
}

/// An error (or notice) reported by the PostgreSQL server: ErrorResponse or
/// NoticeResponse with all of its fields.
#[derive(Clone, PartialEq, Eq)]
pub struct DbError {
    severity: String,
    severity_nonlocalized: Option<String>,
    code: SqlState,
    message: String,
    detail: Option<String>,
    hint: Option<String>,
    position: Option<ErrorPosition>,
    where_: Option<String>,
    schema: Option<String>,
    table: Option<String>,
    column: Option<String>,
    datatype: Option<String>,
    constraint: Option<String>,
    file: Option<String>,
    line: Option<u32>,
    routine: Option<String>,
}

impl DbError {
    /// Builds a `DbError` from the fields of an ErrorResponse/NoticeResponse.
    ///
    /// A server that leaves out a required field (severity, SQLSTATE or
    /// message) gets an error naming it, so the caller can report a protocol
    /// violation instead of inventing a value.
    pub fn parse(fields: &ErrorFields) -> Result<DbError, String> {
        let mut severity = None;
        let mut severity_nonlocalized = None;
        let mut code = None;
        let mut message = None;
        let mut detail = None;
        let mut hint = None;
        let mut position = None;
        let mut internal_position = None;
        let mut internal_query = None;
        let mut where_ = None;
        let mut schema = None;
        let mut table = None;
        let mut column = None;
        let mut datatype = None;
        let mut constraint = None;
        let mut file = None;
        let mut line = None;
        let mut routine = None;

        for (tag, raw) in fields.iter() {
            let value = String::from_utf8_lossy(raw).into_owned();
            match tag {
                b'S' => severity = Some(value),
                b'V' => severity_nonlocalized = Some(value),
                b'C' => code = Some(SqlState::from_code(&value)),
                b'M' => message = Some(value),
                b'D' => detail = Some(value),
                b'H' => hint = Some(value),
                b'P' => position = Some(parse_number(&value, "position")?),
                b'p' => internal_position = Some(parse_number(&value, "internal position")?),
                b'q' => internal_query = Some(value),
                b'W' => where_ = Some(value),
                b's' => schema = Some(value),
                b't' => table = Some(value),
                b'c' => column = Some(value),
                b'd' => datatype = Some(value),
                b'n' => constraint = Some(value),
                b'F' => file = Some(value),
                b'L' => line = Some(parse_number(&value, "line")?),
                b'R' => routine = Some(value),
                // The protocol says unknown field types must be ignored:
                // future servers may add more.
                _ => {}
            }
        }

        let position = match (position, internal_position) {
            (Some(p), _) => Some(ErrorPosition::Original(p)),
            (None, Some(position)) => Some(ErrorPosition::Internal {
                position,
                query: internal_query.unwrap_or_default(),
            }),
            (None, None) => None,
        };

        Ok(DbError {
            severity: severity
                .or_else(|| severity_nonlocalized.clone())
                .ok_or("the server's error report has no severity (field S)")?,
            severity_nonlocalized,
            code: code.ok_or("the server's error report has no SQLSTATE code (field C)")?,
            message: message.ok_or("the server's error report has no message (field M)")?,
            detail,
            hint,
            position,
            where_,
            schema,
            table,
            column,
            datatype,
            constraint,
            file,
            line,
            routine,
        })
    }

    /// Severity, localized (`ERROR`, `FATAL`, `PANIC`, `WARNING`, `NOTICE`, ...).
    pub fn severity(&self) -> &str {
        &self.severity
    }
    /// Severity, never localized (PostgreSQL 9.6+).
    pub fn severity_nonlocalized(&self) -> Option<&str> {
        self.severity_nonlocalized.as_deref()
    }
    /// The SQLSTATE code.
    pub fn code(&self) -> &SqlState {
        &self.code
    }
    /// The primary human-readable message.
    pub fn message(&self) -> &str {
        &self.message
    }
    /// Optional secondary message with more detail.
    pub fn detail(&self) -> Option<&str> {
        self.detail.as_deref()
    }
    /// Optional suggestion what to do about it.
    pub fn hint(&self) -> Option<&str> {
        self.hint.as_deref()
    }
    /// Where in the query the error was found.
    pub fn position(&self) -> Option<&ErrorPosition> {
        self.position.as_ref()
    }
    /// The context: a call stack of PL functions or internal queries.
    pub fn where_(&self) -> Option<&str> {
        self.where_.as_deref()
    }
    /// Schema of the object the error is about.
    pub fn schema(&self) -> Option<&str> {
        self.schema.as_deref()
    }
    /// Table the error is about.
    pub fn table(&self) -> Option<&str> {
        self.table.as_deref()
    }
    /// Column the error is about.
    pub fn column(&self) -> Option<&str> {
        self.column.as_deref()
    }
    /// Data type the error is about.
    pub fn datatype(&self) -> Option<&str> {
        self.datatype.as_deref()
    }
    /// Constraint the error is about.
    pub fn constraint(&self) -> Option<&str> {
        self.constraint.as_deref()
    }
    /// Server source file that reported the error.
    pub fn file(&self) -> Option<&str> {
        self.file.as_deref()
    }
    /// Server source line that reported the error.
    pub fn line(&self) -> Option<u32> {
        self.line
    }
    /// Server source routine that reported the error.
    pub fn routine(&self) -> Option<&str> {
        self.routine.as_deref()
    }
}

fn parse_number(value: &str, what: &str) -> Result<u32, String> {
    value
        .parse()
        .map_err(|_| format!("the server's error report has a non-numeric {what}: {value:?}"))
}

impl fmt::Debug for DbError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut s = f.debug_struct("DbError");
        s.field("severity", &self.severity)
            .field("code", &self.code)
            .field("message", &self.message);
        // Only the fields the server sent: a wall of `None` hides the signal.
        macro_rules! opt {
            ($($name:literal => $field:expr),*) => {$(
                if let Some(v) = &$field {
                    s.field($name, v);
                }
            )*};
        }
        opt!(
            "detail" => self.detail, "hint" => self.hint, "position" => self.position,
            "where" => self.where_, "schema" => self.schema, "table" => self.table,
            "column" => self.column, "datatype" => self.datatype,
            "constraint" => self.constraint, "file" => self.file, "line" => self.line,
            "routine" => self.routine
        );
        s.finish()
    }
}

impl fmt::Display for DbError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}: {} (SQLSTATE {})",
            self.severity,
            self.message,
            self.code.code()
        )?;
        if let Some(detail) = &self.detail {
            write!(f, "\nDETAIL: {detail}")?;
        }
        if let Some(hint) = &self.hint {
            write!(f, "\nHINT: {hint}")?;
        }
        if let Some(where_) = &self.where_ {
            write!(f, "\nCONTEXT: {where_}")?;
        }
        Ok(())
    }
}

impl std::error::Error for DbError {}
