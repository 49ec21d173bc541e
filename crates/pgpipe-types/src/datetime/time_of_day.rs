//! `time` and `timetz`: [`Time`] and [`TimeTz`].

use pgpipe_proto::put::PutInline;
use std::cmp::Ordering;
use std::fmt;

use bytes::BytesMut;

use super::civil::{read_i64, write_offset, write_time_of_day, USECS_PER_DAY, USECS_PER_SEC};
use crate::error::wrong_length;
use crate::{BoxError, Decode, Encode, IsNull, StaticType, Type, TypeRef};

/// A PostgreSQL `time` (without time zone): 00:00:00 to 24:00:00 inclusive,
/// in microseconds.
///
/// PostgreSQL accepts `24:00:00` as a time of day, so `Time` does too
/// ([`Time::MAX`]); it is the only value with `hour() == 24`.
///
/// ```
/// use pgpipe_types::Time;
///
/// let t = Time::from_hms_micro(13, 5, 7, 250_000).unwrap();
/// assert_eq!(t.to_string(), "13:05:07.25");
/// assert_eq!((t.hour(), t.minute(), t.second(), t.microsecond()), (13, 5, 7, 250_000));
/// assert_eq!(Time::MAX.to_string(), "24:00:00");
/// assert!(Time::from_hms_micro(24, 0, 0, 1).is_none());
/// ```
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Time {
    /// Microseconds since midnight, 0..=USECS_PER_DAY.
    pub(super) micros: i64,
}

impl Time {
    /// 00:00:00.
    pub const MIDNIGHT: Time = Time { micros: 0 };
    /// 24:00:00, the latest time PostgreSQL accepts.
    pub const MAX: Time = Time {
        micros: USECS_PER_DAY,
    };

    /// The time `micros` microseconds after midnight (PostgreSQL's wire
    /// value); `None` outside 0..=24:00:00.
    pub const fn from_micros(micros: i64) -> Option<Time> {
        if micros < 0 || micros > USECS_PER_DAY {
            None
        } else {
            Some(Time { micros })
        }
    }

    /// The time of day `hour:minute:second`; `None` for an invalid time.
    /// `(24, 0, 0)` is accepted, as PostgreSQL does.
    pub const fn from_hms(hour: u32, minute: u32, second: u32) -> Option<Time> {
        Time::from_hms_micro(hour, minute, second, 0)
    }

    /// The time of day `hour:minute:second.micro`; `None` for an invalid
    /// time (minutes and seconds 0-59, microseconds below 1,000,000, and
    /// nothing after 24:00:00).
    pub const fn from_hms_micro(hour: u32, minute: u32, second: u32, micro: u32) -> Option<Time> {
        if hour > 24 || minute > 59 || second > 59 || micro >= 1_000_000 {
            return None;
        }
        let secs = (hour * 3600 + minute * 60 + second) as i64;
        Time::from_micros(secs * USECS_PER_SEC + micro as i64)
    }

    /// Microseconds since midnight (PostgreSQL's wire value).
    pub const fn micros(self) -> i64 {
        self.micros
    }

    /// The hour, 0-24 (24 only for 24:00:00).
    pub const fn hour(self) -> u32 {
        (self.micros / (3600 * USECS_PER_SEC)) as u32
    }

    /// The minute, 0-59.
    pub const fn minute(self) -> u32 {
        (self.micros / (60 * USECS_PER_SEC) % 60) as u32
    }

    /// The second, 0-59.
    pub const fn second(self) -> u32 {
        (self.micros / USECS_PER_SEC % 60) as u32
    }

    /// The microsecond within the second, 0-999,999.
    pub const fn microsecond(self) -> u32 {
        (self.micros % USECS_PER_SEC) as u32
    }
}

/// PostgreSQL's text: `HH:MM:SS`, then a fraction without trailing zeros.
impl fmt::Display for Time {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write_time_of_day(f, self.micros)
    }
}

