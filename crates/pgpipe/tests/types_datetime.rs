//! The date/time family against the real server: `date`, `time`, `timetz`,
//! `timestamp`, `timestamptz` and `interval` through pgpipe's own types,
//! `chrono`, `time` and `SystemTime`. Each value is sent as a bound
//! parameter and read back, selected as a literal written in pgpipe's
//! `Display` form, and compared with the server's own `::text` rendering
//! (`DateStyle = 'ISO, YMD'`, `IntervalStyle = 'postgres'` unless a test
//! says otherwise), including NULL, +-infinity, PostgreSQL's first date
//! (4714-11-24 BC; the "4713 BC" edge is checked too), its last
//! timestamp (294276-12-31 23:59:59.999999) and last date (5874897-12-31).

mod common;

use std::fmt::{Debug, Display};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use common::values::{literal, null, round_trip};
use common::{bounded, connect, database, server_major};
use pgpipe::types::{Date, Interval, Time, TimeTz, Timestamp, TimestampTz, WithInfinity};
use pgpipe::{Client, Decode, Encode};

/// Session settings every test starts from.
async fn setup(client: &Client) {
    client
        .batch_execute(
            "SET DateStyle = 'ISO, YMD'; SET TimeZone = 'UTC'; SET IntervalStyle = 'postgres'",
        )
        .await
        .unwrap();
}

/// The full check of one value whose `Display` is PostgreSQL's text: the
/// parameter round trip, the server's rendering equal to `Display`, and the
/// `Display` text parsed by the server as a literal giving the same value.
async fn check<T>(client: &Client, ty: &str, value: T)
where
    T: Encode + Sync + for<'a> Decode<'a> + PartialEq + Debug + Display + Clone,
{
    let text = value.to_string();
    round_trip(client, ty, value.clone(), &text).await;
    let back: T = literal(client, &format!("'{text}'::{ty}")).await;
    assert_eq!(back, value, "'{text}'::{ty}");
}

/// The server rejects `sql` with "out of range".
async fn rejected(client: &Client, sql: &str) {
    let err = client
        .query_one(&format!("SELECT {sql}"), ())
        .await
        .expect_err(sql);
    assert!(err.to_string().contains("out of range"), "{sql}: {err}");
}

fn ymd(y: i32, m: u32, d: u32) -> Date {
    Date::from_ymd(y, m, d).unwrap_or_else(|| panic!("{y}-{m}-{d}"))
}

fn hms(h: u32, m: u32, s: u32, us: u32) -> Time {
    Time::from_hms_micro(h, m, s, us).unwrap()
}

fn ts(date: Date, time: Time) -> Timestamp {
    Timestamp::new(date, time).unwrap()
}

/// Dates across the whole range, BC included (astronomical years).
fn dates() -> Vec<Date> {
    vec![
        Date::MIN,
        ymd(-4712, 11, 24),
        ymd(-4712, 12, 31),
        ymd(-43, 3, 15),
        ymd(0, 2, 29),
        ymd(0, 12, 31),
        ymd(1, 1, 1),
        ymd(1582, 10, 4),
        ymd(1582, 10, 15),
        ymd(1900, 2, 28),
        ymd(1970, 1, 1),
        ymd(2000, 1, 1),
        ymd(2024, 2, 29),
        ymd(9999, 12, 31),
        ymd(10000, 1, 1),
        ymd(294_276, 12, 31),
        ymd(294_277, 1, 1),
        Date::MAX,
    ]
}

/// Timestamps across the whole range, BC included.
fn timestamps() -> Vec<Timestamp> {
    vec![
        Timestamp::MIN,
        ts(ymd(-4712, 11, 24), Time::MIDNIGHT),
        ts(ymd(-99, 6, 30), hms(12, 0, 0, 500_000)),
        ts(ymd(0, 12, 31), hms(23, 59, 59, 999_999)),
        ts(ymd(1, 1, 1), Time::MIDNIGHT),
        ts(ymd(1850, 7, 4), hms(10, 11, 12, 13)),
        ts(ymd(1969, 12, 31), hms(23, 59, 59, 999_999)),
        Timestamp::UNIX_EPOCH,
        Timestamp::PG_EPOCH,
        ts(ymd(2024, 3, 10), hms(7, 30, 0, 0)),
        ts(ymd(2024, 11, 3), hms(5, 59, 59, 999_999)),
        ts(ymd(2024, 2, 29), hms(12, 34, 56, 789_000)),
        ts(ymd(9999, 12, 31), hms(23, 59, 59, 999_999)),
        Timestamp::MAX,
    ]
}

