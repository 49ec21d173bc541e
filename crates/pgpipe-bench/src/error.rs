//! The tool's one error type: a message for the user.

use std::fmt;

/// Anything that stops a run; the message says what and where.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BenchError(pub String);

impl BenchError {
    /// An error with this message.
    pub fn new(msg: impl Into<String>) -> BenchError {
        BenchError(msg.into())
    }

    /// Prefixes the message with what was being done.
    pub fn context(self, what: impl fmt::Display) -> BenchError {
        BenchError(format!("{what}: {}", self.0))
    }
}

impl fmt::Display for BenchError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for BenchError {}

macro_rules! from_error {
    ($($t:ty => $prefix:literal),* $(,)?) => {$(
        impl From<$t> for BenchError {
            fn from(e: $t) -> BenchError {
                BenchError(format!(concat!($prefix, ": {}"), e))
            }
        }
    )*};
}

from_error!(
    pgpipe::Error => "pgpipe",
    tokio_postgres::Error => "tokio-postgres",
    sqlx::Error => "sqlx",
    std::io::Error => "i/o",
    pgpipe_testkit::TestkitError => "testkit",
    serde_json::Error => "json",
    deadpool_postgres::PoolError => "deadpool-postgres",
    xitca_postgres::Error => "xitca-postgres",
    zero_postgres::Error => "zero-postgres",
);
