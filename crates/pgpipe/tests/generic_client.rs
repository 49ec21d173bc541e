//! One test, generic over `GenericClient`, runs every method of the trait
//! (and of `GenericCopy` and `GenericUpsert`, implemented for all of them)
//! on its four implementations (Client, Transaction, PooledClient, Pool)
//! against a real server, and the methods of `GenericSession` on the three
//! that are bound to one session: the same calls mean the same everywhere.

mod common;

use common::{bounded, connect, database};
use pgpipe::{
    GenericClient, GenericCopy, GenericSession, GenericUpsert, OnConflict, Pool,
    SimpleQueryMessage, Type,
};
use pgpipe_testkit::AuthRole;

/// Every method of the trait, on a table of `on`'s own.
async fn exercise<C: GenericClient>(on: &C, table: &str) {
    on.batch_execute(&format!(
        "DROP TABLE IF EXISTS {table}; CREATE TABLE {table} (id int4 PRIMARY KEY, name text NOT NULL)"
    ))
    .await
    .unwrap();

    let insert = format!("INSERT INTO {table} VALUES ($1, $2), ($3, $4)");
    let n = on
        .execute(&insert, (1i32, "one", 2i32, "two"))
        .await
        .unwrap();
    assert_eq!(n, 2, "execute on {table}");

    let all = format!("SELECT id, name FROM {table} ORDER BY id");
    let rows = on.query(&all, ()).await.unwrap();
    let ids: Vec<i32> = rows.iter().map(|r| r.get(0)).collect();
    assert_eq!(ids, [1, 2], "query on {table}");

    let by_id = format!("SELECT name FROM {table} WHERE id = $1");
    let one: String = on.query_one(&by_id, (1i32,)).await.unwrap().get(0);
    assert_eq!(one, "one");
    assert!(on.query_opt(&by_id, (9i32,)).await.unwrap().is_none());
    let two: Option<String> = on
        .query_opt(&by_id, (2i32,))
        .await
        .unwrap()
        .map(|r| r.get(0));
    assert_eq!(two.as_deref(), Some("two"));

    let pairs: Vec<(i32, String)> = on.query_as(&all, ()).await.unwrap();
    assert_eq!(pairs, [(1, "one".into()), (2, "two".into())]);
    let (name,): (String,) = on.query_one_as(&by_id, (2i32,)).await.unwrap();
    assert_eq!(name, "two");
    let none: Option<(String,)> = on.query_opt_as(&by_id, (7i32,)).await.unwrap();
    assert!(none.is_none());

    let mut stream = on.query_stream(&all, ()).await.unwrap();
    let mut streamed = Vec::new();
    while let Some(row) = stream.next().await {
        streamed.push(row.unwrap().get::<i32, _>(0));
    }
    drop(stream);
    assert_eq!(streamed, [1, 2], "query_stream on {table}");

    let count = format!("SELECT count(*) FROM {table}");
    let messages = on.simple_query(&count).await.unwrap();
    let counted = messages.iter().find_map(|m| match m {
        SimpleQueryMessage::Row(row) => row.get(0).map(str::to_owned),
        _ => None,
    });
    assert_eq!(counted.as_deref(), Some("2"), "simple_query on {table}");

    let update = format!("UPDATE {table} SET name = upper(name) WHERE id = $1");
    let mut batch = on.batch();
    batch.add(&update, (1i32,)).add(&all, ());
    let results = batch.run().await.unwrap();
    assert_eq!(results.len(), 2);
    let results: Vec<_> = results.into_iter().map(Result::unwrap).collect();
    assert_eq!(results[0].rows_affected(), 1);
    assert_eq!(results[1].rows()[0].get::<String, _>(1), "ONE");

    let mut copy = on
        .copy_in(&format!("COPY {table} (id, name) FROM STDIN"))
        .await
        .unwrap();
    copy.send("3\tthree\n").await.unwrap();
    assert_eq!(copy.finish().await.unwrap(), 1, "copy_in on {table}");

    let mut out = on
        .copy_out(&format!(
            "COPY (SELECT id FROM {table} ORDER BY id) TO STDOUT"
        ))
        .await
        .unwrap();
    let mut text = Vec::new();
    while let Some(chunk) = out.next().await {
        text.extend_from_slice(&chunk.unwrap());
    }
    drop(out);
    assert_eq!(text, b"1\n2\n3\n", "copy_out on {table}");

    let mut writer = on
        .copy_in_rows::<(i32, &str)>(table, &["id", "name"])
        .await
        .unwrap();
    writer.write(&(4, "four")).await.unwrap();
    assert_eq!(writer.finish().await.unwrap(), 1, "copy_in_rows on {table}");

    let typed = on
        .copy_out_rows::<(i32, String)>(&format!("SELECT id, name FROM {table} WHERE id > 2"))
        .await
        .unwrap()
        .collect()
        .await
        .unwrap();
    assert_eq!(typed, [(3, "three".into()), (4, "four".into())]);

    let counts = on
        .upsert_rows::<(i32, &str), _>(
            table,
            &["id", "name"],
            &["id"],
            OnConflict::Update,
            vec![(2, "deux"), (5, "five")],
        )
        .await
        .unwrap();
    assert_eq!(
        (counts.inserted, counts.updated),
        (1, 1),
        "upsert_rows on {table}"
    );

    let end: Vec<(i32, String)> = on.query_as(&all, ()).await.unwrap();
    let names: Vec<&str> = end.iter().map(|(_, n)| n.as_str()).collect();
    assert_eq!(names, ["ONE", "deux", "three", "four", "five"]);
}

