//! `chrono` integration (feature `chrono`): `NaiveDate` as `date`,
//! `NaiveTime` as `time`, `NaiveDateTime` as `timestamp`, `DateTime<Tz>` as
//! `timestamptz` (any time zone to send; `Utc`, `FixedOffset` and `Local` to
//! read), plus `TryFrom` conversions to and from pgpipe's own types.
//!
//! chrono's range (about 262143 BC to 262142 AD) is narrower than
//! PostgreSQL's `date` and, towards the past, `timestamp`: values outside it
//! are errors, never clamped. `24:00:00` does not fit `NaiveTime`; a chrono
//! leap second cannot be sent. Nanoseconds are dropped to microseconds
//! (rounding towards the past) when sending.

use chrono::{
    DateTime, Datelike, FixedOffset, Local, NaiveDate, NaiveDateTime, NaiveTime, TimeZone,
    Timelike, Utc,
};

use super::civil::{RangeError, USECS_PER_DAY, USECS_PER_SEC};
use super::infinity::finite_codec;
use super::infinity::sealed::{Finite, FiniteDecode};
use super::infinity::TIMESTAMPTZ_OID;
use super::{Date, Time, Timestamp, TimestampTz};
use crate::{BoxError, Decode, Encode, IsNull, Oid, StaticType, Type, TypeRef};

/// chrono's `num_days_from_ce` of 1970-01-01.
const CE_TO_UNIX_DAYS: i64 = 719_163;

impl TryFrom<NaiveDate> for Date {
    type Error = RangeError;
    /// Fails before 4714-11-24 BC, PostgreSQL's first date.
    fn try_from(d: NaiveDate) -> Result<Date, RangeError> {
        Date::from_unix_days(i64::from(Datelike::num_days_from_ce(&d)) - CE_TO_UNIX_DAYS).ok_or_else(|| {
            RangeError::new(format!(
                "chrono::NaiveDate {d} is outside PostgreSQL's date range (4714-11-24 BC to 5874897-12-31)"
            ))
        })
    }
}

impl TryFrom<Date> for NaiveDate {
    type Error = RangeError;
    /// Fails outside chrono's range.
    fn try_from(d: Date) -> Result<NaiveDate, RangeError> {
        i32::try_from(d.unix_days() + CE_TO_UNIX_DAYS)
            .ok()
            .and_then(NaiveDate::from_num_days_from_ce_opt)
            .ok_or_else(|| {
                RangeError::new(format!("date {d} is out of range for chrono::NaiveDate"))
            })
    }
}

impl TryFrom<NaiveTime> for Time {
    type Error = RangeError;
    /// Fails for a leap second (`23:59:60`); drops nanoseconds below a
    /// microsecond.
    fn try_from(t: NaiveTime) -> Result<Time, RangeError> {
        let nanos = t.nanosecond();
        if nanos >= 1_000_000_000 {
            return Err(RangeError::new(format!(
                "chrono::NaiveTime {t} is a leap second, which PostgreSQL's time cannot hold"
            )));
        }
        let micros =
            i64::from(t.num_seconds_from_midnight()) * USECS_PER_SEC + i64::from(nanos / 1000);
        // Always within 0..24h: chrono's times without a leap second are.
        Time::from_micros(micros)
            .ok_or_else(|| RangeError::new(format!("chrono::NaiveTime {t} is out of range")))
    }
}

impl TryFrom<Time> for NaiveTime {
    type Error = RangeError;
    /// Fails for `24:00:00`.
    fn try_from(t: Time) -> Result<NaiveTime, RangeError> {
        let micros = t.micros();
        if micros == USECS_PER_DAY {
            return Err(RangeError::new(
                "time 24:00:00 is out of range for chrono::NaiveTime (read it as pgpipe's Time)",
            ));
        }
        NaiveTime::from_num_seconds_from_midnight_opt(
            (micros / USECS_PER_SEC) as u32,
            (micros % USECS_PER_SEC) as u32 * 1000,
        )
        .ok_or_else(|| RangeError::new(format!("time {t} is out of range for chrono::NaiveTime")))
    }
}