#[tokio::test]
async fn date_round_trips_bc_infinity_and_limits() {
    bounded(async {
        let db = database("dt_date");
        let client = connect(&db).await;
        setup(&client).await;
        for d in dates() {
            check(&client, "date", d).await;
            check(&client, "date", WithInfinity::Value(d)).await;
        }
        check(&client, "date", WithInfinity::<Date>::NegInfinity).await;
        check(&client, "date", WithInfinity::<Date>::Infinity).await;
        null::<Date>(&client, "date").await;
        null::<WithInfinity<Date>>(&client, "date").await;

        // The edges, written as the server's users write them.
        assert_eq!(
            literal::<Date>(&client, "'4713-11-24 BC'::date").await,
            ymd(-4712, 11, 24)
        );
        assert_eq!(
            literal::<Date>(&client, "'4714-11-24 BC'::date").await,
            Date::MIN
        );
        assert_eq!(
            literal::<Date>(&client, "'5874897-12-31'::date").await,
            Date::MAX
        );
        assert_eq!(
            literal::<Date>(&client, "'0001-01-01 BC'::date").await,
            ymd(0, 1, 1)
        );
        assert_eq!(
            literal::<Date>(&client, "'0001-01-01'::date - 1").await,
            ymd(0, 12, 31)
        );
        rejected(&client, "'4714-11-23 BC'::date").await;
        rejected(&client, "'5874898-01-01'::date").await;
        assert_eq!(Date::MIN.checked_add_days(-1), None);
        assert_eq!(Date::MAX.checked_add_days(1), None);
        // The server's day arithmetic agrees with ours across the eras.
        let row = client
            .query_one(
                "SELECT $2::date - $1::date, extract(year FROM $1::date)::int",
                (Date::MIN, Date::MAX),
            )
            .await
            .unwrap();
        assert_eq!(
            row.get::<i32, _>(0),
            Date::MAX.pg_days() - Date::MIN.pg_days()
        );
        assert_eq!(
            row.get::<i32, _>(1),
            -4714,
            "extract(year) counts BC years negatively"
        );

        // Infinity never decodes into a plain date; the error names the wrapper.
        let row = client
            .query_one("SELECT 'infinity'::date, '-infinity'::date", ())
            .await
            .unwrap();
        let err = row.try_get::<Date, _>(0).unwrap_err();
        assert!(err.to_string().contains("WithInfinity<Date>"), "{err}");
        assert_eq!(row.get::<WithInfinity<Date>, _>(0), WithInfinity::Infinity);
        assert_eq!(
            row.get::<WithInfinity<Date>, _>(1),
            WithInfinity::NegInfinity
        );
        let row = client
            .query_one(
                "SELECT $1::date < $2::date AND $2::date < $3::date",
                (
                    WithInfinity::<Date>::NegInfinity,
                    WithInfinity::Value(Date::MIN),
                    WithInfinity::<Date>::Infinity,
                ),
            )
            .await
            .unwrap();
        assert!(row.get::<bool, _>(0));
    })
    .await
}

#[tokio::test]
async fn time_and_timetz_round_trip() {
    bounded(async {
        let db = database("dt_time");
        let client = connect(&db).await;
        setup(&client).await;
        let times = [
            Time::MIDNIGHT,
            hms(0, 0, 0, 1),
            hms(12, 34, 56, 789_000),
            hms(23, 59, 59, 999_999),
            Time::MAX,
        ];
        for t in times {
            check(&client, "time", t).await;
        }
        assert_eq!(
            literal::<Time>(&client, "'24:00:00'::time").await,
            Time::MAX
        );
        assert_eq!(
            literal::<Time>(&client, "'13:05:07.25'::time").await,
            hms(13, 5, 7, 250_000)
        );
        null::<Time>(&client, "time").await;

        let offsets = [
            0,
            19_800,
            -5 * 3600,
            -(4 * 3600 + 56 * 60 + 2),
            15 * 3600 + 59 * 60,
            -(15 * 3600 + 59 * 60 + 59),
        ];
        for t in times {
            for offset in offsets {
                check(&client, "timetz", TimeTz::new(t, offset).unwrap()).await;
            }
        }
        assert_eq!(
            literal::<TimeTz>(&client, "'10:30:00+05:30'::timetz").await,
            TimeTz::new(hms(10, 30, 0, 0), 19_800).unwrap()
        );
        assert_eq!(
            literal::<TimeTz>(&client, "'24:00:00-15:59'::timetz").await,
            TimeTz::new(Time::MAX, -(15 * 3600 + 59 * 60)).unwrap()
        );
        null::<TimeTz>(&client, "timetz").await;
        // The server's order is ours: by UTC time, then by zone.
        let a = TimeTz::new(hms(13, 0, 0, 0), 3600).unwrap();
        let b = TimeTz::new(hms(12, 0, 0, 0), 0).unwrap();
        let row = client
            .query_one("SELECT $1::timetz < $2::timetz", (a, b))
            .await
            .unwrap();
        assert_eq!(row.get::<bool, _>(0), a < b);
    })
    .await
}

