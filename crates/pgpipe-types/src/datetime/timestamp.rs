//! `timestamp` and `timestamptz`: [`Timestamp`], [`TimestampTz`], and
//! `std::time::SystemTime` for `timestamptz`.

use std::fmt;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use super::civil::{
    civil_from_days, write_era, write_offset, write_time_of_day, write_ymd, RangeError,
    UNIX_TO_PG_DAYS, UNIX_TO_PG_USECS, USECS_PER_DAY,
};
use super::infinity::sealed::{Finite, FiniteDecode};
use super::infinity::{finite_codec, TIMESTAMPTZ_OID, TIMESTAMP_OID};
use super::system_time_parts::unix_parts;
use super::{Date, Time};
use crate::{BoxError, Oid, Type};

/// The first microsecond of 4714-11-24 BC, relative to 2000-01-01.
const MIN_MICROS: i64 = Date::MIN.pg_days() as i64 * USECS_PER_DAY;
/// The last microsecond of 294276-12-31, relative to 2000-01-01.
const MAX_MICROS: i64 =
    (super::civil::days_from_civil(294_277, 1, 1) - UNIX_TO_PG_DAYS) * USECS_PER_DAY - 1;

/// Checks a microsecond count since 2000-01-01 against PostgreSQL's
/// timestamp range; `what` names the value for the error.
pub(crate) fn check_timestamp_range(
    micros: i128,
    what: impl fmt::Display,
) -> Result<i64, RangeError> {
    if micros < MIN_MICROS as i128 || micros > MAX_MICROS as i128 {
        Err(RangeError::new(format!(
            "{what} is outside PostgreSQL's timestamp range \
             (4714-11-24 00:00:00 BC to 294276-12-31 23:59:59.999999)"
        )))
    } else {
        Ok(micros as i64)
    }
}

/// Writes a timestamp as PostgreSQL's ISO output does: the wall time at
/// `offset` seconds east of UTC, the offset when given, then ` BC`.
fn write_timestamp(f: &mut fmt::Formatter<'_>, pg_micros: i64, offset: Option<i32>) -> fmt::Result {
    let local = pg_micros as i128 + offset.unwrap_or(0) as i128 * 1_000_000;
    let days = local.div_euclid(USECS_PER_DAY as i128) as i64;
    let time = local.rem_euclid(USECS_PER_DAY as i128) as i64;
    let (y, m, d) = civil_from_days(days + UNIX_TO_PG_DAYS);
    write_ymd(f, y, m, d)?;
    f.write_str(" ")?;
    write_time_of_day(f, time)?;
    if let Some(offset) = offset {
        write_offset(f, offset)?;
    }
    write_era(f, y)
}

macro_rules! timestamp_common {
    ($t:ident, $what:ident, $oid:expr) => {
        impl $t {
            /// The earliest value PostgreSQL accepts: 4714-11-24 00:00:00 BC.
            pub const MIN: $t = $t { micros: MIN_MICROS };
            /// The latest value PostgreSQL accepts: 294276-12-31 23:59:59.999999.
            pub const MAX: $t = $t { micros: MAX_MICROS };
            /// PostgreSQL's epoch, 2000-01-01 00:00:00 (0 on the wire).
            pub const PG_EPOCH: $t = $t { micros: 0 };
            /// The Unix epoch, 1970-01-01 00:00:00.
            pub const UNIX_EPOCH: $t = $t {
                micros: -UNIX_TO_PG_USECS,
            };

            /// The value `micros` microseconds after 2000-01-01 00:00:00
            /// (PostgreSQL's wire value); `None` outside PostgreSQL's range
            /// (which also excludes the infinity markers `i64::MIN` and
            /// `i64::MAX`).
            pub const fn from_pg_micros(micros: i64) -> Option<$t> {
                if micros < MIN_MICROS || micros > MAX_MICROS {
                    None
                } else {
                    Some($t { micros })
                }
            }

            /// Microseconds since 2000-01-01 00:00:00 (PostgreSQL's wire
            /// value).
            pub const fn pg_micros(self) -> i64 {
                self.micros
            }

            /// The value `micros` microseconds after 1970-01-01 00:00:00;
            /// `None` outside PostgreSQL's range.
            pub const fn from_unix_micros(micros: i64) -> Option<$t> {
                // Cannot overflow: |micros| <= i64::MAX and the shift is small
                // against the i128 range.
                let pg = micros as i128 - UNIX_TO_PG_USECS as i128;
                if pg < MIN_MICROS as i128 || pg > MAX_MICROS as i128 {
                    None
                } else {
                    Some($t { micros: pg as i64 })
                }
            }

            /// Whole seconds since 1970-01-01 00:00:00, rounded towards
            /// the past (see [`Self::subsec_micros`]).
            pub const fn unix_seconds(self) -> i64 {
                self.micros.div_euclid(1_000_000) + UNIX_TO_PG_USECS / 1_000_000
            }

            /// The microseconds past [`Self::unix_seconds`], 0-999,999.
            pub const fn subsec_micros(self) -> u32 {
                self.micros.rem_euclid(1_000_000) as u32
            }

            /// The value `micros` microseconds later (earlier when
            /// negative); `None` outside PostgreSQL's range.
            pub const fn checked_add_micros(self, micros: i64) -> Option<$t> {
                match self.micros.checked_add(micros) {
                    Some(m) => $t::from_pg_micros(m),
                    None => None,
                }
            }
        }

        impl Finite for $t {
            const OID: Oid = $oid;
            fn to_wire(&self) -> Result<i64, BoxError> {
                Ok(self.micros)
            }
        }

        impl FiniteDecode for $t {
            const NAME: &'static str = stringify!($t);
            fn from_wire(wire: i64) -> Result<Self, BoxError> {
                $t::from_pg_micros(wire).ok_or_else(|| {
                    format!(
                        "{} value {wire} microseconds from 2000-01-01 is outside PostgreSQL's range",
                        Type::$what
                    )
                    .into()
                })
            }
        }

        finite_codec!($t);
    };
}

