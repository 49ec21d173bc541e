//! Ranges and multiranges against the real server, as bound parameters and
//! as literals, compared with the server's own text rendering.

mod common;

use std::fmt::{Debug, Display};
use std::ops::Bound::{Excluded, Included, Unbounded};

use common::{bounded, connect, database, server_major};
use pgpipe::types::{Multirange, Range};
use pgpipe::{Client, Decode, Encode, ErrorKind};

/// Sends `value` as `$1::ty`, reads it back and checks that the server's
/// text rendering is `Display`'s.
async fn round_trip<T>(client: &Client, ty: &str, value: T)
where
    T: Encode + Sync + for<'a> Decode<'a> + PartialEq + Debug + Display,
{
    let row = client
        .query_one(&format!("SELECT $1::{ty}, $1::{ty}::text"), (&value,))
        .await
        .unwrap_or_else(|e| panic!("SELECT $1::{ty} with {value:?}: {e}"));
    assert_eq!(row.get::<T, _>(0), value, "{ty} round trip");
    assert_eq!(
        row.get::<&str, _>(1),
        value.to_string(),
        "server's rendering as {ty}"
    );
}

/// Selects `'text'::ty`, checks it reads as `expected` and that `expected`
/// displays as the server renders it.
async fn literal<T>(client: &Client, text: &str, ty: &str, expected: T)
where
    T: for<'a> Decode<'a> + PartialEq + Debug + Display,
{
    let row = client
        .query_one(&format!("SELECT '{text}'::{ty}, '{text}'::{ty}::text"), ())
        .await
        .unwrap_or_else(|e| panic!("SELECT '{text}'::{ty}: {e}"));
    assert_eq!(row.get::<T, _>(0), expected, "'{text}'::{ty}");
    assert_eq!(
        row.get::<&str, _>(1),
        expected.to_string(),
        "'{text}'::{ty} as text"
    );
}

#[tokio::test]
async fn int_ranges_both_ways() {
    bounded(async {
        let db = database("rng_int");
        let client = connect(&db).await;
        round_trip(&client, "int4range", Range::from(1..10)).await;
        round_trip(&client, "int4range", Range::from(i32::MIN..i32::MAX)).await;
        round_trip(&client, "int4range", Range::<i32>::Empty).await;
        round_trip(&client, "int4range", Range::<i32>::unbounded()).await;
        round_trip(&client, "int4range", Range::from(5..)).await;
        round_trip(&client, "int4range", Range::from(..-5)).await;
        round_trip(&client, "int8range", Range::from(i64::MIN..i64::MAX)).await;
        round_trip(&client, "int8range", Range::new(Unbounded, Excluded(0i64))).await;

        literal(&client, "[1,10)", "int4range", Range::from(1..10)).await;
        literal(&client, "empty", "int4range", Range::<i32>::Empty).await;
        literal(&client, "(,)", "int4range", Range::<i32>::unbounded()).await;
        literal(&client, "[5,)", "int8range", Range::from(5i64..)).await;
        literal(&client, "(,5]", "int8range", Range::from(..6i64)).await;
        // Discrete ranges come back canonical: [a,b) and empty.
        literal(&client, "[1,3]", "int4range", Range::from(1..4)).await;
        literal(&client, "(1,3]", "int4range", Range::from(2..4)).await;
        literal(&client, "[3,3)", "int4range", Range::<i32>::Empty).await;
        let row = client
            .query_one("SELECT $1::int4range", (Range::from(1..=3),))
            .await
            .unwrap();
        assert_eq!(row.get::<Range<i32>, _>(0), Range::from(1..4));
        // int4range widens into Range<i64>, never the other way round.
        let row = client.query_one("SELECT '[1,2)'::int4range, '[1,2)'::int8range", ()).await.unwrap();
        assert_eq!(row.get::<Range<i64>, _>(0), Range::from(1i64..2));
        let err = row.try_get::<Range<i32>, _>(1).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Decode);
        assert!(err.to_string().contains("int8range"), "{err}");
        // The server's operators agree with the bounds we sent.
        let row = client
            .query_one(
                "SELECT $1 @> 9, $1 @> 10, lower_inc($1), upper_inf($2::int4range), isempty($3::int4range)",
                (Range::from(1..10), Range::from(0..), Range::<i32>::Empty),
            )
            .await
            .unwrap();
        assert_eq!(
            (0..5).map(|i| row.get::<bool, _>(i)).collect::<Vec<_>>(),
            [true, false, true, true, true]
        );
        // A NULL range.
        let row = client.query_one("SELECT NULL::int4range", ()).await.unwrap();
        assert_eq!(row.get::<Option<Range<i32>>, _>(0), None);
    })
    .await
}

