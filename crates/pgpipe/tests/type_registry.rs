//! The per-connection type registry: user-defined types are described from
//! the server catalog on first use, named parameter types are resolved
//! before sending, and result rows are checked against their Rust target
//! before any row is decoded.

mod common;

use bytes::{BufMut, BytesMut};
use pgpipe::types::{BoxError, Encode, IsNull, Kind, Type, TypeRef};
use pgpipe::ErrorKind;

/// A label sent as the enum type `mood`, declared by name: the client must
/// look the OID up before it can send it.
struct Mood(&'static str);

impl Encode for Mood {
    fn type_ref(&self) -> TypeRef {
        TypeRef::Named("mood")
    }
    fn accepts(&self, ty: &Type) -> bool {
        ty.is_named("mood")
    }
    fn encode(&self, ty: &Type, buf: &mut BytesMut) -> Result<IsNull, BoxError> {
        // The resolved type reaches the encoder with its labels.
        match ty.kind() {
            Kind::Enum(labels) if labels.iter().any(|l| l == self.0) => {
                buf.put_slice(self.0.as_bytes());
                Ok(IsNull::No)
            }
            other => Err(format!("{} is not a label of {ty} ({other:?})", self.0).into()),
        }
    }
}

const SCHEMA: &str = "
    CREATE SCHEMA mail;
    CREATE TYPE mail.attach AS (filename text, type text, size bigint);
    CREATE TYPE mood AS ENUM ('sad', 'ok', 'happy');
    CREATE DOMAIN positive AS int4 CHECK (VALUE > 0);
    CREATE TYPE wrapper AS (inner_attach mail.attach, moods mood[], p positive);
    CREATE TYPE floatrange AS RANGE (subtype = float8);
";

#[tokio::test]
async fn user_defined_column_types_are_described() {
    common::bounded(async {
        let db = common::database("registry_columns");
        let client = common::connect(&db).await;
        client.batch_execute(SCHEMA).await.unwrap();
        let row = client
            .query_one(
                "SELECT ROW(ROW('a.txt', 'text/plain', 3)::mail.attach, \
                 ARRAY['ok'::mood], 5::positive)::wrapper AS w, \
                 ARRAY[ROW('b', 't', 1)::mail.attach] AS attachments, \
                 'happy'::mood AS m, 7::positive AS p, '[1.5,2)'::floatrange AS r",
                (),
            )
            .await
            .unwrap();
        let columns = row.columns();

        let wrapper = columns[0].type_();
        assert_eq!(wrapper.to_string(), "wrapper");
        let Kind::Composite(fields) = wrapper.kind() else {
            panic!("wrapper is {:?}", wrapper.kind());
        };
        let names: Vec<&str> = fields.iter().map(|f| f.name.as_str()).collect();
        assert_eq!(names, ["inner_attach", "moods", "p"]);
        assert_eq!(fields[0].type_.to_string(), "mail.attach");
        let Kind::Composite(attach_fields) = fields[0].type_.kind() else {
            panic!("attach is {:?}", fields[0].type_.kind());
        };
        assert_eq!(attach_fields[2].type_, Type::INT8);
        assert_eq!(fields[1].type_.to_string(), "mood[]");
        assert_eq!(
            fields[1].type_.element().map(|e| e.kind().clone()),
            Some(Kind::Enum(vec!["sad".into(), "ok".into(), "happy".into()]))
        );
        assert_eq!(fields[2].type_.kind(), &Kind::Domain(Type::INT4));
        assert_eq!(fields[2].type_.base(), &Type::INT4);

        assert_eq!(columns[1].type_().to_string(), "mail.attach[]");
        assert!(columns[2].type_().is_named("mood"));
        // The server reports a domain column as its base type.
        assert_eq!(columns[3].type_(), &Type::INT4);
        assert_eq!(row.get::<i32, _>(3), 7);
        assert_eq!(columns[4].type_().kind(), &Kind::Range(Type::FLOAT8));
    })
    .await
}

#[tokio::test]
async fn register_type_finds_a_type_by_name_or_says_it_is_missing() {
    common::bounded(async {
        let db = common::database("registry_names");
        let client = common::connect(&db).await;
        client.batch_execute(SCHEMA).await.unwrap();
        let attach = client.register_type("mail.attach").await.unwrap();
        assert_eq!(attach.schema(), Some("mail"));
        assert!(attach.array_type().is_some());
        let row = client
            .query_one("SELECT 'mail.attach'::regtype::oid", ())
            .await
            .unwrap();
        assert_eq!(row.get::<u32, _>(0), attach.oid());

        let err = client.register_type("mail.nope").await.unwrap_err();
        assert!(
            err.to_string().contains("\"mail.nope\" does not exist"),
            "{err}"
        );
        // The connection is fine afterwards.
        assert_eq!(
            client
                .query_one("SELECT 1", ())
                .await
                .unwrap()
                .get::<i32, _>(0),
            1
        );
    })
    .await
}

#[tokio::test]
async fn named_parameter_types_are_resolved_before_sending() {
    common::bounded(async {
        let db = common::database("registry_params");
        let client = common::connect(&db).await;
        client.batch_execute(SCHEMA).await.unwrap();
        let row = client
            .query_one("SELECT $1::text, pg_typeof($1)::text", (Mood("happy"),))
            .await
            .unwrap();
        assert_eq!(row.get::<&str, _>(0), "happy");
        assert_eq!(row.get::<&str, _>(1), "mood");

        // A label the type lacks fails in the encoder, before anything is sent.
        let err = client
            .query_one("SELECT $1::text", (Mood("angry"),))
            .await
            .unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Encode, "{err}");
        assert!(
            format!("{err:#}").contains("angry is not a label of mood"),
            "{err:#}"
        );

        // Prepared statements carry described parameter types too.
        let stmt = client.prepare("SELECT $1::mood::text").await.unwrap();
        assert!(stmt.params()[0].is_named("mood"));
        let row = client.query_one(&stmt, (Mood("sad"),)).await.unwrap();
        assert_eq!(row.get::<&str, _>(0), "sad");
    })
    .await
}