#[tokio::test]
async fn timestamp_round_trips_bc_infinity_and_limits() {
    bounded(async {
        let db = database("dt_ts");
        let client = connect(&db).await;
        setup(&client).await;
        for t in timestamps() {
            check(&client, "timestamp", t).await;
            check(&client, "timestamp", WithInfinity::Value(t)).await;
            check(&client, "timestamptz", t.assume_utc()).await;
        }
        for ty in ["timestamp", "timestamptz"] {
            let row = client
                .query_one(
                    &format!("SELECT 'infinity'::{ty}, '-infinity'::{ty}, $1::{ty}::text, $2::{ty}::text"),
                    (
                        WithInfinity::<Timestamp>::Infinity,
                        WithInfinity::<Timestamp>::NegInfinity,
                    ),
                )
                .await;
            // A Timestamp parameter is a timestamp; the cast makes the server
            // convert, which keeps infinities.
            let row = row.unwrap();
            assert_eq!(row.get::<&str, _>(2), "infinity");
            assert_eq!(row.get::<&str, _>(3), "-infinity");
            if ty == "timestamp" {
                assert_eq!(row.get::<WithInfinity<Timestamp>, _>(0), WithInfinity::Infinity);
                assert_eq!(row.get::<WithInfinity<Timestamp>, _>(1), WithInfinity::NegInfinity);
                let err = row.try_get::<Timestamp, _>(1).unwrap_err();
                assert!(err.to_string().contains("WithInfinity<Timestamp>"), "{err}");
            } else {
                assert_eq!(row.get::<WithInfinity<TimestampTz>, _>(0), WithInfinity::Infinity);
                assert_eq!(row.get::<WithInfinity<TimestampTz>, _>(1), WithInfinity::NegInfinity);
                let err = row.try_get::<TimestampTz, _>(0).unwrap_err();
                assert!(err.to_string().contains("WithInfinity<TimestampTz>"), "{err}");
            }
        }
        check(&client, "timestamp", WithInfinity::<Timestamp>::Infinity).await;
        check(&client, "timestamp", WithInfinity::<Timestamp>::NegInfinity).await;
        check(&client, "timestamptz", WithInfinity::<TimestampTz>::Infinity).await;
        check(&client, "timestamptz", WithInfinity::<TimestampTz>::NegInfinity).await;
        null::<Timestamp>(&client, "timestamp").await;
        null::<TimestampTz>(&client, "timestamptz").await;
        null::<WithInfinity<TimestampTz>>(&client, "timestamptz").await;

        assert_eq!(
            literal::<Timestamp>(&client, "'294276-12-31 23:59:59.999999'::timestamp").await,
            Timestamp::MAX
        );
        assert_eq!(
            literal::<Timestamp>(&client, "'4714-11-24 00:00:00 BC'::timestamp").await,
            Timestamp::MIN
        );
        assert_eq!(
            literal::<Timestamp>(&client, "'4713-11-24 00:00:00 BC'::timestamp").await,
            ts(ymd(-4712, 11, 24), Time::MIDNIGHT)
        );
        assert_eq!(
            literal::<TimestampTz>(&client, "'294276-12-31 23:59:59.999999+00'::timestamptz").await,
            TimestampTz::MAX
        );
        rejected(&client, "'294277-01-01 00:00:00'::timestamp").await;
        rejected(&client, "'4714-11-23 23:59:59.999999 BC'::timestamp").await;
        assert!(Timestamp::MAX.checked_add_micros(1).is_none());
        // A date past the last timestamp is a date, not a timestamp.
        assert!(ymd(294_277, 1, 1).and_time(Time::MIDNIGHT).is_none());
        rejected(&client, "'294277-01-01'::date::timestamp").await;
        // 24:00:00 on a date is midnight of the next day, as the server says.
        let late = ymd(2023, 12, 31).and_time(Time::MAX).unwrap();
        assert_eq!(
            literal::<Timestamp>(&client, "'2023-12-31'::date + '24:00:00'::time").await,
            late
        );
    })
    .await
}

