//! What differs between PostgreSQL majors, against real servers of each:
//! protocol 3.2 (18: long cancel keys), `sslnegotiation=direct` with ALPN
//! (17+), `in_hot_standby` reported on promotion (14+), and `require_auth`
//! with SCRAM channel binding on every version (13 to 18).
//!
//! Each test starts the versions it needs (`Cluster::start_version`) and
//! skips a version that is not installed, printing why, unless
//! `PGPIPE_PG_VERSIONS` (exported by scripts/test.sh after installing
//! them) lists it: then a missing version fails the test.

mod common;

use std::time::Duration;

use common::bounded;
use pgpipe::{ErrorKind, SqlState};
use pgpipe_testkit::{test_pki, version_available, AuthRole, Cluster, TlsCluster, TlsRole};

/// Every major version users run and the matrix covers.
const MATRIX: [u32; 6] = [13, 14, 15, 16, 17, 18];

/// The installed majors among `wanted`, each missing one named on stderr.
fn installed(wanted: impl IntoIterator<Item = u32>) -> Vec<u32> {
    wanted
        .into_iter()
        .filter(|&major| match version_available(major) {
            Ok(true) => true,
            Ok(false) => {
                eprintln!(
                    "skipped PostgreSQL {major}: not installed \
                     (scripts/ensure-postgres-versions.sh {major} installs it)"
                );
                false
            }
            Err(e) => panic!("{e}"),
        })
        .collect()
}

fn start(major: u32) -> Cluster {
    Cluster::start_version(major).unwrap_or_else(|e| panic!("cannot start PostgreSQL {major}: {e}"))
}

fn start_tls(major: u32) -> TlsCluster {
    TlsCluster::start_version(true, major)
        .unwrap_or_else(|e| panic!("cannot start a TLS cluster of PostgreSQL {major}: {e}"))
}

fn root_cert() -> String {
    test_pki().expect("PKI").root_cert().display().to_string()
}

async fn session_ssl(client: &pgpipe::Client) -> bool {
    client
        .query_one(
            "SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()",
            (),
        )
        .await
        .expect("pg_stat_ssl")
        .get::<bool, _>(0)
}

