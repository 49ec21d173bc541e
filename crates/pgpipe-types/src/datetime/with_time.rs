//! `time` integration (feature `time`): `time::Date` as `date`, `time::Time`
//! as `time`, `PrimitiveDateTime` as `timestamp`, `OffsetDateTime` as
//! `timestamptz`, plus `TryFrom` conversions to and from pgpipe's own
//! types.
//!
//! The `time` crate holds years -9999 to 9999 (more with its `large-dates`
//! feature); values outside its range are errors, never clamped, and so is
//! `24:00:00` for `time::Time`. Nanoseconds are dropped to microseconds
//! (rounding towards the past) when sending. A decoded `OffsetDateTime` is
//! in UTC (PostgreSQL does not store the offset).

use time::{OffsetDateTime, PrimitiveDateTime};

use super::civil::{RangeError, UNIX_TO_PG_USECS, USECS_PER_DAY, USECS_PER_SEC};
use super::infinity::finite_codec;
use super::timestamp::check_timestamp_range;
use super::{Date, Time, Timestamp, TimestampTz};
use crate::{BoxError, Decode, Encode, IsNull, StaticType, Type, TypeRef};

/// The Julian day number of 2000-01-01.
const PG_EPOCH_JULIAN_DAY: i64 = 2_451_545;

impl TryFrom<time::Date> for Date {
    type Error = RangeError;
    /// Cannot fail for the `time` crate's range; kept fallible for its
    /// `large-dates` feature.
    fn try_from(d: time::Date) -> Result<Date, RangeError> {
        i32::try_from(i64::from(d.to_julian_day()) - PG_EPOCH_JULIAN_DAY)
            .ok()
            .and_then(Date::from_pg_days)
            .ok_or_else(|| {
                RangeError::new(format!(
                    "time::Date {d} is outside PostgreSQL's date range (4714-11-24 BC to 5874897-12-31)"
                ))
            })
    }
}

impl TryFrom<Date> for time::Date {
    type Error = RangeError;
    /// Fails outside the `time` crate's range.
    fn try_from(d: Date) -> Result<time::Date, RangeError> {
        i32::try_from(i64::from(d.pg_days()) + PG_EPOCH_JULIAN_DAY)
            .ok()
            .and_then(|jd| time::Date::from_julian_day(jd).ok())
            .ok_or_else(|| RangeError::new(format!("date {d} is out of range for time::Date")))
    }
}

impl From<time::Time> for Time {
    /// Drops nanoseconds below a microsecond.
    fn from(t: time::Time) -> Time {
        let (h, m, s, nanos) = t.as_hms_nano();
        let secs = i64::from(h) * 3600 + i64::from(m) * 60 + i64::from(s);
        // time::Time is always before 24:00:00, so this is a valid Time.
        Time {
            micros: secs * USECS_PER_SEC + i64::from(nanos / 1000),
        }
    }
}

impl TryFrom<Time> for time::Time {
    type Error = RangeError;
    /// Fails for `24:00:00`.
    fn try_from(t: Time) -> Result<time::Time, RangeError> {
        if t.micros() == USECS_PER_DAY {
            return Err(RangeError::new(
                "time 24:00:00 is out of range for time::Time (read it as pgpipe's Time)",
            ));
        }
        time::Time::from_hms_micro(
            t.hour() as u8,
            t.minute() as u8,
            t.second() as u8,
            t.microsecond(),
        )
        .map_err(|_| RangeError::new(format!("time {t} is out of range for time::Time")))
    }
}

impl TryFrom<PrimitiveDateTime> for Timestamp {
    type Error = RangeError;
    /// Fails outside PostgreSQL's range; drops nanoseconds below a
    /// microsecond.
    fn try_from(dt: PrimitiveDateTime) -> Result<Timestamp, RangeError> {
        let out_of_range = || {
            RangeError::new(format!(
                "time::PrimitiveDateTime {dt} is outside PostgreSQL's timestamp range \
                 (4714-11-24 00:00:00 BC to 294276-12-31 23:59:59.999999)"
            ))
        };
        let date = Date::try_from(dt.date()).map_err(|_| out_of_range())?;
        Timestamp::new(date, Time::from(dt.time())).ok_or_else(out_of_range)
    }
}

