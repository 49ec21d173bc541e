//! The one error type of the cluster side of the testkit.

use std::fmt;

/// Something the testkit could not do: start a server, run setup SQL, find
/// the PostgreSQL binaries...
///
/// The message says what failed and, where the testkit knows, how to fix it
/// (install command, environment variable, the server log's last lines).
/// It is `Clone` because [`Cluster::shared`](crate::Cluster::shared)
/// remembers a failed start and hands the same error to every test.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TestkitError {
    message: String,
    code: Option<String>,
}

impl TestkitError {
    /// An error with a complete, human-readable message.
    pub(crate) fn new(message: impl Into<String>) -> Self {
        TestkitError {
            message: message.into(),
            code: None,
        }
    }

    /// An error reported by the server, keeping its SQLSTATE.
    pub(crate) fn server(message: impl Into<String>, code: impl Into<String>) -> Self {
        TestkitError {
            message: message.into(),
            code: Some(code.into()),
        }
    }

    /// Prefixes the message with what the testkit was doing.
    pub(crate) fn context(mut self, what: impl fmt::Display) -> Self {
        self.message = format!("{what}: {}", self.message);
        self
    }

    /// An I/O failure while doing `what`.
    pub(crate) fn io(what: impl fmt::Display, err: std::io::Error) -> Self {
        TestkitError::new(format!("{what}: {err}"))
    }

    /// The SQLSTATE when the server refused something (e.g. `28P01` for a
    /// wrong password), `None` for failures on the testkit's side.
    pub fn code(&self) -> Option<&str> {
        self.code.as_deref()
    }

    /// The full message (the same text as `Display`).
    pub fn message(&self) -> &str {
        &self.message
    }
}

impl fmt::Display for TestkitError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for TestkitError {}
