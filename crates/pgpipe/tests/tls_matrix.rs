//! libpq's sslmode table against real servers: each mode x {server with
//! TLS, server with ssl=off} x {hostssl-only role, hostnossl-only role}
//! must connect encrypted, connect plain, or fail with the named error.
//! Encryption is proven by the server (`pg_stat_ssl`), not assumed.

mod common;

use common::bounded;
use pgpipe::ErrorKind;
use pgpipe_testkit::{test_pki, TlsCluster, TlsRole};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Outcome {
    Encrypted,
    Plain,
    /// Refused by pg_hba.conf (the server's word).
    NoHbaEntry,
    /// The client refuses: the server does not do TLS.
    NoTls,
}

fn tls_cluster(with_tls: bool) -> &'static TlsCluster {
    let cluster = if with_tls {
        TlsCluster::with_tls()
    } else {
        TlsCluster::without_tls()
    };
    cluster.unwrap_or_else(|e| panic!("cannot start the TLS test cluster: {e}"))
}

/// Whether the server sees this session as encrypted.
async fn session_ssl(client: &pgpipe::Client) -> bool {
    let row = client
        .query_one(
            "SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()",
            (),
        )
        .await
        .expect("pg_stat_ssl query");
    row.get::<bool, _>(0)
}

async fn outcome(url: &str) -> Result<Outcome, pgpipe::Error> {
    match pgpipe::connect(url).await {
        Ok(client) => Ok(if session_ssl(&client).await {
            Outcome::Encrypted
        } else {
            Outcome::Plain
        }),
        Err(e) => {
            let text = e.to_string();
            if text.contains("pg_hba.conf") {
                Ok(Outcome::NoHbaEntry)
            } else if e.kind() == ErrorKind::Tls && text.contains("server does not support TLS") {
                Ok(Outcome::NoTls)
            } else {
                Err(e)
            }
        }
    }
}

/// libpq's outcome for one cell of the matrix.
fn expected(mode: &str, server_tls: bool, role: TlsRole) -> Outcome {
    use Outcome::*;
    let ssl_only = role == TlsRole::SslOnly;
    match (mode, server_tls, ssl_only) {
        ("disable", _, true) => NoHbaEntry,
        ("disable", _, false) => Plain,
        // allow: plain first; a refusal makes it retry with TLS.
        ("allow", true, true) => Encrypted,
        ("allow", false, true) => NoTls,
        ("allow", _, false) => Plain,
        // prefer: TLS first; a refusal over TLS retries plain.
        ("prefer", true, true) => Encrypted,
        ("prefer", true, false) => Plain,
        ("prefer", false, true) => NoHbaEntry,
        ("prefer", false, false) => Plain,
        // require and stricter: TLS or nothing.
        (_, false, _) => NoTls,
        (_, true, true) => Encrypted,
        (_, true, false) => NoHbaEntry,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sslmode_matrix_matches_libpq() {
    // Both clusters started before the bound counts (initdb under load).
    tls_cluster(true);
    tls_cluster(false);
    bounded(async {
        let pki = test_pki().expect("test PKI");
        let root = pki.root_cert();
        let mut mismatches = Vec::new();
        for server_tls in [true, false] {
            let cluster = tls_cluster(server_tls);
            for role in [TlsRole::SslOnly, TlsRole::NoSslOnly] {
                for mode in [
                    "disable",
                    "allow",
                    "prefer",
                    "require",
                    "verify-ca",
                    "verify-full",
                ] {
                    let mut query = format!("sslmode={mode}&connect_timeout=20");
                    if mode.starts_with("verify") {
                        query.push_str(&format!("&sslrootcert={}", root.display()));
                    }
                    let url = cluster.url(role, "localhost", &query);
                    let want = expected(mode, server_tls, role);
                    match outcome(&url).await {
                        Ok(got) if got == want => {}
                        got => mismatches.push(format!(
                            "sslmode={mode}, server tls={server_tls}, role {role:?}: \
                             expected {want:?}, got {got:?}"
                        )),
                    }
                }
            }
        }
        assert!(mismatches.is_empty(), "{}", mismatches.join("\n"));
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn require_with_a_root_certificate_verifies_the_chain() {
    // Both clusters started before the bound counts (initdb under load).
    tls_cluster(true);
    tls_cluster(false);
    bounded(async {
        let pki = test_pki().expect("test PKI");
        let cluster = tls_cluster(true);
        // require + a root file acts as verify-ca: an untrusted CA fails.
        let url = cluster.url(
            TlsRole::SslOnly,
            "127.0.0.1",
            &format!(
                "sslmode=require&sslrootcert={}",
                pki.untrusted_root_cert().display()
            ),
        );
        let e = pgpipe::connect(&url).await.expect_err("untrusted CA");
        assert_eq!(e.kind(), ErrorKind::Tls, "{e}");
        assert!(e.to_string().contains("not signed by a trusted CA"), "{e}");
        // prefer + the same root: the TLS failure makes it retry plain,
        // which the hostssl-only role may not use.
        let url = cluster.url(
            TlsRole::NoSslOnly,
            "127.0.0.1",
            &format!(
                "sslmode=prefer&sslrootcert={}",
                pki.untrusted_root_cert().display()
            ),
        );
        let client = pgpipe::connect(&url)
            .await
            .expect("prefer falls back to plain");
        assert!(!session_ssl(&client).await);
    })
    .await;
}

/// prefer remembers a server's `N` for a while (and skips asking it):
/// against the server without TLS it still connects plain every time,
/// require and verify-full still refuse it, and the server with TLS, which
/// never answered `N`, is encrypted on every connect.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn remembered_refusals_change_no_outcome() {
    // Both clusters started before the bound counts (initdb under load).
    tls_cluster(true);
    tls_cluster(false);
    bounded(async {
        let root = test_pki().expect("test PKI").root_cert();
        let plain = tls_cluster(false);
        let encrypted = tls_cluster(true);
        for round in 0..3 {
            let url = plain.url(TlsRole::NoSslOnly, "127.0.0.1", "sslmode=prefer");
            assert_eq!(
                outcome(&url).await.expect("prefer"),
                Outcome::Plain,
                "{round}"
            );
            let url = encrypted.url(TlsRole::NoSslOnly, "127.0.0.1", "sslmode=prefer");
            // The hostnossl-only role: TLS is tried first and refused by
            // pg_hba.conf, then plain; what matters is that TLS was tried.
            assert_eq!(
                outcome(&url).await.expect("prefer"),
                Outcome::Plain,
                "{round}"
            );
            let url = encrypted.url(TlsRole::SslOnly, "127.0.0.1", "sslmode=prefer");
            assert_eq!(
                outcome(&url).await.expect("prefer"),
                Outcome::Encrypted,
                "round {round}: prefer stopped asking a server with TLS"
            );
            for mode in ["require", "verify-full"] {
                let query = format!("sslmode={mode}&sslrootcert={}", root.display());
                let url = plain.url(TlsRole::NoSslOnly, "127.0.0.1", &query);
                assert_eq!(
                    outcome(&url).await.expect(mode),
                    Outcome::NoTls,
                    "round {round}: {mode} went plain after prefer's refusal"
                );
            }
        }
    })
    .await;
}
