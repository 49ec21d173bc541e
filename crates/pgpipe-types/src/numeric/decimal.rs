//! `rust_decimal::Decimal` as `numeric` (the `rust_decimal` feature):
//! conversions to and from [`Numeric`], exact or an error.

use rust_decimal::Decimal;

use super::*;

/// The largest mantissa a `Decimal` holds: 2^96 - 1.
const MAX_MANTISSA: u128 = (1 << 96) - 1;

impl From<Decimal> for Numeric {
    /// Exact: the value and its scale are kept (`-0` becomes `0`).
    fn from(d: Decimal) -> Numeric {
        let digits = d.mantissa().unsigned_abs().to_string();
        let scale = i64::from(d.scale());
        Numeric::from_decimal_digits(
            d.is_sign_negative(),
            digits.as_bytes(),
            digits.len() as i64 - 1 - scale,
            scale,
        )
        .expect("a Decimal always fits numeric")
    }
}

impl From<&Decimal> for Numeric {
    fn from(d: &Decimal) -> Numeric {
        Numeric::from(*d)
    }
}

impl TryFrom<&Numeric> for Decimal {
    type Error = NumericError;

    /// Exact or an error: `NaN`, the infinities, and values needing
    /// more than 28 digits after the point or a mantissa above 2^96
    /// are errors, never rounded. The display scale is kept when it
    /// fits; trailing zeros beyond what `Decimal` holds are dropped
    /// (the value is unchanged).
    fn try_from(n: &Numeric) -> Result<Decimal, NumericError> {
        let f = match &n.inner {
            Inner::Finite(f) => f,
            _ => {
                return Err(NumericError::new(format!(
                    "numeric {n} cannot be represented by rust_decimal::Decimal"
                )))
            }
        };
        let max_scale = i64::from(Decimal::MAX_SCALE);
        let needed = if f.digits.is_empty() {
            0
        } else {
            fraction_digits(f.weight, &f.digits)
        };
        if needed > max_scale {
            return Err(NumericError::new(format!(
                "numeric value has {needed} digits after the decimal point; \
                 rust_decimal::Decimal holds at most {max_scale}"
            )));
        }
        let mut mantissa: u128 = 0;
        let mut overflow = false;
        Numeric::decimal_digits(f, needed, |d| {
            mantissa = match mantissa.checked_mul(10).map(|m| m + u128::from(d)) {
                Some(m) if m <= MAX_MANTISSA => m,
                _ => {
                    overflow = true;
                    mantissa
                }
            }
        });
        if overflow {
            return Err(NumericError::new(format!(
                "numeric value {n} has too many significant digits for \
                 rust_decimal::Decimal (at most 28)"
            )));
        }
        let mut scale = needed;
        while scale < i64::from(f.dscale).min(max_scale) && mantissa * 10 <= MAX_MANTISSA {
            mantissa *= 10;
            scale += 1;
        }
        let signed = if f.negative {
            -(mantissa as i128)
        } else {
            mantissa as i128
        };
        Decimal::try_from_i128_with_scale(signed, scale as u32)
            .map_err(|e| NumericError::new(format!("numeric {n} into Decimal: {e}")))
    }
}

impl TryFrom<Numeric> for Decimal {
    type Error = NumericError;

    fn try_from(n: Numeric) -> Result<Decimal, NumericError> {
        Decimal::try_from(&n)
    }
}

impl StaticType for Decimal {
    const TYPE: TypeRef = TypeRef::Oid(1700);
}

impl Encode for Decimal {
    fn type_ref(&self) -> TypeRef {
        TypeRef::Oid(1700)
    }
    fn accepts(&self, ty: &Type) -> bool {
        ty.is(&[Type::NUMERIC])
    }
    #[inline]
    fn accepts_all_values(&self, ty: &Type) -> bool {
        // Which values fit depends on the type alone.
        self.accepts(ty)
    }
    fn encode(&self, ty: &Type, buf: &mut BytesMut) -> Result<IsNull, BoxError> {
        Numeric::from(*self).encode(ty, buf)
    }
}

impl<'a> Decode<'a> for Decimal {
    fn accepts(ty: &Type) -> bool {
        ty.is(&[Type::NUMERIC])
    }
    fn decode(_: &Type, raw: &'a [u8]) -> Result<Self, BoxError> {
        Ok(Decimal::try_from(&Numeric::from_binary(raw)?)?)
    }
}
