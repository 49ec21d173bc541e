//! Certificate revocation lists (`sslcrl`, `sslcrldir`) against the real
//! TLS cluster: the testkit PKI keeps its CA keys and signs CRLs at run
//! time, so each test revokes (or does not revoke) the very certificate
//! the server presents.

mod common;

use std::path::{Path, PathBuf};

use common::bounded;
use pgpipe::ErrorKind;
use pgpipe_testkit::{
    test_pki, CrlIssuer, ServerCert, TestPki, TlsCluster, TlsRole, UNUSED_SERIAL,
};

const VERIFY_MODES: [&str; 2] = ["verify-ca", "verify-full"];

fn tls_cluster() -> &'static TlsCluster {
    TlsCluster::with_tls().unwrap_or_else(|e| panic!("cannot start the TLS cluster: {e}"))
}

/// Starts the shared TLS cluster (initdb, a server start: tens of seconds
/// on a loaded machine, with its own bound in the testkit) before the
/// test's own time bound starts counting.
fn started() {
    tls_cluster();
}

fn pki() -> &'static TestPki {
    test_pki().expect("PKI")
}

/// A URL for the TLS-only role with `mode`, the test root CA and `extra`
/// settings (the CRL ones).
fn url(mode: &str, extra: &str) -> String {
    tls_cluster().url(
        TlsRole::SslOnly,
        "localhost",
        &format!(
            "sslmode={mode}&sslrootcert={}&{extra}",
            pki().root_cert().display()
        ),
    )
}

fn crl(name: &str, issuer: CrlIssuer, revoked: &[u64]) -> PathBuf {
    pki()
        .write_crl(name, issuer, revoked)
        .unwrap_or_else(|e| panic!("CRL {name}: {e}"))
}

fn server_serial() -> u64 {
    pki().server_serial(ServerCert::Good)
}

/// A fresh directory inside the PKI's (removed with it).
fn crl_dir(name: &str) -> PathBuf {
    let dir = pki().dir().join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir(&dir).expect("CRL directory");
    dir
}

async fn connects(url: &str, what: &str) {
    let client = pgpipe::connect(url)
        .await
        .unwrap_or_else(|e| panic!("{what}: {e}"));
    let ssl: bool = client
        .query_one(
            "SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()",
            (),
        )
        .await
        .expect("pg_stat_ssl")
        .get(0);
    assert!(ssl, "{what}: the session is not encrypted");
}

async fn refused(url: &str, what: &str) -> String {
    let e = pgpipe::connect(url)
        .await
        .err()
        .unwrap_or_else(|| panic!("{what}: connected"));
    assert_eq!(e.kind(), ErrorKind::Tls, "{what}: {e}");
    e.to_string()
}

