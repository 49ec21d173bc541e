//! Connecting: TCP and Unix sockets, every authentication method, bad
//! addresses and bad connection strings.

mod common;

use std::future::Future;
use std::time::{Duration, Instant};

use common::{bounded, cluster, database};
use pgpipe::{ErrorKind, SqlState};
use pgpipe_testkit::AuthRole;

#[tokio::test]
async fn connects_over_tcp_and_reports_server_parameters() {
    bounded(async {
        let db = database("tcp");
        let client = pgpipe::connect(&db.url(AuthRole::Trust)).await.unwrap();
        let row = client
            .query_one("SELECT current_database()::text", ())
            .await
            .unwrap();
        assert_eq!(row.get::<&str, _>(0), db.name());
        assert_eq!(client.parameter("client_encoding").as_deref(), Some("UTF8"));
        assert!(client.parameter("server_version").is_some());
        assert!(client.backend_pid() > 0);
        let pid: i32 = client
            .query_one("SELECT pg_backend_pid()", ())
            .await
            .unwrap()
            .get(0);
        assert_eq!(pid, client.backend_pid());
    })
    .await
}

#[tokio::test]
async fn connects_over_the_unix_socket() {
    bounded(async {
        let db = database("unix");
        let url = db.socket_url(AuthRole::Trust);
        let client = pgpipe::connect(&url).await.unwrap();
        // Over a Unix socket the server sees no client address.
        let row = client
            .query_one("SELECT inet_client_addr() IS NULL", ())
            .await
            .unwrap();
        assert!(
            row.get::<bool, _>(0),
            "expected a Unix-socket connection for {url}"
        );
    })
    .await
}

#[tokio::test]
async fn every_auth_method_accepts_the_right_password_and_rejects_a_wrong_one() {
    bounded(async {
        if cluster().is_external() {
            eprintln!("skipped: auth roles need the testkit cluster (PGPIPE_TEST_URL is set)");
            return;
        }
        let db = database("auth");
        for role in AuthRole::ALL {
            for url in [db.url(role), db.socket_url(role)] {
                let client = pgpipe::connect(&url)
                    .await
                    .unwrap_or_else(|e| panic!("{role:?} with the right password: {e}"));
                let user: String = client
                    .query_one("SELECT current_user::text", ())
                    .await
                    .unwrap()
                    .get(0);
                assert_eq!(user, role.user());

                if role == AuthRole::Trust {
                    continue;
                }
                let bad = url.replacen(&percent_encode(role.password()), "wrong-password", 1);
                assert_ne!(bad, url, "the URL should carry the password");
                let err = pgpipe::connect(&bad).await.unwrap_err();
                assert_eq!(err.kind(), ErrorKind::Auth, "{role:?}: {err}");
                assert_eq!(
                    err.code(),
                    Some(&SqlState::INVALID_PASSWORD),
                    "{role:?}: {err}"
                );
                let db_err = err.as_db_error().expect("the server's report is kept");
                assert!(
                    db_err.message().contains("password authentication failed"),
                    "{role:?}: {db_err}"
                );
            }
        }
    })
    .await
}

