//! `date`: [`Date`].

use std::fmt;

use super::civil::{
    civil_from_days, days_from_civil, days_in_month, write_era, write_ymd, UNIX_TO_PG_DAYS,
};
use super::infinity::sealed::{Finite, FiniteDecode};
use super::infinity::{finite_codec, DATE_OID};
use super::{Time, Timestamp};
use crate::{BoxError, Oid};

/// A PostgreSQL `date`: any day from 4714-11-24 BC to 5874897-12-31 AD in
/// the proleptic Gregorian calendar.
///
/// Years are astronomical, as in `chrono` and `time`: year 0 is 1 BC, year
/// -1 is 2 BC (PostgreSQL has no year 0). [`Date::year_of_era`] and
/// [`Date::is_bc`] give the BC/AD form, and `Display` writes PostgreSQL's
/// ISO text (`2024-02-29`, `4713-11-24 BC`). `-infinity` and `infinity` are
/// not dates: use [`WithInfinity<Date>`](crate::WithInfinity).
///
/// ```
/// use pgpipe_types::Date;
///
/// let d = Date::from_ymd(-4712, 11, 24).unwrap();
/// assert_eq!(d.to_string(), "4713-11-24 BC");
/// assert_eq!((d.is_bc(), d.year_of_era()), (true, 4713));
/// // PostgreSQL's first date is Julian day 0: 4714-11-24 BC.
/// assert_eq!(Date::MIN, Date::from_ymd(-4713, 11, 24).unwrap());
/// assert_eq!(Date::MIN.to_string(), "4714-11-24 BC");
/// assert_eq!(Date::MAX.to_string(), "5874897-12-31");
/// assert_eq!(Date::from_ymd(2000, 1, 1).unwrap().pg_days(), 0);
/// assert!(Date::from_ymd(2023, 2, 29).is_none());
/// assert!(Date::from_ymd(-4713, 11, 23).is_none());
/// ```
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Date {
    /// Days since 2000-01-01, within PostgreSQL's range.
    pub(super) days: i32,
}

impl Date {
    /// The earliest date PostgreSQL accepts: 4714-11-24 BC, Julian day 0.
    /// (PostgreSQL's documentation rounds it to "4713 BC"; 4714-11-24 BC in
    /// the proleptic Gregorian calendar is 4713-01-01 BC in the Julian one.)
    pub const MIN: Date = Date {
        days: (days_from_civil(-4713, 11, 24) - UNIX_TO_PG_DAYS) as i32,
    };
    /// The latest date PostgreSQL accepts: 5874897-12-31.
    pub const MAX: Date = Date {
        days: (days_from_civil(5_874_897, 12, 31) - UNIX_TO_PG_DAYS) as i32,
    };
    /// PostgreSQL's epoch, 2000-01-01 (day 0 on the wire).
    pub const PG_EPOCH: Date = Date { days: 0 };
    /// The Unix epoch, 1970-01-01.
    pub const UNIX_EPOCH: Date = Date {
        days: -UNIX_TO_PG_DAYS as i32,
    };

    /// The date with the given astronomical year (0 = 1 BC), month (1-12)
    /// and day (1-31); `None` for a day that does not exist or is outside
    /// PostgreSQL's range.
    pub const fn from_ymd(year: i32, month: u32, day: u32) -> Option<Date> {
        if month < 1 || month > 12 || day < 1 || day > days_in_month(year as i64, month) {
            return None;
        }
        Date::from_unix_days(days_from_civil(year as i64, month, day))
    }

    /// The date `days` days after 2000-01-01 (PostgreSQL's wire value);
    /// `None` outside PostgreSQL's range (which also excludes the infinity
    /// markers `i32::MIN` and `i32::MAX`).
    pub const fn from_pg_days(days: i32) -> Option<Date> {
        if days < Date::MIN.days || days > Date::MAX.days {
            None
        } else {
            Some(Date { days })
        }
    }

    /// Days since 2000-01-01 (PostgreSQL's wire value).
    pub const fn pg_days(self) -> i32 {
        self.days
    }

