//! `uuid` as `uuid::Uuid` (feature `uuid`).

use ::uuid::Uuid;
use bytes::BytesMut;
use pgpipe_proto::put::PutInline;

use crate::error::wrong_length;
use crate::{BoxError, Decode, Encode, IsNull, StaticType, Type, TypeRef};

impl StaticType for Uuid {
    const TYPE: TypeRef = TypeRef::Oid(2950);
}

impl Encode for Uuid {
    fn type_ref(&self) -> TypeRef {
        TypeRef::Oid(2950)
    }
    fn accepts(&self, ty: &Type) -> bool {
        ty.is(&[Type::UUID])
    }
    #[inline]
    fn accepts_all_values(&self, ty: &Type) -> bool {
        // Which values fit depends on the type alone.
        self.accepts(ty)
    }
    fn encode(&self, _: &Type, buf: &mut BytesMut) -> Result<IsNull, BoxError> {
        buf.put_slice_inline(self.as_bytes());
        Ok(IsNull::No)
    }
}

impl<'a> Decode<'a> for Uuid {
    fn accepts(ty: &Type) -> bool {
        ty.is(&[Type::UUID])
    }
    fn decode(_: &Type, raw: &'a [u8]) -> Result<Self, BoxError> {
        let bytes: [u8; 16] = raw
            .try_into()
            .map_err(|_| wrong_length("uuid", 16, raw.len()))?;
        Ok(Uuid::from_bytes(bytes))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_is_the_16_bytes() {
        let id = Uuid::parse_str("a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11").unwrap();
        let mut buf = BytesMut::new();
        id.encode(&Type::UUID, &mut buf).unwrap();
        assert_eq!(&buf[..], id.as_bytes());
        assert_eq!(Uuid::decode(&Type::UUID, &buf).unwrap(), id);
        for v in [Uuid::nil(), Uuid::max()] {
            let mut buf = BytesMut::new();
            v.encode(&Type::UUID, &mut buf).unwrap();
            assert_eq!(Uuid::decode(&Type::UUID, &buf).unwrap(), v);
        }
    }

    #[test]
    fn wrong_length_and_type() {
        let err = Uuid::decode(&Type::UUID, &[0; 15]).unwrap_err();
        assert!(
            err.to_string().contains("expected 16 bytes, got 15"),
            "{err}"
        );
        assert!(Uuid::decode(&Type::UUID, &[0; 17]).is_err());
        assert!(!<Uuid as Decode>::accepts(&Type::TEXT));
        assert!(!<Uuid as Decode>::accepts(&Type::BYTEA));
        assert!(!Uuid::nil().accepts(&Type::TEXT));
    }
}
