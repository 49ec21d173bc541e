//! ErrorResponse and NoticeResponse (`'E'`, `'N'`).

use bytes::Bytes;
use memchr::memchr;

use super::reader::{malformed, Reader};
use crate::DecodeErrorKind;

/// An ErrorResponse or NoticeResponse body: `(field code, value)` pairs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ErrorFields {
    /// Code byte and NUL-terminated value per field, then a 0 byte.
    body: Bytes,
}

impl ErrorFields {
    pub(super) fn parse(body: Bytes) -> Result<Self, DecodeErrorKind> {
        let mut r = Reader::new(&body);
        let mut i = 0usize;
        loop {
            if r.remaining() == 0 {
                return Err(malformed(
                    "the field list is not terminated by a 0 byte".into(),
                ));
            }
            let code = r.u8("field code")?;
            if code == 0 {
                break;
            }
            // Values stay raw bytes: they are in the server's encoding, which
            // is not UTF-8 before client_encoding has been applied.
            r.cstr(format_args!("value of field {i} ({})", code.escape_ascii()))?;
            i += 1;
        }
        r.finish("terminating 0 byte")?;
        Ok(ErrorFields { body })
    }

    /// The fields in order: code byte (`b'S'`, `b'C'`, `b'M'`, ...) and raw value.
    pub fn iter(&self) -> impl Iterator<Item = (u8, &[u8])> + '_ {
        let mut rest: &[u8] = &self.body;
        std::iter::from_fn(move || {
            let (&code, tail) = rest.split_first()?;
            if code == 0 {
                return None;
            }
            let n = memchr(0, tail)?;
            let value = &tail[..n];
            rest = &tail[n + 1..];
            Some((code, value))
        })
    }

    /// The SQLSTATE (field `C`) of a raw ErrorResponse body, read in place
    /// without validating the rest; `None` if it has none or is malformed.
    pub fn sqlstate_in_body(body: &[u8]) -> Option<&[u8]> {
        let mut rest = body;
        while let Some((&code, tail)) = rest.split_first() {
            if code == 0 {
                break;
            }
            let n = memchr(0, tail)?;
            if code == b'C' {
                return Some(&tail[..n]);
            }
            rest = &tail[n + 1..];
        }
        None
    }

    /// The value of the first field with code `code`, if present.
    pub fn get(&self, code: u8) -> Option<&[u8]> {
        self.iter().find(|&(c, _)| c == code).map(|(_, v)| v)
    }
}
