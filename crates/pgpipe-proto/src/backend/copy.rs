//! CopyInResponse, CopyOutResponse and CopyBothResponse (`'G'`, `'H'`, `'W'`).

use bytes::Bytes;

use super::reader::{malformed, Reader};
use crate::DecodeErrorKind;

/// CopyIn/Out/BothResponse body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CopyResponse {
    /// Format byte, `u16` column count, then one `i16` format per column.
    body: Bytes,
}

impl CopyResponse {
    pub(super) fn parse(body: Bytes) -> Result<Self, DecodeErrorKind> {
        let mut r = Reader::new(&body);
        r.u8("overall format")?;
        let count = r.u16("column count")?;
        let expected = usize::from(count) * 2;
        if r.remaining() != expected {
            return Err(malformed(format!(
                "{count} column formats need {expected} bytes but {} remain",
                r.remaining()
            )));
        }
        Ok(CopyResponse { body })
    }

    /// Overall format: 0 text, 1 binary.
    pub fn format(&self) -> i8 {
        self.body.first().map_or(0, |&b| b as i8)
    }

    /// Number of columns.
    pub fn column_count(&self) -> usize {
        super::reader::be_u16(&self.body, 1).into()
    }

    /// Per-column format codes.
    pub fn column_formats(&self) -> impl Iterator<Item = i16> + '_ {
        self.body
            .get(3..)
            .unwrap_or(&[])
            .chunks_exact(2)
            .map(|c| i16::from_be_bytes([c[0], c[1]]))
    }
}