#[tokio::test]
async fn timestamptz_is_the_same_instant_in_every_time_zone() {
    bounded(async {
        let db = database("dt_tz");
        let client = connect(&db).await;
        setup(&client).await;
        let noon_utc = ts(ymd(2024, 7, 1), hms(12, 0, 0, 0)).assume_utc();
        for zone in [
            "UTC",
            "America/New_York",
            "Asia/Kolkata",
            "Australia/Lord_Howe",
            "Pacific/Chatham",
        ] {
            client
                .batch_execute(&format!("SET TimeZone = '{zone}'"))
                .await
                .unwrap();
            for t in timestamps().into_iter().map(Timestamp::assume_utc) {
                let utc_text = t.to_string();
                let row = client
                    .query_one(
                        "SELECT $1::timestamptz, $1::timestamptz::text, \
                         extract(timezone FROM $1::timestamptz)::int, \
                         $1::timestamptz = $2::text::timestamptz",
                        (t, utc_text.as_str()),
                    )
                    .await
                    .unwrap_or_else(|e| panic!("{zone} {t}: {e}"));
                // The binary value is the instant, whatever the zone.
                assert_eq!(row.get::<TimestampTz, _>(0), t, "{zone}");
                assert!(
                    row.get::<bool, _>(3),
                    "{zone}: {utc_text} is the same instant"
                );
                // The text is the wall time at the zone's offset then.
                let offset: i32 = row.get(2);
                assert_eq!(
                    row.get::<&str, _>(1),
                    t.display_at_offset(offset).to_string(),
                    "{zone} offset {offset}"
                );
                if zone == "UTC" {
                    assert_eq!(row.get::<&str, _>(1), utc_text);
                }
            }
            // A literal with an explicit offset is one instant everywhere; one
            // without is read in the session's zone.
            assert_eq!(
                literal::<TimestampTz>(&client, "'2024-07-01 08:00:00-04'::timestamptz").await,
                noon_utc
            );
            assert_eq!(
                literal::<TimestampTz>(&client, "'2024-07-01 17:30:00+05:30'::timestamptz").await,
                noon_utc
            );
            // (Through a text parameter: a literal is converted when the
            // statement is parsed, and this connection caches statements
            // across the SET.)
            let row = client
                .query_one(
                    "SELECT $1::text::timestamptz, \
                     extract(timezone FROM $1::text::timestamptz)::int",
                    ("2024-07-01 12:00:00",),
                )
                .await
                .unwrap();
            let offset: i64 = row.get::<i32, _>(1).into();
            assert_eq!(
                row.get::<TimestampTz, _>(0),
                noon_utc.checked_add_micros(-offset * 1_000_000).unwrap(),
                "{zone}"
            );
            let row = client
                .query_one(
                    "SELECT $1::timestamptz::text, $2::timestamptz::text, $3::timestamptz::text, $2",
                    (
                        WithInfinity::<TimestampTz>::Infinity,
                        SystemTime::try_from(noon_utc).unwrap(),
                        noon_utc,
                    ),
                )
                .await
                .unwrap();
            assert_eq!(row.get::<&str, _>(0), "infinity");
            assert_eq!(row.get::<&str, _>(1), row.get::<&str, _>(2), "{zone}");
            assert_eq!(row.get::<TimestampTz, _>(3), noon_utc, "{zone}");
        }
        // Kolkata has no DST, New York does: the offsets the server used.
        client
            .batch_execute("SET TimeZone = 'America/New_York'")
            .await
            .unwrap();
        let row = client
            .query_one("SELECT $1::timestamptz::text", (noon_utc,))
            .await
            .unwrap();
        assert_eq!(row.get::<&str, _>(0), "2024-07-01 08:00:00-04");
        client
            .batch_execute("SET TimeZone = 'Asia/Kolkata'")
            .await
            .unwrap();
        let row = client
            .query_one("SELECT $1::timestamptz::text", (noon_utc,))
            .await
            .unwrap();
        assert_eq!(row.get::<&str, _>(0), "2024-07-01 17:30:00+05:30");
    })
    .await
}