#[tokio::test]
async fn a_recreated_type_is_looked_up_again() {
    common::bounded(async {
        let db = common::database("registry_recreate");
        let client = common::connect(&db).await;
        client.batch_execute(SCHEMA).await.unwrap();
        let sql = "SELECT $1::text";
        assert_eq!(
            client
                .query_one(sql, (Mood("ok"),))
                .await
                .unwrap()
                .get::<&str, _>(0),
            "ok"
        );
        let old = client.register_type("mood").await.unwrap().oid();
        client
            .batch_execute("DROP TYPE mood CASCADE; CREATE TYPE mood AS ENUM ('ok', 'meh')")
            .await
            .unwrap();
        // The registry still holds the old OID; the server rejects it, the
        // client looks the type up again and retries once.
        let row = client.query_one(sql, (Mood("ok"),)).await.unwrap();
        assert_eq!(row.get::<&str, _>(0), "ok");
        // Now described afresh, with the new labels.
        let row = client.query_one(sql, (Mood("meh"),)).await.unwrap();
        assert_eq!(row.get::<&str, _>(0), "meh");
        assert_ne!(client.register_type("mood").await.unwrap().oid(), old);
    })
    .await
}

#[tokio::test]
async fn query_as_checks_columns_before_decoding_any_row() {
    common::bounded(async {
        let db = common::database("registry_query_as");
        let client = common::connect(&db).await;

        let pairs: Vec<(i32, String)> = client
            .query_as("SELECT g, 'n' || g FROM generate_series(1, 3) g", ())
            .await
            .unwrap();
        assert_eq!(
            pairs,
            [(1, "n1".into()), (2, "n2".into()), (3, "n3".into())]
        );

        // int8 into i32: never a silent truncation, even with no rows.
        let err = client
            .query_as::<(i32,), _, _>("SELECT 1::int8 WHERE false", ())
            .await
            .unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Decode);
        let text = format!("{err:#}");
        assert!(text.contains("column 0 (\"int8\") of type int8"), "{text}");
        assert!(text.contains("i32"), "{text}");

        let err = client
            .query_as::<(i32,), _, _>("SELECT 'x'::text AS name", ())
            .await
            .unwrap_err();
        assert!(
            format!("{err:#}").contains("(\"name\") of type text"),
            "{err:#}"
        );

        let err = client
            .query_as::<(i32, i32), _, _>("SELECT 1", ())
            .await
            .unwrap_err();
        assert_eq!(err.kind(), ErrorKind::ColumnCount);
        assert!(
            err.to_string()
                .contains("takes 2 column(s), but the result has 1"),
            "{err}"
        );

        let one: Option<(bool,)> = client.query_opt_as("SELECT true", ()).await.unwrap();
        assert_eq!(one, Some((true,)));
        let err = client
            .query_one_as::<(i32,), _, _>("SELECT 1 WHERE false", ())
            .await
            .unwrap_err();
        assert_eq!(err.kind(), ErrorKind::RowCount);
    })
    .await
}

