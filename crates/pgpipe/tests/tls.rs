//! TLS against a real server: certificate verification (verify-ca,
//! verify-full with names and IP addresses, untrusted CAs, the system
//! store), client certificates (`cert` authentication, the key permission
//! check), SCRAM-SHA-256-PLUS channel binding, and cancel over TLS.

mod common;

use std::time::Duration;

use common::bounded;
use pgpipe::{ErrorKind, SqlState};
use pgpipe_testkit::{test_pki, AuthRole, TlsCluster, TlsRole};

fn tls_cluster() -> &'static TlsCluster {
    TlsCluster::with_tls().unwrap_or_else(|e| panic!("cannot start the TLS cluster: {e}"))
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

fn root() -> String {
    test_pki().expect("PKI").root_cert().display().to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn verify_full_accepts_the_host_name_and_the_ip_address() {
    tls_cluster(); // started before the bound counts (initdb under load)
    bounded(async {
        for host in ["localhost", "127.0.0.1"] {
            let url = tls_cluster().url(
                TlsRole::SslOnly,
                host,
                &format!("sslmode=verify-full&sslrootcert={}", root()),
            );
            let client = pgpipe::connect(&url)
                .await
                .unwrap_or_else(|e| panic!("verify-full to {host}: {e}"));
            assert!(session_ssl(&client).await, "{host}");
        }
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_untrusted_ca_fails_verification_and_says_so() {
    tls_cluster(); // started before the bound counts (initdb under load)
    bounded(async {
        let untrusted = test_pki().expect("PKI").untrusted_root_cert();
        for mode in ["verify-ca", "verify-full"] {
            let url = tls_cluster().url(
                TlsRole::SslOnly,
                "localhost",
                &format!("sslmode={mode}&sslrootcert={}", untrusted.display()),
            );
            let e = pgpipe::connect(&url).await.expect_err(mode);
            assert_eq!(e.kind(), ErrorKind::Tls, "{e}");
            let text = e.to_string();
            assert!(text.contains("not signed by a trusted CA"), "{text}");
            assert!(text.contains(&format!("sslmode={mode}")), "{text}");
        }
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn verify_modes_need_a_root_certificate() {
    tls_cluster(); // started before the bound counts (initdb under load)
    bounded(async {
        let url = tls_cluster().url(
            TlsRole::SslOnly,
            "localhost",
            "sslmode=verify-ca&sslrootcert=/nonexistent/root.crt",
        );
        let e = pgpipe::connect(&url).await.expect_err("no root file");
        assert_eq!(e.kind(), ErrorKind::Tls, "{e}");
        assert!(
            e.to_string()
                .contains("root certificate file \"/nonexistent/root.crt\" does not exist"),
            "{e}"
        );
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sslrootcert_system_does_not_trust_a_private_ca() {
    tls_cluster(); // started before the bound counts (initdb under load)
    bounded(async {
        let url = tls_cluster().url(TlsRole::SslOnly, "localhost", "sslrootcert=system");
        let e = pgpipe::connect(&url).await.expect_err("private CA");
        assert_eq!(e.kind(), ErrorKind::Tls, "{e}");
        let text = e.to_string();
        assert!(
            text.contains("not signed by a trusted CA") || text.contains("sslrootcert=system"),
            "{text}"
        );
        // A weaker explicit mode is a configuration error, as in libpq.
        let url = tls_cluster().url(
            TlsRole::SslOnly,
            "localhost",
            "sslrootcert=system&sslmode=require",
        );
        let e = pgpipe::connect(&url).await.expect_err("weak sslmode");
        assert_eq!(e.kind(), ErrorKind::Config, "{e}");
        assert!(e.to_string().contains("weak sslmode \"require\""), "{e}");
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cert_authentication_needs_the_right_client_certificate() {
    tls_cluster(); // started before the bound counts (initdb under load)
    bounded(async {
        let pki = test_pki().expect("PKI");
        let (cert, key) = pki.client_cert();
        let url = tls_cluster().url(
            TlsRole::Cert,
            "localhost",
            &format!(
                "sslmode=verify-full&sslrootcert={}&sslcert={}&sslkey={}",
                root(),
                cert.display(),
                key.display()
            ),
        );
        let client = pgpipe::connect(&url).await.expect("cert login");
        assert!(session_ssl(&client).await);
        let row = client
            .query_one(
                "SELECT client_dn FROM pg_stat_ssl WHERE pid = pg_backend_pid()",
                (),
            )
            .await
            .unwrap();
        assert_eq!(
            row.get::<Option<String>, _>(0).as_deref(),
            Some("/CN=pgpipe_cert")
        );

        // No certificate: the server refuses.
        let url = tls_cluster().url(
            TlsRole::Cert,
            "localhost",
            &format!("sslmode=verify-full&sslrootcert={}", root()),
        );
        let e = pgpipe::connect(&url).await.expect_err("no client cert");
        assert!(e.to_string().contains("certificate"), "{e}");

        // A certificate from a CA the server does not trust.
        let (cert, key) = pki.client_cert_other_ca();
        let url = tls_cluster().url(
            TlsRole::Cert,
            "localhost",
            &format!(
                "sslmode=verify-full&sslrootcert={}&sslcert={}&sslkey={}",
                root(),
                cert.display(),
                key.display()
            ),
        );
        pgpipe::connect(&url)
            .await
            .expect_err("untrusted client cert");

        // A key others can read is refused before connecting, as in libpq.
        let (cert, _) = pki.client_cert();
        let url = tls_cluster().url(
            TlsRole::Cert,
            "localhost",
            &format!(
                "sslmode=require&sslcert={}&sslkey={}",
                cert.display(),
                pki.client_key_world_readable().display()
            ),
        );
        let e = pgpipe::connect(&url).await.expect_err("0644 key");
        assert_eq!(e.kind(), ErrorKind::Tls, "{e}");
        assert!(e.to_string().contains("has group or world access"), "{e}");
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn scram_plus_binds_the_channel_over_tls() {
    tls_cluster(); // started before the bound counts (initdb under load)
    bounded(async {
        // channel_binding=require only completes with SCRAM-SHA-256-PLUS,
        // and the server checks the binding against its own certificate.
        let url = tls_cluster().url(
            TlsRole::SslOnly,
            "localhost",
            &format!(
                "sslmode=verify-full&sslrootcert={}&channel_binding=require",
                root()
            ),
        );
        let client = pgpipe::connect(&url).await.expect("SCRAM-SHA-256-PLUS");
        assert!(session_ssl(&client).await);
        // The default (prefer) binds too; disable still logs in.
        for binding in ["prefer", "disable"] {
            let url = tls_cluster().url(
                TlsRole::SslOnly,
                "127.0.0.1",
                &format!("sslmode=require&channel_binding={binding}"),
            );
            pgpipe::connect(&url)
                .await
                .unwrap_or_else(|e| panic!("channel_binding={binding}: {e}"));
        }
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn channel_binding_require_refuses_what_cannot_bind() {
    tls_cluster(); // started before the bound counts (initdb under load)
    bounded(async {
        let cluster = tls_cluster();
        // Plain TCP (the hostnossl role): refused at the SASL request.
        let url = cluster.url(
            TlsRole::NoSslOnly,
            "127.0.0.1",
            "sslmode=prefer&channel_binding=require",
        );
        let e = pgpipe::connect(&url).await.expect_err("plain TCP");
        assert_eq!(e.kind(), ErrorKind::Auth, "{e}");
        assert!(e.to_string().contains("channel binding required"), "{e}");
        // sslmode=disable with channel_binding=require cannot be met at all.
        let url = cluster.url(
            TlsRole::NoSslOnly,
            "127.0.0.1",
            "sslmode=disable&channel_binding=require",
        );
        let e = pgpipe::connect(&url).await.expect_err("disable + require");
        assert_eq!(e.kind(), ErrorKind::Config, "{e}");
        // Over TLS, against methods that cannot bind: MD5, cleartext, trust.
        for role in [AuthRole::Md5, AuthRole::Password, AuthRole::Trust] {
            let url =
                cluster.auth_url(role, "127.0.0.1", "sslmode=require&channel_binding=require");
            let e = pgpipe::connect(&url).await.expect_err("cannot bind");
            assert_eq!(e.kind(), ErrorKind::Auth, "{role:?}: {e}");
            assert!(
                e.to_string().contains("channel binding required"),
                "{role:?}: {e}"
            );
        }
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancel_goes_over_tls() {
    tls_cluster(); // started before the bound counts (initdb under load)
    bounded(async {
        let url = tls_cluster().url(TlsRole::SslOnly, "localhost", "sslmode=require");
        let client = pgpipe::connect(&url).await.expect("connect");
        let token = client.cancel_token();
        // Cancel until the statement ends: a cancel that arrives before the
        // statement started is a no-op, so no fixed delay can be too short
        // on a loaded machine.
        let done = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let canceller = tokio::spawn({
            let done = done.clone();
            async move {
                let mut result = Ok(());
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
        // The hostssl-only role's server accepts no plain connection for
        // it, but a cancel request carries no role: what proves TLS is that
        // the cancel connection completed without error under require.
        canceller.await.unwrap().expect("cancel over TLS");
        assert_eq!(
            client
                .query_one("SELECT 1::int4", ())
                .await
                .unwrap()
                .get::<i32, _>(0),
            1
        );
    })
    .await;
}

/// Over TLS, `close()` sends close_notify and our end of stream after
/// Terminate, the driver ends cleanly without waiting for the server to
/// hang up, and the session ends on the server at once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn close_over_tls_ends_the_session_on_the_server() {
    tls_cluster(); // started before the bound counts (initdb under load)
    bounded(async {
        let url = tls_cluster().url(TlsRole::SslOnly, "localhost", "sslmode=require");
        let observer = pgpipe::connect(&url).await.expect("connect");
        let (client, driver) = pgpipe::connect_with_driver(&url).await.expect("connect");
        let driver = tokio::spawn(driver);
        assert!(session_ssl(&client).await);
        let pid = client.backend_pid();
        client.close();
        driver
            .await
            .unwrap()
            .unwrap_or_else(|e| panic!("the driver ended with an error: {e}"));
        common::backend_gone(&observer, pid, "the backend is gone after close() over TLS").await;
    })
    .await;
}