impl fmt::Debug for Time {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

/// The largest UTC offset PostgreSQL stores in a `timetz`, exclusive
/// (`TZDISP_LIMIT`: 16 hours).
const OFFSET_LIMIT: i32 = 16 * 3600;

/// A PostgreSQL `timetz` (time with time zone): a [`Time`] and a UTC offset.
///
/// The offset is in seconds EAST of UTC, the sign ISO 8601 writes (`+05:30`
/// is `19_800`), within +-15:59:59. (PostgreSQL's wire format stores seconds
/// west; the codec converts.) Two values are equal when both the time and
/// the offset are; the order is PostgreSQL's: by the UTC time, then by
/// offset.
///
/// ```
/// use pgpipe_types::{Time, TimeTz};
///
/// let t = TimeTz::new(Time::from_hms(10, 30, 0).unwrap(), 19_800).unwrap();
/// assert_eq!(t.to_string(), "10:30:00+05:30");
/// assert_eq!(t.utc_offset(), 19_800);
/// // 10:30+05:30 is 05:00 UTC, before 06:00 UTC.
/// let later = TimeTz::new(Time::from_hms(6, 0, 0).unwrap(), 0).unwrap();
/// assert!(t < later);
/// assert!(TimeTz::new(Time::MIDNIGHT, 16 * 3600).is_none());
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct TimeTz {
    time: Time,
    /// Seconds east of UTC.
    offset: i32,
}

impl TimeTz {
    /// A time with a UTC offset in seconds east of UTC; `None` for an offset
    /// of 16 hours or more either way.
    pub const fn new(time: Time, utc_offset: i32) -> Option<TimeTz> {
        if utc_offset <= -OFFSET_LIMIT || utc_offset >= OFFSET_LIMIT {
            None
        } else {
            Some(TimeTz {
                time,
                offset: utc_offset,
            })
        }
    }

    /// The local time of day.
    pub const fn time(self) -> Time {
        self.time
    }

    /// The UTC offset in seconds east of UTC.
    pub const fn utc_offset(self) -> i32 {
        self.offset
    }