#[tokio::test]
async fn a_password_file_supplies_the_password_and_its_changes_count_at_once() {
    bounded(async {
        if cluster().is_external() {
            eprintln!("skipped: auth roles need the testkit cluster (PGPIPE_TEST_URL is set)");
            return;
        }
        let db = database("passfile");
        let role = AuthRole::Scram;
        // Deleted when the test ends, also when it fails.
        let temp = tempfile::Builder::new()
            .prefix("pgpipe-passfile-")
            .tempdir()
            .unwrap();
        let dir = temp.path();
        let path = dir.join("pgpass");
        let line = |password: &str| {
            let escaped = password.replace('\\', "\\\\").replace(':', "\\:");
            format!(
                "{}:{}:*:{}:{escaped}\n",
                cluster().host(),
                cluster().port(),
                role.user()
            )
        };
        // Replaced by rename, as editors do.
        let write = |contents: String, mode: u32| {
            let next = dir.join("pgpass.new");
            std::fs::write(&next, contents).unwrap();
            set_mode(&next, mode);
            std::fs::rename(&next, &path).unwrap();
        };
        let conninfo = format!(
            "host={} port={} user={} dbname={} passfile={}",
            cluster().host(),
            cluster().port(),
            role.user(),
            db.name(),
            path.display()
        );
        let connects = || async { pgpipe::connect(&conninfo).await };

        write(line(role.password()), 0o600);
        for _ in 0..2 {
            let client = connects().await.expect("the file's password");
            let user: String = client
                .query_one("SELECT current_user::text", ())
                .await
                .unwrap()
                .get(0);
            assert_eq!(user, role.user());
        }

        write(line("wrong-password"), 0o600);
        let err = connects().await.expect_err("the rewritten file's password");
        assert_eq!(err.code(), Some(&SqlState::INVALID_PASSWORD), "{err}");

        write(line(role.password()), 0o600);
        connects().await.expect("the file's password again");

        // libpq's rule, kept: a file others may read is not used.
        set_mode(&path, 0o644);
        let err = connects().await.expect_err("a world-readable file");
        assert_eq!(err.kind(), ErrorKind::Auth, "{err}");
        assert!(err.to_string().contains("none was given"), "{err}");
        set_mode(&path, 0o600);
        connects().await.expect("private again");

        std::fs::remove_file(&path).unwrap();
        let err = connects().await.expect_err("a deleted file");
        assert!(err.to_string().contains("none was given"), "{err}");

        // A password in the configuration wins over the file.
        write(line("wrong-password"), 0o600);
        let mut config = pgpipe::Config::parse(&conninfo).unwrap();
        config.password(role.password());
        config.connect().await.expect("the configured password");
    })
    .await
}

/// libpq reads the password file before connecting; pgpipe only when the
/// server asks for a password and none is configured, so a server that
/// never asks (trust here; certificates) costs no file access per connect.
/// Whether the file was read shows in its access time: one older than the
/// modification time moves on the next read (relatime, the default).
#[tokio::test]
async fn the_password_file_is_read_only_when_the_server_asks_for_a_password() {
    bounded(async {
        if cluster().is_external() {
            eprintln!("skipped: auth roles need the testkit cluster (PGPIPE_TEST_URL is set)");
            return;
        }
        let db = database("passfile_lazy");
        // Deleted when the test ends, also when it fails.
        let temp = tempfile::Builder::new()
            .prefix("pgpipe-passfile-lazy-")
            .tempdir()
            .unwrap();
        let dir = temp.path();
        let path = dir.join("pgpass");
        // One line for every role: a trust connect that read the file would
        // find a match, so only not reading it leaves the access time alone.
        let contents: String = AuthRole::ALL
            .iter()
            .map(|role| {
                let escaped = role.password().replace('\\', "\\\\").replace(':', "\\:");
                format!("*:*:*:{}:{escaped}\n", role.user())
            })
            .collect();
        std::fs::write(&path, contents).unwrap();
        set_mode(&path, 0o600);
        let long_ago = std::time::SystemTime::UNIX_EPOCH + Duration::from_secs(86_400);
        std::fs::File::options()
            .write(true)
            .open(&path)
            .unwrap()
            .set_times(
                std::fs::FileTimes::new()
                    .set_accessed(long_ago)
                    .set_modified(std::time::SystemTime::now()),
            )
            .unwrap();
        let accessed = || std::fs::metadata(&path).unwrap().accessed().unwrap();
        let conninfo = |role: AuthRole| {
            format!(
                "host={} port={} user={} dbname={} passfile={}",
                cluster().host(),
                cluster().port(),
                role.user(),
                db.name(),
                path.display()
            )
        };

        for _ in 0..3 {
            let client = pgpipe::connect(&conninfo(AuthRole::Trust))
                .await
                .expect("trust needs no password");
            client.query_one("SELECT 1", ()).await.unwrap();
        }
        assert_eq!(
            accessed(),
            long_ago,
            "a trust connect read the password file"
        );

        // Asked for a password, the connect still takes it from the file.
        let client = pgpipe::connect(&conninfo(AuthRole::Scram))
            .await
            .expect("the file's password when the server asks");
        let user: String = client
            .query_one("SELECT current_user::text", ())
            .await
            .unwrap()
            .get(0);
        assert_eq!(user, AuthRole::Scram.user());
        if accessed() == long_ago {
            eprintln!("inconclusive: this file system does not record reads in the access time");
        }
    })
    .await
}

