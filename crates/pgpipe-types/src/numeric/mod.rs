//! `numeric`: the lossless [`Numeric`], and `rust_decimal::Decimal` /
//! `bigdecimal::BigDecimal` behind the `rust_decimal` and `bigdecimal`
//! features.
//!
//! A `numeric` column is never read into `f64` or `i64`: those would round or
//! truncate silently. Read it as [`Numeric`] (which holds every value,
//! including NaN and the infinities, with its display scale) or as one of the
//! optional decimal types, which return an error for a value they cannot
//! hold instead of rounding it.

use pgpipe_proto::put::PutInline;
use std::fmt;

use bytes::BytesMut;

use crate::{BoxError, Decode, Encode, IsNull, StaticType, Type, TypeRef};

#[cfg(feature = "bigdecimal")]
mod big;
mod cmp;
#[cfg(feature = "rust_decimal")]
mod decimal;
mod text;

/// The largest display scale PostgreSQL stores (`NUMERIC_DSCALE_MASK`):
/// 16383 digits after the decimal point.
const MAX_DSCALE: i64 = 0x3FFF;
/// Base of PostgreSQL's numeric digits.
const NBASE: u16 = 10_000;

const SIGN_POS: u16 = 0x0000;
const SIGN_NEG: u16 = 0x4000;
const SIGN_NAN: u16 = 0xC000;
const SIGN_PINF: u16 = 0xD000;
const SIGN_NINF: u16 = 0xF000;

/// A PostgreSQL `numeric` value, held losslessly: any precision and scale
/// PostgreSQL allows (131072 digits before the decimal point, 16383 after),
/// `NaN`, `Infinity` and `-Infinity`.
///
/// The value is stored as PostgreSQL stores it: a sign, base-10000 digits
/// with the weight of the first one, and the display scale (the number of
/// digits shown after the decimal point, so `1.50` stays `1.50`).
///
/// [`Display`](fmt::Display) prints exactly PostgreSQL's text form, and
/// [`FromStr`](std::str::FromStr) parses what PostgreSQL's `numeric` input accepts (signs,
/// exponents, surrounding spaces, `NaN`, `Infinity`, `inf`, any case).
///
/// Equality and ordering are numeric and follow PostgreSQL: `1.0 == 1.00`,
/// `NaN == NaN`, and `NaN` sorts above `Infinity`, which sorts above every
/// finite value. Compare the [`to_string`](ToString::to_string) forms to
/// check the display scale as well.
///
/// ```
/// use pgpipe_types::Numeric;
///
/// let n: Numeric = "-12345.6780".parse().unwrap();
/// assert_eq!(n.to_string(), "-12345.6780");
/// assert_eq!(n.scale(), Some(4));
/// assert_eq!(n, "-12345.678".parse::<Numeric>().unwrap());
/// assert_eq!("1.5e-3".parse::<Numeric>().unwrap().to_string(), "0.0015");
/// assert_eq!("-0.000".parse::<Numeric>().unwrap().to_string(), "0.000");
/// assert!("nan".parse::<Numeric>().unwrap().is_nan());
/// assert!(Numeric::NAN > Numeric::INFINITY);
/// assert_eq!(Numeric::from(-42i64).to_string(), "-42");
/// ```
#[derive(Clone)]
pub struct Numeric {
    inner: Inner,
}

#[derive(Clone)]
enum Inner {
    NaN,
    PosInf,
    NegInf,
    Finite(Finite),
}

/// A finite value. Invariants (kept by every constructor): `digits` are
/// base-10000 digits, each below 10000, without leading or trailing zero
/// digits; zero has no digits, weight 0 and is never negative; no digit lies
/// beyond `dscale` decimal places; `dscale <= MAX_DSCALE`.
#[derive(Clone)]
struct Finite {
    negative: bool,
    /// The power of 10000 of `digits[0]`.
    weight: i16,
    dscale: u16,
    digits: Vec<u16>,
}

