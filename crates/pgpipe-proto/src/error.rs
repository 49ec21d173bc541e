//! Errors of the encoders and of the decoder.
//! CONTRACT STUB: the proto helper fills in Display/Error impls and may add detail.

use std::fmt;

/// A frontend message could not be encoded. The buffer is left exactly as it
/// was before the call: no partial message is ever written.
#[derive(Debug)]
#[non_exhaustive]
pub enum EncodeError {
    /// The message would be longer than the protocol's `i32` length or the
    /// configured maximum.
    MessageTooLarge {
        /// Message name, e.g. `"Bind"`.
        message: &'static str,
        /// The length it would have had.
        len: usize,
        /// The largest allowed.
        max: usize,
    },
    /// A string that goes on the wire NUL-terminated contains a NUL byte.
    NulInString {
        /// Message name.
        message: &'static str,
        /// Which field (`"query"`, `"statement name"`, ...).
        field: &'static str,
    },
    /// More items than the protocol's 16-bit count allows (65535).
    TooManyItems {
        /// Message name.
        message: &'static str,
        /// What was counted (`"parameters"`, `"parameter types"`, ...).
        what: &'static str,
        /// How many were given.
        count: usize,
    },
    /// The number of parameter values written differs from the number declared.
    ParameterCountMismatch {
        /// Declared count.
        expected: usize,
        /// Values actually written.
        actual: usize,
    },
    /// A parameter value failed to encode itself.
    Parameter {
        /// Zero-based index of the parameter.
        index: usize,
        /// The value's own error.
        source: Box<dyn std::error::Error + Send + Sync>,
    },
}

impl fmt::Display for EncodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{self:?}")
    }
}

impl std::error::Error for EncodeError {}

/// What went wrong while decoding a backend message.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum DecodeErrorKind {
    /// The declared length exceeds the configured maximum.
    MessageTooLarge {
        /// Declared length (including the 4 length bytes).
        len: usize,
        /// The configured maximum.
        max: usize,
    },
    /// The declared length is below 4 (it counts itself).
    InvalidLength {
        /// Declared length.
        len: i64,
    },
    /// A message type byte this decoder does not know.
    UnknownMessageType,
    /// An Authentication request with an unknown code.
    UnknownAuthentication {
        /// The code.
        code: i32,
    },
    /// The body does not match the message's format.
    Malformed {
        /// What is wrong and where, e.g. `"column 3 length 100 overruns the body (12 bytes left)"`.
        reason: String,
    },
}

/// A backend message could not be decoded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DecodeError {
    /// The message type byte (e.g. `b'D'`).
    pub tag: u8,
    /// What went wrong.
    pub kind: DecodeErrorKind,
}

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{self:?}")
    }
}

impl std::error::Error for DecodeError {}
