//! Server errors keep every field, and the connection stays usable.

mod common;

use common::{bounded, connect, database};
use pgpipe::{ErrorKind, ErrorPosition, SqlState};

#[tokio::test]
async fn unique_violation_keeps_every_field() {
    bounded(async {
        let db = database("unique");
        let client = connect(&db).await;
        client
            .batch_execute("CREATE TABLE users (id int PRIMARY KEY, email text CONSTRAINT users_email_key UNIQUE)")
            .await
            .unwrap();
        client.execute("INSERT INTO users VALUES (1, $1)", ("a@x",)).await.unwrap();
        let err = client.execute("INSERT INTO users VALUES (2, $1)", ("a@x",)).await.unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Db);
        assert_eq!(err.code(), Some(&SqlState::UNIQUE_VIOLATION));
        let db_err = err.as_db_error().unwrap();
        assert_eq!(db_err.severity(), "ERROR");
        assert_eq!(db_err.severity_nonlocalized(), Some("ERROR"));
        assert_eq!(db_err.constraint(), Some("users_email_key"));
        assert_eq!(db_err.table(), Some("users"));
        assert_eq!(db_err.schema(), Some("public"));
        assert!(db_err.detail().unwrap().contains("(email)=(a@x) already exists"), "{db_err:?}");
        assert!(db_err.file().is_some() && db_err.line().is_some() && db_err.routine().is_some());
        let shown = err.to_string();
        assert!(shown.contains("23505") && shown.contains("users_email_key"), "{shown}");

        // Same connection, next query is fine.
        let n: i64 = client.query_one("SELECT count(*) FROM users", ()).await.unwrap().get(0);
        assert_eq!(n, 1);
    })
    .await
}

#[tokio::test]
async fn syntax_error_has_its_position() {
    bounded(async {
        let db = database("syntax");
        let client = connect(&db).await;
        let err = client.query("SELECT 1 FROM WHERE", ()).await.unwrap_err();
        assert_eq!(err.code(), Some(&SqlState::SYNTAX_ERROR));
        assert_eq!(
            err.as_db_error().unwrap().position(),
            Some(&ErrorPosition::Original(15))
        );
        // Simple protocol too.
        let err = client.batch_execute("SELEC 1").await.unwrap_err();
        assert_eq!(err.code(), Some(&SqlState::SYNTAX_ERROR));
        assert_eq!(
            err.as_db_error().unwrap().position(),
            Some(&ErrorPosition::Original(1))
        );
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
async fn errors_inside_functions_carry_where_and_hint() {
    bounded(async {
        let db = database("where");
        let client = connect(&db).await;
        let err = client
            .batch_execute(
                "DO $$ BEGIN RAISE EXCEPTION 'boom' USING HINT = 'try again', ERRCODE = 'P0001'; END $$",
            )
            .await
            .unwrap_err();
        let db_err = err.as_db_error().unwrap();
        assert_eq!(db_err.message(), "boom");
        assert_eq!(db_err.hint(), Some("try again"));
        assert!(db_err.where_().unwrap().contains("PL/pgSQL"), "{db_err:?}");
        assert_eq!(db_err.code(), &SqlState::RAISE_EXCEPTION);
    })
    .await
}

#[tokio::test]
async fn an_error_in_a_transaction_is_reported_and_rollback_recovers() {
    bounded(async {
        let db = database("txerr");
        let client = connect(&db).await;
        client.batch_execute("BEGIN").await.unwrap();
        let err = client.query("SELECT 1/0", ()).await.unwrap_err();
        assert_eq!(err.code(), Some(&SqlState::DIVISION_BY_ZERO));
        let err = client.query("SELECT 1", ()).await.unwrap_err();
        assert_eq!(err.code(), Some(&SqlState::IN_FAILED_SQL_TRANSACTION));
        client.batch_execute("ROLLBACK").await.unwrap();
        assert_eq!(
            client
                .query_one("SELECT 3::int4", ())
                .await
                .unwrap()
                .get::<i32, _>(0),
            3
        );
    })
    .await
}

#[tokio::test]
async fn transaction_status_follows_the_server() {
    use pgpipe::TransactionStatus;
    bounded(async {
        let db = database("txstatus");
        let client = connect(&db).await;
        assert_eq!(client.transaction_status(), TransactionStatus::Idle);
        client.batch_execute("BEGIN").await.unwrap();
        assert_eq!(
            client.transaction_status(),
            TransactionStatus::InTransaction
        );
        client.query("SELECT 1/0", ()).await.unwrap_err();
        assert_eq!(client.transaction_status(), TransactionStatus::Failed);
        client.batch_execute("ROLLBACK").await.unwrap();
        assert_eq!(client.transaction_status(), TransactionStatus::Idle);
    })
    .await
}