fn set_mode(path: &std::path::Path, mode: u32) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
}

fn percent_encode(s: &str) -> String {
    s.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

#[tokio::test]
async fn nothing_listening_fails_fast_naming_host_and_port() {
    bounded(async {
        // Bind then drop a listener to get a port nobody listens on.
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let started = Instant::now();
        let err = pgpipe::connect(&format!(
            "postgres://u@127.0.0.1:{port}/db?connect_timeout=2"
        ))
        .await
        .unwrap_err();
        assert!(started.elapsed() < Duration::from_secs(5));
        assert_eq!(err.kind(), ErrorKind::Connect, "{err}");
        let msg = err.to_string();
        assert!(msg.contains(&format!("127.0.0.1:{port}")), "{msg}");
    })
    .await
}

#[tokio::test]
async fn a_server_that_never_answers_hits_the_connect_timeout() {
    bounded(async {
        // Accepts TCP but never speaks: only the connect timeout can end this.
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let _hold = tokio::spawn(async move {
            let mut held = Vec::new();
            while let Ok((s, _)) = listener.accept().await {
                held.push(s);
            }
        });
        let started = Instant::now();
        let err = pgpipe::connect(&format!(
            "postgres://u@127.0.0.1:{port}/db?connect_timeout=1"
        ))
        .await
        .unwrap_err();
        assert!(
            started.elapsed() < Duration::from_secs(4),
            "took {:?}",
            started.elapsed()
        );
        assert!(err.is_timeout(), "{err}");
        assert!(
            err.to_string().contains(&format!("127.0.0.1:{port}")),
            "{err}"
        );
    })
    .await
}

#[tokio::test]
async fn bad_connection_strings_name_the_offending_part() {
    let err = pgpipe::connect("postgres://user@host:notaport/db")
        .await
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Config);
    assert!(err.to_string().contains("notaport"), "{err}");

    let err = pgpipe::connect("host=localhost bogus_key=1")
        .await
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Config);
    assert!(err.to_string().contains("bogus_key"), "{err}");

    let err = pgpipe::connect("postgres://u@h/db?sslmode=sometimes")
        .await
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Config);
    assert!(err.to_string().contains("sometimes"), "{err}");
}

#[tokio::test]
async fn dropping_the_last_client_terminates_the_session() {
    bounded(async {
        let db = database("terminate");
        let observer = common::connect(&db).await;
        let client = common::connect(&db).await;
        let pid = client.backend_pid();
        let clone = client.clone();
        drop(client);
        // A clone keeps the connection alive.
        assert_eq!(
            clone
                .query_one("SELECT 1::int4", ())
                .await
                .unwrap()
                .get::<i32, _>(0),
            1
        );
        drop(clone);
        common::backend_gone(
            &observer,
            pid,
            "the backend is gone after the last client was dropped",
        )
        .await;
    })
    .await
}

