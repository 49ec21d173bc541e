//! Scalar types against the real server: integers, "char", oid, floats,
//! numeric (own type, rust_decimal, bigdecimal), money, text and its
//! relatives (citext, xml, json/jsonb), bytea, uuid, inet/cidr/macaddr,
//! bit strings and hstore. Each is sent as a bound parameter and selected
//! as a literal, with the server's own text rendering compared, including
//! NULL and the edge values issue 5 lists.

mod common;

use std::collections::{BTreeMap, HashMap};
use std::fmt::Debug;
use std::net::IpAddr;

use bigdecimal::BigDecimal;
use bytes::Bytes;
use common::values::{literal, null, round_trip};
use common::{bounded, cluster, connect, database, server_major};
use pgpipe::types::{BitString, Cidr, Inet, Json, MacAddr, MacAddr8, Money, Numeric};
use pgpipe::ErrorKind;
use rust_decimal::Decimal;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use uuid::Uuid;

#[tokio::test]
async fn integers_char_and_oid() {
    bounded(async {
        let db = database("scalar_int");
        let client = connect(&db).await;
        for v in [i16::MIN, -1, 0, i16::MAX] {
            round_trip(&client, "int2", v, &v.to_string()).await;
        }
        for v in [i32::MIN, 0, i32::MAX] {
            round_trip(&client, "int4", v, &v.to_string()).await;
        }
        for v in [i64::MIN, 0, i64::MAX] {
            round_trip(&client, "int8", v, &v.to_string()).await;
        }
        assert_eq!(literal::<i16>(&client, "(-32768)::int2").await, i16::MIN);
        assert_eq!(literal::<i32>(&client, "2147483647::int4").await, i32::MAX);
        assert_eq!(
            literal::<i64>(&client, "'-9223372036854775808'::int8").await,
            i64::MIN
        );

        // oid is unsigned 32-bit.
        for v in [0u32, 1, 2_147_483_648, u32::MAX] {
            round_trip(&client, "oid", v, &v.to_string()).await;
        }
        assert_eq!(literal::<u32>(&client, "4294967295::oid").await, u32::MAX);
        assert_eq!(
            literal::<u32>(&client, "'pg_class'::regclass::oid").await,
            1259
        );

        // "char" is one byte; the server shows bytes >= 128 in octal.
        round_trip(&client, "\"char\"", b'A' as i8, "A").await;
        round_trip(&client, "\"char\"", 0x7fi8, "\u{7f}").await;
        if server_major() >= 15 {
            round_trip(&client, "\"char\"", -128i8, "\\200").await;
            round_trip(&client, "\"char\"", -1i8, "\\377").await;
        } else {
            // Before 15 the server writes such a byte as it is (not UTF-8):
            // compare the binary round trip only.
            for v in [-128i8, -1] {
                let row = client
                    .query_one("SELECT $1::\"char\"", (&v,))
                    .await
                    .unwrap();
                assert_eq!(row.get::<i8, _>(0), v);
            }
        }
        assert_eq!(literal::<i8>(&client, "'z'::\"char\"").await, b'z' as i8);
        if server_major() >= 15 {
            // Octal escapes in "char" input are 15+ too (before, '\\' is read).
            assert_eq!(literal::<i8>(&client, "'\\377'::\"char\"").await, -1);
        }
        assert_eq!(
            literal::<i8>(&client, "typtype FROM pg_type WHERE oid = 'int4'::regtype").await,
            b'b' as i8
        );

        null::<i16>(&client, "int2").await;
        null::<i32>(&client, "int4").await;
        null::<i64>(&client, "int8").await;
        null::<u32>(&client, "oid").await;
        null::<i8>(&client, "\"char\"").await;
    })
    .await;
}

