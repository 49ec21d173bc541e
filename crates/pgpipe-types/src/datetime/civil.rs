//! Calendar arithmetic and the pieces of PostgreSQL's text output shared by
//! the date/time types.
//!
//! Dates are proleptic Gregorian with astronomical year numbers (year 0 is
//! 1 BC, year -1 is 2 BC), as PostgreSQL computes them internally.

use std::fmt;

use crate::error::wrong_length;
use crate::BoxError;

/// Days from 1970-01-01 to 2000-01-01 (PostgreSQL's epoch).
pub(crate) const UNIX_TO_PG_DAYS: i64 = 10_957;
/// Microseconds in a day.
pub(crate) const USECS_PER_DAY: i64 = 86_400_000_000;
/// Microseconds in a second.
pub(crate) const USECS_PER_SEC: i64 = 1_000_000;
/// Microseconds from 1970-01-01 to 2000-01-01.
pub(crate) const UNIX_TO_PG_USECS: i64 = UNIX_TO_PG_DAYS * USECS_PER_DAY;

/// Days since 1970-01-01 of an astronomical-year proleptic Gregorian date
/// (H. Hinnant's `days_from_civil`). `month` is 1..=12, `day` 1..=31.
pub(crate) const fn days_from_civil(year: i64, month: u32, day: u32) -> i64 {
    let y = if month <= 2 { year - 1 } else { year };
    let era = if y >= 0 { y } else { y - 399 } / 400;
    let yoe = y - era * 400;
    let m = month as i64;
    let doy = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + day as i64 - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// The astronomical year, month and day of a count of days since
/// 1970-01-01 (H. Hinnant's `civil_from_days`).
pub(crate) const fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = if z >= 0 { z } else { z - 146_096 } / 146_097;
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (if m <= 2 { y + 1 } else { y }, m, d)
}

/// Whether `year` (astronomical) is a leap year of the proleptic Gregorian
/// calendar.
pub(crate) const fn is_leap_year(year: i64) -> bool {
    year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)
}

/// The number of days in `month` of `year` (astronomical); 0 for a month
/// outside 1..=12.
pub(crate) const fn days_in_month(year: i64, month: u32) -> u32 {
    match month {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if is_leap_year(year) => 29,
        2 => 28,
        _ => 0,
    }
}

/// A date or time that the target type cannot hold: a conversion between
/// pgpipe's date/time types, `chrono`'s, `time`'s and `SystemTime` whose
/// value is outside the target's range. The message names the value and
/// the range.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RangeError {
    message: String,
}

impl RangeError {
    pub(crate) fn new(message: impl Into<String>) -> RangeError {
        RangeError {
            message: message.into(),
        }
    }
}

impl fmt::Display for RangeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for RangeError {}

/// Reads a big-endian `i32` that must be the whole value.
pub(crate) fn read_i32(what: &'static str, raw: &[u8]) -> Result<i32, BoxError> {
    let bytes: [u8; 4] = raw
        .try_into()
        .map_err(|_| wrong_length(what, 4, raw.len()))?;
    Ok(i32::from_be_bytes(bytes))
}

/// Reads a big-endian `i64` that must be the whole value.
pub(crate) fn read_i64(what: &'static str, raw: &[u8]) -> Result<i64, BoxError> {
    let bytes: [u8; 8] = raw
        .try_into()
        .map_err(|_| wrong_length(what, 8, raw.len()))?;
    Ok(i64::from_be_bytes(bytes))
}

/// Writes a date as PostgreSQL's ISO output does, without the " BC"
/// suffix (which PostgreSQL puts at the very end of a timestamp): the year
/// of the era zero-padded to at least four digits.
pub(crate) fn write_ymd(
    f: &mut fmt::Formatter<'_>,
    year: i64,
    month: u32,
    day: u32,
) -> fmt::Result {
    let year_of_era = if year > 0 { year } else { 1 - year };
    write!(f, "{year_of_era:04}-{month:02}-{day:02}")
}

