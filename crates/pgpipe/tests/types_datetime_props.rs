//! Property test for the date/time family: generated dates, times,
//! timestamps (BC to 294276 AD, infinities included), timestamptz in
//! several session time zones, and intervals are sent as parameters, read
//! back, compared with the Rust value and with the server's own text
//! rendering (`$1::T::text` against pgpipe's `Display`), and the `Display`
//! text is parsed back by the server.
//!
//! 64 cases per property keep CI fast; failures shrink to a minimal value.

mod common;

use std::fmt::{Debug, Display};
use std::future::Future;

use pgpipe::types::{Date, Interval, Time, TimeTz, Timestamp, TimestampTz, WithInfinity};
use pgpipe::{Client, Decode, Encode};
use proptest::prelude::*;
use proptest::test_runner::{Config, TestCaseError, TestRunner};

/// Runs `check` on 64 generated values, each against one connection to a
/// fresh database with ISO dates and UTC.
fn run<S, F, Fut>(hint: &str, strategy: S, check: F)
where
    S: Strategy,
    S::Value: Debug,
    F: Fn(Client, S::Value) -> Fut,
    Fut: Future<Output = Result<(), TestCaseError>>,
{
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let db = common::database(hint);
    let client = rt.block_on(async {
        let client = common::connect(&db).await;
        client
            .batch_execute(
                "SET DateStyle = 'ISO, YMD'; SET TimeZone = 'UTC'; SET IntervalStyle = 'postgres'",
            )
            .await
            .unwrap();
        client
    });
    let mut runner = TestRunner::new(Config {
        cases: 64,
        failure_persistence: None,
        ..Config::default()
    });
    let result = runner.run(&strategy, |value| {
        rt.block_on(common::bounded(check(client.clone(), value)))
    });
    if let Err(e) = result {
        panic!("{hint}: {e}");
    }
}

fn fail(what: impl Display) -> TestCaseError {
    TestCaseError::fail(what.to_string())
}

/// Sends `value` as `$1::ty`: the value read back must equal it and the
/// server's text must equal `Display`; then the `Display` text selected as
/// a literal must give the value again.
async fn check<T>(client: &Client, ty: &str, value: &T) -> Result<(), TestCaseError>
where
    T: Encode + Sync + for<'a> Decode<'a> + PartialEq + Debug + Display,
{
    let row = client
        .query_one(&format!("SELECT $1::{ty}, $1::{ty}::text"), (value,))
        .await
        .map_err(|e| fail(format!("SELECT $1::{ty} with {value:?}: {e}")))?;
    let back = row
        .try_get::<T, _>(0)
        .map_err(|e| fail(format!("reading {ty}: {e}")))?;
    prop_assert_eq!(&back, value);
    let text = value.to_string();
    prop_assert_eq!(row.get::<&str, _>(1), text.as_str());
    let row = client
        .query_one(&format!("SELECT $1::text::{ty}"), (text.as_str(),))
        .await
        .map_err(|e| fail(format!("'{text}'::{ty}: {e}")))?;
    let parsed = row
        .try_get::<T, _>(0)
        .map_err(|e| fail(format!("reading '{text}'::{ty}: {e}")))?;
    prop_assert_eq!(&parsed, value);
    Ok(())
}

/// Days anywhere in PostgreSQL's range, more often in the years people use
/// and around the BC/AD boundary.
fn date() -> impl Strategy<Value = Date> {
    prop_oneof![
        Date::MIN.pg_days()..=Date::MAX.pg_days(),
        -800_000i32..800_000,
        -731_000i32..-729_000,
        Date::MIN.pg_days()..Date::MIN.pg_days() + 1000,
    ]
    .prop_map(|d| Date::from_pg_days(d).expect("generated within range"))
}

/// Microseconds anywhere in the timestamp range, more often within
/// +-3000 years of 2000.
fn timestamp() -> impl Strategy<Value = Timestamp> {
    const YEAR: i64 = 366 * 86_400_000_000;
    prop_oneof![
        Timestamp::MIN.pg_micros()..=Timestamp::MAX.pg_micros(),
        -3000 * YEAR..3000 * YEAR,
        Timestamp::MIN.pg_micros()..Timestamp::MIN.pg_micros() + YEAR,
        Timestamp::MAX.pg_micros() - YEAR..=Timestamp::MAX.pg_micros(),
    ]
    .prop_map(|m| Timestamp::from_pg_micros(m).expect("generated within range"))
}

fn with_infinity<T: Debug + Clone>(
    value: impl Strategy<Value = T>,
) -> impl Strategy<Value = WithInfinity<T>> {
    prop_oneof![
        8 => value.prop_map(WithInfinity::Value),
        1 => Just(WithInfinity::NegInfinity),
        1 => Just(WithInfinity::Infinity),
    ]
}