#[tokio::test]
async fn floats_keep_nan_infinities_and_negative_zero() {
    bounded(async {
        let db = database("scalar_float");
        let client = connect(&db).await;
        for (v, text) in [
            (f64::INFINITY, "Infinity"),
            (f64::NEG_INFINITY, "-Infinity"),
            (1.5, "1.5"),
            (f64::MAX, "1.7976931348623157e+308"),
            (f64::MIN_POSITIVE, "2.2250738585072014e-308"),
        ] {
            round_trip(&client, "float8", v, text).await;
        }
        for (v, text) in [
            (f32::INFINITY, "Infinity"),
            (f32::NEG_INFINITY, "-Infinity"),
            (f32::MAX, "3.4028235e+38"),
        ] {
            round_trip(&client, "float4", v, text).await;
        }
        // NaN != NaN and -0.0 == 0.0, so compare bits.
        for v in [f64::NAN, -0.0f64, 0.0] {
            let row = client
                .query_one("SELECT $1::float8, $1::float8::text", (v,))
                .await
                .unwrap();
            assert_eq!(row.get::<f64, _>(0).to_bits(), v.to_bits());
            let want = if v.is_nan() {
                "NaN"
            } else if v.is_sign_negative() {
                "-0"
            } else {
                "0"
            };
            assert_eq!(row.get::<&str, _>(1), want);
        }
        let row = client
            .query_one("SELECT $1::float4, $1::float4::text", (-0.0f32,))
            .await
            .unwrap();
        assert_eq!(row.get::<f32, _>(0).to_bits(), (-0.0f32).to_bits());
        assert_eq!(row.get::<&str, _>(1), "-0");
        assert!(literal::<f64>(&client, "'NaN'::float8").await.is_nan());
        assert!(literal::<f32>(&client, "'NaN'::float4").await.is_nan());
        assert_eq!(
            literal::<f64>(&client, "'-Infinity'::float8").await,
            f64::NEG_INFINITY
        );
        assert_eq!(
            literal::<f32>(&client, "'Infinity'::float4").await,
            f32::INFINITY
        );
        assert_eq!(
            literal::<f64>(&client, "'-0'::float8").await.to_bits(),
            (-0.0f64).to_bits()
        );
        null::<f32>(&client, "float4").await;
        null::<f64>(&client, "float8").await;
    })
    .await;
}

/// numeric has Infinity since PostgreSQL 14; older servers refuse it.
fn has_numeric_infinity() -> bool {
    server_major() >= 14
}

/// The numeric edge values of issue 5, as PostgreSQL writes them (without
/// the infinities on servers that have none).
fn numeric_edges() -> Vec<String> {
    let mut edges = all_numeric_edges();
    if !has_numeric_infinity() {
        edges.retain(|t| !t.contains("Infinity"));
    }
    edges
}

fn all_numeric_edges() -> Vec<String> {
    let mut thousand = String::from("-");
    for i in 0..1000 {
        thousand.push(char::from(b'1' + (i % 9) as u8));
        if i == 399 {
            thousand.push('.');
        }
    }
    vec![
        "NaN".into(),
        "Infinity".into(),
        "-Infinity".into(),
        "0".into(),
        "0.000".into(),
        format!("0.{}1", "0".repeat(129)),
        format!("1{}", "0".repeat(130)),
        thousand,
        "12345.6789".into(),
        "-0.0001".into(),
        "99999999999999999999999999999.99999999999999999999".into(),
        // The largest magnitudes numeric holds.
        format!("{}.{}", "9".repeat(131072), "9".repeat(16383)),
        format!("0.{}1", "0".repeat(16382)),
    ]
}

#[tokio::test]
async fn numeric_edge_values_both_ways() {
    bounded(async {
        let db = database("scalar_numeric");
        let client = connect(&db).await;
        for text in numeric_edges() {
            let value: Numeric = text.parse().unwrap();
            assert_eq!(value.to_string(), text, "Display of our own parse");
            let row = client
                .query_one(
                    "SELECT $1::numeric, $1::numeric::text, $2::numeric, $1::numeric = $2::numeric",
                    (&value, text.as_str()),
                )
                .await
                .unwrap_or_else(|e| panic!("numeric {:.40}: {e}", text));
            let back: Numeric = row.get(0);
            assert_eq!(back.to_string(), text, "parameter round trip");
            assert_eq!(row.get::<&str, _>(1), text, "server's rendering");
            let from_text: Numeric = row.get(2);
            assert_eq!(
                from_text.to_string(),
                text,
                "the server's parse of the text"
            );
            assert!(row.get::<bool, _>(3), "the server sees the same value");
            assert_eq!(back, value);
        }
        // Literals with other spellings read as PostgreSQL normalizes them.
        for (sql, text) in [
            ("'-0.000'::numeric", "0.000"),
            ("'1e-130'::numeric", &format!("0.{}1", "0".repeat(129))),
            ("'1e130'::numeric", &format!("1{}", "0".repeat(130))),
            ("'  +1.50e1 '::numeric", "15.0"),
            (
                "10::numeric ^ 130",
                // PostgreSQL 16 gives an exact power of an integer exponent
                // the base's scale; before, at least 16 fractional digits.
                &if server_major() >= 16 {
                    format!("1{}", "0".repeat(130))
                } else {
                    format!("1{}.0000000000000000", "0".repeat(130))
                },
            ),
            ("1::numeric / 3", "0.33333333333333333333"),
            ("'12.3456'::numeric(6,2)", "12.35"),
        ] {
            let n = literal::<Numeric>(&client, sql).await;
            assert_eq!(n.to_string(), text, "{sql}");
        }
        if has_numeric_infinity() {
            let n = literal::<Numeric>(&client, "'-inf'::numeric").await;
            assert_eq!(n.to_string(), "-Infinity");
        }
        assert!(literal::<Numeric>(&client, "'NaN'::numeric").await.is_nan());
        null::<Numeric>(&client, "numeric").await;
    })
    .await;
}