/// The methods of the session-bound trait (every implementation but
/// `Pool`), on the table `exercise` left behind.
async fn exercise_session<C: GenericSession>(on: &C, table: &str) {
    let by_id = on
        .prepare(&format!("SELECT name FROM {table} WHERE id = $1"))
        .await
        .unwrap();
    assert_eq!(by_id.params(), [Type::INT4], "prepare on {table}");
    let name: String = on.query_one(&by_id, (5i32,)).await.unwrap().get(0);
    assert_eq!(name, "five", "a prepared statement runs on {table}");

    // Declared types win over what the server would infer (int8, not int4).
    let typed = on
        .prepare_typed(
            &format!("SELECT count(*) FROM {table} WHERE id > $1"),
            &[Type::INT8],
        )
        .await
        .unwrap();
    assert_eq!(typed.params(), [Type::INT8], "prepare_typed on {table}");
    let above: i64 = on.query_one(&typed, (3i64,)).await.unwrap().get(0);
    assert_eq!(above, 2, "a typed prepared statement runs on {table}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_method_of_the_trait_runs_on_all_four_implementations() {
    bounded(async {
        let db = database("generic_client");
        let mut client = connect(&db).await;
        let pool = Pool::connect(&db.url(AuthRole::Trust)).await.unwrap();

        exercise(&client, "on_client").await;
        exercise_session(&client, "on_client").await;

        let tx = client.transaction().await.unwrap();
        exercise(&tx, "on_transaction").await;
        exercise_session(&tx, "on_transaction").await;
        tx.commit().await.unwrap();

        let mut pooled = pool.get().await.unwrap();
        exercise(&pooled, "on_pooled").await;
        exercise_session(&pooled, "on_pooled").await;
        // A pooled connection's transaction is one more implementation.
        let tx = pooled.transaction().await.unwrap();
        exercise(&tx, "on_pooled_transaction").await;
        exercise_session(&tx, "on_pooled_transaction").await;
        tx.rollback().await.unwrap();
        drop(pooled);

        exercise(&pool, "on_pool").await;
        // What the pool checked out for streams, COPY and batches went back.
        assert_eq!(pool.stats().in_use, 0, "{:?}", pool.stats());

        // The committed ones stay, the rolled-back one is gone.
        for table in ["on_client", "on_transaction", "on_pooled", "on_pool"] {
            let n: i64 = client
                .query_one(&format!("SELECT count(*) FROM {table}"), ())
                .await
                .unwrap()
                .get(0);
            assert_eq!(n, 5, "{table}");
        }
        let gone = client
            .query_one("SELECT to_regclass('on_pooled_transaction') IS NULL", ())
            .await
            .unwrap()
            .get::<bool, _>(0);
        assert!(gone);
        let _ = &mut client;
    })
    .await
}