impl TryFrom<Timestamp> for PrimitiveDateTime {
    type Error = RangeError;
    /// Fails outside the `time` crate's range.
    fn try_from(ts: Timestamp) -> Result<PrimitiveDateTime, RangeError> {
        let date = time::Date::try_from(ts.date()).map_err(|_| {
            RangeError::new(format!(
                "timestamp {ts} is out of range for time::PrimitiveDateTime"
            ))
        })?;
        Ok(PrimitiveDateTime::new(
            date,
            time::Time::try_from(ts.time())?,
        ))
    }
}

impl TryFrom<OffsetDateTime> for TimestampTz {
    type Error = RangeError;
    /// Fails outside PostgreSQL's range; drops nanoseconds below a
    /// microsecond. The offset is not kept (PostgreSQL does not store it).
    fn try_from(dt: OffsetDateTime) -> Result<TimestampTz, RangeError> {
        let micros = dt.unix_timestamp_nanos().div_euclid(1000) - i128::from(UNIX_TO_PG_USECS);
        let micros = check_timestamp_range(micros, format_args!("time::OffsetDateTime {dt}"))?;
        Ok(Timestamp { micros }.assume_utc())
    }
}

impl TryFrom<TimestampTz> for OffsetDateTime {
    type Error = RangeError;
    /// The instant in UTC. Fails outside the `time` crate's range.
    fn try_from(t: TimestampTz) -> Result<OffsetDateTime, RangeError> {
        let nanos = (i128::from(t.pg_micros()) + i128::from(UNIX_TO_PG_USECS)) * 1000;
        OffsetDateTime::from_unix_timestamp_nanos(nanos).map_err(|_| {
            RangeError::new(format!(
                "timestamptz {t} is out of range for time::OffsetDateTime"
            ))
        })
    }
}

finite_codec!(via Date: time::Date, "time::Date");
finite_codec!(via Timestamp: PrimitiveDateTime, "time::PrimitiveDateTime");
finite_codec!(via TimestampTz: OffsetDateTime, "time::OffsetDateTime");

impl StaticType for time::Time {
    const TYPE: TypeRef = TypeRef::Oid(1083);
}

impl Encode for time::Time {
    fn type_ref(&self) -> TypeRef {
        Self::TYPE
    }
    fn accepts(&self, ty: &Type) -> bool {
        ty.is(&[Type::TIME])
    }
    fn encode(&self, ty: &Type, buf: &mut bytes::BytesMut) -> Result<IsNull, BoxError> {
        Time::from(*self).encode(ty, buf)
    }
}

impl<'a> Decode<'a> for time::Time {
    fn accepts(ty: &Type) -> bool {
        ty.is(&[Type::TIME])
    }
    fn decode(ty: &Type, raw: &'a [u8]) -> Result<Self, BoxError> {
        Ok(time::Time::try_from(Time::decode(ty, raw)?)?)
    }
}

#[cfg(test)]
mod tests {
    use bytes::BytesMut;
    use time::{Month, UtcOffset};

    use super::*;
    use crate::WithInfinity;

    fn wire<T: Encode>(v: &T, ty: &Type) -> BytesMut {
        let mut buf = BytesMut::new();
        assert_eq!(v.encode(ty, &mut buf).unwrap(), IsNull::No);
        buf
    }