impl TryFrom<NaiveDateTime> for Timestamp {
    type Error = RangeError;
    /// Fails outside PostgreSQL's range or for a leap second; drops
    /// nanoseconds below a microsecond.
    fn try_from(dt: NaiveDateTime) -> Result<Timestamp, RangeError> {
        let out_of_range = || {
            RangeError::new(format!(
                "chrono::NaiveDateTime {dt} is outside PostgreSQL's timestamp range \
                 (4714-11-24 00:00:00 BC to 294276-12-31 23:59:59.999999)"
            ))
        };
        let date = Date::try_from(dt.date()).map_err(|_| out_of_range())?;
        let time = Time::try_from(dt.time())?;
        Timestamp::new(date, time).ok_or_else(out_of_range)
    }
}

impl TryFrom<Timestamp> for NaiveDateTime {
    type Error = RangeError;
    /// Fails outside chrono's range.
    fn try_from(ts: Timestamp) -> Result<NaiveDateTime, RangeError> {
        let date = NaiveDate::try_from(ts.date()).map_err(|_| {
            RangeError::new(format!(
                "timestamp {ts} is out of range for chrono::NaiveDateTime"
            ))
        })?;
        Ok(NaiveDateTime::new(date, NaiveTime::try_from(ts.time())?))
    }
}

impl<Tz: TimeZone> TryFrom<DateTime<Tz>> for TimestampTz {
    type Error = RangeError;
    /// Fails outside PostgreSQL's range or for a leap second; drops
    /// nanoseconds below a microsecond. The time zone is not kept
    /// (PostgreSQL does not store it).
    fn try_from(dt: DateTime<Tz>) -> Result<TimestampTz, RangeError> {
        Timestamp::try_from(dt.naive_utc()).map(Timestamp::assume_utc)
    }
}

impl TryFrom<TimestampTz> for DateTime<Utc> {
    type Error = RangeError;
    /// Fails outside chrono's range.
    fn try_from(t: TimestampTz) -> Result<DateTime<Utc>, RangeError> {
        NaiveDateTime::try_from(t.utc())
            .map(|dt| dt.and_utc())
            .map_err(|_| {
                RangeError::new(format!(
                    "timestamptz {t} is out of range for chrono::DateTime"
                ))
            })
    }
}

impl TryFrom<TimestampTz> for DateTime<FixedOffset> {
    type Error = RangeError;
    /// The instant at offset +00:00. Fails outside chrono's range.
    fn try_from(t: TimestampTz) -> Result<DateTime<FixedOffset>, RangeError> {
        DateTime::<Utc>::try_from(t).map(|dt| dt.fixed_offset())
    }
}

impl TryFrom<TimestampTz> for DateTime<Local> {
    type Error = RangeError;
    /// The instant in the local time zone. Fails outside chrono's range.
    fn try_from(t: TimestampTz) -> Result<DateTime<Local>, RangeError> {
        DateTime::<Utc>::try_from(t).map(|dt| dt.with_timezone(&Local))
    }
}

finite_codec!(via Date: NaiveDate, "chrono::NaiveDate");
finite_codec!(via Timestamp: NaiveDateTime, "chrono::NaiveDateTime");

impl<Tz: TimeZone> Finite for DateTime<Tz> {
    const OID: Oid = TIMESTAMPTZ_OID;
    fn to_wire(&self) -> Result<i64, BoxError> {
        Ok(TimestampTz::try_from(self.clone())?.pg_micros())
    }
}

finite_codec!(encode impl<Tz: TimeZone> DateTime<Tz>);

macro_rules! decode_datetime {
    ($tz:ty, $name:literal) => {
        impl FiniteDecode for DateTime<$tz> {
            const NAME: &'static str = $name;
            fn from_wire(wire: i64) -> Result<Self, BoxError> {
                Ok(DateTime::<$tz>::try_from(TimestampTz::from_wire(wire)?)?)
            }
        }

        finite_codec!(decode DateTime<$tz>);
    };
}