#[tokio::test]
async fn numeric_is_never_read_as_a_float_or_integer() {
    bounded(async {
        let db = database("scalar_numeric_strict");
        let client = connect(&db).await;
        let row = client.query_one("SELECT 1.5::numeric", ()).await.unwrap();
        for err in [
            row.try_get::<f64, _>(0).unwrap_err(),
            row.try_get::<i64, _>(0).map(|_| 0.0).unwrap_err(),
        ] {
            assert_eq!(err.kind(), ErrorKind::Decode, "{err}");
            assert!(err.to_string().contains("numeric"), "{err}");
        }
        // Nor sent as one: a float parameter for a numeric column is
        // converted by the server, never silently by the client.
        client
            .batch_execute("CREATE TABLE n (v numeric)")
            .await
            .unwrap();
        let stmt = client.prepare("INSERT INTO n VALUES ($1)").await.unwrap();
        let err = client.execute(&stmt, (1.5f64,)).await.unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Encode, "{err}");
        client
            .execute(&stmt, ("2.50".parse::<Numeric>().unwrap(),))
            .await
            .unwrap();
        let n: Numeric = client
            .query_one("SELECT v FROM n", ())
            .await
            .unwrap()
            .get(0);
        assert_eq!(n.to_string(), "2.50");
    })
    .await;
}

#[tokio::test]
async fn numeric_as_rust_decimal_and_bigdecimal() {
    bounded(async {
        let db = database("scalar_decimal");
        let client = connect(&db).await;
        for text in [
            "0",
            "1.50",
            "-123456.789",
            "79228162514264337593543950335",
            "-0.0000000000000000000000000001",
        ] {
            let d = Decimal::from_str_exact(text).unwrap();
            round_trip(&client, "numeric", d, text).await;
            let lit = literal::<Decimal>(&client, &format!("'{text}'::numeric")).await;
            assert_eq!(lit.to_string(), text);
        }
        // Values Decimal cannot hold are errors, not rounded.
        for sql in [
            "'NaN'::numeric",
            "'Infinity'::numeric",
            "'-Infinity'::numeric",
            "'1e-130'::numeric",
            "'1e130'::numeric",
            "'79228162514264337593543950336'::numeric",
            "'1.00000000000000000000000000001'::numeric",
        ]
        .into_iter()
        .filter(|sql| has_numeric_infinity() || !sql.contains("Infinity"))
        {
            let row = client
                .query_one(&format!("SELECT {sql}"), ())
                .await
                .unwrap();
            let err = row.try_get::<Decimal, _>(0).unwrap_err();
            assert_eq!(err.kind(), ErrorKind::Decode, "{sql}: {err}");
            assert!(err.to_string().contains("Decimal"), "{sql}: {err}");
        }

        for text in numeric_edges()
            .into_iter()
            .filter(|t| !t.contains("Infinity") && t != "NaN")
        {
            let big: BigDecimal = text.parse().unwrap();
            let row = client
                .query_one("SELECT $1::numeric, $1::numeric::text", (&big,))
                .await
                .unwrap();
            assert_eq!(row.get::<BigDecimal, _>(0), big);
            assert_eq!(row.get::<&str, _>(1), text);
            let lit = literal::<BigDecimal>(&client, &format!("'{text}'::numeric")).await;
            assert_eq!(lit, big);
            assert_eq!(Numeric::try_from(&lit).unwrap().to_string(), text);
        }
        let row = client.query_one("SELECT 'NaN'::numeric", ()).await.unwrap();
        assert!(row.try_get::<BigDecimal, _>(0).is_err());
        null::<Decimal>(&client, "numeric").await;
        null::<BigDecimal>(&client, "numeric").await;
    })
    .await;
}