/// A PostgreSQL `timestamp` (without time zone): a date and a time of day,
/// microsecond precision, from 4714-11-24 00:00:00 BC to
/// 294276-12-31 23:59:59.999999.
///
/// `Display` writes PostgreSQL's ISO text (`2024-02-29 13:05:07.25`,
/// `4714-11-24 00:00:00 BC`). `-infinity` and `infinity` are not
/// timestamps: use [`WithInfinity<Timestamp>`](crate::WithInfinity).
///
/// ```
/// use pgpipe_types::{Date, Time, Timestamp};
///
/// let ts = Timestamp::new(Date::from_ymd(2024, 2, 29).unwrap(), Time::from_hms(13, 5, 7).unwrap()).unwrap();
/// assert_eq!(ts.to_string(), "2024-02-29 13:05:07");
/// assert_eq!(ts.date().ymd(), (2024, 2, 29));
/// assert_eq!(Timestamp::MAX.to_string(), "294276-12-31 23:59:59.999999");
/// assert_eq!(Timestamp::MIN.to_string(), "4714-11-24 00:00:00 BC");
/// assert_eq!(Timestamp::from_unix_micros(0), Some(Timestamp::UNIX_EPOCH));
/// // Beyond 294276 AD is not a timestamp (PostgreSQL's date goes further).
/// assert!(Date::from_ymd(294_277, 1, 1).unwrap().and_time(Time::MIDNIGHT).is_none());
/// ```
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Timestamp {
    /// Microseconds since 2000-01-01 00:00:00, MIN_MICROS..=MAX_MICROS.
    pub(super) micros: i64,
}

timestamp_common!(Timestamp, TIMESTAMP, TIMESTAMP_OID);

impl Timestamp {
    /// The timestamp at `time` on `date`; `None` outside PostgreSQL's range.
    /// `24:00:00` is midnight of the next day.
    pub const fn new(date: Date, time: Time) -> Option<Timestamp> {
        let micros = date.pg_days() as i128 * USECS_PER_DAY as i128 + time.micros() as i128;
        if micros < MIN_MICROS as i128 || micros > MAX_MICROS as i128 {
            None
        } else {
            Some(Timestamp {
                micros: micros as i64,
            })
        }
    }

    const fn split(self) -> (Date, Time) {
        // The timestamp range lies within Date's, and the remainder is
        // below 24:00:00.
        let date = Date {
            days: self.micros.div_euclid(USECS_PER_DAY) as i32,
        };
        let time = Time {
            micros: self.micros.rem_euclid(USECS_PER_DAY),
        };
        (date, time)
    }

    /// The date.
    pub const fn date(self) -> Date {
        self.split().0
    }

    /// The time of day (never 24:00:00).
    pub const fn time(self) -> Time {
        self.split().1
    }

