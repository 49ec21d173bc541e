//! Reading values into the Rust types peers read them into: enum values
//! as strings, exact intervals as `std::time::Duration`; against the real
//! server, with the errors for what does not fit.

mod common;

use std::time::Duration;

use common::values::{literal, literal_round_trip, null, round_trip};
use common::{bounded, connect, database};
use pgpipe::types::Interval;

#[tokio::test]
async fn enums_read_and_sent_as_strings() {
    bounded(async {
        let db = database("conv_enum");
        let client = connect(&db).await;
        client
            .execute(
                "CREATE TYPE mood AS ENUM ('sad', 'ok', 'happy', 'très bien')",
                (),
            )
            .await
            .unwrap();
        client
            .execute("CREATE TABLE diary (day int, mood mood, moods mood[])", ())
            .await
            .unwrap();
        client
            .execute(
                "INSERT INTO diary VALUES (1, 'ok', '{sad,happy}'), (2, NULL, '{}')",
                (),
            )
            .await
            .unwrap();
        // The first, unprepared read of the column: its type is looked up
        // in the catalog before the row is read.
        let row = client
            .query_one("SELECT mood, moods FROM diary WHERE day = 1", ())
            .await
            .unwrap();
        assert_eq!(row.get::<&str, _>(0), "ok");
        assert_eq!(row.get::<String, _>(0), "ok");
        assert_eq!(row.get::<Vec<String>, _>(1), ["sad", "happy"]);
        let row = client
            .query_one("SELECT mood FROM diary WHERE day = 2", ())
            .await
            .unwrap();
        assert_eq!(row.get::<Option<String>, _>(0), None);

        for label in ["sad", "happy", "très bien"] {
            let v: String =
                literal_round_trip(&client, "mood", &format!("'{label}'"), label, true).await;
            assert_eq!(v, label);
            // As SQL text the string is sent as text and cast.
            round_trip(&client, "mood", label.to_owned(), label).await;
        }
        // A prepared statement's enum parameter takes a string; the server
        // checks the label.
        let update = client
            .prepare("UPDATE diary SET mood = $1 WHERE day = $2")
            .await
            .unwrap();
        client.execute(&update, ("happy", 2i32)).await.unwrap();
        assert_eq!(
            literal::<String>(&client, "mood FROM diary WHERE day = 2").await,
            "happy"
        );
        let err = client.execute(&update, ("meh", 2i32)).await.unwrap_err();
        assert!(
            err.to_string()
                .contains("invalid input value for enum mood"),
            "{err}"
        );
        null::<String>(&client, "mood").await;

        // Only enums: other user-defined types are still refused as text.
        client
            .execute("CREATE TYPE pair AS (a int, b int)", ())
            .await
            .unwrap();
        let row = client
            .query_one("SELECT ROW(1, 2)::pair", ())
            .await
            .unwrap();
        assert!(row.try_get::<String, _>(0).is_err());
    })
    .await;
}

#[tokio::test]
async fn exact_intervals_as_durations() {
    bounded(async {
        let db = database("conv_duration");
        let client = connect(&db).await;
        let max = Duration::from_micros(i64::MAX as u64);
        for (lit, text, want) in [
            ("'0'", "00:00:00", Duration::ZERO),
            ("'1.5 seconds'", "00:00:01.5", Duration::from_millis(1500)),
            ("'0.000001 s'", "00:00:00.000001", Duration::from_micros(1)),
            ("'36 hours'", "36:00:00", Duration::from_secs(36 * 3600)),
            ("'2562047788:00:54.775807'", "2562047788:00:54.775807", max),
        ] {
            let v: Duration = literal_round_trip(&client, "interval", lit, text, true).await;
            assert_eq!(v, want, "{lit}");
            round_trip(&client, "interval", want, text).await;
        }
        // 24 hours stays 24 hours (not a day: a day is not always 24 hours).
        let row = client
            .query_one(
                "SELECT $1::interval = '1 day', format('%s', $1::interval)",
                (Duration::from_secs(86_400),),
            )
            .await
            .unwrap();
        assert!(row.get::<bool, _>(0), "equal by PostgreSQL's comparison");
        assert_eq!(row.get::<&str, _>(1), "24:00:00");
        // Sub-microsecond digits are dropped, as for timestamps.
        let back = client
            .query_one("SELECT $1::interval", (Duration::new(1, 999),))
            .await
            .unwrap()
            .get::<Duration, _>(0);
        assert_eq!(back, Duration::from_secs(1));

        // What a Duration cannot hold is an error naming the reason.
        for (lit, why) in [
            ("'1 day'", "months or days"),
            ("'1 mon'", "months or days"),
            ("'1 day -24 hours'", "months or days"),
            ("'-1 second'", "negative"),
        ] {
            let row = client
                .query_one(&format!("SELECT {lit}::interval"), ())
                .await
                .unwrap();
            let err = row.try_get::<Duration, _>(0).unwrap_err();
            assert!(format!("{err:#}").contains(why), "{lit}: {err:#}");
            let _: Interval = row.get(0);
        }
        let err = client
            .query_one("SELECT $1::interval", (max + Duration::from_micros(1),))
            .await
            .unwrap_err();
        assert!(
            format!("{err:#}").contains("longer than a PostgreSQL interval"),
            "{err:#}"
        );

        let all = vec![Duration::ZERO, Duration::from_secs(59)];
        let row = client
            .query_one("SELECT $1::interval[], $1::interval[]::text", (&all,))
            .await
            .unwrap();
        assert_eq!(row.get::<Vec<Duration>, _>(0), all);
        assert_eq!(row.get::<&str, _>(1), "{00:00:00,00:00:59}");
        null::<Duration>(&client, "interval").await;
    })
    .await;
}
