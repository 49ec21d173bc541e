//! Result columns of types without binary output (`aclitem`, arrays of
//! it) are asked for in text format and read as strings, against the real
//! server; every other column of the same row stays binary.

mod common;

use common::values::literal;
use common::{bounded, connect, database};
use pgpipe::Type;

/// The built-in types whose `pg_type.typsend` is 0 on this server are
/// exactly those `Type::text_output_only` names (checked on every server
/// version the suite runs on).
#[tokio::test]
async fn the_list_of_types_without_binary_output_is_the_servers() {
    bounded(async {
        let db = database("text_fallback_list");
        let client = connect(&db).await;
        let rows = client
            .query(
                "SELECT oid, typname::text FROM pg_type WHERE typsend = 0 AND typtype = 'b' AND oid < 10000 ORDER BY oid",
                (),
            )
            .await
            .unwrap();
        let mut found = Vec::new();
        for row in &rows {
            let oid: u32 = row.get(0);
            let name: &str = row.get(1);
            assert!(Type::from_oid(oid).text_output_only(), "{name} has no send function");
            found.push(name.to_owned());
        }
        assert!(found.contains(&"aclitem".to_owned()), "{found:?}");
        // And the other way: every type we ask text for has no send function.
        for ty in [Type::ACLITEM, Type::GTSVECTOR] {
            let sends: bool = client
                .query_one("SELECT typsend <> 0 FROM pg_type WHERE oid = $1", (ty.oid(),))
                .await
                .unwrap()
                .get(0);
            assert!(!sends, "{ty}");
        }
    })
    .await;
}

#[tokio::test]
async fn aclitem_columns_read_as_strings() {
    bounded(async {
        let db = database("text_fallback_acl");
        let mut client = connect(&db).await;
        client.execute("CREATE TABLE secret (v int)", ()).await.unwrap();
        client
            .execute("GRANT SELECT ON secret TO PUBLIC", ())
            .await
            .unwrap();
        let want: String = literal(&client, "relacl::text FROM pg_class WHERE relname = 'secret'").await;
        assert!(want.contains("=r/"), "{want}");

        // SQL text, first time: the columns are learnt from the failed
        // attempt's description and the statement runs again, with text
        // for the aclitem[] column and binary for the others.
        let sql = "SELECT 7::int4, relacl, relacl[1], 'x'::text FROM pg_class WHERE relname = 'secret'";
        for _ in 0..2 {
            let row = client.query_one(sql, ()).await.unwrap();
            assert_eq!(row.get::<i32, _>(0), 7);
            assert_eq!(row.get::<&str, _>(1), want);
            let first: String = row.get(2);
            assert!(want.contains(&first), "{first} in {want}");
            assert_eq!(row.get::<&str, _>(3), "x");
            // Only strings read it.
            assert!(row.try_get::<Vec<String>, _>(1).is_err());
            assert!(row.try_get::<i32, _>(2).is_err());
        }

        // A prepared statement knows its columns before the first Bind; in
        // a transaction too (where a failed first attempt could not be
        // retried).
        let stmt = client
            .prepare("SELECT relacl, relname::text FROM pg_class WHERE relname = $1")
            .await
            .unwrap();
        let tx = client.transaction().await.unwrap();
        let row = tx.query_one(&stmt, ("secret",)).await.unwrap();
        assert_eq!(row.get::<String, _>(0), want);
        assert_eq!(row.get::<&str, _>(1), "secret");
        tx.commit().await.unwrap();

        // NULL and many rows.
        let rows = client
            .query("SELECT relacl FROM pg_class WHERE relname IN ('secret', 'pg_class') OR relacl IS NULL LIMIT 50", ())
            .await
            .unwrap();
        assert!(rows.len() > 2);
        for row in &rows {
            let _: Option<&str> = row.get(0);
        }
        let acl = literal::<Option<String>>(&client, "NULL::aclitem").await;
        assert_eq!(acl, None);
    })
    .await;
}
