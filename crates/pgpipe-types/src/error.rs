//! Errors raised by value codecs.

use std::fmt;

use crate::Type;

/// The error type of a value's own encode or decode step.
pub type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// A NULL column was read into a type that cannot hold NULL; use `Option<T>`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct UnexpectedNull;

impl fmt::Display for UnexpectedNull {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("unexpected NULL (read the column as Option<T> to accept NULL)")
    }
}

impl std::error::Error for UnexpectedNull {}

/// A PostgreSQL type that the Rust type does not accept.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WrongType {
    /// The PostgreSQL type on the wire.
    pub pg_type: Type,
    /// The Rust type asked for.
    pub rust_type: &'static str,
}

impl fmt::Display for WrongType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "PostgreSQL type {} cannot be converted to Rust type {}",
            self.pg_type, self.rust_type
        )
    }
}

impl std::error::Error for WrongType {}

/// A binary value whose length does not fit its fixed-size type.
pub(crate) fn wrong_length(ty: &'static str, expected: usize, got: usize) -> BoxError {
    format!("invalid binary {ty} value: expected {expected} bytes, got {got}").into()
}