    /// The date `days` days after 1970-01-01; `None` outside PostgreSQL's
    /// range.
    pub const fn from_unix_days(days: i64) -> Option<Date> {
        let pg = days - UNIX_TO_PG_DAYS;
        if pg < Date::MIN.days as i64 || pg > Date::MAX.days as i64 {
            None
        } else {
            Some(Date { days: pg as i32 })
        }
    }

    /// Days since 1970-01-01.
    pub const fn unix_days(self) -> i64 {
        self.days as i64 + UNIX_TO_PG_DAYS
    }

    /// Astronomical year, month (1-12) and day (1-31).
    pub const fn ymd(self) -> (i32, u32, u32) {
        let (y, m, d) = civil_from_days(self.unix_days());
        (y as i32, m, d)
    }

    /// The astronomical year: 2024 for 2024 AD, 0 for 1 BC, -4712 for
    /// 4713 BC.
    pub const fn year(self) -> i32 {
        self.ymd().0
    }

    /// The month, 1-12.
    pub const fn month(self) -> u32 {
        self.ymd().1
    }

    /// The day of the month, 1-31.
    pub const fn day(self) -> u32 {
        self.ymd().2
    }

    /// Whether the date is before 1 AD.
    pub const fn is_bc(self) -> bool {
        self.year() <= 0
    }

    /// The year as written with an era: 4713 for 4713 BC, 2024 for 2024 AD.
    pub const fn year_of_era(self) -> u32 {
        let y = self.year();
        if y > 0 {
            y as u32
        } else {
            (1 - y) as u32
        }
    }

    /// The date `days` days later (earlier for negative `days`); `None`
    /// outside PostgreSQL's range.
    pub const fn checked_add_days(self, days: i64) -> Option<Date> {
        match (self.days as i64).checked_add(days) {
            Some(d) if d >= Date::MIN.days as i64 && d <= Date::MAX.days as i64 => {
                Some(Date { days: d as i32 })
            }
            _ => None,
        }
    }

    /// The timestamp at `time` on this date; `None` outside the
    /// `timestamp` range (which ends at 294276-12-31 23:59:59.999999).
    /// `24:00:00` is midnight of the next day.
    pub const fn and_time(self, time: Time) -> Option<Timestamp> {
        Timestamp::new(self, time)
    }
}

/// PostgreSQL's ISO text: `YYYY-MM-DD`, with ` BC` for years before 1 AD.
impl fmt::Display for Date {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (y, m, d) = self.ymd();
        write_ymd(f, y.into(), m, d)?;
        write_era(f, y.into())
    }
}

impl fmt::Debug for Date {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

impl Finite for Date {
    const OID: Oid = DATE_OID;
    fn to_wire(&self) -> Result<i64, BoxError> {
        Ok(self.days.into())
    }
}

impl FiniteDecode for Date {
    const NAME: &'static str = "Date";
    fn from_wire(wire: i64) -> Result<Self, BoxError> {
        i32::try_from(wire)
            .ok()
            .and_then(Date::from_pg_days)
            .ok_or_else(|| {
                format!("date value {wire} days from 2000-01-01 is outside PostgreSQL's date range")
                    .into()
            })
    }
}

finite_codec!(Date);

#[cfg(test)]
mod tests {
    use bytes::BytesMut;

    use super::*;
    use crate::{Decode, Encode, IsNull, Type, WithInfinity};

