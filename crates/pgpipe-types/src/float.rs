//! `float4` and `float8`. NaN, infinities and -0.0 travel bit-exact.

use bytes::BytesMut;
use pgpipe_proto::put::PutInline;

use crate::error::wrong_length;
use crate::{BoxError, Decode, Encode, IsNull, StaticType, Type, TypeRef};

impl StaticType for f32 {
    const TYPE: TypeRef = TypeRef::Oid(700);
}

impl StaticType for f64 {
    const TYPE: TypeRef = TypeRef::Oid(701);
}

impl Encode for f32 {
    fn type_ref(&self) -> TypeRef {
        TypeRef::Oid(700)
    }
    #[inline]
    fn accepts(&self, ty: &Type) -> bool {
        ty.is(&[Type::FLOAT4])
    }
    #[inline]
    fn accepts_all_values(&self, ty: &Type) -> bool {
        // Which values fit depends on the type alone.
        self.accepts(ty)
    }
    #[inline]
    fn encode(&self, _: &Type, buf: &mut BytesMut) -> Result<IsNull, BoxError> {
        buf.put_f32_inline(*self);
        Ok(IsNull::No)
    }
    #[inline]
    fn write_to(
        &self,
        _: &Type,
        writer: &mut pgpipe_proto::frontend::ParamWriter<'_>,
    ) -> Result<(), pgpipe_proto::EncodeError> {
        writer.write_fixed(Ok(self.to_bits().to_be_bytes()))
    }
}

impl Encode for f64 {
    fn type_ref(&self) -> TypeRef {
        TypeRef::Oid(701)
    }
    #[inline]
    fn accepts(&self, ty: &Type) -> bool {
        ty.is(&[Type::FLOAT8])
    }
    #[inline]
    fn accepts_all_values(&self, ty: &Type) -> bool {
        // Which values fit depends on the type alone.
        self.accepts(ty)
    }
    #[inline]
    fn encode(&self, _: &Type, buf: &mut BytesMut) -> Result<IsNull, BoxError> {
        buf.put_f64_inline(*self);
        Ok(IsNull::No)
    }
    #[inline]
    fn write_to(
        &self,
        _: &Type,
        writer: &mut pgpipe_proto::frontend::ParamWriter<'_>,
    ) -> Result<(), pgpipe_proto::EncodeError> {
        writer.write_fixed(Ok(self.to_bits().to_be_bytes()))
    }
}

impl<'a> Decode<'a> for f32 {
    #[inline]
    fn accepts(ty: &Type) -> bool {
        ty.is(&[Type::FLOAT4])
    }
    #[inline]
    fn decode(_: &Type, raw: &'a [u8]) -> Result<Self, BoxError> {
        let bytes: [u8; 4] = raw
            .try_into()
            .map_err(|_| wrong_length("float4", 4, raw.len()))?;
        Ok(f32::from_be_bytes(bytes))
    }
}

impl<'a> Decode<'a> for f64 {
    // float4 widens to float8 exactly, so accepting it loses nothing.
    #[inline]
    fn accepts(ty: &Type) -> bool {
        ty.is(&[Type::FLOAT8, Type::FLOAT4])
    }
    #[inline]
    fn decode(ty: &Type, raw: &'a [u8]) -> Result<Self, BoxError> {
        if ty.is(&[Type::FLOAT4]) {
            return f32::decode(ty, raw).map(f64::from);
        }
        let bytes: [u8; 8] = raw
            .try_into()
            .map_err(|_| wrong_length("float8", 8, raw.len()))?;
        Ok(f64::from_be_bytes(bytes))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn special_values_are_bit_exact() {
        for v in [
            0.0f64,
            -0.0,
            1.5,
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::NAN,
            f64::MIN_POSITIVE,
        ] {
            let mut buf = BytesMut::new();
            v.encode(&Type::FLOAT8, &mut buf).unwrap();
            assert_eq!(
                f64::decode(&Type::FLOAT8, &buf).unwrap().to_bits(),
                v.to_bits()
            );
        }
        let mut buf = BytesMut::new();
        f32::NAN.encode(&Type::FLOAT4, &mut buf).unwrap();
        assert!(f64::decode(&Type::FLOAT4, &buf).unwrap().is_nan());
    }

    #[test]
    fn wrong_length() {
        assert!(f32::decode(&Type::FLOAT4, &[0; 8]).is_err());
        assert!(f64::decode(&Type::FLOAT8, &[0; 4]).is_err());
    }
}
