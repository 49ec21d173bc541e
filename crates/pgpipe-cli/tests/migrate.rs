//! `pgpipe-cli migrate` against a throwaway server: status and apply of a
//! refinery migrations folder, a target version, a migration failing half
//! way (rolled back, reported, exit status 1), a second run that applies
//! nothing, and agreement with pgpipe's refinery runner in a service on
//! the same database.

use std::path::Path;
use std::process::Command;

use pgpipe_testkit::{AuthRole, Cluster};
use refinery_core::{load_sql_migrations, Runner};

fn cli(args: &[&str], url: &str, dir: &Path) -> (bool, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_pgpipe-cli"))
        .arg("migrate")
        .args(args)
        .arg("--url")
        .arg(url)
        .arg(dir)
        .output()
        .expect("run pgpipe-cli");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.success(), text)
}

fn write(dir: &Path, name: &str, sql: &str) {
    std::fs::write(dir.join(name), sql).expect("write migration");
}

fn query_bool(url: &str, sql: &str) -> bool {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let client = pgpipe::connect(url).await.unwrap();
        client.query_one(sql, ()).await.unwrap().get(0)
    })
}

#[test]
fn migrate_status_apply_target_failure_and_agreement_with_the_library() {
    let cluster = Cluster::shared().expect("test cluster");
    let db = cluster.create_database("cli_migrate").expect("database");
    let url = db.url(AuthRole::Trust);
    let dir = tempfile::tempdir().expect("tempdir");
    write(
        dir.path(),
        "V1__users.sql",
        "CREATE TABLE users (id int8 PRIMARY KEY);",
    );
    write(
        dir.path(),
        "V2__messages.sql",
        "CREATE TABLE messages (id int8 PRIMARY KEY, owner int8 REFERENCES users);\n\
         CREATE INDEX messages_owner ON messages (owner);",
    );

    // Nothing applied yet: both pending, no history table needed.
    let (ok, out) = cli(&["status"], &url, dir.path());
    assert!(ok, "{out}");
    assert!(
        out.contains("V1__users  pending") && out.contains("V2__messages  pending"),
        "{out}"
    );

    // Up to version 1.
    let (ok, out) = cli(&["apply", "--target", "1"], &url, dir.path());
    assert!(ok, "{out}");
    assert!(
        out.contains("applied V1__users") && out.contains("1 migration(s) applied"),
        "{out}"
    );
    let (_, out) = cli(&["status"], &url, dir.path());
    assert!(
        out.contains("V1__users  applied") && out.contains("V2__messages  pending"),
        "{out}"
    );

    // The service's own runner (pgpipe's refinery support) applies the
    // rest of the same folder; the CLI sees it.
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let report = rt.block_on(async {
        let migrations = load_sql_migrations(dir.path()).unwrap();
        let mut client = pgpipe::connect(&url).await.unwrap();
        Runner::new(&migrations)
            .run_async(&mut client)
            .await
            .unwrap()
    });
    assert_eq!(report.applied_migrations().len(), 1);
    let (ok, out) = cli(&["status"], &url, dir.path());
    assert!(ok, "{out}");
    assert!(out.contains("V2__messages  applied"), "{out}");

    // A migration failing half way: reported, exit status 1, rolled back.
    write(
        dir.path(),
        "V3__fails_half_way.sql",
        "CREATE TABLE half_done (x int4);\nINSERT INTO no_such_table VALUES (1);",
    );
    let (ok, out) = cli(&["apply"], &url, dir.path());
    assert!(!ok, "{out}");
    assert!(out.contains("V3") && out.contains("no_such_table"), "{out}");
    assert!(!query_bool(
        &url,
        "SELECT to_regclass('half_done') IS NOT NULL"
    ));
    let (_, out) = cli(&["status"], &url, dir.path());
    assert!(out.contains("V3__fails_half_way  pending"), "{out}");

    // Fixed file: applied; a second run applies nothing.
    write(
        dir.path(),
        "V3__fails_half_way.sql",
        "CREATE TABLE half_done (x int4);",
    );
    let (ok, out) = cli(&["apply"], &url, dir.path());
    assert!(ok && out.contains("1 migration(s) applied"), "{out}");
    let (ok, out) = cli(&["apply"], &url, dir.path());
    assert!(ok && out.contains("0 migration(s) applied"), "{out}");

    // A file changed after it was applied: status and apply refuse.
    write(
        dir.path(),
        "V1__users.sql",
        "CREATE TABLE users (id int4 PRIMARY KEY);",
    );
    let (ok, out) = cli(&["status"], &url, dir.path());
    assert!(!ok && out.contains("V1__users  CHANGED"), "{out}");
    let (ok, out) = cli(&["apply"], &url, dir.path());
    assert!(!ok, "{out}");
}

#[test]
fn a_missing_folder_is_a_usage_error() {
    let (ok, out) = cli(
        &["status"],
        "postgres://localhost/none",
        Path::new("/no/such/folder"),
    );
    assert!(!ok);
    assert!(
        out.contains("/no/such/folder") && out.contains("not a folder"),
        "{out}"
    );
}