#[tokio::test]
async fn interval_keeps_months_days_and_micros_apart() {
    bounded(async {
        let db = database("dt_interval");
        let client = connect(&db).await;
        setup(&client).await;
        const H: i64 = 3_600_000_000;
        let values = [
            Interval::ZERO,
            Interval::new(1, 0, 0),
            Interval::new(0, 30, 0),
            Interval::new(0, 0, 30 * 24 * H),
            Interval::new(14, 3, 4 * H + 5 * 60_000_000 + 6_789_000),
            Interval::new(-1, 1, -1),
            Interval::new(0, -1, H),
            Interval::new(0, 1, -H),
            Interval::new(-13, -40, -61_500_000),
            Interval::new(12, 0, 0),
            Interval::new(-12, 0, 0),
            Interval::new(0, 0, 100 * H + 1_000),
            Interval::new(i32::MAX, i32::MAX, i64::MAX - 1),
            Interval::new(i32::MIN, i32::MIN, i64::MIN + 1),
        ];
        // Before PostgreSQL 15 the output function overflows on intervals
        // this large ("interval out of range"); they travel in binary all
        // the same, but the check compares the server's text.
        let extreme = [
            Interval::new(i32::MAX, i32::MAX, i64::MAX - 1),
            Interval::new(i32::MIN, i32::MIN, i64::MIN + 1),
        ];
        let values: Vec<Interval> = values
            .into_iter()
            .filter(|v| server_major() >= 15 || !extreme.contains(v))
            .collect();
        for &v in &values {
            check(&client, "interval", v).await;
        }
        // The fields are kept apart, though PostgreSQL's `=` equates them.
        let row = client
            .query_one(
                "SELECT $1::interval = $2::interval, $2::interval = $3::interval, \
                 $1::interval, $2::interval, $3::interval",
                (
                    Interval::new(1, 0, 0),
                    Interval::new(0, 30, 0),
                    Interval::new(0, 0, 30 * 24 * H),
                ),
            )
            .await
            .unwrap();
        assert!(row.get::<bool, _>(0) && row.get::<bool, _>(1));
        assert_eq!(row.get::<Interval, _>(2), Interval::new(1, 0, 0));
        assert_eq!(row.get::<Interval, _>(3), Interval::new(0, 30, 0));
        assert_eq!(row.get::<Interval, _>(4), Interval::new(0, 0, 30 * 24 * H));
        assert_eq!(
            literal::<Interval>(&client, "'1 mon 30 days 720 hours'::interval").await,
            Interval::new(1, 30, 720 * H)
        );
        assert_eq!(
            literal::<Interval>(&client, "'1 year 2 mons 3 days 04:05:06.789'::interval").await,
            Interval::new(14, 3, 4 * H + 5 * 60_000_000 + 6_789_000)
        );
        assert_eq!(
            literal::<Interval>(&client, "'-1 days +01:00:00'::interval").await,
            Interval::new(0, -1, H)
        );
        null::<Interval>(&client, "interval").await;

        // The iso_8601 style.
        client
            .batch_execute("SET IntervalStyle = 'iso_8601'")
            .await
            .unwrap();
        for v in values {
            let text = v.iso_8601().to_string();
            round_trip(&client, "interval", v, &text).await;
            assert_eq!(
                literal::<Interval>(&client, &format!("'{text}'::interval")).await,
                v
            );
        }
    })
    .await
}

#[tokio::test]
async fn system_time_is_timestamptz() {
    bounded(async {
        let db = database("dt_systime");
        let client = connect(&db).await;
        setup(&client).await;
        for t in [
            UNIX_EPOCH,
            UNIX_EPOCH + Duration::from_micros(1_720_000_000_123_456),
            UNIX_EPOCH - Duration::from_micros(5_000_000_000_000_001),
        ] {
            let expected = TimestampTz::try_from(t).unwrap();
            round_trip(&client, "timestamptz", t, &expected.to_string()).await;
        }
        // Nanoseconds are dropped, towards the past.
        let t = UNIX_EPOCH - Duration::from_nanos(1);
        let row = client
            .query_one("SELECT $1::timestamptz::text", (t,))
            .await
            .unwrap();
        assert_eq!(row.get::<&str, _>(0), "1969-12-31 23:59:59.999999+00");
        let row = client
            .query_one("SELECT now(), 'infinity'::timestamptz", ())
            .await
            .unwrap();
        let now: SystemTime = row.get(0);
        assert!(now.duration_since(UNIX_EPOCH).unwrap() > Duration::from_secs(1_700_000_000));
        let err = row.try_get::<SystemTime, _>(1).unwrap_err();
        assert!(
            err.to_string().contains("WithInfinity<SystemTime>"),
            "{err}"
        );
        assert_eq!(
            row.get::<WithInfinity<SystemTime>, _>(1),
            WithInfinity::Infinity
        );
        null::<SystemTime>(&client, "timestamptz").await;
    })
    .await
}