#[tokio::test]
async fn money_is_an_integer_count_of_minor_units() {
    bounded(async {
        let db = database("scalar_money");
        let client = connect(&db).await;
        // The text form depends on lc_monetary; C gives "$" and 2 places.
        client.batch_execute("SET lc_monetary = 'C'").await.unwrap();
        round_trip(&client, "money", Money(1050), "$10.50").await;
        round_trip(&client, "money", Money(-1), "-$0.01").await;
        round_trip(&client, "money", Money(0), "$0.00").await;
        round_trip(
            &client,
            "money",
            Money(i64::MAX),
            "$92,233,720,368,547,758.07",
        )
        .await;
        round_trip(
            &client,
            "money",
            Money(i64::MIN),
            "-$92,233,720,368,547,758.08",
        )
        .await;
        assert_eq!(
            literal::<Money>(&client, "'12.34'::money").await,
            Money(1234)
        );
        assert_eq!(literal::<Money>(&client, "'-0.05'::money").await, Money(-5));
        null::<Money>(&client, "money").await;
    })
    .await;
}

/// One character from every Unicode plane (0 to 16), plus a few BMP ones
/// around the surrogate range.
fn every_plane() -> String {
    let mut s = String::from("a\u{7f}\u{80}\u{7ff}\u{800}\u{d7ff}\u{e000}\u{fffd}\u{ffff}");
    for plane in 1..=16u32 {
        for low in [0x0000, 0x0041, 0xfffd, 0xffff] {
            s.push(char::from_u32(plane << 16 | low).unwrap());
        }
    }
    s
}

#[tokio::test]
async fn text_edge_values() {
    bounded(async {
        let db = database("scalar_text");
        let client = connect(&db).await;
        let planes = every_plane();
        for ty in ["text", "varchar", "name"] {
            round_trip(&client, ty, String::new(), "").await;
            round_trip(&client, ty, "plain".to_string(), "plain").await;
        }
        round_trip(&client, "text", planes.clone(), &planes).await;
        let row = client
            .query_one("SELECT $1::text = $2, length($1::text)", (&planes, planes.as_str()))
            .await
            .unwrap();
        assert!(row.get::<bool, _>(0));
        assert_eq!(row.get::<i32, _>(1) as usize, planes.chars().count());
        // The server builds the same string from code points.
        let codes: Vec<String> = planes.chars().map(|c| u32::from(c).to_string()).collect();
        let from_server: String = literal(
            &client,
            &format!(
                "string_agg(chr(c), '' ORDER BY o) FROM unnest(ARRAY[{}]) WITH ORDINALITY AS t(c, o)",
                codes.join(",")
            ),
        )
        .await;
        assert_eq!(from_server, planes);

        // 10 MB both ways; borrowed decode of a large value.
        let huge = "0123456789abcdef".repeat(10 * 1024 * 1024 / 16);
        let row = client
            .query_one("SELECT $1::text, length($1::text), md5($1::text)", (&huge,))
            .await
            .unwrap();
        assert_eq!(row.get::<&str, _>(0), huge);
        assert_eq!(row.get::<i32, _>(1) as usize, huge.len());
        let huge_from_server: String = literal(
            &client,
            "repeat('0123456789abcdef', 10 * 1024 * 1024 / 16)",
        )
        .await;
        assert_eq!(huge_from_server, huge);

        // bpchar pads to its length.
        assert_eq!(literal::<String>(&client, "'ab'::char(4)").await, "ab  ");
        round_trip(&client, "bpchar", "x y".to_string(), "x y").await;
        assert_eq!(literal::<String>(&client, "'é'::varchar(3)").await, "é");
        for ty in ["text", "varchar", "bpchar", "name"] {
            null::<String>(&client, ty).await;
        }
    })
    .await;
}