    /// This wall-clock time taken as UTC.
    pub const fn assume_utc(self) -> TimestampTz {
        TimestampTz {
            micros: self.micros,
        }
    }
}

/// PostgreSQL's ISO text: `YYYY-MM-DD HH:MM:SS[.ffffff]`, then ` BC` for
/// years before 1 AD.
impl fmt::Display for Timestamp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write_timestamp(f, self.micros, None)
    }
}

impl fmt::Debug for Timestamp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

/// A PostgreSQL `timestamptz` (timestamp with time zone): an instant,
/// microsecond precision, from 4714-11-24 00:00:00 UTC BC to
/// 294276-12-31 23:59:59.999999 UTC.
///
/// PostgreSQL stores and sends the instant in UTC; the session's `TimeZone`
/// only affects its text rendering. `Display` writes PostgreSQL's ISO text
/// as a session with `TimeZone = 'UTC'` shows it (`2024-02-29 13:05:07+00`);
/// [`TimestampTz::display_at_offset`] writes it at another UTC offset.
/// `-infinity` and `infinity` are not instants: use
/// [`WithInfinity<TimestampTz>`](crate::WithInfinity).
///
/// ```
/// use pgpipe_types::{Date, Time, Timestamp, TimestampTz};
///
/// let noon = Timestamp::new(Date::from_ymd(2024, 7, 1).unwrap(), Time::from_hms(12, 0, 0).unwrap()).unwrap();
/// let t = noon.assume_utc();
/// assert_eq!(t.to_string(), "2024-07-01 12:00:00+00");
/// assert_eq!(t.display_at_offset(-4 * 3600).to_string(), "2024-07-01 08:00:00-04");
/// assert_eq!(t.display_at_offset(19_800).to_string(), "2024-07-01 17:30:00+05:30");
/// assert_eq!(t.utc(), noon);
/// assert_eq!(TimestampTz::MIN.to_string(), "4714-11-24 00:00:00+00 BC");
/// ```
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct TimestampTz {
    /// Microseconds since 2000-01-01 00:00:00 UTC, MIN_MICROS..=MAX_MICROS.
    micros: i64,
}

timestamp_common!(TimestampTz, TIMESTAMPTZ, TIMESTAMPTZ_OID);

impl TimestampTz {
    /// The instant at which UTC wall clocks show `utc`.
    pub const fn from_utc(utc: Timestamp) -> TimestampTz {
        utc.assume_utc()
    }

    /// The UTC wall-clock time of this instant.
    pub const fn utc(self) -> Timestamp {
        Timestamp {
            micros: self.micros,
        }
    }

    /// The wall-clock time of this instant at `offset` seconds east of UTC;
    /// `None` when that falls outside the `timestamp` range.
    pub const fn at_offset(self, offset: i32) -> Option<Timestamp> {
        self.utc().checked_add_micros(offset as i64 * 1_000_000)
    }

    /// The current time (microsecond precision); `None` only if the system
    /// clock is outside PostgreSQL's range.
    pub fn now() -> Option<TimestampTz> {
        TimestampTz::try_from(SystemTime::now()).ok()
    }

    /// PostgreSQL's ISO text of this instant at `offset` seconds east of UTC,
    /// as a session whose time zone has that offset at this instant shows
    /// it: `2024-07-01 08:00:00-04`, `1850-01-01 00:00:00-04:56:02`.
    pub const fn display_at_offset(self, offset: i32) -> DisplayAtOffset {
        DisplayAtOffset {
            micros: self.micros,
            offset,
        }
    }
}

/// PostgreSQL's ISO text in a session with `TimeZone = 'UTC'`:
/// `YYYY-MM-DD HH:MM:SS[.ffffff]+00`, then ` BC` for years before 1 AD.
impl fmt::Display for TimestampTz {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write_timestamp(f, self.micros, Some(0))
    }
}

impl fmt::Debug for TimestampTz {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

/// A [`TimestampTz`] rendered at a fixed UTC offset; from
/// [`TimestampTz::display_at_offset`].
#[derive(Clone, Copy, Debug)]
pub struct DisplayAtOffset {
    micros: i64,
    offset: i32,
}

impl fmt::Display for DisplayAtOffset {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write_timestamp(f, self.micros, Some(self.offset))
    }
}

