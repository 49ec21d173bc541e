//! Simple and extended queries, parameters and results, NULLs, row counts,
//! prepared statements.

mod common;

use common::{bounded, connect, database};
use pgpipe::{Encode, ErrorKind, SimpleQueryMessage, Type};

#[tokio::test]
async fn simple_query_runs_several_statements_with_text_results() {
    bounded(async {
        let db = database("simple");
        let client = connect(&db).await;
        let msgs = client
            .simple_query(
                "CREATE TABLE t (id int, name text);
                 INSERT INTO t VALUES (1, 'one'), (2, NULL);
                 SELECT id, name FROM t ORDER BY id;
                 SELECT 'x' AS only",
            )
            .await
            .unwrap();
        let rows: Vec<_> = msgs
            .iter()
            .filter_map(|m| match m {
                SimpleQueryMessage::Row(r) => Some(r),
                _ => None,
            })
            .collect();
        assert_eq!(rows.len(), 3);
        assert_eq!(rows[0].get("id"), Some("1"));
        assert_eq!(rows[0].get("name"), Some("one"));
        assert_eq!(rows[1].get(1), None);
        assert_eq!(rows[2].get("only"), Some("x"));
        let counts: Vec<u64> = msgs
            .iter()
            .filter_map(|m| match m {
                SimpleQueryMessage::CommandComplete(n) => Some(*n),
                _ => None,
            })
            .collect();
        assert_eq!(counts, vec![0, 2, 2, 1]);
        assert!(rows[0].try_get("missing").is_err());

        // batch_execute stops at the first error and reports it.
        let err = client
            .batch_execute("SELECT 1; SELECT * FROM nope; SELECT 2")
            .await
            .unwrap_err();
        assert_eq!(err.code().map(|c| c.code()), Some("42P01"));
        client.batch_execute("").await.unwrap();
    })
    .await
}

#[tokio::test]
async fn extended_query_with_binary_parameters_and_results() {
    bounded(async {
        let db = database("extended");
        let client = connect(&db).await;
        let row = client
            .query_one(
                "SELECT $1::bool, $2::int2, $3::int4, $4::int8, $5::float4, $6::float8, $7::text, $8::bytea, $9::varchar",
                (true, i16::MIN, i32::MAX, i64::MIN, 1.5f32, f64::NEG_INFINITY, "héllo ☃", vec![0u8, 255, 7], "v"),
            )
            .await
            .unwrap();
        assert!(row.get::<bool, _>(0));
        assert_eq!(row.get::<i16, _>(1), i16::MIN);
        assert_eq!(row.get::<i32, _>(2), i32::MAX);
        assert_eq!(row.get::<i64, _>(3), i64::MIN);
        assert_eq!(row.get::<f32, _>(4), 1.5);
        assert_eq!(row.get::<f64, _>(5), f64::NEG_INFINITY);
        assert_eq!(row.get::<&str, _>(6), "héllo ☃");
        assert_eq!(row.get::<Vec<u8>, _>(7), vec![0, 255, 7]);
        assert_eq!(row.get::<String, _>(8), "v");
        assert_eq!(row.columns()[2].type_(), &Type::INT4);

        let nan: f64 = client.query_one("SELECT 'NaN'::float8", ()).await.unwrap().get(0);
        assert!(nan.is_nan());

        // Runtime-built parameter lists.
        let params: Vec<&(dyn Encode + Sync)> = vec![&3i32, &"three"];
        let row = client.query_one("SELECT $1::int4 * 2, $2 || '!'", params).await.unwrap();
        assert_eq!(row.get::<i32, _>(0), 6);
        assert_eq!(row.get::<&str, _>(1), "three!");
    })
    .await
}

#[tokio::test]
async fn null_in_and_out() {
    bounded(async {
        let db = database("nulls");
        let client = connect(&db).await;
        client
            .batch_execute("CREATE TABLE n (a int4, b text)")
            .await
            .unwrap();
        client
            .execute("INSERT INTO n VALUES ($1, $2)", (None::<i32>, Some("x")))
            .await
            .unwrap();
        let row = client
            .query_one("SELECT a, b, a IS NULL FROM n", ())
            .await
            .unwrap();
        assert_eq!(row.get::<Option<i32>, _>("a"), None);
        assert_eq!(row.get::<Option<&str>, _>("b"), Some("x"));
        assert!(row.get::<bool, _>(2));
        let err = row.try_get::<i32, _>("a").unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Decode);
        assert!(err.to_string().contains("NULL"), "{err}");
    })
    .await
}