#[tokio::test]
async fn bytea_all_byte_values() {
    bounded(async {
        let db = database("scalar_bytea");
        let client = connect(&db).await;
        let all: Vec<u8> = (0..=255).collect();
        let hex: String = std::iter::once("\\x".to_string())
            .chain(all.iter().map(|b| format!("{b:02x}")))
            .collect();
        round_trip(&client, "bytea", all.clone(), &hex).await;
        round_trip(&client, "bytea", Bytes::from(all.clone()), &hex).await;
        round_trip(&client, "bytea", Vec::<u8>::new(), "\\x").await;
        let row = client
            .query_one("SELECT $1::bytea, length($1::bytea)", (all.as_slice(),))
            .await
            .unwrap();
        assert_eq!(row.get::<&[u8], _>(0), &all[..]);
        assert_eq!(row.get::<i32, _>(1), 256);
        let lit: Vec<u8> = literal(
            &client,
            "string_agg(set_byte('\\x00'::bytea, 0, b), '' ORDER BY b) FROM generate_series(0, 255) b",
        )
        .await;
        assert_eq!(lit, all);
        assert_eq!(literal::<Bytes>(&client, &format!("'{hex}'::bytea")).await, all);
        null::<Vec<u8>>(&client, "bytea").await;
        null::<Bytes>(&client, "bytea").await;
    })
    .await;
}

#[tokio::test]
async fn bool_both_ways() {
    bounded(async {
        let db = database("scalar_bool");
        let client = connect(&db).await;
        round_trip(&client, "bool", true, "t").await;
        round_trip(&client, "bool", false, "f").await;
        assert!(literal::<bool>(&client, "'yes'::bool").await);
        null::<bool>(&client, "bool").await;
    })
    .await;
}

#[tokio::test]
async fn uuid_both_ways() {
    bounded(async {
        let db = database("scalar_uuid");
        let client = connect(&db).await;
        for s in [
            "00000000-0000-0000-0000-000000000000",
            "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11",
            "ffffffff-ffff-ffff-ffff-ffffffffffff",
        ] {
            round_trip(&client, "uuid", Uuid::parse_str(s).unwrap(), s).await;
        }
        assert_eq!(
            literal::<Uuid>(&client, "'{A0EEBC99-9C0B4EF8-BB6D6BB9-BD380A11}'::uuid").await,
            Uuid::parse_str("a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11").unwrap()
        );
        let random: Uuid = literal(&client, "gen_random_uuid()").await;
        assert_eq!(random.get_version_num(), 4);
        null::<Uuid>(&client, "uuid").await;
    })
    .await;
}

#[derive(Debug, PartialEq, Serialize, Deserialize)]
struct Attach {
    filename: String,
    size: i64,
    tags: Vec<String>,
}