    /// The UTC time of day in microseconds; may fall outside 0..24h (the
    /// day is not part of the value).
    const fn utc_micros(self) -> i64 {
        self.time.micros - self.offset as i64 * USECS_PER_SEC
    }
}

impl Ord for TimeTz {
    fn cmp(&self, other: &Self) -> Ordering {
        // timetz_cmp_internal: by UTC time, then by zone (seconds west).
        self.utc_micros()
            .cmp(&other.utc_micros())
            .then_with(|| other.offset.cmp(&self.offset))
    }
}

impl PartialOrd for TimeTz {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

/// PostgreSQL's text: the time, then `+HH`, `+HH:MM` or `+HH:MM:SS`.
impl fmt::Display for TimeTz {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write_time_of_day(f, self.time.micros)?;
        write_offset(f, self.offset)
    }
}

impl fmt::Debug for TimeTz {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

/// Reads a `time` wire value, checking the range.
pub(crate) fn decode_time_micros(raw: &[u8]) -> Result<Time, BoxError> {
    let micros = read_i64("time", raw)?;
    Time::from_micros(micros).ok_or_else(|| {
        format!("time value {micros} microseconds is outside 00:00:00 to 24:00:00").into()
    })
}

impl StaticType for Time {
    const TYPE: TypeRef = TypeRef::Oid(1083);
}

impl Encode for Time {
    fn type_ref(&self) -> TypeRef {
        Self::TYPE
    }
    fn accepts(&self, ty: &Type) -> bool {
        ty.is(&[Type::TIME])
    }
    fn encode(&self, _: &Type, buf: &mut BytesMut) -> Result<IsNull, BoxError> {
        buf.put_i64_inline(self.micros);
        Ok(IsNull::No)
    }
}

impl<'a> Decode<'a> for Time {
    fn accepts(ty: &Type) -> bool {
        ty.is(&[Type::TIME])
    }
    fn decode(_: &Type, raw: &'a [u8]) -> Result<Self, BoxError> {
        decode_time_micros(raw)
    }
}

impl StaticType for TimeTz {
    const TYPE: TypeRef = TypeRef::Oid(1266);
}

impl Encode for TimeTz {
    fn type_ref(&self) -> TypeRef {
        Self::TYPE
    }
    fn accepts(&self, ty: &Type) -> bool {
        ty.is(&[Type::TIMETZ])
    }
    fn encode(&self, _: &Type, buf: &mut BytesMut) -> Result<IsNull, BoxError> {
        buf.put_i64_inline(self.time.micros);
        buf.put_i32_inline(-self.offset);
        Ok(IsNull::No)
    }
}

impl<'a> Decode<'a> for TimeTz {
    fn accepts(ty: &Type) -> bool {
        ty.is(&[Type::TIMETZ])
    }
    fn decode(_: &Type, raw: &'a [u8]) -> Result<Self, BoxError> {
        if raw.len() != 12 {
            return Err(wrong_length("timetz", 12, raw.len()));
        }
        let time = decode_time_micros(&raw[..8])?;
        let west = i32::from_be_bytes([raw[8], raw[9], raw[10], raw[11]]);
        west.checked_neg()
            .and_then(|east| TimeTz::new(time, east))
            .ok_or_else(|| {
                format!("timetz zone offset {west} seconds west of UTC is outside +-16 hours")
                    .into()
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn time_display_and_parts() {
        assert_eq!(Time::MIDNIGHT.to_string(), "00:00:00");
        assert_eq!(
            Time::from_hms_micro(23, 59, 59, 999_999)
                .unwrap()
                .to_string(),
            "23:59:59.999999"
        );
        assert_eq!(
            Time::from_hms_micro(1, 2, 3, 10).unwrap().to_string(),
            "01:02:03.00001"
        );
        assert_eq!(Time::MAX.hour(), 24);
        assert_eq!(Time::from_hms(24, 0, 0), Some(Time::MAX));
        assert!(Time::from_hms(24, 0, 1).is_none());
        assert!(Time::from_hms(23, 60, 0).is_none());
        assert!(Time::from_hms(23, 0, 60).is_none());
        assert!(Time::from_hms_micro(0, 0, 0, 1_000_000).is_none());
        assert!(Time::from_micros(-1).is_none());
    }

    #[test]
    fn timetz_display_order_and_wire() {
        let t = Time::from_hms(12, 0, 0).unwrap();
        let cases = [
            (0, "12:00:00+00"),
            (-5 * 3600, "12:00:00-05"),
            (5 * 3600 + 45 * 60, "12:00:00+05:45"),
            (-(4 * 3600 + 56 * 60 + 2), "12:00:00-04:56:02"),
            (15 * 3600 + 59 * 60 + 59, "12:00:00+15:59:59"),
        ];
        for (offset, text) in cases {
            let v = TimeTz::new(t, offset).unwrap();
            assert_eq!(v.to_string(), text);
            let mut buf = BytesMut::new();
            v.encode(&Type::TIMETZ, &mut buf).unwrap();
            assert_eq!(buf.len(), 12);
            assert_eq!(&buf[8..], &(-offset).to_be_bytes());
            assert_eq!(TimeTz::decode(&Type::TIMETZ, &buf).unwrap(), v);
        }
        // Same UTC instant: the larger offset east sorts first (PostgreSQL
        // sorts by zone west ascending: '13:00+01' < '12:00+00' is true).
        let a = TimeTz::new(Time::from_hms(13, 0, 0).unwrap(), 3600).unwrap();
        let b = TimeTz::new(Time::from_hms(12, 0, 0).unwrap(), 0).unwrap();
        assert_eq!(a.cmp(&b), Ordering::Less);
        assert_ne!(a, b);
        let c = TimeTz::new(Time::from_hms(11, 0, 0).unwrap(), 0).unwrap();
        assert!(c < a && c < b);
    }

    #[test]
    fn malformed_values_are_errors() {
        let err = Time::decode(&Type::TIME, &[0; 4]).unwrap_err();
        assert!(err.to_string().contains("expected 8 bytes, got 4"), "{err}");
        let err = Time::decode(&Type::TIME, &(USECS_PER_DAY + 1).to_be_bytes()).unwrap_err();
        assert!(
            err.to_string().contains("outside 00:00:00 to 24:00:00"),
            "{err}"
        );
        assert!(Time::decode(&Type::TIME, &(-1i64).to_be_bytes()).is_err());
        let err = TimeTz::decode(&Type::TIMETZ, &[0; 8]).unwrap_err();
        assert!(
            err.to_string().contains("expected 12 bytes, got 8"),
            "{err}"
        );
        assert!(TimeTz::decode(&Type::TIMETZ, &[0; 13]).is_err());
        let mut raw = 0i64.to_be_bytes().to_vec();
        raw.extend_from_slice(&OFFSET_LIMIT.to_be_bytes());
        let err = TimeTz::decode(&Type::TIMETZ, &raw).unwrap_err();
        assert!(err.to_string().contains("outside +-16 hours"), "{err}");
        let mut raw = 0i64.to_be_bytes().to_vec();
        raw.extend_from_slice(&i32::MIN.to_be_bytes());
        assert!(TimeTz::decode(&Type::TIMETZ, &raw).is_err());
        let mut raw = (-5i64).to_be_bytes().to_vec();
        raw.extend_from_slice(&0i32.to_be_bytes());
        assert!(TimeTz::decode(&Type::TIMETZ, &raw).is_err());
    }

    #[test]
    fn accepts_exact_types() {
        assert!(<Time as Decode>::accepts(&Type::TIME));
        assert!(!<Time as Decode>::accepts(&Type::TIMETZ));
        assert!(<TimeTz as Decode>::accepts(&Type::TIMETZ));
        assert!(!<TimeTz as Decode>::accepts(&Type::TIME));
        assert!(!Time::MIDNIGHT.accepts(&Type::INTERVAL));
    }
}