/// An invalid `numeric` value or a value a conversion cannot hold.
///
/// ```
/// use pgpipe_types::Numeric;
///
/// let err = "12a".parse::<Numeric>().unwrap_err();
/// assert_eq!(err.to_string(), "invalid numeric \"12a\": unexpected character 'a'");
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NumericError {
    msg: String,
}

impl NumericError {
    fn new(msg: impl Into<String>) -> NumericError {
        NumericError { msg: msg.into() }
    }
}

impl fmt::Display for NumericError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.msg)
    }
}

impl std::error::Error for NumericError {}

impl Numeric {
    /// `NaN`.
    pub const NAN: Numeric = Numeric { inner: Inner::NaN };
    /// `Infinity`.
    pub const INFINITY: Numeric = Numeric {
        inner: Inner::PosInf,
    };
    /// `-Infinity`.
    pub const NEG_INFINITY: Numeric = Numeric {
        inner: Inner::NegInf,
    };
    /// Zero with display scale 0 (`0`).
    pub const ZERO: Numeric = Numeric {
        inner: Inner::Finite(Finite {
            negative: false,
            weight: 0,
            dscale: 0,
            digits: Vec::new(),
        }),
    };

    /// Builds a finite value from PostgreSQL's representation: the sign,
    /// the power of 10000 of the first digit (`weight`), the display scale
    /// and the base-10000 digits, most significant first.
    ///
    /// Leading and trailing zero digits are allowed and dropped. Fails when
    /// a digit is 10000 or more, the display scale is above 16383, a digit
    /// lies beyond the display scale, or the value is out of `numeric`'s
    /// range.
    ///
    /// ```
    /// use pgpipe_types::Numeric;
    ///
    /// let n = Numeric::from_parts(false, 1, 3, &[1, 2345, 6780]).unwrap();
    /// assert_eq!(n.to_string(), "12345.678");
    /// assert!(Numeric::from_parts(false, 0, 0, &[1, 5000]).is_err()); // 1.5 needs scale 1
    /// ```
    pub fn from_parts(
        negative: bool,
        weight: i16,
        dscale: u16,
        digits: &[u16],
    ) -> Result<Numeric, NumericError> {
        if i64::from(dscale) > MAX_DSCALE {
            return Err(NumericError::new(format!(
                "numeric display scale {dscale} is above the maximum {MAX_DSCALE}"
            )));
        }
        if let Some((i, d)) = digits.iter().enumerate().find(|(_, d)| **d >= NBASE) {
            return Err(NumericError::new(format!(
                "numeric digit {d} at position {i} is not below {NBASE}"
            )));
        }
        let lead = digits.iter().take_while(|d| **d == 0).count();
        let digits = &digits[lead..];
        let trail = digits.iter().rev().take_while(|d| **d == 0).count();
        let digits = &digits[..digits.len() - trail];
        if digits.is_empty() {
            return Ok(Numeric::zero(dscale));
        }
        let weight = i64::from(weight) - lead as i64;
        let weight = i16::try_from(weight)
            .map_err(|_| NumericError::new(format!("numeric weight {weight} is out of range")))?;
        let needed = fraction_digits(weight, digits);
        if needed > i64::from(dscale) {
            return Err(NumericError::new(format!(
                "numeric value has {needed} digits after the decimal point but its \
                 display scale is {dscale}"
            )));
        }
        Ok(Numeric {
            inner: Inner::Finite(Finite {
                negative,
                weight,
                dscale,
                digits: digits.to_vec(),
            }),
        })
    }

    /// Zero with the given display scale (`0.000` for 3).
    fn zero(dscale: u16) -> Numeric {
        Numeric {
            inner: Inner::Finite(Finite {
                negative: false,
                weight: 0,
                dscale,
                digits: Vec::new(),
            }),
        }
    }

