//! Portals: fetching a result N rows at a time inside a transaction.

mod common;

use common::{bounded, connect, database};
use pgpipe::ErrorKind;

#[tokio::test]
async fn fetches_in_pieces_until_exhausted() {
    bounded(async {
        let db = database("portal_fetch");
        let client = connect(&db).await;
        client.batch_execute("BEGIN").await.unwrap();
        let mut portal = client
            .bind_portal("SELECT g FROM generate_series(1, $1::int4) g", (2500i32,))
            .await
            .unwrap();
        assert_eq!(portal.columns()[0].name(), "g");
        let mut sizes = Vec::new();
        let mut next = 1;
        while !portal.is_exhausted() {
            let rows = portal.fetch(1000).await.unwrap();
            sizes.push(rows.len());
            for row in rows {
                assert_eq!(row.get::<i32, _>(0), next);
                next += 1;
            }
        }
        assert_eq!(sizes, vec![1000, 1000, 500]);
        assert!(portal.fetch(10).await.unwrap().is_empty());

        // Other queries interleave with a portal on the same connection.
        let mut p2 = client
            .bind_portal("SELECT g FROM generate_series(1, 10) g", ())
            .await
            .unwrap();
        let a = p2.fetch(3).await.unwrap();
        let v: i32 = client
            .query_one("SELECT 42::int4", ())
            .await
            .unwrap()
            .get(0);
        assert_eq!(v, 42);
        let b = p2.fetch(0).await.unwrap();
        assert_eq!(a.len() + b.len(), 10);
        assert_eq!(b[0].get::<i32, _>(0), 4);
        drop(p2);
        drop(portal);
        client.batch_execute("COMMIT").await.unwrap();
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

#[tokio::test]
async fn a_portal_outside_a_transaction_is_refused() {
    bounded(async {
        let db = database("portal_notx");
        let client = connect(&db).await;
        let err = client.bind_portal("SELECT 1", ()).await.unwrap_err();
        assert_eq!(err.kind(), ErrorKind::InvalidUse);
        assert!(err.to_string().contains("BEGIN"), "{err}");
        assert_eq!(
            client
                .query_one("SELECT 2::int4", ())
                .await
                .unwrap()
                .get::<i32, _>(0),
            2
        );
    })
    .await
}

#[tokio::test]
async fn prepared_statements_bind_portals_too() {
    bounded(async {
        let db = database("portal_prepared");
        let client = connect(&db).await;
        let stmt = client
            .prepare("SELECT g FROM generate_series(1, $1::int4) g")
            .await
            .unwrap();
        client.batch_execute("BEGIN").await.unwrap();
        let mut portal = client.bind_portal(&stmt, (5i32,)).await.unwrap();
        assert_eq!(portal.fetch(2).await.unwrap().len(), 2);
        assert_eq!(portal.fetch(0).await.unwrap().len(), 3);
        assert!(portal.is_exhausted());
        drop(portal);
        client.batch_execute("ROLLBACK").await.unwrap();
    })
    .await
}

#[tokio::test]
async fn a_portal_over_copy_from_stdin_is_refused_as_text_and_prepared() {
    bounded(async {
        let db = database("portal_copy");
        let client = connect(&db).await;
        client
            .batch_execute("CREATE TABLE t (id int)")
            .await
            .unwrap();
        let stmt = client.prepare("COPY t FROM STDIN").await.unwrap();
        client.batch_execute("BEGIN").await.unwrap();
        let by_text = client.bind_portal("copy t from stdin", ()).await.err();
        let by_statement = client.bind_portal(&stmt, ()).await.err();
        for err in [by_text, by_statement] {
            let err = err.expect("a portal over COPY FROM STDIN was opened");
            assert_eq!(err.kind(), ErrorKind::Unsupported, "{err}");
            assert!(err.to_string().contains("copy_in"), "{err}");
        }
        // Nothing was sent: the transaction is still usable.
        let mut portal = client.bind_portal("SELECT 1", ()).await.unwrap();
        assert_eq!(portal.fetch(0).await.unwrap().len(), 1);
        drop(portal);
        client.batch_execute("ROLLBACK").await.unwrap();
    })
    .await
}
