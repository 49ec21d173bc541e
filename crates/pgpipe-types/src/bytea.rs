//! `bytea`.

use bytes::{Bytes, BytesMut};
use pgpipe_proto::put::PutInline;

use crate::{BoxError, Decode, Encode, IsNull, StaticType, Type, TypeRef};

macro_rules! bytea_encode {
    ($($t:ty),*) => {$(
        impl StaticType for $t {
            const TYPE: TypeRef = TypeRef::Oid(17);
        }
        impl Encode for $t {
            fn type_ref(&self) -> TypeRef {
        TypeRef::Oid(17)
    }
            #[inline]
            fn accepts(&self, ty: &Type) -> bool {
                ty.is(&[Type::BYTEA])
            }
            #[inline]
            fn accepts_all_values(&self, ty: &Type) -> bool {
                // Which values fit depends on the type alone.
                self.accepts(ty)
            }
            fn encode(&self, _: &Type, buf: &mut BytesMut) -> Result<IsNull, BoxError> {
                buf.put_slice_inline(self.as_ref());
                Ok(IsNull::No)
            }
        }
    )*};
}

bytea_encode!([u8], Vec<u8>, Bytes);

impl<const N: usize> StaticType for [u8; N] {
    const TYPE: TypeRef = TypeRef::Oid(17);
}

impl<const N: usize> Encode for [u8; N] {
    fn type_ref(&self) -> TypeRef {
        TypeRef::Oid(17)
    }
    #[inline]
    fn accepts(&self, ty: &Type) -> bool {
        ty.is(&[Type::BYTEA])
    }
    #[inline]
    fn accepts_all_values(&self, ty: &Type) -> bool {
        // Which values fit depends on the type alone.
        self.accepts(ty)
    }
    fn encode(&self, _: &Type, buf: &mut BytesMut) -> Result<IsNull, BoxError> {
        buf.put_slice_inline(self);
        Ok(IsNull::No)
    }
}

impl<'a> Decode<'a> for &'a [u8] {
    #[inline]
    fn accepts(ty: &Type) -> bool {
        ty.is(&[Type::BYTEA])
    }
    #[inline]
    fn decode(_: &Type, raw: &'a [u8]) -> Result<Self, BoxError> {
        Ok(raw)
    }
}

impl<'a> Decode<'a> for Vec<u8> {
    #[inline]
    fn accepts(ty: &Type) -> bool {
        ty.is(&[Type::BYTEA])
    }
    #[inline]
    fn decode(_: &Type, raw: &'a [u8]) -> Result<Self, BoxError> {
        Ok(raw.to_vec())
    }
}

/// Copies the value out of the row (the row's buffer is not shared).
impl<'a> Decode<'a> for Bytes {
    #[inline]
    fn accepts(ty: &Type) -> bool {
        ty.is(&[Type::BYTEA])
    }
    #[inline]
    fn decode(_: &Type, raw: &'a [u8]) -> Result<Self, BoxError> {
        Ok(Bytes::copy_from_slice(raw))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn all_byte_values_round_trip() {
        let all: Vec<u8> = (0..=255).collect();
        let mut buf = BytesMut::new();
        all.encode(&Type::BYTEA, &mut buf).unwrap();
        assert_eq!(Vec::<u8>::decode(&Type::BYTEA, &buf).unwrap(), all);
        assert_eq!(Bytes::decode(&Type::BYTEA, &buf).unwrap(), all);
        assert!(!<Vec<u8> as Decode>::accepts(&Type::TEXT));
    }
}