    /// Builds a finite value from ASCII decimal digits; the first digit has
    /// the power `dweight` of ten and the value shows `dscale` digits after
    /// the decimal point (which must cover every digit given).
    fn from_decimal_digits(
        negative: bool,
        decimal: &[u8],
        dweight: i64,
        dscale: i64,
    ) -> Result<Numeric, NumericError> {
        debug_assert!(decimal.iter().all(u8::is_ascii_digit));
        if dscale > MAX_DSCALE {
            return Err(NumericError::new(format!(
                "numeric value needs display scale {dscale}, above the maximum {MAX_DSCALE}"
            )));
        }
        let lead = decimal.iter().take_while(|d| **d == b'0').count();
        let decimal = &decimal[lead..];
        let trail = decimal.iter().rev().take_while(|d| **d == b'0').count();
        let decimal = &decimal[..decimal.len() - trail];
        let dscale = dscale.max(0) as u16;
        if decimal.is_empty() {
            return Ok(Numeric::zero(dscale));
        }
        let first = dweight - lead as i64;
        let last = first - (decimal.len() as i64 - 1);
        debug_assert!(last >= -i64::from(dscale));
        let weight = first.div_euclid(4);
        if weight > i64::from(i16::MAX) {
            return Err(NumericError::new(format!(
                "numeric value has {} digits before the decimal point; PostgreSQL \
                 allows at most 131072",
                first + 1
            )));
        }
        let ndigits = (weight - last.div_euclid(4) + 1) as usize;
        let mut digits = vec![0u16; ndigits];
        for (i, d) in decimal.iter().enumerate() {
            let p = first - i as i64;
            let idx = (weight - p.div_euclid(4)) as usize;
            digits[idx] += u16::from(d - b'0') * POW10[p.rem_euclid(4) as usize];
        }
        Numeric::from_parts(negative, weight as i16, dscale, &digits)
    }

    /// Whether this is `NaN`.
    pub fn is_nan(&self) -> bool {
        matches!(self.inner, Inner::NaN)
    }

    /// Whether this is `Infinity` or `-Infinity`.
    pub fn is_infinite(&self) -> bool {
        matches!(self.inner, Inner::PosInf | Inner::NegInf)
    }

    /// Whether this is neither `NaN` nor infinite.
    pub fn is_finite(&self) -> bool {
        matches!(self.inner, Inner::Finite(_))
    }

    /// Whether this is zero (with any display scale).
    pub fn is_zero(&self) -> bool {
        matches!(&self.inner, Inner::Finite(f) if f.digits.is_empty())
    }

    /// Whether this is below zero (`-Infinity` included; zero is never
    /// negative in PostgreSQL).
    pub fn is_sign_negative(&self) -> bool {
        match &self.inner {
            Inner::NegInf => true,
            Inner::Finite(f) => f.negative,
            Inner::NaN | Inner::PosInf => false,
        }
    }

    /// The display scale (digits shown after the decimal point), `None` for
    /// `NaN` and the infinities.
    pub fn scale(&self) -> Option<u16> {
        match &self.inner {
            Inner::Finite(f) => Some(f.dscale),
            _ => None,
        }
    }

    /// The power of 10000 of the first base-10000 digit (0 for zero and the
    /// special values).
    pub fn weight(&self) -> i16 {
        match &self.inner {
            Inner::Finite(f) => f.weight,
            _ => 0,
        }
    }

    /// The base-10000 digits, most significant first, without leading or
    /// trailing zeros (empty for zero and the special values).
    pub fn digits(&self) -> &[u16] {
        match &self.inner {
            Inner::Finite(f) => &f.digits,
            _ => &[],
        }
    }