#[tokio::test]
async fn json_and_jsonb_both_ways() {
    bounded(async {
        let db = database("scalar_json");
        let client = connect(&db).await;
        let doc = json!({"a": [1, 2.5, null, true], "uni": "é\u{1F600}", "nested": {"k": "v"}});
        for ty in ["json", "jsonb"] {
            let row = client
                .query_one(&format!("SELECT $1::{ty}, $1::{ty} -> 'uni'"), (&doc,))
                .await
                .unwrap();
            assert_eq!(row.get::<Value, _>(0), doc, "{ty}");
            assert_eq!(row.get::<Value, _>(1), json!("é\u{1F600}"), "{ty}");
        }
        let attach = Attach {
            filename: "a.txt".into(),
            size: 3,
            tags: vec!["x".into()],
        };
        for ty in ["json", "jsonb"] {
            let row = client
                .query_one(
                    &format!("SELECT $1::{ty}, $1::{ty} ->> 'filename'"),
                    (Json(&attach),),
                )
                .await
                .unwrap();
            assert_eq!(row.get::<Json<Attach>, _>(0).0, attach);
            assert_eq!(row.get::<&str, _>(1), "a.txt");
        }
        // Raw text passes through unparsed; jsonb normalizes it.
        let raw = r#"{"b": 1,   "a": [true]}"#;
        assert_eq!(
            literal::<String>(&client, &format!("'{raw}'::json")).await,
            raw
        );
        assert_eq!(
            literal::<String>(&client, &format!("'{raw}'::jsonb")).await,
            r#"{"a": [true], "b": 1}"#
        );
        let row = client
            .query_one(
                "SELECT $1::jsonb, $1::jsonb::text, $2::json",
                (raw, raw.to_string()),
            )
            .await
            .unwrap();
        assert_eq!(row.get::<String, _>(0), r#"{"a": [true], "b": 1}"#);
        assert_eq!(row.get::<&str, _>(1), r#"{"a": [true], "b": 1}"#);
        assert_eq!(row.get::<&str, _>(2), raw);
        assert_eq!(
            literal::<Value>(&client, "'[1, \"x\"]'::jsonb").await,
            json!([1, "x"])
        );
        assert_eq!(
            literal::<Json<Vec<i32>>>(&client, "'[1,2]'::json").await.0,
            [1, 2]
        );

        // Where the server decides the parameter is jsonb (or json), a
        // String and a Value are sent in that type's binary format.
        client
            .batch_execute("CREATE TABLE docs (j jsonb, t json)")
            .await
            .unwrap();
        let insert = client
            .prepare("INSERT INTO docs (j, t) VALUES ($1, $2)")
            .await
            .unwrap();
        assert_eq!(insert.params(), [pgpipe::Type::JSONB, pgpipe::Type::JSON]);
        client
            .execute(&insert, (raw.to_string(), raw))
            .await
            .unwrap();
        client.execute(&insert, (&doc, &doc)).await.unwrap();
        client
            .execute(&insert, (Json(&attach), Json(&attach)))
            .await
            .unwrap();
        // Declared jsonb, stored into json through the assignment cast.
        client
            .execute("INSERT INTO docs (j, t) VALUES ($1, $2)", (&doc, &doc))
            .await
            .unwrap();
        let rows = client
            .query("SELECT j, t, j::text FROM docs ORDER BY ctid", ())
            .await
            .unwrap();
        assert_eq!(rows.len(), 4);
        assert_eq!(rows[0].get::<&str, _>(0), r#"{"a": [true], "b": 1}"#);
        assert_eq!(rows[0].get::<&str, _>(1), raw);
        assert_eq!(rows[1].get::<Value, _>(0), doc);
        assert_eq!(rows[1].get::<Value, _>(1), doc);
        assert_eq!(rows[2].get::<Json<Attach>, _>(0).0, attach);
        assert_eq!(rows[2].get::<Json<Attach>, _>(1).0, attach);
        assert_eq!(rows[3].get::<Value, _>(1), doc);

        // A JSON document that does not fit the target is a decode error.
        let row = client
            .query_one("SELECT '{\"size\": \"big\"}'::jsonb", ())
            .await
            .unwrap();
        let err = row.try_get::<Json<Attach>, _>(0).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Decode, "{err}");
        null::<Value>(&client, "jsonb").await;
        null::<Value>(&client, "json").await;
        null::<Json<Attach>>(&client, "jsonb").await;
    })
    .await;
}

#[tokio::test]
async fn xml_as_text() {
    bounded(async {
        let db = database("scalar_xml");
        let client = connect(&db).await;
        let doc = "<a x=\"1\">é<b/></a>";
        round_trip(&client, "xml", doc.to_string(), doc).await;
        assert_eq!(
            literal::<String>(&client, &format!("'{doc}'::xml")).await,
            doc
        );
        assert_eq!(
            literal::<String>(&client, "xmlelement(name p, 'x&y')").await,
            "<p>x&amp;y</p>"
        );
        // Sent where the server expects xml (the parameter type is xml).
        client
            .batch_execute("CREATE TABLE x (d xml)")
            .await
            .unwrap();
        let insert = client.prepare("INSERT INTO x VALUES ($1)").await.unwrap();
        assert_eq!(insert.params(), [pgpipe::Type::XML]);
        client.execute(&insert, (doc,)).await.unwrap();
        let err = client.execute(&insert, ("<unclosed>",)).await.unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Db, "{err}");
        let back: String = client
            .query_one("SELECT d FROM x", ())
            .await
            .unwrap()
            .get(0);
        assert_eq!(back, doc);
        null::<String>(&client, "xml").await;
    })
    .await;
}

#[tokio::test]
async fn inet_cidr_and_mac_addresses() {
    bounded(async {
        let db = database("scalar_net");
        let client = connect(&db).await;
        for s in [
            "127.0.0.1",
            "255.255.255.255",
            "::",
            "::1",
            "2001:db8::1:0:0:1",
            "::ffff:1.2.3.4",
        ] {
            let ip: IpAddr = s.parse().unwrap();
            round_trip(&client, "inet", ip, s).await;
            let cidr_text = format!("{s}/{}", if ip.is_ipv4() { 32 } else { 128 });
            round_trip(&client, "cidr", ip, &cidr_text).await;
            assert_eq!(
                literal::<IpAddr>(&client, &format!("'{s}'::inet")).await,
                ip
            );
        }
        for s in [
            "192.168.0.1/24",
            "10.0.0.0/8",
            "0.0.0.0/0",
            "fe80::1/10",
            "::2:3/100",
            "1:0:0:1:0:0:0:1",
            "::1.2.3.4",
            "1.2.3.4",
        ] {
            let inet: Inet = s.parse().unwrap();
            let text = inet.to_string();
            round_trip(&client, "inet", inet, &text).await;
            assert_eq!(
                literal::<Inet>(&client, &format!("'{s}'::inet")).await,
                inet
            );
            let server: String = literal(&client, &format!("format('%s', '{s}'::inet)")).await;
            assert_eq!(text, server, "Display of {s}");
        }
        for s in [
            "10.0.0.0/8",
            "192.168.0.0/16",
            "0.0.0.0/0",
            "2001:db8::/32",
            "::/0",
            "1.2.3.4/32",
        ] {
            let cidr: Cidr = s.parse().unwrap();
            round_trip(&client, "cidr", cidr, s).await;
            assert_eq!(
                literal::<Cidr>(&client, &format!("'{s}'::cidr")).await,
                cidr
            );
            // Every cidr is an inet.
            assert_eq!(
                literal::<Inet>(&client, &format!("'{s}'::cidr")).await,
                Inet::from(cidr)
            );
        }
        // The server's classful guess for a bare IPv4 network.
        assert_eq!(
            literal::<Cidr>(&client, "'192.168.1'::cidr")
                .await
                .to_string(),
            "192.168.1.0/24"
        );
        // A network is not a host address.
        let row = client
            .query_one("SELECT '10.0.0.0/8'::cidr", ())
            .await
            .unwrap();
        let err = row.try_get::<IpAddr, _>(0).unwrap_err();
        assert!(err.to_string().contains("network prefix"), "{err}");
        // An inet column is not read as cidr.
        let row = client
            .query_one("SELECT '10.0.0.1/8'::inet", ())
            .await
            .unwrap();
        assert_eq!(
            row.try_get::<Cidr, _>(0).unwrap_err().kind(),
            ErrorKind::Decode
        );

        let mac = MacAddr([0x08, 0x00, 0x2b, 0x01, 0x02, 0x03]);
        round_trip(&client, "macaddr", mac, "08:00:2b:01:02:03").await;
        round_trip(&client, "macaddr", MacAddr([0xff; 6]), "ff:ff:ff:ff:ff:ff").await;
        assert_eq!(
            literal::<MacAddr>(&client, "'0800.2b01.0203'::macaddr").await,
            mac
        );
        let mac8 = MacAddr8([0x08, 0x00, 0x2b, 0x01, 0x02, 0x03, 0x04, 0x05]);
        round_trip(&client, "macaddr8", mac8, "08:00:2b:01:02:03:04:05").await;
        assert_eq!(
            literal::<MacAddr8>(&client, "'08:00:2b:01:02:03'::macaddr8").await,
            MacAddr8::from(mac)
        );
        assert_eq!(
            literal::<MacAddr8>(&client, "'08:00:2b:01:02:03'::macaddr::macaddr8").await,
            MacAddr8::from(mac)
        );
        null::<IpAddr>(&client, "inet").await;
        null::<Inet>(&client, "inet").await;
        null::<Cidr>(&client, "cidr").await;
        null::<MacAddr>(&client, "macaddr").await;
        null::<MacAddr8>(&client, "macaddr8").await;
    })
    .await;
}

#[tokio::test]
async fn bit_strings() {
    bounded(async {
        let db = database("scalar_bit");
        let client = connect(&db).await;
        for s in ["", "1", "10110", "11111111", "101100111", &"01".repeat(500)] {
            let b: BitString = s.parse().unwrap();
            round_trip(&client, "varbit", b.clone(), s).await;
            assert_eq!(
                literal::<BitString>(&client, &format!("B'{s}'::varbit")).await,
                b
            );
        }
        let b: BitString = "10110".parse().unwrap();
        round_trip(&client, "bit(5)", b.clone(), "10110").await;
        assert_eq!(literal::<BitString>(&client, "B'10110'").await, b);
        assert_eq!(
            literal::<BitString>(&client, "X'F0'::bit(8)")
                .await
                .to_string(),
            "11110000"
        );
        assert_eq!(
            literal::<BitString>(&client, "B'101'::bit(5)")
                .await
                .to_string(),
            "10100"
        );
        // The server checks a fixed length.
        client
            .batch_execute("CREATE TABLE bits (b bit(3))")
            .await
            .unwrap();
        let insert = client
            .prepare("INSERT INTO bits VALUES ($1)")
            .await
            .unwrap();
        client
            .execute(&insert, ("101".parse::<BitString>().unwrap(),))
            .await
            .unwrap();
        let err = client
            .execute(&insert, ("1011".parse::<BitString>().unwrap(),))
            .await
            .unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Db, "{err}");
        null::<BitString>(&client, "varbit").await;
        null::<BitString>(&client, "bit").await;
    })
    .await;
}

