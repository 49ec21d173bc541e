//! `pgpipe-cli check` against a throwaway server: a good directory passes,
//! a broken query is reported with file:line and a failing exit status.

use std::process::Command;

use pgpipe_testkit::{AuthRole, Cluster};

fn cli(url: &str, paths: &[&std::path::Path]) -> (bool, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_pgpipe-cli"))
        .arg("check")
        .arg("--url")
        .arg(url)
        .args(paths)
        .output()
        .expect("run pgpipe-cli");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.success(), text)
}

#[test]
fn check_reports_problems_with_file_and_line() {
    let cluster = Cluster::shared().expect("test cluster");
    let db = cluster.create_database("cli_check").expect("database");
    let url = db.url(AuthRole::Trust);
    cluster
        .execute(
            db.name(),
            "CREATE TABLE users (id int8 PRIMARY KEY, name text)",
        )
        .expect("schema");
    let dir = tempfile::tempdir().expect("tempdir");
    let good = dir.path().join("users.sql");
    std::fs::write(
        &good,
        "-- name: by_id :one\nSELECT name FROM users WHERE id = :id;\n\n-- name: all :many\nSELECT id FROM users;\n",
    )
    .unwrap();
    let (ok, out) = cli(&url, &[dir.path()]);
    assert!(ok, "{out}");
    assert!(out.contains("2 named queries checked: 0 error(s)"), "{out}");

    let nested = dir.path().join("more");
    std::fs::create_dir(&nested).unwrap();
    std::fs::write(
        nested.join("broken.sql"),
        "\n-- name: gone :many\nSELECT * FROM no_such_table WHERE id = :id;\n",
    )
    .unwrap();
    let (ok, out) = cli(&url, &[dir.path()]);
    assert!(!ok, "{out}");
    assert!(
        out.contains("broken.sql:2: query gone: the server rejects the statement"),
        "{out}"
    );
    assert!(out.contains("42P01"), "{out}");

    std::fs::write(nested.join("bad_syntax.sql"), "SELECT 1;\n").unwrap();
    let (ok, out) = cli(&url, &[&nested]);
    assert!(!ok);
    assert!(
        out.contains("bad_syntax.sql: line 1: SQL before the first"),
        "{out}"
    );
}
