//! `int2`, `int4`, `int8`, `oid` and `"char"`.
//!
//! A column never narrows silently: an `int8` column does not decode into
//! `i32`. Widening is accepted (`int2` and `int4` into `i64`).

use bytes::BytesMut;

use crate::error::wrong_length;
use crate::{BoxError, Decode, Encode, IsNull, StaticType, Type, TypeRef};

macro_rules! int_codec {
    ($t:ty, $ty:expr, $oid:literal, [$($accept:expr),*], $put:ident) => {
        impl StaticType for $t {
            const TYPE: TypeRef = TypeRef::Oid($oid);
        }

        impl Encode for $t {
            fn type_ref(&self) -> TypeRef {
        TypeRef::Oid($oid)
    }
            #[inline]
            fn accepts(&self, ty: &Type) -> bool {
                ty.is(&[$ty])
            }
            #[inline]
            fn accepts_all_values(&self, ty: &Type) -> bool {
                // Which values fit depends on the type alone.
                self.accepts(ty)
            }
            #[inline]
            fn encode(&self, _: &Type, buf: &mut BytesMut) -> Result<IsNull, BoxError> {
                buf.extend_from_slice(&self.to_be_bytes());
                Ok(IsNull::No)
            }
            #[inline]
            fn write_to(
                &self,
                _: &Type,
                writer: &mut pgpipe_proto::frontend::ParamWriter<'_>,
            ) -> Result<(), pgpipe_proto::EncodeError> {
                writer.write_fixed(Ok(self.to_be_bytes()))
            }
        }

        impl<'a> Decode<'a> for $t {
            #[inline]
            fn accepts(ty: &Type) -> bool {
                ty.is(&[$($accept),*])
            }
            #[inline]
            fn decode(ty: &Type, raw: &'a [u8]) -> Result<Self, BoxError> {
                // The column's own type: one load, no widening.
                if ty.oid() == $oid {
                    if let Ok(bytes) = raw.try_into() {
                        return Ok(<$t>::from_be_bytes(bytes));
                    }
                }
                decode_int(ty, raw)?
                    .try_into()
                    .map_err(|_| format!("{ty} value out of range for {}", stringify!($t)).into())
            }
        }
    };
}

int_codec!(i16, Type::INT2, 21, [Type::INT2], put_i16);
int_codec!(i32, Type::INT4, 23, [Type::INT2, Type::INT4], put_i32);
int_codec!(
    i64,
    Type::INT8,
    20,
    [Type::INT2, Type::INT4, Type::INT8],
    put_i64
);
int_codec!(u32, Type::OID, 26, [Type::OID], put_u32);
int_codec!(i8, Type::CHAR, 18, [Type::CHAR], put_i8);

/// Reads any integer column as i64; the caller narrows with a checked conversion.
#[inline]
fn decode_int(ty: &Type, raw: &[u8]) -> Result<i64, BoxError> {
    let expect = |n: usize| -> Result<(), BoxError> {
        if raw.len() == n {
            Ok(())
        } else {
            Err(wrong_length("integer", n, raw.len()))
        }
    };
    Ok(match ty.base().oid() {
        21 => {
            expect(2)?;
            i16::from_be_bytes([raw[0], raw[1]]) as i64
        }
        23 => {
            expect(4)?;
            i32::from_be_bytes([raw[0], raw[1], raw[2], raw[3]]) as i64
        }
        20 => {
            expect(8)?;
            i64::from_be_bytes(
                raw.try_into()
                    .map_err(|_| wrong_length("int8", 8, raw.len()))?,
            )
        }
        26 => {
            expect(4)?;
            u32::from_be_bytes([raw[0], raw[1], raw[2], raw[3]]) as i64
        }
        18 => {
            expect(1)?;
            raw[0] as i8 as i64
        }
        _ => return Err(format!("{ty} is not an integer type").into()),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round_trip<T>(v: T, ty: Type) -> T
    where
        T: Encode + for<'a> Decode<'a>,
    {
        let mut buf = BytesMut::new();
        assert_eq!(v.encode(&ty, &mut buf).unwrap(), IsNull::No);
        T::decode(&ty, &buf).unwrap()
    }

    #[test]
    fn extremes_round_trip() {
        for v in [i16::MIN, -1, 0, 1, i16::MAX] {
            assert_eq!(round_trip(v, Type::INT2), v);
        }
        for v in [i32::MIN, -1, 0, 1, i32::MAX] {
            assert_eq!(round_trip(v, Type::INT4), v);
        }
        for v in [i64::MIN, -1, 0, 1, i64::MAX] {
            assert_eq!(round_trip(v, Type::INT8), v);
        }
        assert_eq!(round_trip(u32::MAX, Type::OID), u32::MAX);
        assert_eq!(round_trip(-5i8, Type::CHAR), -5);
    }

    #[test]
    fn domains_read_as_their_base_type() {
        use crate::Kind;
        let positive = Type::new(70001, "positive", "public", 0, Kind::Domain(Type::INT4));
        assert!(<i32 as Decode>::accepts(&positive));
        assert!(!<i16 as Decode>::accepts(&positive));
        assert_eq!(i32::decode(&positive, &[0, 0, 0, 9]).unwrap(), 9);
        assert!(9i32.accepts(&positive));
    }

    #[test]
    fn widening_is_accepted_narrowing_is_not() {
        assert!(<i64 as Decode>::accepts(&Type::INT4));
        assert!(!<i32 as Decode>::accepts(&Type::INT8));
        assert!(!<i16 as Decode>::accepts(&Type::INT4));
        assert_eq!(i64::decode(&Type::INT2, &[0xff, 0xfe]).unwrap(), -2);
    }

    #[test]
    fn wrong_lengths_are_errors() {
        let err = i32::decode(&Type::INT4, &[0, 1]).unwrap_err();
        assert!(err.to_string().contains("expected 4 bytes, got 2"), "{err}");
        assert!(i64::decode(&Type::INT8, &[0; 9]).is_err());
        assert!(i16::decode(&Type::INT2, &[]).is_err());
    }
}
