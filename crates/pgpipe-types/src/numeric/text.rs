//! [`Numeric`] as text: PostgreSQL's output (`Display`) and input syntax
//! (`FromStr`).

use std::fmt;
use std::str::FromStr;

use super::{Inner, Numeric, NumericError};

impl fmt::Display for Numeric {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let v = match &self.inner {
            Inner::NaN => return f.pad("NaN"),
            Inner::PosInf => return f.pad("Infinity"),
            Inner::NegInf => return f.pad("-Infinity"),
            Inner::Finite(v) => v,
        };
        let mut s =
            String::with_capacity(2 + 4 * (v.weight.max(0) as usize + 1) + usize::from(v.dscale));
        if v.negative {
            s.push('-');
        }
        if v.weight < 0 || v.digits.is_empty() {
            s.push('0');
        } else {
            use std::fmt::Write;
            for w in (0..=i64::from(v.weight)).rev() {
                let d = Numeric::digit_at(v, w);
                if w == i64::from(v.weight) {
                    let _ = write!(s, "{d}");
                } else {
                    let _ = write!(s, "{d:04}");
                }
            }
        }
        if v.dscale > 0 {
            s.push('.');
            let mut left = i64::from(v.dscale);
            let mut w = -1;
            while left > 0 {
                let d = Numeric::digit_at(v, w);
                let group = [d / 1000, d / 100 % 10, d / 10 % 10, d % 10];
                for g in group.iter().take(left.min(4) as usize) {
                    s.push(char::from(b'0' + *g as u8));
                }
                left -= 4;
                w -= 1;
            }
        }
        f.pad(&s)
    }
}

impl fmt::Debug for Numeric {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Numeric({self})")
    }
}

impl FromStr for Numeric {
    type Err = NumericError;

    /// Parses PostgreSQL's `numeric` input syntax.
    fn from_str(input: &str) -> Result<Numeric, NumericError> {
        let invalid = |why: String| NumericError::new(format!("invalid numeric {input:?}: {why}"));
        let s = input.trim_matches(|c: char| c.is_ascii_whitespace());
        if s.eq_ignore_ascii_case("nan") {
            return Ok(Numeric::NAN);
        }
        let (negative, body) = match s.as_bytes().first() {
            Some(b'-') => (true, &s[1..]),
            Some(b'+') => (false, &s[1..]),
            _ => (false, s),
        };
        if body.eq_ignore_ascii_case("infinity") || body.eq_ignore_ascii_case("inf") {
            return Ok(if negative {
                Numeric::NEG_INFINITY
            } else {
                Numeric::INFINITY
            });
        }
        let bytes = body.as_bytes();
        let int_len = bytes.iter().take_while(|b| b.is_ascii_digit()).count();
        let mut i = int_len;
        let mut frac = &bytes[0..0];
        if bytes.get(i) == Some(&b'.') {
            let n = bytes[i + 1..]
                .iter()
                .take_while(|b| b.is_ascii_digit())
                .count();
            frac = &bytes[i + 1..i + 1 + n];
            i += 1 + n;
        }
        if int_len + frac.len() == 0 {
            return Err(invalid(match body.chars().next() {
                None => "no digits".into(),
                Some(c) => format!("unexpected character {c:?}"),
            }));
        }
        let mut exponent: i64 = 0;
        if matches!(bytes.get(i), Some(b'e' | b'E')) {
            i += 1;
            let neg_exp = match bytes.get(i) {
                Some(b'-') => {
                    i += 1;
                    true
                }
                Some(b'+') => {
                    i += 1;
                    false
                }
                _ => false,
            };
            let n = bytes[i..].iter().take_while(|b| b.is_ascii_digit()).count();
            if n == 0 {
                return Err(invalid("missing exponent digits".into()));
            }
            for d in &bytes[i..i + n] {
                exponent = exponent
                    .checked_mul(10)
                    .and_then(|e| e.checked_add(i64::from(d - b'0')))
                    .filter(|e| *e <= 1_000_000)
                    .ok_or_else(|| invalid("exponent out of range".into()))?;
            }
            if neg_exp {
                exponent = -exponent;
            }
            i += n;
        }
        if let Some(c) = body[i..].chars().next() {
            return Err(invalid(format!("unexpected character {c:?}")));
        }
        let mut decimal = Vec::with_capacity(int_len + frac.len());
        decimal.extend_from_slice(&bytes[..int_len]);
        decimal.extend_from_slice(frac);
        let dweight = int_len as i64 - 1 + exponent;
        let dscale = frac.len() as i64 - exponent;
        Numeric::from_decimal_digits(negative, &decimal, dweight, dscale)
            .map_err(|e| NumericError::new(format!("invalid numeric {input:?}: {e}")))
    }
}