#[tokio::test]
async fn mismatched_types_are_refused_before_decoding() {
    bounded(async {
        let db = database("dt_mismatch");
        let client = connect(&db).await;
        setup(&client).await;
        let row = client
            .query_one(
                "SELECT now(), now()::timestamp, current_date, '1 day'::interval, '12:00'::time",
                (),
            )
            .await
            .unwrap();
        for err in [
            row.try_get::<Timestamp, _>(0).unwrap_err(),
            row.try_get::<TimestampTz, _>(1).unwrap_err(),
            row.try_get::<Timestamp, _>(2).unwrap_err(),
            row.try_get::<Time, _>(3).unwrap_err(),
            row.try_get::<TimeTz, _>(4).unwrap_err(),
            row.try_get::<Date, _>(1).unwrap_err(),
        ] {
            assert!(err.to_string().contains("cannot be converted"), "{err}");
        }
    })
    .await
}

mod with_chrono {
    use super::*;
    use chrono::{
        DateTime, FixedOffset, Local, NaiveDate, NaiveDateTime, NaiveTime, TimeZone, Utc,
    };

    fn naive(y: i32, m: u32, d: u32, h: u32, mi: u32, s: u32, us: u32) -> NaiveDateTime {
        NaiveDate::from_ymd_opt(y, m, d)
            .unwrap()
            .and_hms_micro_opt(h, mi, s, us)
            .unwrap()
    }

    #[tokio::test]
    async fn chrono_types_round_trip_and_refuse_what_they_cannot_hold() {
        bounded(async {
            let db = database("dt_chrono");
            let client = connect(&db).await;
            setup(&client).await;
            for d in [
                NaiveDate::from_ymd_opt(-4712, 11, 24).unwrap(),
                NaiveDate::from_ymd_opt(-4713, 11, 24).unwrap(),
                NaiveDate::from_ymd_opt(0, 2, 29).unwrap(),
                NaiveDate::from_ymd_opt(2024, 2, 29).unwrap(),
                NaiveDate::MAX,
            ] {
                let own = Date::try_from(d).unwrap();
                round_trip(&client, "date", d, &own.to_string()).await;
                assert_eq!(
                    literal::<NaiveDate>(&client, &format!("'{own}'::date")).await,
                    d
                );
            }
            assert_eq!(
                literal::<NaiveDate>(&client, "'0044-03-15 BC'::date").await,
                NaiveDate::from_ymd_opt(-43, 3, 15).unwrap()
            );
            for t in [
                NaiveTime::MIN,
                NaiveTime::from_hms_micro_opt(23, 59, 59, 999_999).unwrap(),
            ] {
                let own = Time::try_from(t).unwrap();
                round_trip(&client, "time", t, &own.to_string()).await;
            }
            for dt in [
                naive(-4713, 11, 24, 0, 0, 0, 0),
                naive(-100, 1, 1, 1, 2, 3, 4),
                naive(1969, 12, 31, 23, 59, 59, 999_999),
                naive(2024, 3, 10, 7, 30, 0, 0),
            ] {
                let own = Timestamp::try_from(dt).unwrap();
                round_trip(&client, "timestamp", dt, &own.to_string()).await;
                let utc = dt.and_utc();
                round_trip(&client, "timestamptz", utc, &own.assume_utc().to_string()).await;
                let fixed = FixedOffset::east_opt(19_800)
                    .unwrap()
                    .from_utc_datetime(&dt);
                let row = client
                    .query_one(
                        "SELECT $1::timestamptz, $1::timestamptz = $2::timestamptz",
                        (fixed, utc),
                    )
                    .await
                    .unwrap();
                assert_eq!(row.get::<DateTime<FixedOffset>, _>(0), fixed);
                assert_eq!(row.get::<DateTime<Local>, _>(0), fixed);
                assert!(row.get::<bool, _>(1));
            }
            // What chrono cannot hold is an error, never clamped.
            let row = client
                .query_one(
                    "SELECT '5874897-12-31'::date, '24:00:00'::time, 'infinity'::timestamptz, \
                     '294276-12-31 23:59:59.999999'::timestamp, '-infinity'::date",
                    (),
                )
                .await
                .unwrap();
            let err = row.try_get::<NaiveDate, _>(0).unwrap_err();
            assert!(
                err.to_string()
                    .contains("out of range for chrono::NaiveDate"),
                "{err}"
            );
            let err = row.try_get::<NaiveTime, _>(1).unwrap_err();
            assert!(err.to_string().contains("24:00:00"), "{err}");
            let err = row.try_get::<DateTime<Utc>, _>(2).unwrap_err();
            assert!(
                err.to_string()
                    .contains("WithInfinity<chrono::DateTime<Utc>>"),
                "{err}"
            );
            assert_eq!(
                row.get::<WithInfinity<DateTime<Utc>>, _>(2),
                WithInfinity::Infinity
            );
            let err = row.try_get::<NaiveDateTime, _>(3).unwrap_err();
            assert!(
                err.to_string()
                    .contains("out of range for chrono::NaiveDateTime"),
                "{err}"
            );
            assert_eq!(
                row.get::<WithInfinity<NaiveDate>, _>(4),
                WithInfinity::NegInfinity
            );
            let err = client
                .query_one("SELECT $1::timestamp", (NaiveDateTime::MIN,))
                .await
                .unwrap_err();
            assert!(
                err.to_string()
                    .contains("outside PostgreSQL's timestamp range"),
                "{err}"
            );
            null::<NaiveDate>(&client, "date").await;
            null::<DateTime<Utc>>(&client, "timestamptz").await;
        })
        .await
    }
}

