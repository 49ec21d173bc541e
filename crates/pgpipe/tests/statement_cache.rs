//! The automatic statement cache: named statements reused, stale ones
//! retried once outside transactions, unnamed mode never naming one.

mod common;

use common::{bounded, database};
use pgpipe::SqlState;
use pgpipe_testkit::{AuthRole, TestDatabase};

async fn connect_with(db: &TestDatabase, query: &str) -> pgpipe::Client {
    let url = format!("{}?{query}", db.url(AuthRole::Trust));
    pgpipe::connect(&url)
        .await
        .unwrap_or_else(|e| panic!("{url}: {e}"))
}

async fn prepared_count(client: &pgpipe::Client) -> i64 {
    // Simple protocol: does not touch the cache itself.
    let msgs = client
        .simple_query("SELECT count(*) FROM pg_prepared_statements")
        .await
        .unwrap();
    match &msgs[0] {
        pgpipe::SimpleQueryMessage::Row(r) => r.get(0).unwrap().parse().unwrap(),
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn repeated_sql_reuses_one_named_statement() {
    bounded(async {
        let db = database("cache_reuse");
        let client = connect_with(&db, "").await;
        for i in 0..5i32 {
            let v: i32 = client
                .query_one("SELECT $1::int4 + 1", (i,))
                .await
                .unwrap()
                .get(0);
            assert_eq!(v, i + 1);
        }
        assert_eq!(prepared_count(&client).await, 1);
        // Different parameter types are a different statement.
        client
            .query_one("SELECT $1::int4 + 1", (1i64,))
            .await
            .unwrap();
        assert_eq!(prepared_count(&client).await, 2);
    })
    .await
}

#[tokio::test]
async fn the_cache_is_bounded_and_closes_what_it_evicts() {
    bounded(async {
        let db = database("cache_bound");
        let client = connect_with(&db, "statement_cache_capacity=2").await;
        for i in 0..6 {
            client.query(&format!("SELECT {i}"), ()).await.unwrap();
        }
        assert_eq!(prepared_count(&client).await, 2);
    })
    .await
}

#[tokio::test]
async fn a_changed_result_type_is_retried_once_outside_a_transaction() {
    bounded(async {
        let db = database("cache_stale");
        let client = connect_with(&db, "").await;
        client
            .batch_execute("CREATE TABLE t (a int4); INSERT INTO t VALUES (1)")
            .await
            .unwrap();
        let sql = "SELECT * FROM t";
        assert_eq!(client.query_one(sql, ()).await.unwrap().len(), 1);
        client
            .batch_execute("ALTER TABLE t ADD COLUMN b text DEFAULT 'x'")
            .await
            .unwrap();
        let row = client.query_one(sql, ()).await.unwrap();
        assert_eq!(row.len(), 2);
        assert_eq!(row.get::<&str, _>("b"), "x");

        // Inside a transaction the error is returned: it is already aborted.
        client
            .batch_execute("ALTER TABLE t ADD COLUMN c int4")
            .await
            .unwrap();
        client.batch_execute("BEGIN").await.unwrap();
        let err = client.query_one(sql, ()).await.unwrap_err();
        assert_eq!(err.code(), Some(&SqlState::FEATURE_NOT_SUPPORTED), "{err}");
        client.batch_execute("ROLLBACK").await.unwrap();
        // And the next call outside works again.
        assert_eq!(client.query_one(sql, ()).await.unwrap().len(), 3);
    })
    .await
}

#[tokio::test]
async fn the_cache_recovers_after_discard_all() {
    bounded(async {
        let db = database("cache_discard");
        let client = connect_with(&db, "").await;
        let sql = "SELECT $1::text || '!'";
        assert_eq!(
            client
                .query_one(sql, ("a",))
                .await
                .unwrap()
                .get::<&str, _>(0),
            "a!"
        );
        client.batch_execute("DISCARD ALL").await.unwrap();
        assert_eq!(prepared_count(&client).await, 0);
        assert_eq!(
            client
                .query_one(sql, ("b",))
                .await
                .unwrap()
                .get::<&str, _>(0),
            "b!"
        );
        assert_eq!(prepared_count(&client).await, 1);
    })
    .await
}

#[tokio::test]
async fn a_statement_that_fails_to_parse_is_not_cached() {
    bounded(async {
        let db = database("cache_parse_error");
        let client = connect_with(&db, "").await;
        for _ in 0..3 {
            let err = client.query("SELECT no_such_column", ()).await.unwrap_err();
            assert_eq!(err.code(), Some(&SqlState::UNDEFINED_COLUMN), "{err}");
        }
        assert_eq!(prepared_count(&client).await, 0);
    })
    .await
}

#[tokio::test]
async fn concurrent_first_executions_share_the_statement() {
    bounded(async {
        let db = database("cache_concurrent");
        let client = connect_with(&db, "").await;
        let futures: Vec<_> = (0..50i32)
            .map(|i| {
                let client = client.clone();
                async move {
                    client
                        .query_one("SELECT $1::int4 * 3", (i,))
                        .await
                        .unwrap()
                        .get::<i32, _>(0)
                }
            })
            .collect();
        let mut results = Vec::new();
        for f in futures {
            results.push(tokio::spawn(f));
        }
        for (i, r) in results.into_iter().enumerate() {
            assert_eq!(r.await.unwrap(), i as i32 * 3);
        }
        assert_eq!(prepared_count(&client).await, 1);
    })
    .await
}

#[tokio::test]
async fn unnamed_mode_never_creates_a_named_statement() {
    bounded(async {
        let db = database("cache_unnamed");
        let client = connect_with(&db, "query_mode=unnamed").await;
        for i in 0..5i32 {
            let v: i32 = client
                .query_one("SELECT $1::int4", (i,))
                .await
                .unwrap()
                .get(0);
            assert_eq!(v, i);
        }
        assert_eq!(prepared_count(&client).await, 0);
    })
    .await
}