/// `close()` ends the session on the server at once, with or without a
/// request in flight, although the driver no longer waits for the server
/// to hang up: it ends once Terminate is written and the answers to what
/// was sent before it have arrived.
#[tokio::test]
async fn close_ends_the_session_on_the_server_and_the_driver_cleanly() {
    bounded(async {
        let db = database("close_ends");
        let observer = common::connect(&db).await;
        for in_flight in [false, true] {
            let (client, driver) = pgpipe::connect_with_driver(&db.url(AuthRole::Trust))
                .await
                .unwrap();
            let driver = tokio::spawn(driver);
            let pid = client.backend_pid();
            let mut asked = in_flight.then(|| Box::pin(client.query_one("SELECT 7::int4", ())));
            if let Some(ask) = &mut asked {
                // One poll queues the request; its answer needs the driver.
                std::future::poll_fn(|cx| {
                    assert!(ask.as_mut().poll(cx).is_pending());
                    std::task::Poll::Ready(())
                })
                .await;
                assert_eq!(client.pending_requests(), 1);
            }
            client.close();
            if let Some(ask) = asked {
                let row = ask
                    .await
                    .expect("the answer to a request sent before close() arrives");
                assert_eq!(row.get::<i32, _>(0), 7);
            }
            driver
                .await
                .unwrap()
                .unwrap_or_else(|e| panic!("the driver ended with an error: {e}"));
            common::backend_gone(
                &observer,
                pid,
                &format!("the backend is gone after close() (in flight: {in_flight})"),
            )
            .await;
        }
    })
    .await
}

#[tokio::test]
async fn close_fails_later_requests_as_closed() {
    bounded(async {
        let db = database("close");
        let client = common::connect(&db).await;
        client.close();
        let err = client.query("SELECT 1", ()).await.unwrap_err();
        assert!(err.is_closed(), "{err}");
        assert!(client.is_closed());
    })
    .await
}

/// Set in the child process of the environment test: the database it
/// must land in.
const ENV_CHILD: &str = "PGPIPE_ENV_CONNECT_CHILD";

/// libpq's variables fill what the connection string leaves out, read
/// afresh (in one pass) by each connect. A child process, because setting
/// variables in a test process with threads would race with the others.
#[tokio::test]
async fn libpq_environment_variables_fill_what_the_string_leaves_out() {
    if let Some(expected) = std::env::var_os(ENV_CHILD) {
        bounded(async move {
            let client = pgpipe::connect("").await.unwrap();
            let row = client
                .query_one(
                    "SELECT current_database()::text, current_setting('application_name')",
                    (),
                )
                .await
                .unwrap();
            assert_eq!(Some(row.get::<&str, _>(0)), expected.to_str());
            assert_eq!(row.get::<&str, _>(1), "from-the-environment");
        })
        .await;
        return;
    }
    bounded(async {
        use pgpipe::config::{Config, Host, ProcessEnvironment};
        let db = database("environment");
        let resolved = Config::parse(&db.url(AuthRole::Trust))
            .unwrap()
            .resolve(&ProcessEnvironment)
            .unwrap();
        let target = &resolved.targets[0];
        let host = match &target.host {
            Host::Tcp(name) => name.clone(),
            Host::Unix(dir) => dir.display().to_string(),
        };
        let mut child = tokio::process::Command::new(std::env::current_exe().unwrap());
        child
            .args([
                "--exact",
                "libpq_environment_variables_fill_what_the_string_leaves_out",
                "--test-threads=1",
            ])
            .env(ENV_CHILD, db.name())
            .env("PGHOST", host)
            .env("PGPORT", target.port.to_string())
            .env("PGUSER", &resolved.user)
            .env("PGDATABASE", db.name())
            .env("PGAPPNAME", "from-the-environment")
            .env_remove("PGSERVICE")
            .env_remove("PGPASSWORD");
        if let Some(password) = &target.password {
            child.env(
                "PGPASSWORD",
                String::from_utf8_lossy(password.expose()).as_ref(),
            );
        }
        let out = child.output().await.unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success() && stdout.contains("1 passed"),
            "child: {stdout}{}",
            String::from_utf8_lossy(&out.stderr)
        );
    })
    .await
}
