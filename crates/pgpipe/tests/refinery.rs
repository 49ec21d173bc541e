//! refinery migrations through pgpipe (feature `refinery`), against a real
//! server: `embed_migrations!` and `Runner::run_async` on a `Client`, a
//! `PooledClient` and a `Pool`; a migration that fails half way is rolled
//! back whole while the ones before it stay recorded; a second run is a
//! no-op; and the history table is refinery's own, so tokio-postgres users
//! (and `pgpipe-cli migrate`) read the same state.

mod common;

use common::{connect, database};
use pgpipe::GenericClient;
use refinery::{Migration, Runner, Target};

mod embedded {
    refinery::embed_migrations!("tests/migrations/refinery");
}

/// The two good migrations, then one whose first statement succeeds and
/// whose second fails.
fn with_failing_third() -> Vec<Migration> {
    let mut all = embedded::migrations::runner().get_migrations().to_vec();
    all.push(
        Migration::unapplied(
            "V3__fails_half_way",
            "CREATE TABLE half_done (x int4); INSERT INTO no_such_table VALUES (1);",
        )
        .unwrap(),
    );
    all
}

async fn history(db: &impl GenericClient) -> Vec<(i64, String)> {
    db.query(
        "SELECT version::int8, name FROM refinery_schema_history ORDER BY version",
        (),
    )
    .await
    .unwrap()
    .iter()
    .map(|r| (r.get(0), r.get(1)))
    .collect()
}

async fn table_exists(db: &impl GenericClient, name: &str) -> bool {
    db.query_one("SELECT to_regclass($1) IS NOT NULL", (name,))
        .await
        .unwrap()
        .get(0)
}

#[tokio::test]
async fn embedded_migrations_apply_once_on_a_client() {
    let db = database("refinery_client");
    let mut client = connect(&db).await;

    let report = embedded::migrations::runner()
        .run_async(&mut client)
        .await
        .unwrap();
    let applied: Vec<_> = report
        .applied_migrations()
        .iter()
        .map(|m| (m.version(), m.name().to_owned()))
        .collect();
    assert_eq!(
        applied,
        [(1, "users".to_owned()), (2, "messages".to_owned())]
    );
    assert_eq!(
        history(&client).await,
        [(1, "users".to_owned()), (2, "messages".to_owned())]
    );
    client
        .execute("INSERT INTO messages VALUES (10, 1, 'hi')", ())
        .await
        .unwrap();

    // A second run finds everything applied: nothing runs, nothing changes.
    let again = embedded::migrations::runner()
        .run_async(&mut client)
        .await
        .unwrap();
    assert!(again.applied_migrations().is_empty());
    assert_eq!(history(&client).await.len(), 2);
    let last = embedded::migrations::runner()
        .get_last_applied_migration_async(&mut client)
        .await
        .unwrap()
        .expect("a last applied migration");
    assert_eq!(last.version(), 2);
    assert!(last.applied_on().is_some());
}

#[tokio::test]
async fn a_migration_failing_half_way_rolls_back_whole_and_keeps_the_earlier_ones() {
    let db = database("refinery_failing");
    let mut client = connect(&db).await;

    let migrations = with_failing_third();
    let err = Runner::new(&migrations)
        .run_async(&mut client)
        .await
        .expect_err("V3 must fail");
    // refinery reports what was applied before the failure.
    let applied: Vec<_> = err
        .report()
        .expect("a report of the migrations applied before the failure")
        .applied_migrations()
        .iter()
        .map(|m| m.version())
        .collect();
    assert_eq!(applied, [1, 2]);
    assert!(
        err.to_string().contains("V3") || format!("{err:?}").contains("no_such_table"),
        "the error names the failing migration or its cause: {err:?}"
    );
    assert_eq!(
        history(&client).await,
        [(1, "users".to_owned()), (2, "messages".to_owned())]
    );
    assert!(table_exists(&client, "messages").await);
    assert!(
        !table_exists(&client, "half_done").await,
        "V3's first statement was not rolled back"
    );

    // Run again: the first two are skipped, V3 fails again the same way,
    // and the database is as before.
    let err = Runner::new(&migrations)
        .run_async(&mut client)
        .await
        .unwrap_err();
    assert!(err.report().unwrap().applied_migrations().is_empty());
    assert_eq!(history(&client).await.len(), 2);
    assert!(!table_exists(&client, "half_done").await);
    assert_eq!(
        client
            .query_one("SELECT 1::int4", ())
            .await
            .unwrap()
            .get::<i32, _>(0),
        1
    );
}

#[tokio::test]
async fn grouped_migrations_fail_as_one_transaction() {
    let db = database("refinery_grouped");
    let mut client = connect(&db).await;

    let migrations = with_failing_third();
    Runner::new(&migrations)
        .set_grouped(true)
        .run_async(&mut client)
        .await
        .expect_err("V3 must fail");
    // One transaction for all: nothing applied, nothing recorded.
    assert!(!table_exists(&client, "users").await);
    assert!(history(&client).await.is_empty());
}

#[tokio::test]
async fn a_target_version_stops_there() {
    let db = database("refinery_target");
    let mut client = connect(&db).await;

    let report = embedded::migrations::runner()
        .set_target(Target::Version(1))
        .run_async(&mut client)
        .await
        .unwrap();
    assert_eq!(report.applied_migrations().len(), 1);
    assert!(table_exists(&client, "users").await);
    assert!(!table_exists(&client, "messages").await);
}

#[tokio::test]
async fn migrations_run_through_a_pool_and_a_checkout() {
    let db = database("refinery_pool");
    let url = db.url(pgpipe_testkit::AuthRole::Trust);
    let mut pool = pgpipe::Pool::connect(&url).await.unwrap();

    let report = embedded::migrations::runner()
        .set_target(Target::Version(1))
        .run_async(&mut pool)
        .await
        .unwrap();
    assert_eq!(report.applied_migrations().len(), 1);

    let mut checkout = pool.get().await.unwrap();
    let report = embedded::migrations::runner()
        .run_async(&mut checkout)
        .await
        .unwrap();
    let versions: Vec<_> = report
        .applied_migrations()
        .iter()
        .map(|m| m.version())
        .collect();
    assert_eq!(versions, [2]);
    drop(checkout);
    assert_eq!(history(&pool).await.len(), 2);
}

#[tokio::test]
async fn a_changed_migration_is_refused() {
    let db = database("refinery_divergent");
    let mut client = connect(&db).await;
    embedded::migrations::runner()
        .run_async(&mut client)
        .await
        .unwrap();

    // V2's file edited after it was applied: refinery's checksum check.
    let mut edited = embedded::migrations::runner().get_migrations().to_vec();
    edited[1] = Migration::unapplied("V2__messages", "CREATE TABLE other (x int4);").unwrap();
    let err = Runner::new(&edited)
        .set_abort_divergent(true)
        .run_async(&mut client)
        .await
        .unwrap_err();
    assert!(
        matches!(err.kind(), refinery::error::Kind::DivergentVersion(..)),
        "{err:?}"
    );
}