    #[test]
    fn dates_match_own_type_including_bc() {
        let cases = [
            (
                time::Date::from_calendar_date(2000, Month::January, 1).unwrap(),
                "2000-01-01",
            ),
            (
                time::Date::from_calendar_date(0, Month::February, 29).unwrap(),
                "0001-02-29 BC",
            ),
            (
                time::Date::from_calendar_date(-4712, Month::November, 24).unwrap(),
                "4713-11-24 BC",
            ),
            (time::Date::MAX, "9999-12-31"),
        ];
        for (d, text) in cases {
            let own = Date::try_from(d).unwrap();
            assert_eq!(own.to_string(), text);
            assert_eq!(
                own.ymd(),
                (d.year(), u8::from(d.month()).into(), d.day().into())
            );
            assert_eq!(time::Date::try_from(own).unwrap(), d);
            let buf = wire(&d, &Type::DATE);
            assert_eq!(time::Date::decode(&Type::DATE, &buf).unwrap(), d);
        }
        let err = time::Date::MIN
            .encode(&Type::DATE, &mut BytesMut::new())
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            "time::Date -9999-01-01 is outside PostgreSQL's date range (4714-11-24 BC to 5874897-12-31)"
        );
        // time::Date reaches further into the past than PostgreSQL.
        assert_eq!(
            time::Date::decode(&Type::DATE, &Date::MIN.pg_days().to_be_bytes()).unwrap(),
            time::Date::from_calendar_date(-4713, Month::November, 24).unwrap()
        );
        let err = time::Date::decode(&Type::DATE, &Date::MAX.pg_days().to_be_bytes()).unwrap_err();
        assert_eq!(
            err.to_string(),
            "date 5874897-12-31 is out of range for time::Date"
        );
        let err = time::Date::decode(&Type::DATE, &i32::MIN.to_be_bytes()).unwrap_err();
        assert!(
            err.to_string().contains("WithInfinity<time::Date>"),
            "{err}"
        );
        assert_eq!(
            WithInfinity::<time::Date>::decode(&Type::DATE, &i32::MIN.to_be_bytes()).unwrap(),
            WithInfinity::NegInfinity
        );
    }

    #[test]
    fn times_and_timestamps() {
        let t = time::Time::from_hms_nano(23, 59, 59, 999_999_999).unwrap();
        let buf = wire(&t, &Type::TIME);
        assert_eq!(
            time::Time::decode(&Type::TIME, &buf).unwrap(),
            time::Time::from_hms_micro(23, 59, 59, 999_999).unwrap()
        );
        let err = time::Time::decode(&Type::TIME, &USECS_PER_DAY.to_be_bytes()).unwrap_err();
        assert!(
            err.to_string()
                .contains("24:00:00 is out of range for time::Time"),
            "{err}"
        );

        let date = time::Date::from_calendar_date(-100, Month::March, 1).unwrap();
        let dt = PrimitiveDateTime::new(date, time::Time::from_hms_micro(1, 2, 3, 4).unwrap());
        let buf = wire(&dt, &Type::TIMESTAMP);
        assert_eq!(
            Timestamp::decode(&Type::TIMESTAMP, &buf)
                .unwrap()
                .to_string(),
            "0101-03-01 01:02:03.000004 BC"
        );
        assert_eq!(
            PrimitiveDateTime::decode(&Type::TIMESTAMP, &buf).unwrap(),
            dt
        );

        let odt = dt.assume_offset(UtcOffset::from_hms(-5, 0, 0).unwrap());
        let buf = wire(&odt, &Type::TIMESTAMPTZ);
        assert_eq!(
            TimestampTz::decode(&Type::TIMESTAMPTZ, &buf)
                .unwrap()
                .to_string(),
            "0101-03-01 06:02:03.000004+00 BC"
        );
        let back = OffsetDateTime::decode(&Type::TIMESTAMPTZ, &buf).unwrap();
        assert_eq!(back, odt);
        assert_eq!(back.offset(), UtcOffset::UTC);

        // Nanoseconds are dropped towards the past, also before 1970.
        let early = OffsetDateTime::from_unix_timestamp_nanos(-1).unwrap();
        let buf = wire(&early, &Type::TIMESTAMPTZ);
        assert_eq!(
            TimestampTz::decode(&Type::TIMESTAMPTZ, &buf).unwrap(),
            TimestampTz::from_unix_micros(-1).unwrap()
        );

        let err = OffsetDateTime::decode(
            &Type::TIMESTAMPTZ,
            &Timestamp::MAX.pg_micros().to_be_bytes(),
        )
        .unwrap_err();
        assert!(
            err.to_string()
                .contains("out of range for time::OffsetDateTime"),
            "{err}"
        );
        let err = PrimitiveDateTime::decode(&Type::TIMESTAMP, &i64::MAX.to_be_bytes()).unwrap_err();
        assert!(
            err.to_string()
                .contains("WithInfinity<time::PrimitiveDateTime>"),
            "{err}"
        );
        assert!(OffsetDateTime::decode(&Type::TIMESTAMPTZ, &[0; 4]).is_err());
        assert!(!<OffsetDateTime as Decode>::accepts(&Type::TIMESTAMP));
        assert!(!<PrimitiveDateTime as Decode>::accepts(&Type::TIMESTAMPTZ));
    }
}