    /// Decodes PostgreSQL's binary `numeric` format, validating every field.
    fn from_binary(raw: &[u8]) -> Result<Numeric, BoxError> {
        if raw.len() < 8 {
            return Err(format!(
                "invalid binary numeric value: expected at least 8 bytes, got {}",
                raw.len()
            )
            .into());
        }
        let be16 = |i: usize| u16::from_be_bytes([raw[i], raw[i + 1]]);
        let ndigits = usize::from(be16(0));
        let weight = be16(2) as i16;
        let sign = be16(4);
        let dscale = be16(6);
        if raw.len() != 8 + 2 * ndigits {
            return Err(format!(
                "invalid binary numeric value: the header says {ndigits} digits \
                 ({} bytes) but the value has {} bytes",
                8 + 2 * ndigits,
                raw.len()
            )
            .into());
        }
        let special = match sign {
            SIGN_POS | SIGN_NEG => None,
            SIGN_NAN => Some(Numeric::NAN),
            SIGN_PINF => Some(Numeric::INFINITY),
            SIGN_NINF => Some(Numeric::NEG_INFINITY),
            _ => {
                return Err(
                    format!("invalid binary numeric value: unknown sign 0x{sign:04X}").into(),
                )
            }
        };
        if let Some(special) = special {
            if ndigits != 0 {
                return Err(format!(
                    "invalid binary numeric value: {special} with {ndigits} digits"
                )
                .into());
            }
            return Ok(special);
        }
        let digits: Vec<u16> = raw[8..]
            .chunks_exact(2)
            .map(|c| u16::from_be_bytes([c[0], c[1]]))
            .collect();
        Numeric::from_parts(sign == SIGN_NEG, weight, dscale, &digits)
            .map_err(|e| format!("invalid binary numeric value: {e}").into())
    }

    /// Appends PostgreSQL's binary `numeric` format.
    fn to_binary(&self, buf: &mut BytesMut) -> Result<(), BoxError> {
        let (sign, f) = match &self.inner {
            Inner::NaN => (SIGN_NAN, None),
            Inner::PosInf => (SIGN_PINF, None),
            Inner::NegInf => (SIGN_NINF, None),
            Inner::Finite(f) if f.negative => (SIGN_NEG, Some(f)),
            Inner::Finite(f) => (SIGN_POS, Some(f)),
        };
        let Some(f) = f else {
            buf.put_slice_inline(&[0, 0, 0, 0]);
            buf.put_u16_inline(sign);
            buf.put_u16_inline(0);
            return Ok(());
        };
        let ndigits = u16::try_from(f.digits.len())
            .map_err(|_| format!("numeric value has {} digits, too many", f.digits.len()))?;
        buf.reserve(8 + 2 * f.digits.len());
        buf.put_u16_inline(ndigits);
        buf.put_i16_inline(f.weight);
        buf.put_u16_inline(sign);
        buf.put_u16_inline(f.dscale);
        for d in &f.digits {
            buf.put_u16_inline(*d);
        }
        Ok(())
    }

    /// The base-10000 digit at power `w` of 10000 (0 outside the digits).
    fn digit_at(f: &Finite, w: i64) -> u16 {
        let idx = i64::from(f.weight) - w;
        if idx < 0 {
            return 0;
        }
        f.digits.get(idx as usize).copied().unwrap_or(0)
    }

    /// Calls `out` with every decimal digit (0..=9) from the most
    /// significant integer digit (a single 0 for values below 1) down to
    /// the power `-scale` of ten.
    #[cfg_attr(
        not(any(feature = "rust_decimal", feature = "bigdecimal")),
        allow(dead_code)
    )]
    fn decimal_digits(f: &Finite, scale: i64, mut out: impl FnMut(u8)) {
        let top = if f.weight < 0 || f.digits.is_empty() {
            0
        } else {
            i64::from(f.weight) * 4 + digit_count(f.digits[0]) - 1
        };
        let mut p = top;
        while p >= -scale {
            let d = Numeric::digit_at(f, p.div_euclid(4));
            out(((d / POW10[p.rem_euclid(4) as usize]) % 10) as u8);
            p -= 1;
        }
    }
}

const POW10: [u16; 4] = [1, 10, 100, 1000];

/// Decimal digits in a base-10000 digit (1 for 0).
#[cfg_attr(
    not(any(feature = "rust_decimal", feature = "bigdecimal")),
    allow(dead_code)
)]
fn digit_count(d: u16) -> i64 {
    match d {
        0..=9 => 1,
        10..=99 => 2,
        100..=999 => 3,
        _ => 4,
    }
}

