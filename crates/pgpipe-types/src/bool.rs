//! `bool`.

use bytes::BytesMut;
use pgpipe_proto::put::PutInline;

use crate::{BoxError, Decode, Encode, IsNull, StaticType, Type, TypeRef};

impl StaticType for bool {
    const TYPE: TypeRef = TypeRef::Oid(16);
}

impl Encode for bool {
    fn type_ref(&self) -> TypeRef {
        TypeRef::Oid(16)
    }
    #[inline]
    fn accepts(&self, ty: &Type) -> bool {
        ty.is(&[Type::BOOL])
    }
    #[inline]
    fn accepts_all_values(&self, ty: &Type) -> bool {
        // Which values fit depends on the type alone.
        self.accepts(ty)
    }
    fn encode(&self, _: &Type, buf: &mut BytesMut) -> Result<IsNull, BoxError> {
        buf.put_u8_inline(*self as u8);
        Ok(IsNull::No)
    }
}

impl<'a> Decode<'a> for bool {
    #[inline]
    fn accepts(ty: &Type) -> bool {
        ty.is(&[Type::BOOL])
    }
    #[inline]
    fn decode(_: &Type, raw: &'a [u8]) -> Result<Self, BoxError> {
        match raw {
            [0] => Ok(false),
            [1] => Ok(true),
            _ => Err(format!("invalid binary bool value {raw:?}").into()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_and_garbage() {
        let mut buf = BytesMut::new();
        true.encode(&Type::BOOL, &mut buf).unwrap();
        false.encode(&Type::BOOL, &mut buf).unwrap();
        assert_eq!(&buf[..], &[1, 0]);
        assert!(bool::decode(&Type::BOOL, &[1]).unwrap());
        assert!(bool::decode(&Type::BOOL, &[2]).is_err());
        assert!(bool::decode(&Type::BOOL, &[]).is_err());
    }
}
