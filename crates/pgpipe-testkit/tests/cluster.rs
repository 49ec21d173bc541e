//! Throwaway clusters: the shared one, private ones, databases, restart.

use std::net::TcpStream;
use std::time::{Duration, Instant};

use pgpipe_testkit::{AuthRole, Bouncer, Cluster};

fn shared() -> &'static Cluster {
    Cluster::shared().unwrap_or_else(|e| panic!("cannot start the shared cluster: {e}"))
}

fn database_exists(cluster: &Cluster, name: &str) -> bool {
    let rows = cluster
        .query(
            "postgres",
            &format!("SELECT count(*) FROM pg_database WHERE datname = '{name}'"),
        )
        .unwrap();
    rows == vec![vec![Some("1".to_string())]]
}

#[test]
fn shared_cluster_is_one_per_process_and_reports_itself() {
    let a = shared();
    // From other threads too (tests run in parallel threads).
    let from_threads: Vec<usize> = (0..4)
        .map(|_| std::thread::spawn(|| shared() as *const Cluster as usize))
        .map(|h| h.join().unwrap())
        .collect();
    assert!(from_threads
        .iter()
        .all(|&p| p == a as *const Cluster as usize));
    assert!(!a.version().is_empty());
    assert_ne!(a.port(), 0);
    if !a.is_external() {
        assert_eq!(a.host(), "127.0.0.1");
        assert!(a
            .socket_dir()
            .join(format!(".s.PGSQL.{}", a.port()))
            .exists());
        assert_eq!(a.superuser(), "pgpipe");
        let rows = a.query("postgres", "SHOW server_version").unwrap();
        assert_eq!(rows[0][0].as_deref(), Some(a.version()));
    }
}

#[test]
fn urls_are_percent_encoded() {
    let c = shared();
    if c.is_external() {
        eprintln!("skipped: role URLs need the testkit cluster (PGPIPE_TEST_URL is set)");
        return;
    }
    let url = c.url(AuthRole::Md5, "my db");
    assert_eq!(
        url,
        format!(
            "postgres://pgpipe_md5:pw%40md5%20ok%21@127.0.0.1:{}/my%20db",
            c.port()
        )
    );
    assert_eq!(
        c.url(AuthRole::Trust, "d"),
        format!("postgres://pgpipe_trust@127.0.0.1:{}/d", c.port())
    );
    let socket = c.socket_url(AuthRole::Trust, "d");
    let dir = c.socket_dir().to_str().unwrap().replace('/', "%2F");
    assert_eq!(
        socket,
        format!("postgres://pgpipe_trust@{dir}:{}/d", c.port())
    );
    assert_eq!(
        c.superuser_url("d"),
        format!("postgres://pgpipe@127.0.0.1:{}/d", c.port())
    );
}

#[test]
fn databases_are_distinct_usable_by_every_role_and_dropped() {
    let c = shared();
    let a = c.create_database("Some Hint").unwrap();
    let b = c.create_database("Some Hint").unwrap();
    assert_ne!(a.name(), b.name());
    assert!(a.name().starts_with("pgpipe_some_hint_"), "{}", a.name());
    assert!(database_exists(c, a.name()));
    assert!(a.url(AuthRole::Scram).ends_with(&format!("/{}", a.name())));
    assert!(a.superuser_url().ends_with(&format!("/{}", a.name())));

    if !c.is_external() {
        // Every role may create in public (PostgreSQL 15 no longer allows it by default).
        for role in AuthRole::ALL {
            c.execute(
                a.name(),
                &format!(
                    "SET ROLE {user}; CREATE TABLE {user}_t (id int); RESET ROLE",
                    user = role.user()
                ),
            )
            .unwrap_or_else(|e| panic!("{role:?}: {e}"));
        }
    }

    let name = a.name().to_string();
    drop(a);
    assert!(!database_exists(c, &name), "{name} still exists after drop");
    assert!(database_exists(c, b.name()));
}

#[test]
fn execute_reports_server_errors_with_sqlstate() {
    let c = shared();
    let err = c
        .execute("postgres", "SELECT * FROM no_such_table")
        .unwrap_err();
    assert_eq!(err.code(), Some("42P01"), "{err}");
    assert!(err.to_string().contains("no_such_table"), "{err}");
    let err = c.execute("no_such_database_here", "SELECT 1").unwrap_err();
    assert_eq!(err.code(), Some("3D000"), "{err}");
}

#[test]
fn dropping_an_owned_cluster_stops_it_and_deletes_its_directory() {
    let cluster = Cluster::start().unwrap_or_else(|e| panic!("cannot start a cluster: {e}"));
    let port = cluster.port();
    let dir = cluster.dir().unwrap().to_path_buf();
    assert!(dir.join("data/PG_VERSION").exists());
    assert!(TcpStream::connect(("127.0.0.1", port)).is_ok());
    drop(cluster);
    assert!(!dir.exists(), "{} survived", dir.display());
    // The server is gone: the port refuses connections (allow a moment for
    // the kernel to tear the socket down).
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
fn restart_keeps_data_and_port() {
    let cluster = Cluster::start().unwrap_or_else(|e| panic!("cannot start a cluster: {e}"));
    let db = cluster.create_database("restart").unwrap();
    cluster
        .execute(
            db.name(),
            "CREATE TABLE kept (v text); INSERT INTO kept VALUES ('still here')",
        )
        .unwrap();
    let port = cluster.port();
    let before = cluster
        .query("postgres", "SELECT pg_postmaster_start_time()")
        .unwrap();
    cluster.restart().unwrap();
    assert_eq!(cluster.port(), port);
    let after = cluster
        .query("postgres", "SELECT pg_postmaster_start_time()")
        .unwrap();
    assert_ne!(before, after, "the server did not restart");
    let rows = cluster.query(db.name(), "SELECT v FROM kept").unwrap();
    assert_eq!(rows, vec![vec![Some("still here".to_string())]]);
    // Restarting twice in a row works too.
    cluster.restart().unwrap();
    assert!(cluster.execute(db.name(), "SELECT 1").is_ok());
}

/// A test process that keeps its bouncer in a `static` never drops it: its
/// files must go with the cluster's directory, not stay in the temp
/// directory after every run.
#[test]
fn a_bouncer_keeps_its_files_in_its_clusters_directory() {
    let cluster = Cluster::start().unwrap_or_else(|e| panic!("cannot start a cluster: {e}"));
    let root = cluster
        .dir()
        .expect("a testkit cluster has a directory")
        .to_path_buf();
    let bouncer = Bouncer::start(&cluster).unwrap_or_else(|e| panic!("pgbouncer: {e}"));
    let dir = bouncer.dir().to_path_buf();
    assert!(
        dir.starts_with(&root),
        "{} is outside {}",
        dir.display(),
        root.display()
    );
    assert!(dir.join("pgbouncer.ini").is_file());
    TcpStream::connect(("127.0.0.1", bouncer.port())).expect("pgbouncer listens");
    drop(bouncer);
    assert!(
        !dir.exists(),
        "{} left behind by a dropped bouncer",
        dir.display()
    );
    drop(cluster);
    assert!(!root.exists(), "{} left behind", root.display());
}
