//! ParameterDescription (`'t'`).

use bytes::Bytes;

use super::reader::{be_u16, malformed, Reader};
use crate::{DecodeErrorKind, Oid};

/// ParameterDescription body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParameterDescription {
    /// `u16` count, then one type OID per parameter.
    body: Bytes,
}

impl ParameterDescription {
    pub(super) fn parse(body: Bytes) -> Result<Self, DecodeErrorKind> {
        let mut r = Reader::new(&body);
        let count = r.u16("parameter count")?;
        let expected = usize::from(count) * 4;
        if r.remaining() != expected {
            return Err(malformed(format!(
                "{count} parameter types need {expected} bytes but {} remain",
                r.remaining()
            )));
        }
        Ok(ParameterDescription { body })
    }

    /// Number of parameters.
    pub fn len(&self) -> usize {
        be_u16(&self.body, 0).into()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Parameter type OIDs.
    pub fn types(&self) -> impl Iterator<Item = Oid> + '_ {
        self.body
            .get(2..)
            .unwrap_or(&[])
            .chunks_exact(4)
            .map(|c| u32::from_be_bytes([c[0], c[1], c[2], c[3]]))
    }
}