#[tokio::test]
async fn execute_returns_affected_rows() {
    bounded(async {
        let db = database("execute");
        let client = connect(&db).await;
        assert_eq!(
            client
                .execute("CREATE TABLE e (id int8)", ())
                .await
                .unwrap(),
            0
        );
        let n = client
            .execute(
                "INSERT INTO e SELECT g FROM generate_series(1, $1::int8) g",
                (25i64,),
            )
            .await
            .unwrap();
        assert_eq!(n, 25);
        assert_eq!(
            client
                .execute("UPDATE e SET id = id + 1 WHERE id <= $1", (10i64,))
                .await
                .unwrap(),
            10
        );
        assert_eq!(
            client
                .execute("DELETE FROM e WHERE id > $1", (20i64,))
                .await
                .unwrap(),
            5
        );
        assert_eq!(client.execute("SELECT * FROM e", ()).await.unwrap(), 20);
        assert_eq!(client.pending_requests(), 0);
    })
    .await
}

#[tokio::test]
async fn query_one_and_query_opt_check_the_row_count() {
    bounded(async {
        let db = database("rowcount");
        let client = connect(&db).await;
        let err = client
            .query_one("SELECT 1 WHERE false", ())
            .await
            .unwrap_err();
        assert_eq!(err.kind(), ErrorKind::RowCount);
        assert!(err.to_string().contains("returned 0"), "{err}");
        let err = client
            .query_one("SELECT * FROM generate_series(1, 2)", ())
            .await
            .unwrap_err();
        assert_eq!(err.kind(), ErrorKind::RowCount);
        assert!(err.to_string().contains("returned 2"), "{err}");
        assert!(client
            .query_opt("SELECT 1 WHERE false", ())
            .await
            .unwrap()
            .is_none());
        assert!(client.query_opt("SELECT 1", ()).await.unwrap().is_some());
        // The one row kept carries its columns, by name too, from the
        // statement's first run (described then) and from the cache after.
        for _ in 0..2 {
            let row = client
                .query_one("SELECT 5::int4 AS five", ())
                .await
                .unwrap();
            assert_eq!(row.get::<i32, _>("five"), 5);
            let row = client.query_opt("SELECT 6::int4 AS six", ()).await.unwrap();
            assert_eq!(row.unwrap().get::<i32, _>("six"), 6);
        }
        let err = client
            .query_opt("SELECT * FROM generate_series(1, 3)", ())
            .await
            .unwrap_err();
        assert_eq!(err.kind(), ErrorKind::RowCount);
    })
    .await
}

#[tokio::test]
async fn columns_by_name_and_type_mismatches() {
    bounded(async {
        let db = database("columns");
        let client = connect(&db).await;
        let row = client
            .query_one("SELECT 1::int8 AS big, 'x'::text AS t", ())
            .await
            .unwrap();
        assert_eq!(row.get::<i64, _>("big"), 1);
        let err = row.try_get::<i32, _>("big").unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Decode);
        let msg = err.to_string();
        assert!(
            msg.contains("int8") && msg.contains("i32") && msg.contains("big"),
            "{msg}"
        );
        let err = row.try_get::<i32, _>("t").unwrap_err();
        assert!(err.to_string().contains("text"), "{err}");
        let err = row.try_get::<i32, _>("nope").unwrap_err();
        assert_eq!(err.kind(), ErrorKind::ColumnNotFound);
        assert!(err.to_string().contains("nope"), "{err}");
        let err = row.try_get::<i32, _>(7).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::ColumnNotFound);
    })
    .await
}

#[tokio::test]
async fn wrong_parameter_count_is_a_clear_error() {
    bounded(async {
        let db = database("paramcount");
        let client = connect(&db).await;
        let err = client
            .query("SELECT $1::int4 + $2::int4", (1i32,))
            .await
            .unwrap_err();
        assert_eq!(err.kind(), ErrorKind::ParameterCount, "{err}");
        assert!(err.to_string().contains("parameters"), "{err}");

        let stmt = client.prepare("SELECT $1::int4 + $2::int4").await.unwrap();
        let err = client.query(&stmt, (1i32,)).await.unwrap_err();
        assert_eq!(err.kind(), ErrorKind::ParameterCount);
        assert!(
            err.to_string()
                .contains("takes 2 parameter(s) but 1 were given"),
            "{err}"
        );
        // The connection is fine afterwards.
        let row = client.query_one(&stmt, (1i32, 2i32)).await.unwrap();
        assert_eq!(row.get::<i32, _>(0), 3);
    })
    .await
}

