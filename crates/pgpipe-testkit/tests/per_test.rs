//! The per-test database runtime without the attribute: templates from a
//! migrations folder, fixtures, and what a passing and a failing test
//! leave behind.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::Path;

use pgpipe_testkit::{run_test, test_server, Cluster, TestSpec};

fn server() -> &'static Cluster {
    test_server().unwrap_or_else(|e| panic!("no test server: {e}"))
}

fn exists(name: &str) -> bool {
    let rows = server()
        .query(
            "postgres",
            &format!("SELECT count(*) FROM pg_database WHERE datname = '{name}'"),
        )
        .unwrap();
    rows[0][0].as_deref() == Some("1")
}

/// A migrations folder whose contents (and so template) are this test's own.
fn folder(files: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let unique = format!("-- {:?}\n", dir.path());
    for (name, sql) in files {
        std::fs::write(dir.path().join(name), format!("{unique}{sql}")).unwrap();
    }
    dir
}

fn dbname_of(url: &str) -> String {
    url.rsplit('/').next().unwrap().to_string()
}

#[test]
fn migrations_go_into_one_template_that_every_database_copies() {
    let dir = folder(&[
        ("V1__t.sql", "CREATE TABLE t (x int)"),
        ("V2__row.sql", "INSERT INTO t VALUES (2)"),
    ]);
    let spec = TestSpec::new("mod::copies").migrations(dir.path());
    let template = spec.template_name().unwrap().unwrap();
    assert!(template.starts_with("pgpipe_tpl_"), "{template}");
    assert!(!exists(&template));
    let a = spec.create_database().unwrap();
    let b = spec.create_database().unwrap();
    assert_ne!(a.name(), b.name());
    assert!(a.name().starts_with("pgpipe_copies_"), "{}", a.name());
    for db in [&a, &b] {
        let rows = server().query(db.name(), "SELECT x FROM t").unwrap();
        assert_eq!(rows, vec![vec![Some("2".to_string())]]);
    }
    let flags = server()
        .query(
            "postgres",
            &format!(
                "SELECT datistemplate, datallowconn FROM pg_database WHERE datname = '{template}'"
            ),
        )
        .unwrap();
    assert_eq!(
        flags,
        vec![vec![Some("t".to_string()), Some("f".to_string())]]
    );
    let (a_name, b_name) = (a.name().to_string(), b.name().to_string());
    drop((a, b));
    assert!(!exists(&a_name) && !exists(&b_name));
    assert!(exists(&template), "the template stays for later tests");
}

#[test]
fn a_failing_migration_names_its_file_and_leaves_no_template() {
    let dir = folder(&[
        ("V1__ok.sql", "CREATE TABLE ok (x int)"),
        ("V2__broken.sql", "CREATE TABLE ok (x int)"),
    ]);
    let spec = TestSpec::new("broken").migrations(dir.path());
    let template = spec.template_name().unwrap().unwrap();
    let e = spec.create_database().unwrap_err();
    let text = e.to_string();
    assert!(text.contains("V2__broken.sql"), "{text}");
    assert_eq!(e.code(), Some("42P07"), "{text}"); // duplicate_table
    let left = server()
        .query(
            "postgres",
            &format!("SELECT datname FROM pg_database WHERE datname LIKE '{template}%'"),
        )
        .unwrap();
    assert_eq!(left, Vec::<Vec<Option<String>>>::new());
}

#[test]
fn fixtures_run_in_order_and_a_failing_one_is_named() {
    let dir = folder(&[("V1__t.sql", "CREATE TABLE t (x int)")]);
    let spec = TestSpec::new("fixtures")
        .migrations(dir.path())
        .fixture("one", "INSERT INTO t VALUES (1)")
        .fixture("double", "INSERT INTO t SELECT x * 2 FROM t");
    let db = spec.create_database().unwrap();
    let rows = server()
        .query(db.name(), "SELECT x FROM t ORDER BY x")
        .unwrap();
    assert_eq!(
        rows,
        vec![vec![Some("1".to_string())], vec![Some("2".to_string())]]
    );
    let e = spec
        .fixture("typo", "INSERT INTO nope VALUES (1)")
        .create_database()
        .unwrap_err();
    assert!(e.to_string().contains("loading fixture typo"), "{e}");
    assert_eq!(e.code(), Some("42P01"));
}

#[test]
fn a_misnamed_migration_is_refused() {
    let dir = folder(&[("init.sql", "CREATE TABLE t (x int)")]);
    let e = TestSpec::new("misnamed")
        .migrations(dir.path())
        .create_database()
        .unwrap_err();
    assert!(e.to_string().contains("V<version>__<name>.sql"), "{e}");
    let missing = TestSpec::new("missing").migrations(Path::new("/nonexistent/migrations"));
    assert!(missing.create_database().is_err());
}

/// A test body's panic (a function, so the body's type is `()`).
fn fail_on_purpose() {
    panic!("panicking on purpose")
}

#[test]
fn a_passing_test_drops_its_database_a_failing_one_keeps_it() {
    let mut seen = String::new();
    run_test(TestSpec::new("passes"), |url| {
        seen = dbname_of(&url);
        async {}
    });
    assert!(seen.starts_with("pgpipe_passes_"), "{seen}");
    assert!(!exists(&seen));

    let mut kept = String::new();
    let failed = catch_unwind(AssertUnwindSafe(|| {
        run_test(TestSpec::new("returns_err"), |url| {
            kept = dbname_of(&url);
            async { Err::<(), _>("broken on purpose") }
        })
    }));
    let payload = failed.unwrap_err();
    let message = payload.downcast_ref::<String>().unwrap();
    assert!(message.contains("\"broken on purpose\""), "{message}");
    assert!(exists(&kept), "{kept}");

    let mut kept_after_panic = String::new();
    let failed = catch_unwind(AssertUnwindSafe(|| {
        run_test(TestSpec::new("panics"), |url| {
            kept_after_panic = dbname_of(&url);
            async { fail_on_purpose() }
        })
    }));
    assert_eq!(
        failed.unwrap_err().downcast_ref::<&str>(),
        Some(&"panicking on purpose")
    );
    assert!(exists(&kept_after_panic), "{kept_after_panic}");
    for db in [kept, kept_after_panic] {
        server()
            .execute("postgres", &format!("DROP DATABASE {db}"))
            .unwrap();
    }
}