/// The last whole Unix second whose every microsecond is inside
/// PostgreSQL's range, for [`SystemTime`]'s fast path.
const FAST_MAX_UNIX_SECS: u64 = (MAX_MICROS / 1_000_000 - 1 + UNIX_TO_PG_USECS / 1_000_000) as u64;

/// `SystemTime` as microseconds since 2000-01-01 UTC, sub-microsecond
/// digits dropped (rounded towards the past).
fn system_time_micros(t: &SystemTime) -> i128 {
    let (secs, nanos) = unix_parts(t);
    // Nanoseconds are never negative, so dividing rounds towards the past.
    secs as i128 * 1_000_000 + (nanos / 1000) as i128 - UNIX_TO_PG_USECS as i128
}

/// Fails for a time outside PostgreSQL's range; sub-microsecond digits are
/// dropped (rounded towards the past), as PostgreSQL stores microseconds.
impl TryFrom<SystemTime> for TimestampTz {
    type Error = RangeError;
    fn try_from(t: SystemTime) -> Result<Self, RangeError> {
        let micros =
            check_timestamp_range(system_time_micros(&t), format_args!("SystemTime {t:?}"))?;
        Ok(TimestampTz { micros })
    }
}

/// Fails when the platform's `SystemTime` cannot hold the instant.
impl TryFrom<TimestampTz> for SystemTime {
    type Error = RangeError;
    fn try_from(t: TimestampTz) -> Result<Self, RangeError> {
        let unix = t.micros as i128 + UNIX_TO_PG_USECS as i128;
        let magnitude = Duration::from_micros(unix.unsigned_abs() as u64);
        let out = if unix >= 0 {
            UNIX_EPOCH.checked_add(magnitude)
        } else {
            UNIX_EPOCH.checked_sub(magnitude)
        };
        out.ok_or_else(|| {
            RangeError::new(format!("timestamptz {t} is out of range for SystemTime"))
        })
    }
}

/// `std::time::SystemTime` is sent as and read from `timestamptz`;
/// sub-microsecond digits are dropped when sending.
impl Finite for SystemTime {
    const OID: Oid = TIMESTAMPTZ_OID;
    #[inline]
    fn to_wire(&self) -> Result<i64, BoxError> {
        // The common case (after 1970, well inside the range) in i64
        // arithmetic: bulk loads encode one of these per row.
        let (secs, nanos) = unix_parts(self);
        if (0..=FAST_MAX_UNIX_SECS as i64).contains(&secs) {
            let pg_secs = secs - UNIX_TO_PG_USECS / 1_000_000;
            return Ok(pg_secs * 1_000_000 + i64::from(nanos / 1000));
        }
        Ok(check_timestamp_range(
            system_time_micros(self),
            format_args!("SystemTime {self:?}"),
        )?)
    }
}

impl FiniteDecode for SystemTime {
    const NAME: &'static str = "SystemTime";
    fn from_wire(wire: i64) -> Result<Self, BoxError> {
        Ok(SystemTime::try_from(TimestampTz::from_wire(wire)?)?)
    }
}

finite_codec!(SystemTime);

#[cfg(test)]
mod tests {
    use bytes::BytesMut;

    use super::*;
    use crate::{Decode, Encode, WithInfinity};

    #[test]
    fn limits_match_postgres() {
        assert_eq!(MIN_MICROS, -211_813_488_000_000_000);
        assert_eq!(MAX_MICROS, 9_223_371_331_200_000_000 - 1);
        assert_eq!(Timestamp::MIN.date(), Date::MIN);
        assert_eq!(Timestamp::MAX.date().ymd(), (294_276, 12, 31));
        assert_eq!(
            Timestamp::MAX.time(),
            Time::from_hms_micro(23, 59, 59, 999_999).unwrap()
        );
        assert!(Timestamp::MAX.checked_add_micros(1).is_none());
        assert!(Timestamp::MIN.checked_add_micros(-1).is_none());
        assert!(Timestamp::from_pg_micros(i64::MAX).is_none());
        assert!(Timestamp::from_pg_micros(i64::MIN).is_none());
        assert_eq!(
            Timestamp::from_unix_micros(i64::MAX).unwrap().to_string(),
            "294247-01-10 04:00:54.775807"
        );
        assert_eq!(Timestamp::from_unix_micros(i64::MIN), None);
        assert_eq!(Timestamp::UNIX_EPOCH.unix_seconds(), 0);
        let before = Timestamp::UNIX_EPOCH.checked_add_micros(-1).unwrap();
        assert_eq!(
            (before.unix_seconds(), before.subsec_micros()),
            (-1, 999_999)
        );
        assert_eq!(before.to_string(), "1969-12-31 23:59:59.999999");
        assert_eq!(Timestamp::MAX.unix_seconds(), 9_224_318_015_999);
    }