#[tokio::test]
async fn hstore_found_by_name() {
    bounded(async {
        let db = database("scalar_hstore");
        cluster()
            .execute(db.name(), "CREATE EXTENSION hstore")
            .expect("the hstore extension is installed with PostgreSQL's contrib modules");
        let client = connect(&db).await;
        let mut map: HashMap<String, Option<String>> = HashMap::new();
        map.insert("a".into(), Some("1".into()));
        map.insert("null".into(), None);
        map.insert("é \"quoted\"".into(), Some("x\\y => z".into()));
        map.insert(String::new(), Some(String::new()));
        let row = client
            .query_one("SELECT $1::hstore, $1::hstore = $2::hstore", (&map, "\"a\"=>\"1\", \"null\"=>NULL, \"é \\\"quoted\\\"\"=>\"x\\\\y => z\", \"\"=>\"\""))
            .await
            .unwrap();
        assert_eq!(row.get::<HashMap<String, Option<String>>, _>(0), map);
        assert!(row.get::<bool, _>(1), "the server parsed the same map");
        let ordered: BTreeMap<String, Option<String>> = map.clone().into_iter().collect();
        let row = client
            .query_one("SELECT $1::hstore, $1::hstore::text", (&ordered,))
            .await
            .unwrap();
        assert_eq!(row.get::<BTreeMap<String, Option<String>>, _>(0), ordered);
        let lit: BTreeMap<String, Option<String>> =
            literal(&client, "'k=>v, n=>NULL, \"sp ace\"=>\"\"'::hstore").await;
        assert_eq!(lit.len(), 3);
        assert_eq!(lit["k"].as_deref(), Some("v"));
        assert_eq!(lit["n"], None);
        assert_eq!(lit["sp ace"].as_deref(), Some(""));
        let borrowed = client
            .query_one("SELECT 'k=>v'::hstore", ())
            .await
            .unwrap();
        assert_eq!(
            borrowed.get::<BTreeMap<&str, Option<&str>>, _>(0),
            BTreeMap::from([("k", Some("v"))])
        );
        // Empty map, and a table column where the server infers hstore.
        let empty: HashMap<String, Option<String>> = HashMap::new();
        round_trip(&client, "hstore", empty, "").await;
        client
            .batch_execute("CREATE TABLE h (m hstore)")
            .await
            .unwrap();
        client
            .execute("INSERT INTO h VALUES ($1)", (&map,))
            .await
            .unwrap();
        let back: HashMap<String, Option<String>> = client
            .query_one("SELECT m FROM h", ())
            .await
            .unwrap()
            .get(0);
        assert_eq!(back, map);
        null::<HashMap<String, Option<String>>>(&client, "hstore").await;
    })
    .await;
}

