//! `date`, `time`, `timetz`, `timestamp`, `timestamptz` and `interval`.
//!
//! pgpipe's own types hold every value PostgreSQL can: [`Date`] (4714-11-24
//! BC to 5874897-12-31), [`Time`] (up to and including 24:00:00),
//! [`TimeTz`], [`Timestamp`] and [`TimestampTz`] (4714-11-24 BC to
//! 294276-12-31 23:59:59.999999), and [`Interval`] (months, days and
//! microseconds kept apart). Their `Display` is PostgreSQL's ISO text
//! (`DateStyle = 'ISO'`, `IntervalStyle = 'postgres'`), with ` BC` for
//! years before 1 AD; constructors and accessors use astronomical years
//! (year 0 is 1 BC), like `chrono` and `time`.
//!
//! `-infinity` and `infinity` of `date`, `timestamp` and `timestamptz` are
//! values of the wrapper [`WithInfinity<T>`], never clamped to a date;
//! reading them into a plain type is an error that names the wrapper.
//!
//! Each Rust type maps to exactly one PostgreSQL type:
//!
//! | PostgreSQL    | pgpipe          | `chrono` feature                                  | `time` feature     | std          |
//! |---------------|-----------------|---------------------------------------------------|--------------------|--------------|
//! | `date`        | [`Date`]        | `NaiveDate`                                       | `Date`             |              |
//! | `time`        | [`Time`]        | `NaiveTime`                                       | `Time`             |              |
//! | `timetz`      | [`TimeTz`]      |                                                   |                    |              |
//! | `timestamp`   | [`Timestamp`]   | `NaiveDateTime`                                   | `PrimitiveDateTime`|              |
//! | `timestamptz` | [`TimestampTz`] | `DateTime<Utc>`, `DateTime<FixedOffset>`, `DateTime<Local>` | `OffsetDateTime` | `SystemTime` |
//! | `interval`    | [`Interval`]    |                                                   |                    | `Duration` (exact, not negative) |
//!
//! A value outside the target type's range (a `date` in 5874897 AD read as
//! `chrono::NaiveDate`, 24:00:00 read as `chrono::NaiveTime`) is an error,
//! never clamped. Sending a value with nanoseconds drops the digits below
//! a microsecond (rounding towards the past), as PostgreSQL stores
//! microseconds; a `chrono` leap second cannot be sent.
//!
//! `std::time::Duration` reads an `interval` only when it is an exact,
//! non-negative time: no months and no days (their length varies), which
//! is an error naming them otherwise; read those as [`Interval`].
//!
//! ```
//! use pgpipe_types::{Date, Interval, Time, TimestampTz, WithInfinity};
//!
//! let d = Date::from_ymd(-4712, 11, 24).unwrap();
//! assert_eq!(d.to_string(), "4713-11-24 BC");
//! let ts = d.and_time(Time::from_hms(12, 0, 0).unwrap()).unwrap();
//! assert_eq!(ts.assume_utc().to_string(), "4713-11-24 12:00:00+00 BC");
//! assert_eq!(WithInfinity::<TimestampTz>::Infinity.to_string(), "infinity");
//! assert_eq!(Interval::new(1, 2, 3_000_000).to_string(), "1 mon 2 days 00:00:03");
//! ```

mod civil;
mod date;
pub(crate) mod infinity;
mod interval;
mod std_duration;
mod system_time_parts;
mod time_of_day;
mod timestamp;
#[cfg(feature = "chrono")]
mod with_chrono;
#[cfg(feature = "time")]
mod with_time;

pub use civil::RangeError;
pub use date::Date;
pub use infinity::WithInfinity;
pub use interval::{Interval, Iso8601};
pub use time_of_day::{Time, TimeTz};
pub use timestamp::{DisplayAtOffset, Timestamp, TimestampTz};