#[test]
fn dates() {
    run(
        "prop_date",
        (date(), with_infinity(date())),
        |client, (d, w)| async move {
            check(&client, "date", &d).await?;
            check(&client, "date", &w).await?;
            // The server's calendar agrees with ours.
            let row = client
                .query_one(
                    "SELECT extract(year FROM $1::date)::int, extract(month FROM $1::date)::int, \
                     extract(day FROM $1::date)::int",
                    (d,),
                )
                .await
                .map_err(fail)?;
            // extract(year) counts 1 BC as -1: no year 0.
            let year = if d.is_bc() { d.year() - 1 } else { d.year() };
            prop_assert_eq!(row.get::<i32, _>(0), year);
            prop_assert_eq!(row.get::<i32, _>(1), d.month() as i32);
            prop_assert_eq!(row.get::<i32, _>(2), d.day() as i32);
            Ok(())
        },
    );
}

#[test]
fn times() {
    run(
        "prop_time",
        (
            0i64..=86_400_000_000,
            0i64..=86_400_000_000,
            -57_599i32..=57_599,
        ),
        |client, (t, tz, offset)| async move {
            check(&client, "time", &Time::from_micros(t).unwrap()).await?;
            let v = TimeTz::new(Time::from_micros(tz).unwrap(), offset).unwrap();
            check(&client, "timetz", &v).await
        },
    );
}

#[test]
fn timestamps() {
    run(
        "prop_timestamp",
        (timestamp(), with_infinity(timestamp())),
        |client, (t, w)| async move {
            check(&client, "timestamp", &t).await?;
            check(&client, "timestamp", &w).await?;
            check(&client, "timestamptz", &t.assume_utc()).await?;
            check(&client, "timestamptz", &w.map(Timestamp::assume_utc)).await
        },
    );
}

/// The same instant in several session time zones: the binary value never
/// changes, and the server's text is the wall time at the zone's offset.
#[test]
fn timestamptz_in_time_zones() {
    const ZONES: [&str; 5] = [
        "UTC",
        "America/New_York",
        "Asia/Kolkata",
        "Europe/Berlin",
        "Pacific/Chatham",
    ];
    run(
        "prop_timestamptz",
        (timestamp(), 0..ZONES.len()),
        |client, (t, zone)| async move {
            let t = t.assume_utc();
            let zone = ZONES[zone];
            client
                .batch_execute(&format!("SET TimeZone = '{zone}'"))
                .await
                .map_err(fail)?;
            let row = client
                .query_one(
                    "SELECT $1::timestamptz, $1::timestamptz::text, \
                     extract(timezone FROM $1::timestamptz)::int",
                    (t,),
                )
                .await
                .map_err(|e| fail(format!("{zone} {t}: {e}")))?;
            prop_assert_eq!(row.get::<TimestampTz, _>(0), t);
            let offset: i32 = row.get(2);
            prop_assert_eq!(
                row.get::<&str, _>(1),
                t.display_at_offset(offset).to_string()
            );
            // The server's text in this zone reads back as the same instant.
            let text = row.get::<String, _>(1);
            let row = client
                .query_one("SELECT $1::text::timestamptz", (text.as_str(),))
                .await
                .map_err(fail)?;
            prop_assert_eq!(row.get::<TimestampTz, _>(0), t);
            client
                .batch_execute("SET TimeZone = 'UTC'")
                .await
                .map_err(fail)?;
            Ok(())
        },
    );
}

#[test]
fn intervals() {
    let small = (
        -1200i32..1200,
        -1000i32..1000,
        -1_000_000_000_000i64..1_000_000_000_000,
    );
    let interval = prop_oneof![
        small.prop_map(|(m, d, us)| Interval::new(m, d, us)),
        (any::<i32>(), any::<i32>(), any::<i64>()).prop_map(|(m, d, us)| Interval::new(m, d, us)),
    ]
    // PostgreSQL 17 reads these two as -infinity and infinity.
    .prop_filter("not an infinity", |v| {
        *v != Interval::new(i32::MAX, i32::MAX, i64::MAX)
            && *v != Interval::new(i32::MIN, i32::MIN, i64::MIN)
    });
    run("prop_interval", interval, |client, v| async move {
        check(&client, "interval", &v).await?;
        client
            .batch_execute("SET IntervalStyle = 'iso_8601'")
            .await
            .map_err(fail)?;
        let row = client
            .query_one("SELECT $1::interval::text", (v,))
            .await
            .map_err(fail)?;
        prop_assert_eq!(row.get::<&str, _>(0), v.iso_8601().to_string());
        client
            .batch_execute("SET IntervalStyle = 'postgres'")
            .await
            .map_err(fail)?;
        Ok(())
    });
}
