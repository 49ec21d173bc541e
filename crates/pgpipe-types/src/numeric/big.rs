//! `bigdecimal::BigDecimal` as `numeric` (the `bigdecimal` feature):
//! conversions to and from [`Numeric`], exact or an error.

use bigdecimal::num_bigint::{BigInt, Sign};
use bigdecimal::BigDecimal;

use super::*;

impl TryFrom<&BigDecimal> for Numeric {
    type Error = NumericError;

    /// Exact or an error: a value with more than 16383 digits after the
    /// point or 131072 before it does not fit `numeric`.
    fn try_from(d: &BigDecimal) -> Result<Numeric, NumericError> {
        let (int, exponent) = d.as_bigint_and_exponent();
        let digits = int.magnitude().to_string();
        Numeric::from_decimal_digits(
            int.sign() == Sign::Minus,
            digits.as_bytes(),
            (digits.len() as i64 - 1).saturating_sub(exponent),
            exponent.max(0),
        )
        .map_err(|e| NumericError::new(format!("BigDecimal into numeric: {e}")))
    }
}

impl TryFrom<BigDecimal> for Numeric {
    type Error = NumericError;

    fn try_from(d: BigDecimal) -> Result<Numeric, NumericError> {
        Numeric::try_from(&d)
    }
}

impl TryFrom<&Numeric> for BigDecimal {
    type Error = NumericError;

    /// Exact, keeping the display scale; `NaN` and the infinities are
    /// errors.
    fn try_from(n: &Numeric) -> Result<BigDecimal, NumericError> {
        let f = match &n.inner {
            Inner::Finite(f) => f,
            _ => {
                return Err(NumericError::new(format!(
                    "numeric {n} cannot be represented by bigdecimal::BigDecimal"
                )))
            }
        };
        let mut digits = Vec::new();
        Numeric::decimal_digits(f, i64::from(f.dscale), |d| digits.push(b'0' + d));
        let magnitude = BigInt::parse_bytes(&digits, 10)
            .ok_or_else(|| NumericError::new("numeric digits did not parse as BigInt"))?;
        let int = if f.negative { -magnitude } else { magnitude };
        Ok(BigDecimal::new(int, i64::from(f.dscale)))
    }
}

impl TryFrom<Numeric> for BigDecimal {
    type Error = NumericError;

    fn try_from(n: Numeric) -> Result<BigDecimal, NumericError> {
        BigDecimal::try_from(&n)
    }
}

impl StaticType for BigDecimal {
    const TYPE: TypeRef = TypeRef::Oid(1700);
}

impl Encode for BigDecimal {
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
        Numeric::try_from(self)?.encode(ty, buf)
    }
}

impl<'a> Decode<'a> for BigDecimal {
    fn accepts(ty: &Type) -> bool {
        ty.is(&[Type::NUMERIC])
    }
    fn decode(_: &Type, raw: &'a [u8]) -> Result<Self, BoxError> {
        Ok(BigDecimal::try_from(&Numeric::from_binary(raw)?)?)
    }
}