#[tokio::test]
async fn multiranges_both_ways() {
    if server_major() < 14 {
        eprintln!("skipped: multiranges exist since PostgreSQL 14");
        return;
    }
    bounded(async {
        let db = database("rng_multi");
        let client = connect(&db).await;
        round_trip(
            &client,
            "int4multirange",
            Multirange(vec![Range::from(1..3), Range::from(5..7)]),
        )
        .await;
        round_trip(&client, "int4multirange", Multirange::<i32>::default()).await;
        round_trip(
            &client,
            "int8multirange",
            Multirange(vec![Range::from(..0i64), Range::from(10i64..)]),
        )
        .await;
        round_trip(
            &client,
            "int8multirange",
            Multirange(vec![Range::<i64>::unbounded()]),
        )
        .await;
        literal(
            &client,
            "{[1,3), [5,7)}",
            "int4multirange",
            Multirange(vec![Range::from(1..3), Range::from(5..7)]),
        )
        .await;
        literal(
            &client,
            "{}",
            "int4multirange",
            Multirange::<i32>::default(),
        )
        .await;
        // The server merges overlapping ranges and drops empty ones.
        let row = client
            .query_one(
                "SELECT $1::int4multirange",
                (Multirange(vec![
                    Range::from(1..5),
                    Range::from(3..8),
                    Range::Empty,
                ]),),
            )
            .await
            .unwrap();
        assert_eq!(
            row.get::<Multirange<i32>, _>(0),
            Multirange(vec![Range::from(1..8)])
        );
        // A multirange is not an array of ranges, nor the other way round.
        let row = client
            .query_one("SELECT '{}'::int4multirange", ())
            .await
            .unwrap();
        assert!(row.try_get::<Vec<Range<i32>>, _>(0).is_err());
        assert!(row.try_get::<Range<i32>, _>(0).is_err());
    })
    .await
}

#[tokio::test]
async fn arrays_of_ranges() {
    bounded(async {
        let db = database("rng_array");
        let client = connect(&db).await;
        let v = vec![
            Some(Range::from(1..2)),
            None,
            Some(Range::Empty),
            Some(Range::from(..0)),
        ];
        let row = client
            .query_one("SELECT $1::int4range[], $1::int4range[]::text", (&v,))
            .await
            .unwrap();
        assert_eq!(row.get::<Vec<Option<Range<i32>>>, _>(0), v);
        assert_eq!(row.get::<&str, _>(1), r#"{"[1,2)",NULL,empty,"(,0)"}"#);
        let row = client
            .query_one("SELECT ARRAY['[1,2)'::int8range, 'empty']", ())
            .await
            .unwrap();
        assert_eq!(
            row.get::<Vec<Range<i64>>, _>(0),
            [Range::from(1i64..2), Range::Empty]
        );
    })
    .await
}

#[tokio::test]
async fn user_defined_range_over_text() {
    bounded(async {
        let db = database("rng_user");
        let client = connect(&db).await;
        client
            .batch_execute("CREATE TYPE textrange AS RANGE (subtype = text, collation = \"C\")")
            .await
            .unwrap();
        // Read by subtype: the client describes textrange from the catalog.
        let row = client
            .query_one(
                "SELECT '[a b,\"q\"\"x\")'::textrange, '[a b,\"q\"\"x\")'::textrange::text",
                (),
            )
            .await
            .unwrap();
        let r: Range<&str> = row.get(0);
        assert_eq!(r, Range::new(Included("a b"), Excluded("q\"x")));
        assert_eq!(r.to_string(), row.get::<&str, _>(1));
        // Sent as a parameter whose type the server infers from the cast.
        let sent = Range::new(Excluded("a".to_owned()), Unbounded);
        let row = client
            .query_one("SELECT $1::textrange, $1::textrange @> 'b'::text", (&sent,))
            .await
            .unwrap();
        assert_eq!(row.get::<Range<String>, _>(0), sent);
        assert!(row.get::<bool, _>(1));
        // And through a prepared statement, which knows the parameter type.
        let stmt = client
            .prepare("SELECT upper_inf($1::textrange)")
            .await
            .unwrap();
        let row = client
            .query_one(&stmt, (Range::from("x"..),))
            .await
            .unwrap();
        assert!(row.get::<bool, _>(0));
        let err = client
            .query_one(&stmt, (Range::from(1..2),))
            .await
            .unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Encode);
    })
    .await
}