/// The decimal places needed to show the digits exactly (digits normalized,
/// non-empty).
fn fraction_digits(weight: i16, digits: &[u16]) -> i64 {
    let last_power = i64::from(weight) - (digits.len() as i64 - 1);
    if last_power >= 0 {
        return 0;
    }
    let mut last = digits[digits.len() - 1];
    let mut zeros = 0;
    while last % 10 == 0 && zeros < 3 {
        last /= 10;
        zeros += 1;
    }
    -last_power * 4 - zeros
}

impl Default for Numeric {
    fn default() -> Numeric {
        Numeric::ZERO
    }
}

macro_rules! from_int {
    ($($t:ty),*) => {$(
        impl From<$t> for Numeric {
            fn from(v: $t) -> Numeric {
                #[allow(unused_comparisons)]
                let negative = v < 0;
                Numeric::from_u128(negative, (v as i128).unsigned_abs())
            }
        }
    )*};
}

from_int!(i8, i16, i32, i64, isize, u8, u16, u32, u64, usize);

impl From<i128> for Numeric {
    fn from(v: i128) -> Numeric {
        Numeric::from_u128(v < 0, v.unsigned_abs())
    }
}

impl From<u128> for Numeric {
    fn from(v: u128) -> Numeric {
        Numeric::from_u128(false, v)
    }
}

impl Numeric {
    /// An integer value (display scale 0).
    fn from_u128(negative: bool, mut v: u128) -> Numeric {
        let mut rev = Vec::with_capacity(10);
        while v > 0 {
            rev.push((v % u128::from(NBASE)) as u16);
            v /= u128::from(NBASE);
        }
        if rev.is_empty() {
            return Numeric::ZERO;
        }
        let weight = rev.len() as i16 - 1;
        rev.reverse();
        while rev.last() == Some(&0) {
            rev.pop();
        }
        Numeric {
            inner: Inner::Finite(Finite {
                negative,
                weight,
                dscale: 0,
                digits: rev,
            }),
        }
    }
}

impl StaticType for Numeric {
    const TYPE: TypeRef = TypeRef::Oid(1700);
}

impl Encode for Numeric {
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
    fn encode(&self, _: &Type, buf: &mut BytesMut) -> Result<IsNull, BoxError> {
        self.to_binary(buf)?;
        Ok(IsNull::No)
    }
}

impl<'a> Decode<'a> for Numeric {
    fn accepts(ty: &Type) -> bool {
        ty.is(&[Type::NUMERIC])
    }
    fn decode(_: &Type, raw: &'a [u8]) -> Result<Self, BoxError> {
        Numeric::from_binary(raw)
    }
}

#[cfg(test)]
mod tests {
    use std::hash::{Hash, Hasher};

    use super::*;

    fn n(s: &str) -> Numeric {
        s.parse()
            .unwrap_or_else(|e| panic!("{s:?} did not parse: {e}"))
    }

    fn binary(v: &Numeric) -> Vec<u8> {
        let mut buf = BytesMut::new();
        assert_eq!(v.encode(&Type::NUMERIC, &mut buf).unwrap(), IsNull::No);
        buf.to_vec()
    }

    fn header(ndigits: u16, weight: i16, sign: u16, dscale: u16, digits: &[u16]) -> Vec<u8> {
        let mut v = Vec::new();
        v.extend_from_slice(&ndigits.to_be_bytes());
        v.extend_from_slice(&weight.to_be_bytes());
        v.extend_from_slice(&sign.to_be_bytes());
        v.extend_from_slice(&dscale.to_be_bytes());
        for d in digits {
            v.extend_from_slice(&d.to_be_bytes());
        }
        v
    }

