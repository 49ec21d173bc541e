//! Errors of the encoders and of the decoder.

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
        /// The length it would have had (the length field's value: the body
        /// plus the 4 length bytes, without the type byte). For a Bind refused
        /// while its parameters were still being written, the length reached
        /// so far.
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
    /// A string that must not be empty is: an empty StartupMessage parameter
    /// name would end the parameter list early.
    EmptyString {
        /// Message name.
        message: &'static str,
        /// Which field.
        field: &'static str,
    },
    /// A single parameter value is longer than its `i32` length prefix can
    /// express.
    ValueTooLarge {
        /// Zero-based index of the parameter.
        index: usize,
        /// The value's length in bytes.
        len: usize,
    },
}

impl fmt::Display for EncodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            EncodeError::MessageTooLarge { message, len, max } => write!(
                f,
                "message too large: {message} would be {len} bytes, the maximum is {max}"
            ),
            EncodeError::NulInString { message, field } => write!(
                f,
                "cannot encode {message} message: the {field} contains a NUL byte, \
                 which the protocol cannot carry in a string"
            ),
            EncodeError::TooManyItems {
                message,
                what,
                count,
            } => write!(
                f,
                "cannot encode {message} message: {count} {what} given, the protocol allows \
                 at most {}",
                u16::MAX
            ),
            EncodeError::ParameterCountMismatch { expected, actual } => write!(
                f,
                "cannot encode Bind message: {expected} parameters declared but {actual} written"
            ),
            // The value's own error is exposed through `source()` rather than
            // repeated here, so error reporters that walk the chain do not
            // print it twice.
            EncodeError::Parameter { index, .. } => write!(
                f,
                "cannot encode Bind message: parameter ${} (index {index}) failed to encode",
                index + 1
            ),
            EncodeError::EmptyString { message, field } => write!(
                f,
                "cannot encode {message} message: the {field} is empty, which the protocol \
                 reads as the end of the list"
            ),
            EncodeError::ValueTooLarge { index, len } => write!(
                f,
                "cannot encode Bind message: parameter ${} (index {index}) is {len} bytes, \
                 the maximum for one value is {}",
                index + 1,
                i32::MAX
            ),
        }
    }
}

impl std::error::Error for EncodeError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            EncodeError::Parameter { source, .. } => Some(&**source),
            _ => None,
        }
    }
}

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

impl DecodeError {
    pub(crate) fn new(tag: u8, kind: DecodeErrorKind) -> Self {
        DecodeError { tag, kind }
    }
}

/// Prints a message type for humans: its name when known, else its byte.
struct MessageName(u8);

impl fmt::Display for MessageName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match crate::backend::tag::name(self.0) {
            Some(name) => f.write_str(name),
            None => write!(f, "message of type {}", TagByte(self.0)),
        }
    }
}

/// Prints a type byte as hex, plus the character when it is printable.
struct TagByte(u8);

impl fmt::Display for TagByte {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let b = self.0;
        if b.is_ascii_graphic() {
            write!(f, "{b:#04x} ('{}')", b as char)
        } else {
            write!(f, "{b:#04x}")
        }
    }
}

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let name = MessageName(self.tag);
        match &self.kind {
            DecodeErrorKind::MessageTooLarge { len, max } => write!(
                f,
                "message too large: {name} declares {len} bytes, the maximum is {max}"
            ),
            DecodeErrorKind::InvalidLength { len } => write!(
                f,
                "invalid length in {name} header: {len} (the length counts its own 4 bytes, \
                 so it is at least 4)"
            ),
            DecodeErrorKind::UnknownMessageType => {
                write!(f, "unknown backend message type {}", TagByte(self.tag))
            }
            DecodeErrorKind::UnknownAuthentication { code } => {
                write!(f, "unknown authentication request code {code}")
            }
            DecodeErrorKind::Malformed { reason } => {
                write!(f, "malformed {name} message: {reason}")
            }
        }
    }
}

impl std::error::Error for DecodeError {}

#[cfg(test)]
mod tests {
    use super::*;
    use std::error::Error as _;

    #[test]
    fn decode_error_messages_name_the_message() {
        let e = DecodeError::new(
            b'D',
            DecodeErrorKind::Malformed {
                reason: "column 3 declares 100 bytes but only 12 remain".into(),
            },
        );
        assert_eq!(
            e.to_string(),
            "malformed DataRow message: column 3 declares 100 bytes but only 12 remain"
        );
        let e = DecodeError::new(
            b'E',
            DecodeErrorKind::MessageTooLarge {
                len: 2147483000,
                max: 1 << 30,
            },
        );
        assert_eq!(
            e.to_string(),
            "message too large: ErrorResponse declares 2147483000 bytes, the maximum is 1073741824"
        );
        let e = DecodeError::new(b'Q', DecodeErrorKind::UnknownMessageType);
        assert_eq!(e.to_string(), "unknown backend message type 0x51 ('Q')");
        let e = DecodeError::new(0x01, DecodeErrorKind::UnknownMessageType);
        assert_eq!(e.to_string(), "unknown backend message type 0x01");
        let e = DecodeError::new(b'Q', DecodeErrorKind::InvalidLength { len: 2 });
        assert!(e
            .to_string()
            .starts_with("invalid length in message of type 0x51 ('Q') header: 2"));
        let e = DecodeError::new(b'R', DecodeErrorKind::UnknownAuthentication { code: 99 });
        assert_eq!(e.to_string(), "unknown authentication request code 99");
    }

    #[test]
    fn encode_error_messages() {
        let e = EncodeError::MessageTooLarge {
            message: "Query",
            len: 100,
            max: 50,
        };
        assert_eq!(
            e.to_string(),
            "message too large: Query would be 100 bytes, the maximum is 50"
        );
        let e = EncodeError::NulInString {
            message: "Parse",
            field: "statement name",
        };
        assert!(e
            .to_string()
            .contains("Parse message: the statement name contains a NUL"));
        let e = EncodeError::TooManyItems {
            message: "Parse",
            what: "parameter types",
            count: 70000,
        };
        assert!(e.to_string().contains("70000 parameter types given"));
        assert!(e.to_string().contains("65535"));
        let e = EncodeError::ParameterCountMismatch {
            expected: 2,
            actual: 1,
        };
        assert!(e
            .to_string()
            .contains("2 parameters declared but 1 written"));
        let e = EncodeError::Parameter {
            index: 0,
            source: "boom".into(),
        };
        assert!(e.to_string().contains("parameter $1 (index 0)"));
        assert_eq!(e.source().map(|s| s.to_string()).as_deref(), Some("boom"));
        let e = EncodeError::EmptyString {
            message: "StartupMessage",
            field: "parameter name",
        };
        assert!(e
            .to_string()
            .contains("StartupMessage message: the parameter name is empty"));
        let e = EncodeError::ValueTooLarge { index: 4, len: 1 };
        assert!(e.to_string().contains("parameter $5 (index 4) is 1 bytes"));
        assert!(e.source().is_none());
    }
}
