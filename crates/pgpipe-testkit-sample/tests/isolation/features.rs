//! Fixtures, migrations, and a database without migrations.

use pgpipe::Pool;
use pgpipe_testkit_sample::{authors, notes_by};

#[pgpipe_testkit::test(migrations = "migrations", fixtures("users", "messages"))]
async fn fixtures_load_in_order_after_migrations(pool: Pool) -> Result<(), pgpipe::Error> {
    // messages.sql reads the users users.sql inserted.
    assert_eq!(
        authors(&pool).await?,
        vec![("ann".to_string(), 1), ("bob".to_string(), 1)]
    );
    assert_eq!(notes_by(&pool, "bob").await?, vec!["welcome, bob"]);
    Ok(())
}

#[pgpipe_testkit::test(migrations = "migrations", fixtures("fixtures/users.sql"))]
async fn a_fixture_can_be_named_by_its_path(pool: Pool) -> Result<(), pgpipe::Error> {
    let n: i64 = pool
        .query_one("SELECT count(*) FROM users", ())
        .await?
        .get(0);
    assert_eq!(n, 2);
    assert_eq!(authors(&pool).await?, vec![]);
    Ok(())
}

#[pgpipe_testkit::test(migrations = "migrations")]
async fn migrations_apply_in_version_order(pool: Pool) -> Result<(), pgpipe::Error> {
    // V10 ran after V2 (version order, not file-name order), and V2 after V1.
    let applied: String = pool
        .query_one("SELECT applied FROM schema_version", ())
        .await?
        .get(0);
    assert_eq!(applied, "id,author,body,pinned");
    // The template itself is not where the test runs.
    let (db, is_template): (String, bool) = {
        let row = pool
            .query_one(
                "SELECT datname::text, datistemplate FROM pg_database WHERE datname = current_database()",
                (),
            )
            .await?;
        (row.get(0), row.get(1))
    };
    assert!(
        db.starts_with("pgpipe_migrations_apply_in_version_order_"),
        "{db}"
    );
    assert!(!is_template);
    Ok(())
}

#[pgpipe_testkit::test]
async fn without_migrations_the_database_is_empty(pool: Pool) -> Result<(), pgpipe::Error> {
    let tables: i64 = pool
        .query_one(
            "SELECT count(*) FROM pg_tables WHERE schemaname = 'public'",
            (),
        )
        .await?
        .get(0);
    assert_eq!(tables, 0);
    // The test owns the database: it may create what it likes.
    pool.batch_execute("CREATE TABLE scratch (x int); INSERT INTO scratch VALUES (1)")
        .await?;
    Ok(())
}