#[tokio::test]
async fn citext_as_a_string() {
    bounded(async {
        let db = database("scalar_citext");
        cluster()
            .execute(db.name(), "CREATE EXTENSION citext")
            .expect("the citext extension is installed with PostgreSQL's contrib modules");
        let client = connect(&db).await;
        round_trip(&client, "citext", "MiXeD é".to_string(), "MiXeD é").await;
        let row = client
            .query_one(
                "SELECT $1::citext = 'mixed é'::citext, 'AbC'::citext",
                ("MIXED é",),
            )
            .await
            .unwrap();
        assert!(row.get::<bool, _>(0));
        assert_eq!(row.get::<&str, _>(1), "AbC");
        client
            .batch_execute("CREATE TABLE users (email citext PRIMARY KEY)")
            .await
            .unwrap();
        let insert = client
            .prepare("INSERT INTO users VALUES ($1)")
            .await
            .unwrap();
        assert!(
            insert.params()[0].is_named("citext"),
            "{:?}",
            insert.params()
        );
        client.execute(&insert, ("Bob@Example.com",)).await.unwrap();
        let email: String = client
            .query_one(
                "SELECT email FROM users WHERE email = $1::citext",
                ("bob@example.COM",),
            )
            .await
            .unwrap()
            .get(0);
        assert_eq!(email, "Bob@Example.com");
        null::<String>(&client, "citext").await;
    })
    .await;
}
