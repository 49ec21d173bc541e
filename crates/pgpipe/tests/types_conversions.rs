//! Reading values into the Rust types peers read them into: enum values
//! as strings, exact intervals as `std::time::Duration`, `json` with a NUL
//! back to `json`; against the real server, with the errors for what does
//! not fit.

mod common;

use std::time::Duration;

use common::values::{literal, literal_round_trip, null, round_trip};
use common::{bounded, connect, database};
use pgpipe::types::Interval;
use serde_json::{json, Value};

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
        ] {
            let v: Duration = literal_round_trip(&client, "interval", lit, text, true).await;
            assert_eq!(v, want, "{lit}");
            round_trip(&client, "interval", want, text).await;
        }
        // The longest interval: PostgreSQL 13 and 14 can neither read nor
        // write it as text (its hours field overflows), only in binary.
        let version: i32 = literal(&client, "current_setting('server_version_num')::int").await;
        if version >= 150_000 {
            round_trip(&client, "interval", max, "2562047788:00:54.775807").await;
        } else {
            let back: Duration = client
                .query_one("SELECT $1::interval", (max,))
                .await
                .unwrap()
                .get(0);
            assert_eq!(back, max);
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

/// A `serde_json::Value` holding a NUL, read from a `json` column, goes
/// back to `json` through a prepared statement (its parameter type is the
/// server's); as SQL text it is declared `jsonb`, which cannot hold a NUL,
/// and is refused before sending with an error that says what to do.
#[tokio::test]
async fn json_with_nul_goes_back_to_json() {
    bounded(async {
        let db = database("conv_json_nul");
        let client = connect(&db).await;
        client.execute("CREATE TABLE docs (id int, doc json)", ()).await.unwrap();
        client
            .execute(r#"INSERT INTO docs VALUES (1, '"a\u0000b"'), (2, '{"k\u0000":[1]}')"#, ())
            .await
            .unwrap();
        let values: Vec<Value> = client
            .query("SELECT doc FROM docs ORDER BY id", ())
            .await
            .unwrap()
            .iter()
            .map(|r| r.get(0))
            .collect();
        assert_eq!(values[0], json!("a\u{0}b"));
        assert_eq!(values[1], json!({"k\u{0}": [1]}));

        let check = client
            .prepare("SELECT format('%s', $1::json), $1::json::text = (SELECT doc::text FROM docs WHERE id = $2)")
            .await
            .unwrap();
        let insert = client.prepare("INSERT INTO docs VALUES ($1, $2)").await.unwrap();
        for (i, v) in values.iter().enumerate() {
            let row = client.query_one(&check, (v, i as i32 + 1)).await.unwrap();
            assert!(row.get::<bool, _>(1), "{v} sent back as json");
            client.execute(&insert, (i as i32 + 10, v)).await.unwrap();
        }
        let row = client
            .query_one("SELECT doc::text FROM docs WHERE id = 10", ())
            .await
            .unwrap();
        assert_eq!(row.get::<&str, _>(0), r#""a\u0000b""#);

        // As SQL text: declared jsonb, refused by us (no server error),
        // with the remedy in the message.
        for sql in ["SELECT $1::json", "SELECT $1::jsonb", "INSERT INTO docs VALUES (3, $1)"] {
            let err = client.execute(sql, (&values[0],)).await.unwrap_err();
            let msg = format!("{err:#}");
            assert!(msg.contains("cannot be sent as jsonb") && msg.contains("prepare the statement"), "{sql}: {msg}");
            assert!(err.code().is_none(), "{sql}: refused by the server: {err}");
        }
        // A jsonb parameter cannot hold it either way: the server agrees.
        let err = client
            .execute(r#"SELECT '"a\u0000b"'::jsonb"#, ())
            .await
            .unwrap_err();
        assert_eq!(err.code().map(|c| c.code()), Some("22P05"), "{err}");
        let jsonb = client.prepare("SELECT $1::jsonb").await.unwrap();
        assert!(client.query_one(&jsonb, (&values[0],)).await.unwrap_err().code().is_none());
        // Without a NUL, SQL text works for both (the json one went
        // through jsonb, so it reads back in jsonb's spacing).
        let row = client
            .query_one("SELECT $1::json::text, $1::jsonb::text", (json!({"a": "b"}),))
            .await
            .unwrap();
        assert_eq!(row.get::<&str, _>(0), r#"{"a": "b"}"#);
        assert_eq!(row.get::<&str, _>(1), r#"{"a": "b"}"#);
    })
    .await;
}