mod with_time {
    use super::*;
    use time::{Month, OffsetDateTime, PrimitiveDateTime, UtcOffset};

    #[tokio::test]
    async fn time_crate_types_round_trip_and_refuse_what_they_cannot_hold() {
        bounded(async {
            let db = database("dt_timecrate");
            let client = connect(&db).await;
            setup(&client).await;
            for d in [
                time::Date::from_calendar_date(-4713, Month::November, 24).unwrap(),
                time::Date::from_calendar_date(0, Month::February, 29).unwrap(),
                time::Date::MAX,
            ] {
                let own = Date::try_from(d).unwrap();
                round_trip(&client, "date", d, &own.to_string()).await;
                assert_eq!(
                    literal::<time::Date>(&client, &format!("'{own}'::date")).await,
                    d
                );
            }
            let t = time::Time::from_hms_micro(23, 59, 59, 999_999).unwrap();
            round_trip(&client, "time", t, "23:59:59.999999").await;
            let dt = PrimitiveDateTime::new(
                time::Date::from_calendar_date(-100, Month::March, 1).unwrap(),
                time::Time::from_hms_micro(1, 2, 3, 4).unwrap(),
            );
            round_trip(&client, "timestamp", dt, "0101-03-01 01:02:03.000004 BC").await;
            let odt = dt.assume_offset(UtcOffset::from_hms(-5, 0, 0).unwrap());
            round_trip(
                &client,
                "timestamptz",
                odt,
                "0101-03-01 06:02:03.000004+00 BC",
            )
            .await;

            let row = client
                .query_one(
                    "SELECT '10000-01-01'::date, '24:00:00'::time, 'infinity'::timestamp, \
                     '-infinity'::timestamptz",
                    (),
                )
                .await
                .unwrap();
            let err = row.try_get::<time::Date, _>(0).unwrap_err();
            assert!(
                err.to_string().contains("out of range for time::Date"),
                "{err}"
            );
            let err = row.try_get::<time::Time, _>(1).unwrap_err();
            assert!(err.to_string().contains("24:00:00"), "{err}");
            let err = row.try_get::<PrimitiveDateTime, _>(2).unwrap_err();
            assert!(
                err.to_string()
                    .contains("WithInfinity<time::PrimitiveDateTime>"),
                "{err}"
            );
            assert_eq!(
                row.get::<WithInfinity<OffsetDateTime>, _>(3),
                WithInfinity::NegInfinity
            );
            null::<OffsetDateTime>(&client, "timestamptz").await;
        })
        .await
    }
}