    #[test]
    fn limits_and_eras() {
        assert_eq!(Date::MIN.pg_days(), -2_451_545);
        assert_eq!(Date::MAX.pg_days(), 2_147_483_494 - 2_451_545 - 1);
        assert_eq!(Date::MIN.ymd(), (-4713, 11, 24));
        assert_eq!(Date::MIN.to_string(), "4714-11-24 BC");
        assert_eq!(Date::MAX.ymd(), (5_874_897, 12, 31));
        assert_eq!(Date::MIN.checked_add_days(-1), None);
        assert_eq!(Date::MAX.checked_add_days(1), None);
        assert_eq!(Date::from_pg_days(i32::MAX), None);
        assert_eq!(Date::from_pg_days(i32::MIN), None);
        let bc1 = Date::from_ymd(0, 12, 31).unwrap();
        assert_eq!(bc1.to_string(), "0001-12-31 BC");
        assert_eq!(bc1.year_of_era(), 1);
        assert!(bc1.is_bc());
        let ad1 = bc1.checked_add_days(1).unwrap();
        assert_eq!(ad1.to_string(), "0001-01-01");
        assert!(!ad1.is_bc());
        assert_eq!(
            Date::from_ymd(0, 2, 29).unwrap().to_string(),
            "0001-02-29 BC"
        );
        assert_eq!(
            Date::from_ymd(-99, 3, 1).unwrap().to_string(),
            "0100-03-01 BC"
        );
        assert_eq!(Date::UNIX_EPOCH.to_string(), "1970-01-01");
        assert_eq!(Date::from_unix_days(0), Some(Date::UNIX_EPOCH));
        assert!(Date::from_ymd(2024, 13, 1).is_none());
        assert!(Date::from_ymd(2024, 0, 1).is_none());
        assert!(Date::from_ymd(2024, 4, 31).is_none());
        assert!(Date::from_ymd(5_874_898, 1, 1).is_none());
        assert_eq!(format!("{:?}", Date::PG_EPOCH), "2000-01-01");
    }

    #[test]
    fn binary_round_trip_and_infinities() {
        for d in [
            Date::MIN,
            Date::PG_EPOCH,
            Date::MAX,
            Date::from_ymd(-1, 1, 1).unwrap(),
        ] {
            let mut buf = BytesMut::new();
            assert_eq!(d.encode(&Type::DATE, &mut buf).unwrap(), IsNull::No);
            assert_eq!(buf.len(), 4);
            assert_eq!(Date::decode(&Type::DATE, &buf).unwrap(), d);
        }
        for (v, wire) in [
            (WithInfinity::<Date>::NegInfinity, i32::MIN),
            (WithInfinity::Infinity, i32::MAX),
            (WithInfinity::Value(Date::PG_EPOCH), 0),
        ] {
            let mut buf = BytesMut::new();
            v.encode(&Type::DATE, &mut buf).unwrap();
            assert_eq!(&buf[..], &wire.to_be_bytes());
            assert_eq!(WithInfinity::<Date>::decode(&Type::DATE, &buf).unwrap(), v);
        }
        let err = Date::decode(&Type::DATE, &i32::MIN.to_be_bytes()).unwrap_err();
        assert_eq!(
            err.to_string(),
            "date value is -infinity, which Date cannot hold; read the column as WithInfinity<Date>"
        );
    }

    #[test]
    fn malformed_values_are_errors() {
        let err = Date::decode(&Type::DATE, &[0, 0, 0]).unwrap_err();
        assert!(err.to_string().contains("expected 4 bytes, got 3"), "{err}");
        assert!(Date::decode(&Type::DATE, &[0; 8]).is_err());
        assert!(WithInfinity::<Date>::decode(&Type::DATE, &[]).is_err());
        let err = Date::decode(&Type::DATE, &(Date::MAX.pg_days() + 1).to_be_bytes()).unwrap_err();
        assert!(
            err.to_string().contains("outside PostgreSQL's date range"),
            "{err}"
        );
        let err =
            WithInfinity::<Date>::decode(&Type::DATE, &(Date::MIN.pg_days() - 1).to_be_bytes())
                .unwrap_err();
        assert!(
            err.to_string().contains("outside PostgreSQL's date range"),
            "{err}"
        );
    }

    #[test]
    fn accepts_only_date() {
        assert!(<Date as Decode>::accepts(&Type::DATE));
        assert!(!<Date as Decode>::accepts(&Type::TIMESTAMP));
        assert!(!<Date as Decode>::accepts(&Type::INT4));
        assert!(!Date::PG_EPOCH.accepts(&Type::TIMESTAMPTZ));
        assert_eq!(<Date as crate::StaticType>::TYPE, crate::TypeRef::Oid(1082));
        assert_eq!(
            <WithInfinity<Date> as crate::StaticType>::TYPE,
            crate::TypeRef::Oid(1082)
        );
    }
}
