//! `Option<T>` is SQL NULL for `None`, both ways.

use bytes::BytesMut;

use crate::{BoxError, Decode, Encode, IsNull, StaticType, Type, TypeRef};

impl<T: Encode + StaticType> Encode for Option<T> {
    fn type_ref(&self) -> TypeRef {
        T::TYPE
    }
    fn accepts(&self, ty: &Type) -> bool {
        match self {
            Some(v) => v.accepts(ty),
            // NULL fits any parameter type, but a typed None should still
            // match its declared type to catch mistakes in the parameter list.
            None => T::TYPE.matches(ty),
        }
    }
    fn accepts_all_values(&self, ty: &Type) -> bool {
        // A `None` says nothing of the `Some`s to come; a `Some` whose
        // type fits every value, on a column its declared type matches,
        // vouches for both.
        match self {
            Some(v) => T::TYPE.matches(ty) && v.accepts_all_values(ty),
            None => false,
        }
    }
    fn encode(&self, ty: &Type, buf: &mut BytesMut) -> Result<IsNull, BoxError> {
        match self {
            Some(v) => v.encode(ty, buf),
            None => Ok(IsNull::Yes),
        }
    }
    #[inline]
    fn write_to(
        &self,
        ty: &Type,
        writer: &mut pgpipe_proto::frontend::ParamWriter<'_>,
    ) -> Result<(), pgpipe_proto::EncodeError> {
        match self {
            Some(v) => v.write_to(ty, writer),
            None => writer.write(|_| Ok(IsNull::Yes)),
        }
    }
    fn rust_type(&self) -> &'static str {
        std::any::type_name::<Self>()
    }
}

impl<T: StaticType> StaticType for Option<T> {
    const TYPE: TypeRef = T::TYPE;
}

impl<'a, T: Decode<'a>> Decode<'a> for Option<T> {
    fn accepts(ty: &Type) -> bool {
        T::accepts(ty)
    }
    fn decode(ty: &Type, raw: &'a [u8]) -> Result<Self, BoxError> {
        T::decode(ty, raw).map(Some)
    }
    fn decode_null(_: &Type) -> Result<Self, BoxError> {
        Ok(None)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn null_both_ways() {
        let mut buf = BytesMut::new();
        assert_eq!(
            None::<i32>.encode(&Type::INT4, &mut buf).unwrap(),
            IsNull::Yes
        );
        assert!(buf.is_empty());
        assert_eq!(None::<i32>.type_ref(), TypeRef::Oid(23));
        assert_eq!(Option::<i32>::decode_opt(&Type::INT4, None).unwrap(), None);
        assert!(i32::decode_opt(&Type::INT4, None).is_err());
        assert_eq!(
            Option::<&str>::decode_opt(&Type::TEXT, Some(b"x")).unwrap(),
            Some("x")
        );
    }
}