    #[test]
    fn text_forms_match_postgres() {
        // Input on the left, PostgreSQL 15's output on the right.
        for (input, output) in [
            ("0", "0"),
            ("-0", "0"),
            ("-0.000", "0.000"),
            ("00012.3400", "12.3400"),
            ("+.5", "0.5"),
            ("5.", "5"),
            ("  -1.5  ", "-1.5"),
            ("1e-130", "0.0000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000001"),
            ("1.5e3", "1500"),
            ("1.50e1", "15.0"),
            ("12345.678E-2", "123.45678"),
            ("1E+2", "100"),
            ("0.0001", "0.0001"),
            ("10000", "10000"),
            ("99999999.99999999", "99999999.99999999"),
            ("NaN", "NaN"),
            ("nan", "NaN"),
            ("Infinity", "Infinity"),
            ("-inf", "-Infinity"),
            ("+INFINITY", "Infinity"),
        ] {
            assert_eq!(n(input).to_string(), output, "input {input:?}");
        }
        let big = format!("1{}", "0".repeat(130));
        assert_eq!(n("1e130").to_string(), big);
    }

    #[test]
    fn invalid_text_is_an_error() {
        for bad in [
            "",
            " ",
            "-",
            ".",
            "1.2.3",
            "1e",
            "1e+",
            "abc",
            "1 2",
            "--1",
            "+nan",
            "1x",
            "1e1000001",
            "infinit",
            "0x10",
        ] {
            assert!(bad.parse::<Numeric>().is_err(), "{bad:?} parsed");
        }
        let e = "1e-16384".parse::<Numeric>().unwrap_err();
        assert!(e.to_string().contains("display scale 16384"), "{e}");
        let e = format!("1{}", "0".repeat(131072))
            .parse::<Numeric>()
            .unwrap_err();
        assert!(e.to_string().contains("131073 digits before"), "{e}");
        assert!(format!("1{}", "0".repeat(131071))
            .parse::<Numeric>()
            .is_ok());
        assert!("1e-16383".parse::<Numeric>().is_ok());
    }

    #[test]
    fn binary_layout_matches_postgres() {
        assert_eq!(
            binary(&n("12345.678")),
            header(3, 1, SIGN_POS, 3, &[1, 2345, 6780])
        );
        assert_eq!(binary(&n("-0.0012")), header(1, -1, SIGN_NEG, 4, &[12]));
        assert_eq!(binary(&n("0.000")), header(0, 0, SIGN_POS, 3, &[]));
        assert_eq!(binary(&n("100000000")), header(1, 2, SIGN_POS, 0, &[1]));
        assert_eq!(binary(&Numeric::NAN), header(0, 0, SIGN_NAN, 0, &[]));
        assert_eq!(binary(&Numeric::INFINITY), header(0, 0, SIGN_PINF, 0, &[]));
        assert_eq!(
            binary(&Numeric::NEG_INFINITY),
            header(0, 0, SIGN_NINF, 0, &[])
        );
    }

    #[test]
    fn binary_round_trip_keeps_the_text_form() {
        let thousand = format!("-{}.{}", "9".repeat(500), "1".repeat(500));
        for s in [
            "0",
            "0.000",
            "1",
            "-1",
            "1.50",
            "9999",
            "10000",
            "0.00001",
            "123456789012345678901234567890.123456789",
            "1e-130",
            "1e130",
            "1e-16383",
            "NaN",
            "Infinity",
            "-Infinity",
            &thousand,
        ] {
            let v = n(s);
            let back = Numeric::decode(&Type::NUMERIC, &binary(&v)).unwrap();
            assert_eq!(back.to_string(), v.to_string(), "{s}");
            assert_eq!(back, v);
        }
    }

    #[test]
    fn decoding_normalizes_padding_digits() {
        // Leading and trailing zero digits are legal on the wire.
        let v = Numeric::decode(
            &Type::NUMERIC,
            &header(4, 1, SIGN_POS, 4, &[0, 12, 3400, 0]),
        )
        .unwrap();
        assert_eq!(v.to_string(), "12.3400");
        assert_eq!(v.digits(), &[12, 3400]);
        assert_eq!(v.weight(), 0);
        // Negative zero reads as zero.
        let z = Numeric::decode(&Type::NUMERIC, &header(1, 0, SIGN_NEG, 1, &[0])).unwrap();
        assert_eq!(z.to_string(), "0.0");
        assert!(!z.is_sign_negative());
    }

