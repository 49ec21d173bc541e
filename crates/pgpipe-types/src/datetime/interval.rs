//! `interval`: [`Interval`].

use pgpipe_proto::put::PutInline;
use std::fmt;

use bytes::BytesMut;

use super::civil::write_seconds;
use crate::error::wrong_length;
use crate::{BoxError, Decode, Encode, IsNull, StaticType, Type, TypeRef};

/// A PostgreSQL `interval`: months, days and microseconds, kept apart as
/// PostgreSQL keeps them (a month is not a fixed number of days, nor a day a
/// fixed number of microseconds across a daylight-saving change).
///
/// Every combination of the three fields is a value; equality compares them
/// field by field, so `1 mon` and `30 days` differ here although PostgreSQL's
/// `=` calls them equal. `Display` writes PostgreSQL's default
/// `IntervalStyle = 'postgres'` text; [`Interval::iso_8601`] writes the
/// `iso_8601` style. (PostgreSQL 17 made all-maximum and all-minimum fields
/// mean `infinity` and `-infinity`; `Display` writes them that way.)
///
/// ```
/// use pgpipe_types::Interval;
///
/// let i = Interval::new(14, 3, 4 * 3_600_000_000 + 5_500_000);
/// assert_eq!(i.to_string(), "1 year 2 mons 3 days 04:00:05.5");
/// assert_eq!(i.iso_8601().to_string(), "P1Y2M3DT4H5.5S");
/// assert_eq!(Interval::new(-1, 1, -1).to_string(), "-1 mons +1 day -00:00:00.000001");
/// assert_eq!(Interval::ZERO.to_string(), "00:00:00");
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Interval {
    /// Months (a year is 12).
    pub months: i32,
    /// Days.
    pub days: i32,
    /// Microseconds (hours, minutes, seconds and fractions).
    pub microseconds: i64,
}

impl Interval {
    /// The zero interval.
    pub const ZERO: Interval = Interval::new(0, 0, 0);

    /// An interval of `months` months, `days` days and `microseconds`
    /// microseconds.
    pub const fn new(months: i32, days: i32, microseconds: i64) -> Interval {
        Interval {
            months,
            days,
            microseconds,
        }
    }

    /// The text of this interval in PostgreSQL's `IntervalStyle =
    /// 'iso_8601'` (`P1Y2M3DT4H5M6.5S`, `PT0S`).
    pub const fn iso_8601(self) -> Iso8601 {
        Iso8601(self)
    }

    /// PostgreSQL 17's `infinity` (+1) or `-infinity` (-1), else 0.
    fn infinity(self) -> i8 {
        match (self.months, self.days, self.microseconds) {
            (i32::MAX, i32::MAX, i64::MAX) => 1,
            (i32::MIN, i32::MIN, i64::MIN) => -1,
            _ => 0,
        }
    }

    /// PostgreSQL's `interval2itm`: every part truncated towards zero.
    fn parts(self) -> Parts {
        let mut time = self.microseconds;
        let hour = time / 3_600_000_000;
        time -= hour * 3_600_000_000;
        let min = time / 60_000_000;
        time -= min * 60_000_000;
        let sec = time / 1_000_000;
        time -= sec * 1_000_000;
        Parts {
            year: (self.months / 12).into(),
            mon: (self.months % 12).into(),
            mday: self.days.into(),
            hour,
            min,
            sec,
            usec: time,
        }
    }
}

struct Parts {
    year: i64,
    mon: i64,
    mday: i64,
    hour: i64,
    min: i64,
    sec: i64,
    usec: i64,
}

/// PostgreSQL's `IntervalStyle = 'postgres'` text (the default):
/// `1 year 2 mons 3 days 04:05:06.789`.
impl fmt::Display for Interval {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.infinity() {
            1 => return f.write_str("infinity"),
            -1 => return f.write_str("-infinity"),
            _ => {}
        }
        let p = self.parts();
        let mut is_zero = true;
        let mut is_before = false;
        // AddPostgresIntPart.
        let mut part = |f: &mut fmt::Formatter<'_>, value: i64, unit: &str| -> fmt::Result {
            if value == 0 {
                return Ok(());
            }
            write!(
                f,
                "{}{}{value} {unit}{}",
                if is_zero { "" } else { " " },
                if is_before && value > 0 { "+" } else { "" },
                if value != 1 { "s" } else { "" }
            )?;
            is_before = value < 0;
            is_zero = false;
            Ok(())
        };
        part(f, p.year, "year")?;
        part(f, p.mon, "mon")?;
        part(f, p.mday, "day")?;
        if is_zero || p.hour != 0 || p.min != 0 || p.sec != 0 || p.usec != 0 {
            let minus = p.hour < 0 || p.min < 0 || p.sec < 0 || p.usec < 0;
            write!(
                f,
                "{}{}{:02}:{:02}:",
                if is_zero { "" } else { " " },
                if minus {
                    "-"
                } else if is_before {
                    "+"
                } else {
                    ""
                },
                p.hour.unsigned_abs(),
                p.min.unsigned_abs()
            )?;
            write_seconds(f, p.sec.unsigned_abs(), p.usec.unsigned_abs() as u32, true)?;
        }
        Ok(())
    }
}

/// An [`Interval`] in PostgreSQL's `IntervalStyle = 'iso_8601'` text; from
/// [`Interval::iso_8601`].
#[derive(Clone, Copy, Debug)]
pub struct Iso8601(Interval);

