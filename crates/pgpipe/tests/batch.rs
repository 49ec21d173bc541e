//! Explicit batches: independent (a Sync per statement) and atomic (one
//! Sync, one implicit transaction).

mod common;

use common::{bounded, connect, database};
use pgpipe::SqlState;

#[tokio::test]
async fn independent_batch_isolates_a_failing_statement() {
    bounded(async {
        let db = database("batch_independent");
        let client = connect(&db).await;
        client
            .batch_execute("CREATE TABLE b (id int4 PRIMARY KEY)")
            .await
            .unwrap();
        client
            .execute("INSERT INTO b VALUES (2)", ())
            .await
            .unwrap();

        let mut batch = client.batch();
        batch.add("INSERT INTO b VALUES ($1)", (1i32,));
        batch.add("INSERT INTO b VALUES ($1)", (2i32,));
        batch.add("INSERT INTO b VALUES ($1)", (3i32,));
        batch.add("SELECT id FROM b ORDER BY id", ());
        let results = batch.run().await.unwrap();
        assert_eq!(results.len(), 4);
        assert_eq!(results[0].as_ref().unwrap().rows_affected(), 1);
        let err = results[1].as_ref().unwrap_err();
        assert_eq!(err.code(), Some(&SqlState::UNIQUE_VIOLATION));
        assert!(
            err.to_string().contains("statement 2 of the batch"),
            "{err}"
        );
        assert_eq!(results[2].as_ref().unwrap().rows_affected(), 1);
        let ids: Vec<i32> = results[3]
            .as_ref()
            .unwrap()
            .rows()
            .iter()
            .map(|r| r.get(0))
            .collect();
        assert_eq!(ids, vec![1, 2, 3]);
    })
    .await
}

#[tokio::test]
async fn atomic_batch_rolls_back_everything_when_one_statement_fails() {
    bounded(async {
        let db = database("batch_atomic");
        let client = connect(&db).await;
        client
            .batch_execute("CREATE TABLE a (id int4 PRIMARY KEY)")
            .await
            .unwrap();

        let mut batch = client.batch();
        batch.add("INSERT INTO a VALUES ($1)", (1i32,));
        batch.add("INSERT INTO a VALUES ($1)", (1i32,));
        batch.add("INSERT INTO a VALUES ($1)", (3i32,));
        let err = batch.run_atomic().await.unwrap_err();
        assert_eq!(err.code(), Some(&SqlState::UNIQUE_VIOLATION));
        let msg = err.to_string();
        assert!(
            msg.contains("statement 2 of the batch") && msg.contains("rolled back"),
            "{msg}"
        );
        let n: i64 = client
            .query_one("SELECT count(*) FROM a", ())
            .await
            .unwrap()
            .get(0);
        assert_eq!(n, 0, "nothing of a failed atomic batch may remain");

        // The same statements, all valid, commit together and return results in order.
        let mut batch = client.batch();
        batch.add("INSERT INTO a VALUES ($1)", (1i32,));
        batch.add("INSERT INTO a VALUES ($1), ($2)", (2i32, 3i32));
        batch.add("SELECT id FROM a ORDER BY id", ());
        let results = batch.run_atomic().await.unwrap();
        assert_eq!(results[0].rows_affected(), 1);
        assert_eq!(results[1].rows_affected(), 2);
        let ids: Vec<i32> = results[2].rows().iter().map(|r| r.get(0)).collect();
        assert_eq!(ids, vec![1, 2, 3]);
    })
    .await
}

#[tokio::test]
async fn batches_mix_prepared_statements_and_reuse_the_cache() {
    bounded(async {
        let db = database("batch_mixed");
        let client = connect(&db).await;
        let stmt = client.prepare("SELECT $1::int8 * 10").await.unwrap();
        for _ in 0..2 {
            let mut batch = client.batch();
            batch.add(&stmt, (4i64,));
            batch.add("SELECT $1::text || 'x'", ("a",));
            let results = batch.run_atomic().await.unwrap();
            assert_eq!(results[0].rows()[0].get::<i64, _>(0), 40);
            assert_eq!(results[1].rows()[0].get::<&str, _>(0), "ax");
        }
        // A wrong parameter type for the prepared statement is caught before sending.
        let mut batch = client.batch();
        batch.add(&stmt, ("nope",));
        let err = batch.run().await.unwrap_err();
        assert!(
            err.to_string().contains("statement 1 of the batch"),
            "{err}"
        );
        assert_eq!(
            client
                .query_one("SELECT 1::int4", ())
                .await
                .unwrap()
                .get::<i32, _>(0),
            1
        );
    })
    .await
}