#[tokio::test]
async fn a_prepared_parameter_of_the_wrong_type_is_refused_before_sending() {
    common::bounded(async {
        let db = common::database("registry_param_check");
        let client = common::connect(&db).await;
        let stmt = client.prepare("SELECT $1::int4 + 1").await.unwrap();
        let err = client.query_one(&stmt, ("seven",)).await.unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Encode);
        assert!(
            err.to_string()
                .contains("parameter $1: Rust type str cannot be sent as PostgreSQL type int4"),
            "{err}"
        );
        assert_eq!(
            client
                .query_one(&stmt, (6i32,))
                .await
                .unwrap()
                .get::<i32, _>(0),
            7
        );
    })
    .await
}

#[tokio::test]
async fn batches_resolve_named_parameters_and_describe_columns() {
    common::bounded(async {
        let db = common::database("registry_batch");
        let client = common::connect(&db).await;
        client.batch_execute(SCHEMA).await.unwrap();
        for atomic in [false, true] {
            let mut batch = client.batch();
            batch.add("SELECT $1::text", (Mood("ok"),));
            batch.add("SELECT 'sad'::mood AS m", ());
            let results = if atomic {
                batch.run_atomic().await.unwrap()
            } else {
                batch
                    .run()
                    .await
                    .unwrap()
                    .into_iter()
                    .map(Result::unwrap)
                    .collect()
            };
            assert_eq!(results[0].rows()[0].get::<&str, _>(0), "ok");
            let ty = results[1].rows()[0].columns()[0].type_().clone();
            assert!(
                matches!(ty.kind(), Kind::Enum(labels) if labels.len() == 3),
                "atomic={atomic}: {ty:?} {:?}",
                ty.kind()
            );
        }
    })
    .await
}

#[tokio::test]
async fn pools_read_rows_into_types_too() {
    common::bounded(async {
        let db = common::database("registry_pool");
        let pool = pgpipe::Pool::connect(&db.url(pgpipe_testkit::AuthRole::Trust))
            .await
            .unwrap();
        let rows: Vec<(i64, Option<String>)> = pool
            .query_as("SELECT 1::int8, NULL::text UNION ALL SELECT 2, 'b'", ())
            .await
            .unwrap();
        assert_eq!(rows, [(1, None), (2, Some("b".to_owned()))]);
        let one: (i64,) = pool.query_one_as("SELECT 5::int8", ()).await.unwrap();
        assert_eq!(one, (5,));
        let none: Option<(i64,)> = pool
            .query_opt_as("SELECT 5::int8 WHERE false", ())
            .await
            .unwrap();
        assert_eq!(none, None);
    })
    .await
}

#[tokio::test]
async fn query_as_waits_for_the_lookup_of_a_type_never_seen() {
    common::bounded(async {
        let db = common::database("registry_query_as_held");
        let setup = common::connect(&db).await;
        setup.batch_execute(SCHEMA).await.unwrap();
        // A fresh connection: mail.attach is unknown when its rows arrive,
        // so they are held until the catalog lookup, then checked and read.
        let client = common::connect(&db).await;
        let rows: Vec<((String, String, i64),)> = client
            .query_as(
                "SELECT ROW('a.txt', 'text/plain', g)::mail.attach FROM generate_series(1, 3) g",
                (),
            )
            .await
            .unwrap();
        assert_eq!(rows.len(), 3);
        assert_eq!(rows[2].0, ("a.txt".into(), "text/plain".into(), 3));

        let fresh = common::connect(&db).await;
        let err = fresh
            .query_as::<(i32,), _, _>("SELECT ROW('a', 'b', 1)::mail.attach AS a", ())
            .await
            .unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Decode);
        assert!(
            format!("{err:#}").contains("(\"a\") of type mail.attach"),
            "{err:#}"
        );
    })
    .await
}

