//! `text`, `varchar`, `bpchar`, `name` (and other types whose binary form is
//! their UTF-8 text, such as `xml`, `json` and `citext`; `jsonb`'s is its
//! text after a version byte, which is added and stripped here, so a string
//! passes JSON through unparsed), and enum values, whose binary form is
//! their label.

use bytes::BytesMut;
use pgpipe_proto::frontend::ParamWriter;
use pgpipe_proto::put::PutInline;
use pgpipe_proto::EncodeError;

use crate::{BoxError, Decode, Encode, IsNull, Kind, StaticType, Type, TypeRef};

/// Types that a Rust string may be sent as or read from.
#[inline]
fn is_text(ty: &Type) -> bool {
    ty.is(&[
        Type::TEXT,
        Type::VARCHAR,
        Type::BPCHAR,
        Type::NAME,
        Type::UNKNOWN,
        Type::XML,
        Type::JSON,
        Type::JSONB,
    ])
        // Extension types with a text binary format have no fixed OID; the
        // client's registry describes them by name (never a built-in, so
        // the usual column skips the name comparison).
        || (ty.is_described() && ty.base().is_named("citext"))
        // An enum value's binary form is its label (asyncpg and pgx read
        // and send enums as strings too); the server checks a label sent.
        || matches!(ty.base().kind(), Kind::Enum(_))
}

/// Types that a Rust string may be read from: the text types, and those
/// read in text format because the server has no binary output for them.
#[inline]
fn is_text_output(ty: &Type) -> bool {
    is_text(ty) || ty.text_output_only()
}

impl StaticType for str {
    const TYPE: TypeRef = TypeRef::Oid(25);
}

impl StaticType for String {
    const TYPE: TypeRef = TypeRef::Oid(25);
}

impl Encode for str {
    fn type_ref(&self) -> TypeRef {
        TypeRef::Oid(25)
    }
    #[inline]
    fn accepts(&self, ty: &Type) -> bool {
        is_text(ty)
    }
    #[inline]
    fn accepts_all_values(&self, ty: &Type) -> bool {
        // Which values fit depends on the type alone.
        self.accepts(ty)
    }
    #[inline]
    fn encode(&self, ty: &Type, buf: &mut BytesMut) -> Result<IsNull, BoxError> {
        if crate::json::is_jsonb(ty) {
            buf.put_u8_inline(crate::json::JSONB_VERSION);
        }
        buf.put_slice_inline(self.as_bytes());
        Ok(IsNull::No)
    }
    #[inline]
    fn write_to(&self, ty: &Type, writer: &mut ParamWriter<'_>) -> Result<(), EncodeError> {
        // Text (the usual case) is the string's bytes as they are: its
        // length is known, so no placeholder to patch.
        if crate::json::is_jsonb(ty) {
            return writer.write(|buf| self.encode(ty, buf));
        }
        writer.write_bytes(self.as_bytes())
    }
}

impl Encode for String {
    fn type_ref(&self) -> TypeRef {
        TypeRef::Oid(25)
    }
    #[inline]
    fn accepts(&self, ty: &Type) -> bool {
        is_text(ty)
    }
    #[inline]
    fn accepts_all_values(&self, ty: &Type) -> bool {
        // Which values fit depends on the type alone.
        self.accepts(ty)
    }
    #[inline]
    fn encode(&self, ty: &Type, buf: &mut BytesMut) -> Result<IsNull, BoxError> {
        self.as_str().encode(ty, buf)
    }
    #[inline]
    fn write_to(&self, ty: &Type, writer: &mut ParamWriter<'_>) -> Result<(), EncodeError> {
        self.as_str().write_to(ty, writer)
    }
}

impl<'a> Decode<'a> for &'a str {
    #[inline]
    fn accepts(ty: &Type) -> bool {
        is_text_output(ty)
    }
    #[inline]
    fn decode(ty: &Type, raw: &'a [u8]) -> Result<Self, BoxError> {
        let raw = crate::json::json_text(ty, raw)?;
        std::str::from_utf8(raw).map_err(|e| format!("invalid UTF-8 in {ty} value: {e}").into())
    }
}

impl<'a> Decode<'a> for String {
    #[inline]
    fn accepts(ty: &Type) -> bool {
        is_text_output(ty)
    }
    #[inline]
    fn decode(ty: &Type, raw: &'a [u8]) -> Result<Self, BoxError> {
        <&str>::decode(ty, raw).map(str::to_owned)
    }
}

impl<'a> Decode<'a> for Box<str> {
    #[inline]
    fn accepts(ty: &Type) -> bool {
        is_text_output(ty)
    }
    #[inline]
    fn decode(ty: &Type, raw: &'a [u8]) -> Result<Self, BoxError> {
        <&str>::decode(ty, raw).map(Box::from)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_string_field_is_its_length_and_bytes_and_jsonb_gets_its_version() {
        let field = |value: &dyn Encode, ty: &Type| {
            let mut buf = BytesMut::new();
            let mut w = ParamWriter::copy_tuple(&mut buf);
            value.write_to(ty, &mut w).unwrap();
            buf.to_vec()
        };
        let owned = String::from("héllo");
        assert_eq!(field(&"héllo", &Type::TEXT), b"\0\0\0\x06h\xc3\xa9llo");
        assert_eq!(field(&owned, &Type::VARCHAR), field(&"héllo", &Type::TEXT));
        assert_eq!(field(&"", &Type::TEXT), b"\0\0\0\0");
        assert_eq!(field(&"{}", &Type::JSONB), b"\0\0\0\x03\x01{}");
    }

    #[test]
    fn borrowed_decode_does_not_copy() {
        let raw = "héllo".as_bytes();
        let s = <&str>::decode(&Type::TEXT, raw).unwrap();
        assert_eq!(s.as_ptr(), raw.as_ptr());
    }

    #[test]
    fn invalid_utf8_is_an_error() {
        let err = String::decode(&Type::TEXT, &[0xff, 0xfe]).unwrap_err();
        assert!(
            err.to_string().contains("invalid UTF-8 in text value"),
            "{err}"
        );
    }

    #[test]
    fn accepts_text_family_only() {
        assert!(<String as Decode>::accepts(&Type::VARCHAR));
        assert!(<&str as Decode>::accepts(&Type::NAME));
        assert!(!<String as Decode>::accepts(&Type::INT4));
        assert!(!<String as Decode>::accepts(&Type::BYTEA));
    }
}