impl fmt::Display for Iso8601 {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0.infinity() {
            1 => return f.write_str("infinity"),
            -1 => return f.write_str("-infinity"),
            _ => {}
        }
        let p = self.0.parts();
        let has_time = p.hour != 0 || p.min != 0 || p.sec != 0 || p.usec != 0;
        if p.year == 0 && p.mon == 0 && p.mday == 0 && !has_time {
            return f.write_str("PT0S");
        }
        f.write_str("P")?;
        // AddISO8601IntPart.
        let part = |f: &mut fmt::Formatter<'_>, value: i64, unit: char| -> fmt::Result {
            if value != 0 {
                write!(f, "{value}{unit}")?;
            }
            Ok(())
        };
        part(f, p.year, 'Y')?;
        part(f, p.mon, 'M')?;
        part(f, p.mday, 'D')?;
        if has_time {
            f.write_str("T")?;
        }
        part(f, p.hour, 'H')?;
        part(f, p.min, 'M')?;
        if p.sec != 0 || p.usec != 0 {
            if p.sec < 0 || p.usec < 0 {
                f.write_str("-")?;
            }
            write_seconds(f, p.sec.unsigned_abs(), p.usec.unsigned_abs() as u32, false)?;
            f.write_str("S")?;
        }
        Ok(())
    }
}

impl StaticType for Interval {
    const TYPE: TypeRef = TypeRef::Oid(1186);
}

impl Encode for Interval {
    fn type_ref(&self) -> TypeRef {
        Self::TYPE
    }
    fn accepts(&self, ty: &Type) -> bool {
        ty.is(&[Type::INTERVAL])
    }
    fn encode(&self, _: &Type, buf: &mut BytesMut) -> Result<IsNull, BoxError> {
        buf.put_i64_inline(self.microseconds);
        buf.put_i32_inline(self.days);
        buf.put_i32_inline(self.months);
        Ok(IsNull::No)
    }
}

impl<'a> Decode<'a> for Interval {
    fn accepts(ty: &Type) -> bool {
        ty.is(&[Type::INTERVAL])
    }
    fn decode(_: &Type, raw: &'a [u8]) -> Result<Self, BoxError> {
        let raw: &[u8; 16] = raw
            .try_into()
            .map_err(|_| wrong_length("interval", 16, raw.len()))?;
        let (micros, rest) = raw.split_at(8);
        let (days, months) = rest.split_at(4);
        Ok(Interval {
            microseconds: i64::from_be_bytes(micros.try_into()?),
            days: i32::from_be_bytes(days.try_into()?),
            months: i32::from_be_bytes(months.try_into()?),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const H: i64 = 3_600_000_000;

    #[test]
    fn postgres_style_text() {
        let cases = [
            (Interval::ZERO, "00:00:00", "PT0S"),
            (Interval::new(1, 0, 0), "1 mon", "P1M"),
            (Interval::new(12, 0, 0), "1 year", "P1Y"),
            (Interval::new(-12, 0, 0), "-1 years", "P-1Y"),
            (Interval::new(-13, 0, 0), "-1 years -1 mons", "P-1Y-1M"),
            (Interval::new(0, 1, 0), "1 day", "P1D"),
            (Interval::new(0, -1, H), "-1 days +01:00:00", "P-1DT1H"),
            (Interval::new(0, 1, -H), "1 day -01:00:00", "P1DT-1H"),
            (Interval::new(0, 0, -1), "-00:00:00.000001", "PT-0.000001S"),
            (
                Interval::new(0, 0, -61_500_000),
                "-00:01:01.5",
                "PT-1M-1.5S",
            ),
            (
                Interval::new(0, 0, 100 * H + 1_000),
                "100:00:00.001",
                "PT100H0.001S",
            ),
            (
                Interval::new(i32::MIN, i32::MIN, i64::MIN + 1),
                "-178956970 years -8 mons -2147483648 days -2562047788:00:54.775807",
                "P-178956970Y-8M-2147483648DT-2562047788H-54.775807S",
            ),
            (
                Interval::new(i32::MAX, i32::MAX, i64::MAX),
                "infinity",
                "infinity",
            ),
            (
                Interval::new(i32::MIN, i32::MIN, i64::MIN),
                "-infinity",
                "-infinity",
            ),
        ];
        for (v, postgres, iso) in cases {
            assert_eq!(v.to_string(), postgres, "{v:?}");
            assert_eq!(v.iso_8601().to_string(), iso, "{v:?}");
        }
    }

    #[test]
    fn binary_keeps_fields_apart() {
        let v = Interval::new(-7, 40, -123_456_789);
        let mut buf = BytesMut::new();
        v.encode(&Type::INTERVAL, &mut buf).unwrap();
        let mut expected = (-123_456_789i64).to_be_bytes().to_vec();
        expected.extend_from_slice(&40i32.to_be_bytes());
        expected.extend_from_slice(&(-7i32).to_be_bytes());
        assert_eq!(&buf[..], &expected[..]);
        assert_eq!(Interval::decode(&Type::INTERVAL, &buf).unwrap(), v);
    }

    #[test]
    fn malformed_values_are_errors() {
        for len in [0, 8, 12, 15, 17] {
            let err = Interval::decode(&Type::INTERVAL, &vec![0; len]).unwrap_err();
            assert_eq!(
                err.to_string(),
                format!("invalid binary interval value: expected 16 bytes, got {len}")
            );
        }
        assert!(<Interval as Decode>::accepts(&Type::INTERVAL));
        assert!(!<Interval as Decode>::accepts(&Type::TIME));
    }
}