/// Streams every row of `sql` and reads its two columns typed: a composite
/// and an enum.
async fn stream_typed(client: &pgpipe::Client, sql: &str) -> Vec<((String, String, i64), String)> {
    let mut rows = client.query_stream(sql, ()).await.unwrap();
    let mut out = Vec::new();
    while let Some(row) = rows.next().await {
        let row = row.unwrap();
        assert_eq!(row.columns()[0].type_().to_string(), "mail.attach");
        let mood: String = row.try_get(1).unwrap();
        out.push((row.try_get(0).unwrap(), mood));
    }
    out
}

#[tokio::test]
async fn a_stream_describes_column_types_its_connection_never_saw() {
    common::bounded(async {
        let db = common::database("registry_stream");
        let setup = common::connect(&db).await;
        setup.batch_execute(SCHEMA).await.unwrap();
        const SQL: &str = "SELECT ROW('a.txt', 'text/plain', g)::mail.attach, 'happy'::mood \
                           FROM generate_series(1, 3) g";
        let expected: Vec<_> = (1..=3)
            .map(|g| (("a.txt".into(), "text/plain".into(), g), "happy".into()))
            .collect();

        // A fresh connection has never seen mail.attach nor mood: the
        // stream's rows arrive after they are described.
        let fresh = common::connect(&db).await;
        let before = fresh.stats().socket_writes;
        assert_eq!(stream_typed(&fresh, SQL).await, expected);
        let first = fresh.stats().socket_writes - before;
        // Again: the described columns are in the statement cache now, so
        // the stream is one request with no describe or look-up before it.
        let before = fresh.stats().socket_writes;
        assert_eq!(stream_typed(&fresh, SQL).await, expected);
        let again = fresh.stats().socket_writes - before;
        assert!(
            first >= 2 && again < first,
            "first {first} writes, again {again}"
        );

        // `execute` keeps the statement's columns without looking their
        // types up; a stream of it afterwards still decodes them.
        let executed = common::connect(&db).await;
        assert_eq!(executed.execute(SQL, ()).await.unwrap(), 3);
        assert_eq!(stream_typed(&executed, SQL).await, expected);

        // Inside a transaction, on its connection.
        let mut in_tx = common::connect(&db).await;
        let tx = in_tx.transaction().await.unwrap();
        let mut rows = tx.query_stream(SQL, ()).await.unwrap();
        let mut n = 0;
        while let Some(row) = rows.next().await {
            let (file, _, size): (String, String, i64) = row.unwrap().try_get(0).unwrap();
            assert_eq!(file, "a.txt");
            n += 1;
            assert_eq!(size, n);
        }
        drop(rows);
        tx.commit().await.unwrap();

        // With the statement cache off every stream describes first.
        let url = format!(
            "{}?statement_cache_capacity=0",
            db.url(pgpipe_testkit::AuthRole::Trust)
        );
        let uncached = pgpipe::connect(&url).await.unwrap();
        assert_eq!(stream_typed(&uncached, SQL).await, expected);
        assert_eq!(stream_typed(&uncached, SQL).await, expected);

        // A statement that does not parse fails with the server's error, as
        // without the describe, and the connection goes on.
        let err = fresh
            .query_stream("SELECT nope FROM nowhere", ())
            .await
            .map(|_| ())
            .unwrap_err();
        assert_eq!(
            err.code(),
            Some(&pgpipe::SqlState::UNDEFINED_TABLE),
            "{err:#}"
        );
        assert_eq!(stream_typed(&fresh, SQL).await, expected);
    })
    .await
}