fn shown(path: &Path) -> String {
    format!("\"{}\"", path.display())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_crl_revoking_the_server_certificate_refuses_it() {
    started();
    bounded(async {
        let revoked = crl(
            "server-revoked.crl",
            CrlIssuer::Root,
            &[UNUSED_SERIAL, server_serial()],
        );
        for mode in VERIFY_MODES {
            let text = refused(&url(mode, &format!("sslcrl={}", revoked.display())), mode).await;
            assert!(text.contains("the certificate is revoked"), "{text}");
            assert!(text.contains(&shown(&revoked)), "{text}");
            assert!(text.contains(&format!("sslmode={mode}")), "{text}");
        }
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_crl_that_does_not_list_the_server_certificate_lets_it_connect() {
    started();
    bounded(async {
        let other = crl("other-serial.crl", CrlIssuer::Root, &[UNUSED_SERIAL]);
        let empty = crl("revokes-nothing.crl", CrlIssuer::Root, &[]);
        // The client CA revoking the client certificate's serial says
        // nothing about the server's certificate (the client checks only
        // the server; revoking client certificates is the server's job).
        let client_ca = crl(
            "client-revoked.crl",
            CrlIssuer::ClientCa,
            &[pki().client_serial()],
        );
        for mode in VERIFY_MODES {
            for file in [&other, &empty] {
                connects(
                    &url(mode, &format!("sslcrl={}", file.display())),
                    &format!("{mode} with {}", file.display()),
                )
                .await;
            }
        }
        // Two lists in one file: the root's (not listing the server) and
        // the client CA's.
        let both = pki().dir().join("root-and-client-ca.crl");
        let pem = format!(
            "{}{}",
            std::fs::read_to_string(&other).unwrap(),
            std::fs::read_to_string(&client_ca).unwrap()
        );
        std::fs::write(&both, pem).unwrap();
        connects(
            &url("verify-full", &format!("sslcrl={}", both.display())),
            "two CRLs in one file",
        )
        .await;
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_crl_only_from_another_ca_leaves_the_status_unknown() {
    started();
    bounded(async {
        // libpq (OpenSSL with CRL_CHECK_ALL) refuses a chain whose issuer
        // has no CRL once any CRL is given; so does pgpipe, and says why.
        let foreign = crl("untrusted-ca.crl", CrlIssuer::Untrusted, &[server_serial()]);
        let text = refused(
            &url("verify-ca", &format!("sslcrl={}", foreign.display())),
            "foreign CRL",
        )
        .await;
        assert!(
            text.contains("no certificate revocation list from its issuer"),
            "{text}"
        );
        assert!(text.contains(&shown(&foreign)), "{text}");
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sslcrldir_reads_the_hashed_crl_files_of_a_directory() {
    started();
    bounded(async {
        let pem = |revoked: &[u64]| pki().crl_pem(CrlIssuer::Root, revoked).expect("CRL");

        // A revoking list under an OpenSSL hashed name is applied, beside
        // another CA's list (one list per CA: a newer list from the same CA
        // replaces the older one, as `openssl rehash` directories hold).
        let revoking = crl_dir("crldir-revoking");
        let client_ca = pki()
            .crl_pem(CrlIssuer::ClientCa, &[pki().client_serial()])
            .expect("CRL");
        std::fs::write(revoking.join("1a2b3c4d.r0"), client_ca).unwrap();
        std::fs::write(revoking.join("5f3a9c21.r0"), pem(&[server_serial()])).unwrap();
        for mode in VERIFY_MODES {
            let text = refused(
                &url(mode, &format!("sslcrldir={}", revoking.display())),
                mode,
            )
            .await;
            assert!(text.contains("the certificate is revoked"), "{text}");
            assert!(text.contains("5f3a9c21.r0"), "{text}");
        }

        // Files not named <hash>.r<n> (certificates, notes) are not read:
        // the revoking list below is ignored, the one under a hashed name
        // does not list the server.
        let harmless = crl_dir("crldir-harmless");
        std::fs::write(harmless.join("5f3a9c21.r0"), pem(&[UNUSED_SERIAL])).unwrap();
        std::fs::write(harmless.join("revoked.pem"), pem(&[server_serial()])).unwrap();
        std::fs::write(harmless.join("5f3a9c21.0"), "a certificate would be here").unwrap();
        connects(
            &url("verify-full", &format!("sslcrldir={}", harmless.display())),
            "sslcrldir without the server",
        )
        .await;

        // sslcrl and sslcrldir together: both are read.
        let revoked_file = crl(
            "dir-and-file-revoked.crl",
            CrlIssuer::Root,
            &[server_serial()],
        );
        let text = refused(
            &url(
                "verify-ca",
                &format!(
                    "sslcrl={}&sslcrldir={}",
                    revoked_file.display(),
                    harmless.display()
                ),
            ),
            "sslcrl and sslcrldir",
        )
        .await;
        assert!(text.contains("the certificate is revoked"), "{text}");
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_missing_or_malformed_crl_is_an_error_naming_the_file() {
    started();
    bounded(async {
        let dir = crl_dir("crl-errors");
        let missing = dir.join("missing.crl");
        let text = refused(
            &url("verify-full", &format!("sslcrl={}", missing.display())),
            "missing sslcrl",
        )
        .await;
        assert!(
            text.contains("could not read certificate revocation list (sslcrl) file"),
            "{text}"
        );
        assert!(text.contains(&shown(&missing)), "{text}");

        let not_pem = dir.join("not-pem.crl");
        std::fs::write(&not_pem, "this is not a revocation list\n").unwrap();
        let text = refused(
            &url("verify-ca", &format!("sslcrl={}", not_pem.display())),
            "not PEM",
        )
        .await;
        assert!(text.contains("holds no PEM revocation list"), "{text}");
        assert!(text.contains(&shown(&not_pem)), "{text}");

        // The PEM armour is right, the DER inside is not a CRL.
        let bad_der = dir.join("bad-der.crl");
        std::fs::write(
            &bad_der,
            "-----BEGIN X509 CRL-----\nMAMCAQE=\n-----END X509 CRL-----\n",
        )
        .unwrap();
        let text = refused(
            &url("verify-ca", &format!("sslcrl={}", bad_der.display())),
            "bad DER",
        )
        .await;
        assert!(text.contains("cannot be parsed"), "{text}");
        assert!(text.contains(&shown(&bad_der)), "{text}");

        let missing_dir = dir.join("no-such-dir");
        let text = refused(
            &url("verify-ca", &format!("sslcrldir={}", missing_dir.display())),
            "missing sslcrldir",
        )
        .await;
        assert!(
            text.contains("could not read certificate revocation list directory"),
            "{text}"
        );
        assert!(text.contains(&shown(&missing_dir)), "{text}");

        let empty_dir = crl_dir("crldir-empty");
        let text = refused(
            &url("verify-ca", &format!("sslcrldir={}", empty_dir.display())),
            "empty sslcrldir",
        )
        .await;
        assert!(text.contains("holds no revocation list file"), "{text}");
        assert!(text.contains(&shown(&empty_dir)), "{text}");
    })
    .await;
}
