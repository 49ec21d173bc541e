//! Streaming replication: a standby of a private cluster, catching up,
//! read-only until promoted, and taking over when the primary stops.

use std::net::TcpStream;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use pgpipe_testkit::{AuthRole, Cluster};

fn start() -> Cluster {
    Cluster::start().unwrap_or_else(|e| panic!("cannot start a cluster: {e}"))
}

fn values(cluster: &Cluster, db: &str) -> Vec<String> {
    cluster
        .query(db, "SELECT v FROM t ORDER BY v")
        .unwrap_or_else(|e| panic!("reading t on port {}: {e}", cluster.port()))
        .into_iter()
        .map(|row| row[0].clone().unwrap())
        .collect()
}

fn in_recovery(cluster: &Cluster) -> bool {
    let rows = cluster
        .query("postgres", "SELECT pg_is_in_recovery()")
        .unwrap();
    rows[0][0].as_deref() == Some("t")
}

/// The port refuses TCP connections (allowing the kernel a moment).
fn assert_refused(port: u16) {
    let deadline = Instant::now() + Duration::from_secs(5);
    while TcpStream::connect(("127.0.0.1", port)).is_ok() {
        assert!(
            Instant::now() < deadline,
            "port {port} still accepts connections"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn standby_replicates_is_read_only_and_takes_over_when_promoted() {
    let primary = start();
    let db = primary.create_database("failover").unwrap();
    primary
        .execute(
            db.name(),
            "CREATE TABLE t (v text); INSERT INTO t VALUES ('a before')",
        )
        .unwrap();

    let standby = primary
        .start_standby()
        .unwrap_or_else(|e| panic!("cannot start a standby: {e}"));
    assert_ne!(standby.port(), primary.port());
    assert_ne!(standby.socket_dir(), primary.socket_dir());
    assert_ne!(standby.dir(), primary.dir());
    assert!(standby
        .socket_dir()
        .join(format!(".s.PGSQL.{}", standby.port()))
        .exists());
    assert!(standby.is_running());
    assert!(in_recovery(&standby));
    assert_eq!(standby.version(), primary.version());
    // The same roles (replicated), the standby's own address.
    assert_eq!(
        standby.url(AuthRole::Scram, db.name()),
        primary
            .url(AuthRole::Scram, db.name())
            .replace(&primary.port().to_string(), &standby.port().to_string())
    );
    let roles = standby
        .query(
            "postgres",
            "SELECT count(*) FROM pg_authid WHERE rolname LIKE 'pgpipe\\_%'",
        )
        .unwrap();
    assert_eq!(roles, vec![vec![Some(AuthRole::ALL.len().to_string())]]);

    // What existed before the backup, and what is written afterwards.
    primary.wait_replicated(&standby).unwrap();
    assert_eq!(values(&standby, db.name()), ["a before"]);
    primary
        .execute(db.name(), "INSERT INTO t VALUES ('b streamed')")
        .unwrap();
    primary.wait_replicated(&standby).unwrap();
    assert_eq!(values(&standby, db.name()), ["a before", "b streamed"]);

    // Read only: 25006 read_only_sql_transaction.
    let err = standby
        .execute(db.name(), "INSERT INTO t VALUES ('refused')")
        .unwrap_err();
    assert_eq!(err.code(), Some("25006"), "{err}");
    // Databases are made on the primary only.
    assert!(standby.create_database("on_standby").is_err());

    // Failover.
    let old_port = primary.port();
    primary.stop().unwrap();
    assert!(!primary.is_running());
    assert_refused(old_port);
    primary.stop().unwrap(); // stopping twice is harmless
    standby
        .promote()
        .unwrap_or_else(|e| panic!("promotion failed: {e}"));
    assert!(!in_recovery(&standby));
    standby
        .execute(db.name(), "INSERT INTO t VALUES ('c promoted')")
        .unwrap();
    assert_eq!(
        values(&standby, db.name()),
        ["a before", "b streamed", "c promoted"]
    );
    // Promoting a primary is refused by the server.
    let err = standby.promote().unwrap_err();
    assert_eq!(err.code(), Some("55000"), "{err}");

    // The old primary comes back on its port with its own data (a second,
    // independent primary: it never saw the promoted standby's write).
    primary.start_again().unwrap();
    assert!(primary.is_running());
    assert_eq!(primary.port(), old_port);
    assert!(!in_recovery(&primary));
    assert_eq!(values(&primary, db.name()), ["a before", "b streamed"]);
    primary.start_again().unwrap(); // starting a running server is a no-op

    let dirs: Vec<PathBuf> = [&primary, &standby]
        .iter()
        .map(|c| c.dir().unwrap().to_path_buf())
        .collect();
    let ports = [primary.port(), standby.port()];
    drop(db);
    drop(standby);
    drop(primary);
    for dir in dirs {
        assert!(!dir.exists(), "{} survived", dir.display());
    }
    for port in ports {
        assert_refused(port);
    }
}

#[test]
fn a_stopped_standby_catches_up_when_started_again() {
    let primary = start();
    let standby = primary.start_standby().unwrap();
    standby.stop().unwrap();
    assert!(!standby.is_running());
    assert_refused(standby.port());
    let db = primary.create_database("catch_up").unwrap();
    primary
        .execute(
            db.name(),
            "CREATE TABLE t (v text); INSERT INTO t VALUES ('while down')",
        )
        .unwrap();
    standby.start_again().unwrap();
    assert!(in_recovery(&standby));
    primary.wait_replicated(&standby).unwrap();
    assert_eq!(values(&standby, db.name()), ["while down"]);
    // A restart keeps it a standby.
    standby.restart().unwrap();
    assert!(in_recovery(&standby));
}

#[test]
fn replication_misuse_fails_fast_with_a_clear_message() {
    let primary = start();
    let started = Instant::now();
    // A primary is no standby of itself.
    let err = primary.wait_replicated(&primary).unwrap_err();
    assert!(err.to_string().contains("not in recovery"), "{err}");
    // A stopped cluster has no standby; a database dropped while its cluster
    // is stopped is left alone (no error, no hang).
    let db = primary.create_database("stopped").unwrap();
    primary.stop().unwrap();
    drop(db);
    let err = primary.start_standby().unwrap_err();
    assert!(err.to_string().contains("stopped"), "{err}");
    assert!(
        started.elapsed() < Duration::from_secs(20),
        "{:?}",
        started.elapsed()
    );
}