    #[test]
    fn new_handles_24_00_and_range() {
        let d = Date::from_ymd(2023, 12, 31).unwrap();
        let ts = Timestamp::new(d, Time::MAX).unwrap();
        assert_eq!(ts.to_string(), "2024-01-01 00:00:00");
        assert!(Timestamp::new(Date::MAX, Time::MIDNIGHT).is_none());
        assert!(Timestamp::new(Date::from_ymd(294_276, 12, 31).unwrap(), Time::MAX).is_none());
        let bc = Timestamp::new(
            Date::from_ymd(0, 2, 29).unwrap(),
            Time::from_hms_micro(1, 2, 3, 400).unwrap(),
        )
        .unwrap();
        assert_eq!(bc.to_string(), "0001-02-29 01:02:03.0004 BC");
        assert_eq!(
            bc.assume_utc().to_string(),
            "0001-02-29 01:02:03.0004+00 BC"
        );
    }

    #[test]
    fn display_at_offsets() {
        let t = TimestampTz::MIN;
        assert_eq!(
            t.display_at_offset(-(4 * 3600 + 56 * 60 + 2)).to_string(),
            "4714-11-23 19:03:58-04:56:02 BC"
        );
        assert_eq!(t.at_offset(-1), None);
        assert_eq!(
            TimestampTz::MAX.display_at_offset(3600).to_string(),
            "294277-01-01 00:59:59.999999+01"
        );
        assert_eq!(
            TimestampTz::UNIX_EPOCH
                .display_at_offset(19_800)
                .to_string(),
            "1970-01-01 05:30:00+05:30"
        );
    }

    #[test]
    fn binary_round_trip_and_infinities() {
        for v in [
            Timestamp::MIN,
            Timestamp::MAX,
            Timestamp::PG_EPOCH,
            Timestamp::UNIX_EPOCH,
        ] {
            let mut buf = BytesMut::new();
            v.encode(&Type::TIMESTAMP, &mut buf).unwrap();
            assert_eq!(&buf[..], &v.pg_micros().to_be_bytes());
            assert_eq!(Timestamp::decode(&Type::TIMESTAMP, &buf).unwrap(), v);
            let tz = v.assume_utc();
            let mut buf = BytesMut::new();
            tz.encode(&Type::TIMESTAMPTZ, &mut buf).unwrap();
            assert_eq!(TimestampTz::decode(&Type::TIMESTAMPTZ, &buf).unwrap(), tz);
        }
        for (v, wire) in [
            (WithInfinity::<TimestampTz>::NegInfinity, i64::MIN),
            (WithInfinity::Infinity, i64::MAX),
        ] {
            let mut buf = BytesMut::new();
            v.encode(&Type::TIMESTAMPTZ, &mut buf).unwrap();
            assert_eq!(&buf[..], &wire.to_be_bytes());
            assert_eq!(
                WithInfinity::<TimestampTz>::decode(&Type::TIMESTAMPTZ, &buf).unwrap(),
                v
            );
            assert!(TimestampTz::decode(&Type::TIMESTAMPTZ, &buf).is_err());
            assert_eq!(
                WithInfinity::<Timestamp>::decode(&Type::TIMESTAMP, &buf).unwrap(),
                v.map(|t| t.utc())
            );
        }
        let err = Timestamp::decode(&Type::TIMESTAMP, &i64::MAX.to_be_bytes()).unwrap_err();
        assert_eq!(
            err.to_string(),
            "timestamp value is infinity, which Timestamp cannot hold; read the column as WithInfinity<Timestamp>"
        );
    }