#[tokio::test]
async fn numeric_and_time_ranges() {
    use pgpipe::types::{Date, Numeric, Time, TimestampTz, WithInfinity};
    bounded(async {
        let db = database("rng_time");
        let client = connect(&db).await;
        client.batch_execute("SET TimeZone = 'UTC'").await.unwrap();
        let n = |s: &str| s.parse::<Numeric>().unwrap();
        round_trip(&client, "numrange", Range::new(Included(n("-1.50")), Excluded(n("1e-20")))).await;
        round_trip(&client, "numrange", Range::new(Excluded(n("0")), Included(n("123456789012345678901234567890.5")))).await;
        round_trip(&client, "numrange", Range::<Numeric>::Empty).await;
        literal(&client, "(,2.5]", "numrange", Range::new(Unbounded, Included(n("2.5")))).await;
        // Continuous ranges are not canonicalized.
        literal(&client, "[1.0,1.0]", "numrange", Range::new(Included(n("1.0")), Included(n("1.0")))).await;

        let d = |y, m, day| Date::from_ymd(y, m, day).unwrap();
        // Discrete: [a,b] becomes [a,b+1).
        literal(&client, "[2024-01-01,2024-01-31]", "daterange", Range::from(d(2024, 1, 1)..d(2024, 2, 1))).await;
        round_trip(&client, "daterange", Range::from(d(-4712, 11, 24)..d(5874897, 12, 31))).await;
        round_trip(&client, "daterange", Range::from(d(2000, 1, 1)..)).await;
        // ±infinity bounds are values, unlike unbounded ones.
        let inf: Range<WithInfinity<Date>> = Range::new(
            Included(WithInfinity::NegInfinity),
            Excluded(WithInfinity::Infinity),
        );
        literal(&client, "[-infinity,infinity)", "daterange", inf.clone()).await;
        round_trip(&client, "daterange", inf).await;
        let row = client
            .query_one("SELECT lower_inf('[-infinity,2000-01-01)'::daterange), lower_inf('(,1)'::int4range)", ())
            .await
            .unwrap();
        assert!(!row.get::<bool, _>(0) && row.get::<bool, _>(1));

        let ts = |y, m, day, h| d(y, m, day).and_time(Time::from_hms(h, 0, 0).unwrap()).unwrap();
        round_trip(&client, "tsrange", Range::from(ts(2020, 1, 1, 0)..ts(2020, 1, 1, 12))).await;
        literal(
            &client,
            "[\"2020-01-01 00:00:00\",)",
            "tsrange",
            Range::from(ts(2020, 1, 1, 0)..),
        )
        .await;
        let tz: Range<TimestampTz> = Range::new(
            Excluded(ts(1999, 12, 31, 23).assume_utc()),
            Included(ts(2000, 1, 1, 1).assume_utc()),
        );
        round_trip(&client, "tstzrange", tz.clone()).await;
        let row = client
            .query_one("SELECT '(\"1999-12-31 18:00:00-05\",\"2000-01-01 01:00:00+00\"]'::tstzrange", ())
            .await
            .unwrap();
        assert_eq!(row.get::<Range<TimestampTz>, _>(0), tz);

        // Multiranges over them (PostgreSQL 14+).
        if server_major() >= 14 {
        round_trip(
            &client,
            "datemultirange",
            Multirange(vec![Range::from(d(2020, 1, 1)..d(2020, 2, 1)), Range::from(d(2021, 1, 1)..)]),
        )
        .await;
        round_trip(
            &client,
            "nummultirange",
            Multirange(vec![Range::new(Unbounded, Excluded(n("-1"))), Range::new(Included(n("0.5")), Included(n("0.75")))]),
        )
        .await;
        round_trip(&client, "tstzmultirange", Multirange(vec![tz])).await;
        round_trip(
            &client,
            "tsmultirange",
            Multirange(vec![Range::from(ts(2020, 1, 1, 0)..ts(2020, 1, 1, 1))]),
        )
        .await;
        }

        // The chrono types read the same ranges.
        let row = client
            .query_one("SELECT '[2024-01-01,2024-02-01)'::daterange", ())
            .await
            .unwrap();
        let r: Range<chrono::NaiveDate> = row.get(0);
        assert_eq!(
            r,
            Range::from(
                chrono::NaiveDate::from_ymd_opt(2024, 1, 1).unwrap()
                    ..chrono::NaiveDate::from_ymd_opt(2024, 2, 1).unwrap()
            )
        );
        let row = client.query_one("SELECT $1::daterange::text", (&r,)).await.unwrap();
        assert_eq!(row.get::<&str, _>(0), "[2024-01-01,2024-02-01)");
    })
    .await
}