/// The " BC" suffix PostgreSQL appends for years before 1 AD.
pub(crate) fn write_era(f: &mut fmt::Formatter<'_>, year: i64) -> fmt::Result {
    if year <= 0 {
        f.write_str(" BC")?;
    }
    Ok(())
}

/// Writes seconds and a fraction as PostgreSQL's `AppendSeconds` does:
/// two digits (when `pad`), then up to six fractional digits without
/// trailing zeros, nothing when the fraction is zero.
pub(crate) fn write_seconds(
    f: &mut fmt::Formatter<'_>,
    secs: u64,
    micros: u32,
    pad: bool,
) -> fmt::Result {
    if pad {
        write!(f, "{secs:02}")?;
    } else {
        write!(f, "{secs}")?;
    }
    if micros != 0 {
        let mut digits = format!("{micros:06}");
        while digits.ends_with('0') {
            digits.pop();
        }
        write!(f, ".{digits}")?;
    }
    Ok(())
}

/// Writes `HH:MM:SS[.ffffff]` for a time of day in microseconds
/// (0..=24:00:00).
pub(crate) fn write_time_of_day(f: &mut fmt::Formatter<'_>, micros: i64) -> fmt::Result {
    let secs = micros / USECS_PER_SEC;
    let frac = (micros % USECS_PER_SEC) as u32;
    write!(f, "{:02}:{:02}:", secs / 3600, secs / 60 % 60)?;
    write_seconds(f, (secs % 60) as u64, frac, true)
}

/// Writes a UTC offset as PostgreSQL's `EncodeTimezone` does: `+HH`,
/// `+HH:MM` when there are minutes, `+HH:MM:SS` when there are seconds.
/// `east` is in seconds east of UTC (the sign an ISO offset shows).
pub(crate) fn write_offset(f: &mut fmt::Formatter<'_>, east: i32) -> fmt::Result {
    let sign = if east >= 0 { '+' } else { '-' };
    let abs = east.unsigned_abs();
    let (hours, minutes, seconds) = (abs / 3600, abs / 60 % 60, abs % 60);
    if seconds != 0 {
        write!(f, "{sign}{hours:02}:{minutes:02}:{seconds:02}")
    } else if minutes != 0 {
        write!(f, "{sign}{hours:02}:{minutes:02}")
    } else {
        write!(f, "{sign}{hours:02}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn civil_round_trips_across_eras() {
        assert_eq!(days_from_civil(1970, 1, 1), 0);
        assert_eq!(days_from_civil(2000, 1, 1), UNIX_TO_PG_DAYS);
        assert_eq!(civil_from_days(UNIX_TO_PG_DAYS), (2000, 1, 1));
        // Julian day 0 is 4714-11-24 BC (proleptic Gregorian), astronomical
        // year -4713.
        assert_eq!(days_from_civil(-4713, 11, 24) - UNIX_TO_PG_DAYS, -2_451_545);
        // Year 0 (1 BC) is a leap year in the proleptic Gregorian calendar.
        assert!(is_leap_year(0));
        assert!(is_leap_year(-4));
        assert!(!is_leap_year(-100));
        assert_eq!(days_in_month(0, 2), 29);
        assert_eq!(days_from_civil(1, 1, 1) - days_from_civil(0, 12, 31), 1);
        let mut days = days_from_civil(-4800, 1, 1);
        let end = days_from_civil(-3000, 1, 1);
        let mut expected = (-4800i64, 1u32, 1u32);
        while days < end {
            assert_eq!(civil_from_days(days), expected);
            assert_eq!(days_from_civil(expected.0, expected.1, expected.2), days);
            let (y, m, d) = expected;
            expected = if d < days_in_month(y, m) {
                (y, m, d + 1)
            } else if m < 12 {
                (y, m + 1, 1)
            } else {
                (y + 1, 1, 1)
            };
            days += 1;
        }
    }
}