    #[test]
    fn malformed_binary_is_an_error_not_a_panic() {
        let cases: Vec<(Vec<u8>, &str)> = vec![
            (vec![], "at least 8 bytes, got 0"),
            (vec![0; 7], "at least 8 bytes, got 7"),
            (
                header(2, 0, SIGN_POS, 0, &[1]),
                "2 digits (12 bytes) but the value has 10",
            ),
            (
                header(1, 0, SIGN_POS, 0, &[1, 2]),
                "1 digits (10 bytes) but the value has 12",
            ),
            (
                header(1, 0, SIGN_POS, 0, &[10000]),
                "digit 10000 at position 0",
            ),
            (header(1, 0, SIGN_POS, 0x4000, &[1]), "display scale 16384"),
            (header(0, 0, 0x1234, 0, &[]), "unknown sign 0x1234"),
            (header(1, 0, SIGN_NAN, 0, &[1]), "NaN with 1 digits"),
            (
                header(2, 0, SIGN_POS, 0, &[1, 5000]),
                "1 digits after the decimal point but its display scale is 0",
            ),
            (
                header(1, i16::MIN, SIGN_POS, 16383, &[1]),
                "after the decimal point",
            ),
            (
                header(u16::MAX, 0, SIGN_POS, 0, &vec![1; 65535]),
                "after the decimal point",
            ),
        ];
        for (raw, want) in cases {
            let err = Numeric::decode(&Type::NUMERIC, &raw)
                .unwrap_err()
                .to_string();
            assert!(err.contains(want), "{err:?} does not mention {want:?}");
            assert!(err.starts_with("invalid binary numeric value"), "{err}");
        }
    }

    #[test]
    fn equality_is_numeric_and_ordering_follows_postgres() {
        assert_eq!(n("1.0"), n("1.00"));
        assert_eq!(n("0"), n("-0.000"));
        assert_ne!(n("1.0"), n("1.01"));
        assert_eq!(Numeric::NAN, Numeric::NAN);
        let mut sorted = vec![
            Numeric::NAN,
            n("10000"),
            Numeric::NEG_INFINITY,
            n("-1"),
            n("0.0001"),
            Numeric::INFINITY,
            n("-10000.5"),
            n("9999.9999"),
            n("0"),
        ];
        sorted.sort();
        let text: Vec<String> = sorted.iter().map(|v| v.to_string()).collect();
        assert_eq!(
            text,
            [
                "-Infinity",
                "-10000.5",
                "-1",
                "0",
                "0.0001",
                "9999.9999",
                "10000",
                "Infinity",
                "NaN"
            ]
        );
        use std::collections::hash_map::DefaultHasher;
        let hash = |v: &Numeric| {
            let mut h = DefaultHasher::new();
            v.hash(&mut h);
            h.finish()
        };
        assert_eq!(hash(&n("1.5")), hash(&n("1.50000")));
    }

    #[test]
    fn integers_convert_exactly() {
        assert_eq!(Numeric::from(0u8).to_string(), "0");
        assert_eq!(Numeric::from(i64::MIN).to_string(), i64::MIN.to_string());
        assert_eq!(Numeric::from(u128::MAX).to_string(), u128::MAX.to_string());
        assert_eq!(Numeric::from(i128::MIN).to_string(), i128::MIN.to_string());
        assert_eq!(Numeric::from(100_000_000u32).digits(), &[1]);
        assert_eq!(Numeric::from(100_000_000u32), n("1e8"));
    }

