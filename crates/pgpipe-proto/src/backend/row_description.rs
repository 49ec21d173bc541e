//! RowDescription (`'T'`).

use bytes::Bytes;
use memchr::memchr;

use super::reader::{be_i16, be_i32, be_u32, Reader};
use crate::{DecodeErrorKind, Oid};

/// Bytes of a field after its name: table OID, column, type OID, size,
/// modifier, format.
const FIELD_ATTRIBUTES_LEN: usize = 4 + 2 + 4 + 2 + 4 + 2;

/// RowDescription body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RowDescription {
    body: Bytes,
    field_count: u16,
}

impl RowDescription {
    pub(super) fn parse(body: Bytes) -> Result<Self, DecodeErrorKind> {
        let mut r = Reader::new(&body);
        let field_count = r.u16("field count")?;
        for i in 0..field_count {
            r.str(format_args!("name of field {i}"))?;
            r.bytes(
                FIELD_ATTRIBUTES_LEN,
                format_args!("attributes of field {i}"),
            )?;
        }
        if field_count == 0 {
            r.finish("field count")?;
        } else {
            r.finish(format_args!("last of {field_count} fields"))?;
        }
        Ok(RowDescription { body, field_count })
    }

    /// Number of fields.
    pub fn len(&self) -> usize {
        self.field_count as usize
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.field_count == 0
    }

    /// The fields in order.
    pub fn fields(&self) -> impl Iterator<Item = Field<'_>> + '_ {
        let buf: &[u8] = &self.body;
        let mut pos = 2usize;
        (0..self.field_count).map(move |_| {
            let rest = buf.get(pos..).unwrap_or(&[]);
            let name_len = memchr(0, rest).unwrap_or(rest.len());
            let name = rest
                .get(..name_len)
                .and_then(|n| std::str::from_utf8(n).ok())
                .unwrap_or("");
            let at = pos + name_len + 1;
            pos = at + FIELD_ATTRIBUTES_LEN;
            Field {
                name,
                table_oid: be_u32(buf, at),
                column_id: be_i16(buf, at + 4),
                type_oid: be_u32(buf, at + 6),
                type_size: be_i16(buf, at + 10),
                type_modifier: be_i32(buf, at + 12),
                format: be_i16(buf, at + 16),
            }
        })
    }

    /// The whole body (starting with the 2-byte field count).
    pub fn buffer(&self) -> &Bytes {
        &self.body
    }
}

/// One field of a RowDescription.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Field<'a> {
    /// Column name.
    pub name: &'a str,
    /// OID of the source table, 0 if none.
    pub table_oid: Oid,
    /// Attribute number in the source table, 0 if none.
    pub column_id: i16,
    /// Type OID.
    pub type_oid: Oid,
    /// Type size (`pg_type.typlen`).
    pub type_size: i16,
    /// Type modifier (`pg_attribute.atttypmod`).
    pub type_modifier: i32,
    /// Format code: 0 text, 1 binary.
    pub format: i16,
}
