//! `money`.

use bytes::BytesMut;
use pgpipe_proto::put::PutInline;

use crate::error::wrong_length;
use crate::{BoxError, Decode, Encode, IsNull, StaticType, Type, TypeRef};

/// A PostgreSQL `money` value: a 64-bit count of the currency's smallest
/// unit.
///
/// The binary format carries only that integer. How many of those units
/// make one currency unit depends on the server's `lc_monetary` setting:
/// with `en_US`, `C` and most locales the scale is 2 (cents), so
/// `Money(1050)` is `$10.50`; with a locale whose currency has no minor
/// unit (such as `ja_JP`) `Money(1050)` is `¥1,050`. The scale is applied
/// by the server when it converts `money` to or from text or `numeric`;
/// this type never guesses it.
///
/// ```
/// use pgpipe_types::{Decode, Encode, Money, Type};
/// use bytes::BytesMut;
///
/// let mut buf = BytesMut::new();
/// Money(-1050).encode(&Type::MONEY, &mut buf).unwrap();
/// assert_eq!(Money::decode(&Type::MONEY, &buf).unwrap(), Money(-1050));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Money(pub i64);

impl StaticType for Money {
    const TYPE: TypeRef = TypeRef::Oid(790);
}

impl Encode for Money {
    fn type_ref(&self) -> TypeRef {
        TypeRef::Oid(790)
    }
    fn accepts(&self, ty: &Type) -> bool {
        ty.is(&[Type::MONEY])
    }
    fn encode(&self, _: &Type, buf: &mut BytesMut) -> Result<IsNull, BoxError> {
        buf.put_i64_inline(self.0);
        Ok(IsNull::No)
    }
}

impl<'a> Decode<'a> for Money {
    fn accepts(ty: &Type) -> bool {
        ty.is(&[Type::MONEY])
    }
    fn decode(_: &Type, raw: &'a [u8]) -> Result<Self, BoxError> {
        let bytes: [u8; 8] = raw
            .try_into()
            .map_err(|_| wrong_length("money", 8, raw.len()))?;
        Ok(Money(i64::from_be_bytes(bytes)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn extremes_round_trip() {
        for v in [i64::MIN, -1, 0, 1, 1050, i64::MAX] {
            let mut buf = BytesMut::new();
            Money(v).encode(&Type::MONEY, &mut buf).unwrap();
            assert_eq!(&buf[..], &v.to_be_bytes());
            assert_eq!(Money::decode(&Type::MONEY, &buf).unwrap(), Money(v));
        }
    }

    #[test]
    fn only_money_and_exact_length() {
        assert!(!<Money as Decode>::accepts(&Type::INT8));
        assert!(!<i64 as Decode>::accepts(&Type::MONEY));
        assert!(!Money(1).accepts(&Type::NUMERIC));
        let err = Money::decode(&Type::MONEY, &[0; 4]).unwrap_err();
        assert!(
            err.to_string()
                .contains("money value: expected 8 bytes, got 4"),
            "{err}"
        );
    }
}