    #[test]
    fn only_numeric_is_accepted() {
        assert!(<Numeric as Decode>::accepts(&Type::NUMERIC));
        assert!(!<Numeric as Decode>::accepts(&Type::FLOAT8));
        assert!(!<f64 as Decode>::accepts(&Type::NUMERIC));
        assert!(!<i64 as Decode>::accepts(&Type::NUMERIC));
        assert!(!Numeric::ZERO.accepts(&Type::INT8));
    }

    #[cfg(feature = "rust_decimal")]
    #[test]
    fn rust_decimal_both_ways_exact_or_error() {
        use rust_decimal::Decimal;
        let d = |s: &str| Decimal::from_str_exact(s).unwrap();
        for s in [
            "0",
            "1.50",
            "-123.456",
            "79228162514264337593543950335",
            "-0.0000000000000000000000000001",
            "0.1000000000000000000000000000",
        ] {
            let num = Numeric::from(d(s));
            assert_eq!(num.to_string(), s.trim_start_matches('+'));
            assert_eq!(Decimal::try_from(&num).unwrap().to_string(), s);
            let back = Decimal::decode(&Type::NUMERIC, &binary(&num)).unwrap();
            assert_eq!(back, d(s));
            assert_eq!(back.scale(), d(s).scale());
        }
        // Trailing zeros beyond 28 places are dropped, the value kept.
        let wide = n(&format!("1.5{}", "0".repeat(40)));
        assert_eq!(
            Decimal::try_from(&wide).unwrap().to_string(),
            format!("1.5{}", "0".repeat(27))
        );
        // A scale that would overflow the mantissa shrinks to what fits.
        let v = n("12345678901234567890.50000000000000000000");
        assert_eq!(Decimal::try_from(&v).unwrap(), d("12345678901234567890.5"));
        for bad in [
            "NaN",
            "Infinity",
            "-Infinity",
            "79228162514264337593543950336",
            "0.00000000000000000000000000001",
            "1e130",
            "1.00000000000000000000000000001",
        ] {
            let err = Decimal::try_from(&n(bad)).unwrap_err().to_string();
            assert!(err.contains("Decimal"), "{bad}: {err}");
            assert!(Decimal::decode(&Type::NUMERIC, &binary(&n(bad))).is_err());
        }
        let mut buf = BytesMut::new();
        d("-7.25").encode(&Type::NUMERIC, &mut buf).unwrap();
        assert_eq!(
            Numeric::decode(&Type::NUMERIC, &buf).unwrap().to_string(),
            "-7.25"
        );
    }

    #[cfg(feature = "bigdecimal")]
    #[test]
    fn bigdecimal_both_ways_exact_or_error() {
        use bigdecimal::BigDecimal;
        let thousand = format!("{}.{}", "7".repeat(600), "3".repeat(400));
        for s in [
            "0",
            "1.50",
            "-0.001",
            "1e130",
            "1e-130",
            thousand.as_str(),
            "-5e-3",
        ] {
            let big: BigDecimal = s.parse().unwrap();
            let num = Numeric::try_from(&big).unwrap();
            assert_eq!(num, n(s), "{s}");
            assert_eq!(num.to_string(), n(s).to_string(), "{s}");
            let back = BigDecimal::decode(&Type::NUMERIC, &binary(&num)).unwrap();
            assert_eq!(back, big, "{s}");
            assert_eq!(
                Numeric::try_from(&back).unwrap().to_string(),
                n(s).to_string()
            );
        }
        // A BigDecimal with a negative scale (trailing zeros) is exact too.
        let big = BigDecimal::new(12.into(), -3);
        assert_eq!(Numeric::try_from(&big).unwrap().to_string(), "12000");
        for special in [Numeric::NAN, Numeric::INFINITY, Numeric::NEG_INFINITY] {
            assert!(BigDecimal::try_from(&special).is_err());
        }
        let too_fine = BigDecimal::new(1.into(), 20000);
        assert!(Numeric::try_from(&too_fine).is_err());
        let too_big = BigDecimal::new(1.into(), -200_000);
        assert!(Numeric::try_from(&too_big).is_err());
    }
}