#[tokio::test]
async fn prepared_statements_know_their_types_and_check_parameters() {
    bounded(async {
        let db = database("prepared");
        let client = connect(&db).await;
        let stmt = client
            .prepare("SELECT $1::int8 AS id, $2::text AS name")
            .await
            .unwrap();
        assert_eq!(stmt.params(), &[Type::INT8, Type::TEXT]);
        assert_eq!(stmt.columns()[1].name(), "name");
        for i in 0..3i64 {
            let row = client.query_one(&stmt, (i, "n")).await.unwrap();
            assert_eq!(row.get::<i64, _>("id"), i);
        }
        let err = client.query(&stmt, (1i32, "n")).await.unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Encode);
        assert!(
            err.to_string().contains("$1") && err.to_string().contains("int8"),
            "{err}"
        );

        let typed = client
            .prepare_typed("SELECT $1", &[Type::INT4])
            .await
            .unwrap();
        assert_eq!(typed.params(), &[Type::INT4]);
        assert_eq!(
            client
                .query_one(&typed, (5i32,))
                .await
                .unwrap()
                .get::<i32, _>(0),
            5
        );

        // Dropping a statement closes it on the server.
        let name = stmt.name().to_owned();
        drop(stmt);
        let n: i64 = client
            .query_one(
                "SELECT count(*) FROM pg_prepared_statements WHERE name = $1",
                (name.as_str(),),
            )
            .await
            .unwrap()
            .get(0);
        assert_eq!(n, 0);
    })
    .await
}

#[tokio::test]
async fn empty_query_and_statements_without_rows() {
    bounded(async {
        let db = database("empty");
        let client = connect(&db).await;
        assert!(client.query("", ()).await.unwrap().is_empty());
        assert!(client
            .query("SET application_name = 'x'", ())
            .await
            .unwrap()
            .is_empty());
        assert_eq!(client.parameter("application_name").as_deref(), Some("x"));
    })
    .await
}

#[tokio::test]
async fn reported_parameters_follow_each_set_and_leave_the_others_alone() {
    bounded(async {
        let db = database("reported_parameters");
        let client = connect(&db).await;
        let version = client.parameter("server_version").unwrap();
        let encoding = client.parameter("client_encoding").unwrap();
        // Longer, shorter and equal-length values, so that entries after the
        // changed one move both ways.
        for (zone, app) in [
            (
                "America/Argentina/Buenos_Aires",
                "a-much-longer-application-name",
            ),
            ("UTC", "b"),
            ("Asia/Tokyo", "c"),
            ("Europe/Amsterdam", ""),
        ] {
            client
                .simple_query(&format!(
                    "SET TimeZone = '{zone}'; SET application_name = '{app}'"
                ))
                .await
                .unwrap();
            assert_eq!(client.parameter("TimeZone").as_deref(), Some(zone));
            assert_eq!(client.parameter("application_name").as_deref(), Some(app));
            assert_eq!(client.parameter("server_version"), Some(version.clone()));
            assert_eq!(client.parameter("client_encoding"), Some(encoding.clone()));
        }
        assert_eq!(client.parameter("no_such_parameter"), None);
    })
    .await
}

#[tokio::test]
async fn notices_reach_the_callback() {
    bounded(async {
        let db = database("notice");
        let client = connect(&db).await;
        let (tx, rx) = std::sync::mpsc::channel();
        client.on_notice(move |n| {
            let _ = tx.send((n.severity().to_owned(), n.message().to_owned()));
        });
        client
            .batch_execute("DO $$ BEGIN RAISE NOTICE 'hello %', 42; END $$")
            .await
            .unwrap();
        let (severity, message) = rx.recv_timeout(std::time::Duration::from_secs(5)).unwrap();
        assert_eq!(severity, "NOTICE");
        assert_eq!(message, "hello 42");
    })
    .await
}

#[tokio::test]
async fn copy_from_stdin_through_a_query_method_fails_instead_of_hanging() {
    bounded(async {
        let db = database("copyin");
        let client = connect(&db).await;
        client
            .batch_execute("CREATE TABLE c (a int)")
            .await
            .unwrap();
        // Refused before it is sent (in any statement of the text), with
        // an error naming the method to use.
        for sql in ["COPY c FROM STDIN", "SELECT 1; copy c (a) from stdin;"] {
            let err = client.batch_execute(sql).await.unwrap_err();
            assert_eq!(err.kind(), pgpipe::ErrorKind::Unsupported, "{err}");
            assert!(err.to_string().contains("copy_in"), "{err}");
        }
        assert_eq!(
            client
                .query_one("SELECT 7::int4", ())
                .await
                .unwrap()
                .get::<i32, _>(0),
            7
        );
    })
    .await
}