/// A query timeout cancels `pg_sleep` (a CancelRequest carrying the
/// session's key), and the session answers again afterwards. A key sent
/// wrong is ignored by the server: the sleep would run its 30 s and the
/// test's bound would fail it.
async fn assert_timeout_cancels(client: &pgpipe::Client, major: u32) {
    let err = client
        .with_timeout(Duration::from_millis(300))
        .execute("SELECT pg_sleep(30)", ())
        .await
        .expect_err("the timeout cancels the sleep");
    assert!(err.is_timeout(), "PostgreSQL {major}: {err}");
    let row = client
        .query_one("SELECT 6::int4 * 7", ())
        .await
        .unwrap_or_else(|e| panic!("PostgreSQL {major}, after the cancel: {e}"));
    assert_eq!(row.get::<i32, _>(0), 42);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn protocol_3_2_is_negotiated_with_18_and_its_long_key_cancels() {
    for major in installed([18]) {
        let cluster = start(major);
        let db = cluster.create_database("protocol_32").unwrap();
        bounded(async {
            // min_protocol_version=3.2 connects only when the server agrees
            // to 3.2 (against 15 it fails: see the test below).
            let url = format!(
                "{}?min_protocol_version=3.2&max_protocol_version=3.2",
                db.url(AuthRole::Scram)
            );
            let client = pgpipe::connect(&url)
                .await
                .unwrap_or_else(|e| panic!("PostgreSQL {major} at 3.2: {e}"));
            assert_eq!(
                client
                    .parameter("server_version")
                    .as_deref()
                    .map(|v| &v[..2]),
                Some("18")
            );
            // 18 sends a 32-byte key at 3.2: a real cancel must carry it whole.
            assert_timeout_cancels(&client, major).await;
            // The same through a cancel token, from another task.
            let token = client.cancel_token();
            let done = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
            let canceller = tokio::spawn({
                let done = done.clone();
                async move {
                    let mut result = Ok(());
                    // A cancel that arrives before the statement starts is
                    // a no-op: repeat until the statement ended.
                    while !done.load(std::sync::atomic::Ordering::SeqCst) {
                        tokio::time::sleep(Duration::from_millis(100)).await;
                        result = token.cancel().await;
                    }
                    result
                }
            });
            let e = client
                .execute("SELECT pg_sleep(30)", ())
                .await
                .expect_err("cancelled");
            done.store(true, std::sync::atomic::Ordering::SeqCst);
            assert_eq!(e.code(), Some(&SqlState::QUERY_CANCELED), "{e}");
            canceller.await.unwrap().expect("cancel at 3.2");
            // `latest` is 3.2 too, and the default (3.0) still works.
            for query in ["max_protocol_version=latest", "max_protocol_version=3.0"] {
                let url = format!("{}?{query}", db.url(AuthRole::Trust));
                let client = pgpipe::connect(&url)
                    .await
                    .unwrap_or_else(|e| panic!("{query}: {e}"));
                assert_timeout_cancels(&client, major).await;
            }
        })
        .await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn older_servers_downgrade_a_3_2_request_and_refuse_min_3_2() {
    for major in installed([13, 14, 15, 16, 17]) {
        let cluster = start(major);
        let db = cluster.create_database("protocol_32_down").unwrap();
        bounded(async {
            let url = format!("{}?max_protocol_version=3.2", db.url(AuthRole::Scram));
            let client = pgpipe::connect(&url)
                .await
                .unwrap_or_else(|e| panic!("PostgreSQL {major} downgrades to 3.0: {e}"));
            // The 4-byte key of 3.0 cancels.
            assert_timeout_cancels(&client, major).await;
            let url = format!("{}?min_protocol_version=3.2", db.url(AuthRole::Trust));
            let e = pgpipe::connect(&url)
                .await
                .expect_err("the server speaks 3.0 only");
            assert_eq!(e.kind(), ErrorKind::Unsupported, "PostgreSQL {major}: {e}");
        })
        .await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn direct_ssl_with_alpn_on_17_and_18_and_refused_before() {
    let root = root_cert();
    for major in installed([16, 17, 18]) {
        let tls = start_tls(major);
        bounded(async {
            let url = tls.url(
                TlsRole::SslOnly,
                "localhost",
                &format!("sslmode=verify-full&sslrootcert={root}&sslnegotiation=direct"),
            );
            let result = pgpipe::connect(&url).await;
            if major < 17 {
                // The server reads the TLS ClientHello as a startup packet.
                let e = result.err().unwrap_or_else(|| {
                    panic!("PostgreSQL {major} has no direct SSL, yet it connected")
                });
                eprintln!("PostgreSQL {major} refuses direct SSL as expected: {e}");
                // The usual negotiation still works there.
                let url = tls.url(
                    TlsRole::SslOnly,
                    "localhost",
                    &format!("sslmode=verify-full&sslrootcert={root}&sslnegotiation=postgres"),
                );
                let client = pgpipe::connect(&url).await.expect("postgres negotiation");
                assert!(session_ssl(&client).await);
                return;
            }
            // 17+ accepts a direct TLS handshake only with ALPN "postgresql".
            let client = pgpipe::connect(&url)
                .await
                .unwrap_or_else(|e| panic!("direct SSL to PostgreSQL {major}: {e}"));
            assert!(session_ssl(&client).await, "PostgreSQL {major}");
            // The cancel connection goes direct as well.
            assert_timeout_cancels(&client, major).await;
            // With channel binding (SCRAM-SHA-256-PLUS) over the direct TLS.
            let url = tls.url(
                TlsRole::SslOnly,
                "127.0.0.1",
                "sslmode=require&sslnegotiation=direct&channel_binding=require",
            );
            let client = pgpipe::connect(&url)
                .await
                .unwrap_or_else(|e| panic!("direct SSL + channel binding on {major}: {e}"));
            assert!(session_ssl(&client).await);
        })
        .await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn in_hot_standby_is_reported_and_changes_on_promotion() {
    for major in installed(MATRIX) {
        let primary = start(major);
        let db = primary.create_database("hot_standby").unwrap();
        let standby = primary
            .start_standby()
            .unwrap_or_else(|e| panic!("standby of PostgreSQL {major}: {e}"));
        let url = standby.url(AuthRole::Scram, db.name());
        let client = bounded(pgpipe::connect(&url))
            .await
            .unwrap_or_else(|e| panic!("connect to the standby of {major}: {e}"));
        let reported = client.parameter("in_hot_standby");
        if major < 14 {
            // 13 has no such parameter: pgpipe asks pg_is_in_recovery().
            assert_eq!(reported, None, "PostgreSQL {major}");
        } else {
            assert_eq!(reported.as_deref(), Some("on"), "PostgreSQL {major}");
        }
        // The session stays open across the promotion.
        primary.stop().unwrap();
        standby
            .promote()
            .unwrap_or_else(|e| panic!("promoting PostgreSQL {major}: {e}"));
        bounded(async {
            // The server reports changed parameters before its next
            // ReadyForQuery: one round trip brings the new value.
            let row = client
                .query_one("SELECT pg_is_in_recovery()", ())
                .await
                .unwrap_or_else(|e| panic!("the open session of {major}: {e}"));
            assert!(!row.get::<bool, _>(0));
            let reported = client.parameter("in_hot_standby");
            if major < 14 {
                assert_eq!(reported, None);
            } else {
                assert_eq!(
                    reported.as_deref(),
                    Some("off"),
                    "PostgreSQL {major}: the open session saw no ParameterStatus"
                );
            }
            // And a new session to the promoted server can write.
            let writer = pgpipe::connect(&format!("{url}?target_session_attrs=read-write"))
                .await
                .unwrap_or_else(|e| panic!("read-write session on promoted {major}: {e}"));
            writer
                .execute("CREATE TABLE promoted (id int)", ())
                .await
                .unwrap();
        })
        .await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn require_auth_and_channel_binding_on_every_version() {
    let root = root_cert();
    for major in installed(MATRIX) {
        let tls = start_tls(major);
        bounded(async {
            // require_auth is the client's own check: each method the
            // server asks for is accepted when listed, refused otherwise.
            for (role, method, other) in [
                (AuthRole::Scram, "scram-sha-256", "md5"),
                (AuthRole::Md5, "md5", "scram-sha-256"),
                (AuthRole::Password, "password", "scram-sha-256"),
                (AuthRole::Trust, "none", "md5"),
            ] {
                let url = tls.auth_url(role, "127.0.0.1", &format!("require_auth={method}"));
                pgpipe::connect(&url).await.unwrap_or_else(|e| {
                    panic!("PostgreSQL {major}, {role:?} with require_auth={method}: {e}")
                });
                let url = tls.auth_url(role, "127.0.0.1", &format!("require_auth={other}"));
                let e = pgpipe::connect(&url).await.err().unwrap_or_else(|| {
                    panic!("PostgreSQL {major}: {role:?} passed require_auth={other}")
                });
                assert_eq!(e.kind(), ErrorKind::Auth, "PostgreSQL {major}: {e}");
            }
            // SCRAM-SHA-256-PLUS: the server checks the binding against
            // its own certificate (tls-server-end-point).
            let url = tls.url(
                TlsRole::SslOnly,
                "localhost",
                &format!(
                    "sslmode=verify-full&sslrootcert={root}&channel_binding=require\
                     &require_auth=scram-sha-256"
                ),
            );
            let client = pgpipe::connect(&url)
                .await
                .unwrap_or_else(|e| panic!("SCRAM-SHA-256-PLUS on PostgreSQL {major}: {e}"));
            assert!(session_ssl(&client).await);
            // Without TLS there is nothing to bind to.
            let url = tls.url(
                TlsRole::NoSslOnly,
                "127.0.0.1",
                "sslmode=disable&channel_binding=prefer&require_auth=scram-sha-256",
            );
            let client = pgpipe::connect(&url)
                .await
                .unwrap_or_else(|e| panic!("plain SCRAM on PostgreSQL {major}: {e}"));
            assert!(!session_ssl(&client).await);
        })
        .await;
    }
}