decode_datetime!(Utc, "chrono::DateTime<Utc>");
decode_datetime!(FixedOffset, "chrono::DateTime<FixedOffset>");
decode_datetime!(Local, "chrono::DateTime<Local>");

impl StaticType for NaiveTime {
    const TYPE: TypeRef = TypeRef::Oid(1083);
}

impl Encode for NaiveTime {
    fn type_ref(&self) -> TypeRef {
        Self::TYPE
    }
    fn accepts(&self, ty: &Type) -> bool {
        ty.is(&[Type::TIME])
    }
    fn encode(&self, ty: &Type, buf: &mut bytes::BytesMut) -> Result<IsNull, BoxError> {
        Time::try_from(*self)?.encode(ty, buf)
    }
}

impl<'a> Decode<'a> for NaiveTime {
    fn accepts(ty: &Type) -> bool {
        ty.is(&[Type::TIME])
    }
    fn decode(ty: &Type, raw: &'a [u8]) -> Result<Self, BoxError> {
        Ok(NaiveTime::try_from(Time::decode(ty, raw)?)?)
    }
}

#[cfg(test)]
mod tests {
    use bytes::BytesMut;

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
            (NaiveDate::from_ymd_opt(2000, 1, 1).unwrap(), "2000-01-01"),
            (NaiveDate::from_ymd_opt(1970, 1, 1).unwrap(), "1970-01-01"),
            (NaiveDate::from_ymd_opt(0, 2, 29).unwrap(), "0001-02-29 BC"),
            (
                NaiveDate::from_ymd_opt(-4712, 11, 24).unwrap(),
                "4713-11-24 BC",
            ),
            (NaiveDate::MAX, "262142-12-31"),
        ];
        for (d, text) in cases {
            let own = Date::try_from(d).unwrap();
            assert_eq!(own.to_string(), text);
            assert_eq!(own.ymd(), (d.year(), d.month(), d.day()));
            assert_eq!(NaiveDate::try_from(own).unwrap(), d);
            let buf = wire(&d, &Type::DATE);
            assert_eq!(Date::decode(&Type::DATE, &buf).unwrap(), own);
            assert_eq!(NaiveDate::decode(&Type::DATE, &buf).unwrap(), d);
        }
        let before = NaiveDate::from_ymd_opt(-4713, 11, 23).unwrap();
        let err = before
            .encode(&Type::DATE, &mut BytesMut::new())
            .unwrap_err();
        assert!(
            err.to_string().contains("outside PostgreSQL's date range"),
            "{err}"
        );
        let err = NaiveDate::decode(&Type::DATE, &Date::MAX.pg_days().to_be_bytes()).unwrap_err();
        assert_eq!(
            err.to_string(),
            "date 5874897-12-31 is out of range for chrono::NaiveDate"
        );
        let err = NaiveDate::decode(&Type::DATE, &i32::MAX.to_be_bytes()).unwrap_err();
        assert!(
            err.to_string().contains("WithInfinity<chrono::NaiveDate>"),
            "{err}"
        );
        assert_eq!(
            WithInfinity::<NaiveDate>::decode(&Type::DATE, &i32::MAX.to_be_bytes()).unwrap(),
            WithInfinity::Infinity
        );
    }

    #[test]
    fn times_reject_24_00_and_leap_seconds() {
        let t = NaiveTime::from_hms_nano_opt(23, 59, 59, 999_999_999).unwrap();
        let buf = wire(&t, &Type::TIME);
        assert_eq!(
            Time::decode(&Type::TIME, &buf).unwrap().to_string(),
            "23:59:59.999999"
        );
        assert_eq!(
            NaiveTime::decode(&Type::TIME, &buf).unwrap(),
            NaiveTime::from_hms_micro_opt(23, 59, 59, 999_999).unwrap()
        );
        let err = NaiveTime::decode(&Type::TIME, &USECS_PER_DAY.to_be_bytes()).unwrap_err();
        assert!(
            err.to_string()
                .contains("24:00:00 is out of range for chrono::NaiveTime"),
            "{err}"
        );
        let leap = NaiveTime::from_hms_milli_opt(23, 59, 59, 1_500).unwrap();
        let err = leap.encode(&Type::TIME, &mut BytesMut::new()).unwrap_err();
        assert!(err.to_string().contains("leap second"), "{err}");
        assert!(<NaiveTime as Decode>::accepts(&Type::TIME));
        assert!(!<NaiveTime as Decode>::accepts(&Type::TIMETZ));
    }

    #[test]
    fn timestamps_and_time_zones() {
        let naive = NaiveDate::from_ymd_opt(2024, 3, 10)
            .unwrap()
            .and_hms_micro_opt(7, 8, 9, 123_456)
            .unwrap();
        let buf = wire(&naive, &Type::TIMESTAMP);
        assert_eq!(
            Timestamp::decode(&Type::TIMESTAMP, &buf)
                .unwrap()
                .to_string(),
            "2024-03-10 07:08:09.123456"
        );
        assert_eq!(
            NaiveDateTime::decode(&Type::TIMESTAMP, &buf).unwrap(),
            naive
        );

        let kolkata = FixedOffset::east_opt(19_800)
            .unwrap()
            .from_utc_datetime(&naive);
        let buf = wire(&kolkata, &Type::TIMESTAMPTZ);
        assert_eq!(
            TimestampTz::decode(&Type::TIMESTAMPTZ, &buf)
                .unwrap()
                .to_string(),
            "2024-03-10 07:08:09.123456+00"
        );
        assert_eq!(
            DateTime::<Utc>::decode(&Type::TIMESTAMPTZ, &buf).unwrap(),
            naive.and_utc()
        );
        let fixed = DateTime::<FixedOffset>::decode(&Type::TIMESTAMPTZ, &buf).unwrap();
        assert_eq!(fixed, kolkata);
        assert_eq!(fixed.offset().local_minus_utc(), 0);
        assert_eq!(
            DateTime::<Local>::decode(&Type::TIMESTAMPTZ, &buf).unwrap(),
            kolkata
        );

        // Nanoseconds are dropped towards the past, also before 1970.
        let early = NaiveDate::from_ymd_opt(1900, 1, 1)
            .unwrap()
            .and_hms_nano_opt(0, 0, 0, 1_999)
            .unwrap();
        let buf = wire(&early.and_utc(), &Type::TIMESTAMPTZ);
        assert_eq!(
            TimestampTz::decode(&Type::TIMESTAMPTZ, &buf)
                .unwrap()
                .to_string(),
            "1900-01-01 00:00:00.000001+00"
        );

        let err = NaiveDateTime::MIN
            .encode(&Type::TIMESTAMP, &mut BytesMut::new())
            .unwrap_err();
        assert!(
            err.to_string()
                .contains("outside PostgreSQL's timestamp range"),
            "{err}"
        );
        let err = DateTime::<Utc>::decode(
            &Type::TIMESTAMPTZ,
            &Timestamp::MAX.pg_micros().to_be_bytes(),
        )
        .unwrap_err();
        assert!(
            err.to_string()
                .contains("out of range for chrono::DateTime"),
            "{err}"
        );
        let err = DateTime::<Utc>::decode(&Type::TIMESTAMPTZ, &i64::MIN.to_be_bytes()).unwrap_err();
        assert!(
            err.to_string()
                .contains("WithInfinity<chrono::DateTime<Utc>>"),
            "{err}"
        );
        let inf = WithInfinity::<DateTime<Utc>>::Infinity;
        let buf = wire(&inf, &Type::TIMESTAMPTZ);
        assert_eq!(
            WithInfinity::<DateTime<Local>>::decode(&Type::TIMESTAMPTZ, &buf).unwrap(),
            WithInfinity::Infinity
        );

        assert!(!<NaiveDateTime as Decode>::accepts(&Type::TIMESTAMPTZ));
        assert!(!<DateTime<Utc> as Decode>::accepts(&Type::TIMESTAMP));
        assert_eq!(
            <DateTime<FixedOffset> as StaticType>::TYPE,
            TypeRef::Oid(1184)
        );
        assert!(NaiveDateTime::decode(&Type::TIMESTAMP, &[0; 7]).is_err());
    }
}