    #[test]
    fn malformed_values_are_errors() {
        let err = Timestamp::decode(&Type::TIMESTAMP, &[0; 4]).unwrap_err();
        assert!(
            err.to_string()
                .contains("invalid binary timestamp value: expected 8 bytes, got 4"),
            "{err}"
        );
        let err = TimestampTz::decode(&Type::TIMESTAMPTZ, &[0; 9]).unwrap_err();
        assert!(
            err.to_string()
                .contains("invalid binary timestamptz value: expected 8 bytes, got 9"),
            "{err}"
        );
        assert!(WithInfinity::<Timestamp>::decode(&Type::TIMESTAMP, &[]).is_err());
        assert!(SystemTime::decode(&Type::TIMESTAMPTZ, &[1]).is_err());
        let err = Timestamp::decode(&Type::TIMESTAMP, &(MAX_MICROS + 1).to_be_bytes()).unwrap_err();
        assert!(
            err.to_string().contains("outside PostgreSQL's range"),
            "{err}"
        );
        let err = WithInfinity::<TimestampTz>::decode(
            &Type::TIMESTAMPTZ,
            &(MIN_MICROS - 1).to_be_bytes(),
        )
        .unwrap_err();
        assert!(
            err.to_string().contains("outside PostgreSQL's range"),
            "{err}"
        );
    }

    #[test]
    fn accepts_exact_types() {
        assert!(<Timestamp as Decode>::accepts(&Type::TIMESTAMP));
        assert!(!<Timestamp as Decode>::accepts(&Type::TIMESTAMPTZ));
        assert!(!<Timestamp as Decode>::accepts(&Type::DATE));
        assert!(<TimestampTz as Decode>::accepts(&Type::TIMESTAMPTZ));
        assert!(!<TimestampTz as Decode>::accepts(&Type::TIMESTAMP));
        assert!(<SystemTime as Decode>::accepts(&Type::TIMESTAMPTZ));
        assert!(!<SystemTime as Decode>::accepts(&Type::TIMESTAMP));
        assert!(!<WithInfinity<Timestamp> as Decode>::accepts(
            &Type::TIMESTAMPTZ
        ));
    }

    /// The i64 fast path of `SystemTime::to_wire` agrees with the exact
    /// i128 conversion on both sides of where it stops applying.
    #[test]
    fn system_time_fast_path_matches_the_exact_conversion() {
        let edge = UNIX_EPOCH + Duration::from_secs(FAST_MAX_UNIX_SECS);
        let cases = [
            UNIX_EPOCH,
            UNIX_EPOCH + Duration::new(1_767_225_600, 123_456_789),
            edge,
            edge + Duration::new(0, 999_999_999),
            edge + Duration::from_secs(1),
            SystemTime::try_from(TimestampTz::MAX).unwrap(),
        ];
        for st in cases {
            let exact = check_timestamp_range(system_time_micros(&st), "t").unwrap();
            assert_eq!(st.to_wire().unwrap(), exact, "{st:?}");
        }
        assert!((edge + Duration::from_secs(2)).to_wire().is_err());
    }

    #[test]
    fn system_time_round_trips_and_truncates_nanos() {
        let cases = [
            (UNIX_EPOCH, TimestampTz::UNIX_EPOCH),
            (
                UNIX_EPOCH + Duration::from_nanos(1_999),
                TimestampTz::from_unix_micros(1).unwrap(),
            ),
            (
                UNIX_EPOCH - Duration::from_nanos(1),
                TimestampTz::from_unix_micros(-1).unwrap(),
            ),
            (
                UNIX_EPOCH - Duration::from_micros(1),
                TimestampTz::from_unix_micros(-1).unwrap(),
            ),
            (
                UNIX_EPOCH - Duration::from_nanos(1_001),
                TimestampTz::from_unix_micros(-2).unwrap(),
            ),
        ];
        for (st, tz) in cases {
            assert_eq!(TimestampTz::try_from(st).unwrap(), tz);
            let mut buf = BytesMut::new();
            st.encode(&Type::TIMESTAMPTZ, &mut buf).unwrap();
            assert_eq!(TimestampTz::decode(&Type::TIMESTAMPTZ, &buf).unwrap(), tz);
        }
        for tz in [TimestampTz::MIN, TimestampTz::MAX, TimestampTz::PG_EPOCH] {
            let st = SystemTime::try_from(tz).unwrap();
            assert_eq!(TimestampTz::try_from(st).unwrap(), tz);
        }
        let far = UNIX_EPOCH + Duration::from_secs(10_000_000_000_000);
        let err = far
            .encode(&Type::TIMESTAMPTZ, &mut BytesMut::new())
            .unwrap_err();
        assert!(
            err.to_string()
                .contains("outside PostgreSQL's timestamp range"),
            "{err}"
        );
        assert!(TimestampTz::now().is_some());
    }
}
