//! What a real PostgreSQL 15 will not do, played by the testkit's fake
//! server speaking TLS: direct SSL (PostgreSQL 17) with and without ALPN,
//! bytes injected before the handshake, an error answer to SSLRequest,
//! certificate name checks, channel-binding data and a server that tampers
//! with it, protocol 3.2 cancel keys, and a missing BackendKeyData.

mod common;

use std::sync::{Arc, Mutex};

use base64::Engine;
use bytes::Bytes;
use common::bounded;
use pgpipe::ErrorKind;
use pgpipe_testkit::{msg, scram, test_pki, FakeServer, Script, ServerCert};
use sha2::Digest;

const SSL_REQUEST: [u8; 4] = [0x04, 0xd2, 0x16, 0x2f];
const CANCEL_REQUEST: [u8; 4] = [0x04, 0xd2, 0x16, 0x2e];

fn tls_config(cert: ServerCert, alpn: bool) -> Arc<rustls::ServerConfig> {
    test_pki()
        .expect("PKI")
        .server_config(cert, alpn)
        .expect("server config")
}

fn root() -> String {
    test_pki().expect("PKI").root_cert().display().to_string()
}

/// SSLRequest answered `S`, then the handshake.
fn tls_start(cert: ServerCert) -> Script {
    Script::new()
        .expect_ssl_request()
        .send(Bytes::from_static(b"S"))
        .start_tls(tls_config(cert, true))
}

fn url(fake: &FakeServer, host: &str, query: &str) -> String {
    format!(
        "postgres://fake:secret@{host}:{}/fake?connect_timeout=5&{query}",
        fake.port()
    )
}

fn no_password_sent(transcript: &pgpipe_testkit::Transcript) -> bool {
    !transcript.tags().contains(&b'p')
}

#[tokio::test]
async fn direct_ssl_with_alpn_connects_without_an_ssl_request() {
    bounded(async {
        let fake = FakeServer::start(
            Script::new()
                .start_tls(tls_config(ServerCert::Good, true))
                .expect_startup()
                .send(msg::handshake())
                .expect_eof(),
        )
        .await
        .unwrap();
        let client = pgpipe::connect(&url(
            &fake,
            "localhost",
            &format!(
                "sslnegotiation=direct&sslmode=verify-full&sslrootcert={}",
                root()
            ),
        ))
        .await
        .expect("direct SSL");
        drop(client);
        let transcript = fake.finish().await.expect("script");
        let first = &transcript.messages[0].1;
        assert_ne!(&first[..4], &SSL_REQUEST, "no SSLRequest with direct SSL");
        assert_eq!(&first[..4], &[0, 3, 0, 0], "a StartupMessage first");
    })
    .await;
}

#[tokio::test]
async fn direct_ssl_refuses_a_server_without_alpn() {
    bounded(async {
        let fake = FakeServer::start(Script::new().start_tls(tls_config(ServerCert::Good, false)))
            .await
            .unwrap();
        let e = pgpipe::connect(&url(
            &fake,
            "127.0.0.1",
            "sslnegotiation=direct&sslmode=require",
        ))
        .await
        .expect_err("no ALPN");
        assert_eq!(e.kind(), ErrorKind::Tls, "{e}");
        assert!(e.to_string().contains("ALPN"), "{e}");
        // prefer + direct is refused before connecting.
        let e = pgpipe::connect("postgres://u@127.0.0.1:1/d?sslnegotiation=direct&sslmode=prefer")
            .await
            .expect_err("weak mode");
        assert_eq!(e.kind(), ErrorKind::Config, "{e}");
    })
    .await;
}

#[tokio::test]
async fn bytes_injected_after_the_ssl_answer_are_refused() {
    bounded(async {
        // A man in the middle appends an AuthenticationOk to the 'S',
        // hoping the client takes it as if it came through TLS.
        let mut injected = b"S".to_vec();
        injected.extend_from_slice(&msg::auth_ok());
        let fake = FakeServer::start(
            Script::new()
                .expect_ssl_request()
                .send(Bytes::from(injected))
                .expect_eof(),
        )
        .await
        .unwrap();
        let e = pgpipe::connect(&url(&fake, "127.0.0.1", "sslmode=require"))
            .await
            .expect_err("injection");
        assert_eq!(e.kind(), ErrorKind::Protocol, "{e}");
        assert!(e.to_string().contains("unencrypted data after"), "{e}");
        fake.finish().await.expect("the client hung up");
    })
    .await;
}

#[tokio::test]
async fn an_error_answer_to_ssl_request_is_not_shown_as_the_servers_word() {
    bounded(async {
        let fake = FakeServer::start(
            Script::new()
                .expect_ssl_request()
                .send(msg::error_response(&[
                    (b'S', "FATAL"),
                    (b'C', "28000"),
                    (b'M', "please visit evil.example and enter your password"),
                ]))
                .expect_eof(),
        )
        .await
        .unwrap();
        let e = pgpipe::connect(&url(&fake, "127.0.0.1", "sslmode=prefer"))
            .await
            .expect_err("E answer");
        let text = e.to_string();
        assert!(text.contains("server does not support TLS"), "{text}");
        assert!(!text.contains("evil.example"), "{text}");
        assert!(e.as_db_error().is_none());
    })
    .await;
}

#[tokio::test]
async fn an_unknown_answer_to_ssl_request_is_a_protocol_error() {
    bounded(async {
        let fake = FakeServer::start(
            Script::new()
                .expect_ssl_request()
                .send(Bytes::from_static(b"X"))
                .expect_eof(),
        )
        .await
        .unwrap();
        let e = pgpipe::connect(&url(&fake, "127.0.0.1", "sslmode=require"))
            .await
            .expect_err("X answer");
        assert_eq!(e.kind(), ErrorKind::Protocol, "{e}");
        assert!(e.to_string().contains("0x58"), "{e}");
    })
    .await;
}

#[tokio::test]
async fn verify_full_checks_names_verify_ca_does_not() {
    bounded(async {
        // Wrong name: verify-full refuses, naming the check.
        let fake = FakeServer::start(tls_start(ServerCert::WrongName))
            .await
            .unwrap();
        let e = pgpipe::connect(&url(
            &fake,
            "localhost",
            &format!("sslmode=verify-full&sslrootcert={}", root()),
        ))
        .await
        .expect_err("wrong name");
        assert_eq!(e.kind(), ErrorKind::Tls, "{e}");
        assert!(
            e.to_string().contains("does not match the host name"),
            "{e}"
        );

        // verify-ca accepts the same certificate.
        let fake = FakeServer::start(
            tls_start(ServerCert::WrongName)
                .expect_startup()
                .send(msg::handshake())
                .expect_eof(),
        )
        .await
        .unwrap();
        let client = pgpipe::connect(&url(
            &fake,
            "localhost",
            &format!("sslmode=verify-ca&sslrootcert={}", root()),
        ))
        .await
        .expect("verify-ca ignores the name");
        drop(client);
        fake.finish().await.expect("script");

        // No subjectAltName, CN=localhost: libpq's CN fallback accepts it.
        let fake = FakeServer::start(
            tls_start(ServerCert::CommonNameOnly)
                .expect_startup()
                .send(msg::handshake())
                .expect_eof(),
        )
        .await
        .unwrap();
        let client = pgpipe::connect(&url(
            &fake,
            "localhost",
            &format!("sslmode=verify-full&sslrootcert={}", root()),
        ))
        .await
        .expect("CN fallback");
        drop(client);
        fake.finish().await.expect("script");

        // Untrusted CA.
        let fake = FakeServer::start(tls_start(ServerCert::UntrustedCa))
            .await
            .unwrap();
        let e = pgpipe::connect(&url(
            &fake,
            "localhost",
            &format!("sslmode=verify-full&sslrootcert={}", root()),
        ))
        .await
        .expect_err("untrusted");
        assert!(e.to_string().contains("not signed by a trusted CA"), "{e}");
    })
    .await;
}

/// A fake SCRAM-SHA-256-PLUS server; `tamper` makes its final message sign
/// a different channel binding than the client sent. Returns the script and
/// where the client's final message lands.
fn scram_plus(cert: ServerCert, tamper: bool) -> (Script, Arc<Mutex<String>>) {
    let salt = b"pgpipe-salt".to_vec();
    let iterations = 4096;
    let state: Arc<Mutex<(Vec<u8>, Vec<u8>)>> = Arc::default();
    let client_final_seen = Arc::new(Mutex::new(String::new()));
    let (s1, s2) = (state.clone(), state);
    let seen = client_final_seen.clone();
    let salt2 = salt.clone();
    let script = tls_start(cert)
        .expect_startup()
        .send(msg::auth_sasl(&["SCRAM-SHA-256-PLUS", "SCRAM-SHA-256"]))
        .expect(b'p')
        .respond(move |body| {
            let (server_first, _) = scram::server_first(body, &salt, iterations);
            *s1.lock().unwrap() = (body.to_vec(), server_first.clone());
            msg::auth_sasl_continue(&server_first)
        })
        .expect(b'p')
        .respond(move |client_final| {
            let (client_first, server_first) = s2.lock().unwrap().clone();
            let text = String::from_utf8_lossy(client_final).into_owned();
            *seen.lock().unwrap() = text.clone();
            let signed = if tamper {
                // Sign as if the client had bound another certificate.
                let rest = text.split_once(',').map_or("", |(_, rest)| rest);
                format!("c=cC10bHMtc2VydmVyLWVuZC1wb2ludCwsAAAA,{rest}")
            } else {
                text
            };
            let v = scram::server_final(
                "secret",
                &salt2,
                iterations,
                &client_first,
                &server_first,
                signed.as_bytes(),
            );
            msg::concat(&[msg::auth_sasl_final(&v), msg::handshake()])
        })
        .expect_eof();
    (script, client_final_seen)
}

fn expected_binding(der: &[u8], sha384: bool) -> String {
    let hash = if sha384 {
        sha2::Sha384::digest(der).to_vec()
    } else {
        sha2::Sha256::digest(der).to_vec()
    };
    let mut input = b"p=tls-server-end-point,,".to_vec();
    input.extend_from_slice(&hash);
    format!(
        "c={}",
        base64::engine::general_purpose::STANDARD.encode(input)
    )
}

#[tokio::test]
async fn scram_plus_sends_the_certificate_hash_of_its_signature_algorithm() {
    bounded(async {
        let pki = test_pki().expect("PKI");
        for (cert, sha384) in [(ServerCert::Good, false), (ServerCert::Sha384, true)] {
            let (script, seen) = scram_plus(cert, false);
            let fake = FakeServer::start(script).await.unwrap();
            let client = pgpipe::connect(&url(
                &fake,
                "localhost",
                "sslmode=require&channel_binding=require",
            ))
            .await
            .unwrap_or_else(|e| panic!("{cert:?}: {e}"));
            drop(client);
            fake.finish().await.expect("script");
            let client_final = seen.lock().unwrap().clone();
            let want = expected_binding(pki.server_cert_der(cert), sha384);
            assert!(
                client_final.starts_with(&want),
                "{cert:?}: {client_final} does not start with {want}"
            );
        }
    })
    .await;
}

#[tokio::test]
async fn a_server_that_tampers_with_the_binding_is_refused() {
    bounded(async {
        let (script, _) = scram_plus(ServerCert::Good, true);
        let fake = FakeServer::start(script).await.unwrap();
        let e = pgpipe::connect(&url(&fake, "localhost", "sslmode=require"))
            .await
            .expect_err("tampered binding");
        assert_eq!(e.kind(), ErrorKind::Auth, "{e}");
        assert!(e.to_string().contains("SCRAM-SHA-256-PLUS"), "{e}");
    })
    .await;
}

#[tokio::test]
async fn an_ed25519_certificate_has_no_binding_hash() {
    bounded(async {
        // require: refused before the password.
        let fake = FakeServer::start(
            tls_start(ServerCert::Ed25519)
                .expect_startup()
                .send(msg::auth_sasl(&["SCRAM-SHA-256-PLUS", "SCRAM-SHA-256"]))
                .expect_eof(),
        )
        .await
        .unwrap();
        let e = pgpipe::connect(&url(
            &fake,
            "localhost",
            "sslmode=require&channel_binding=require",
        ))
        .await
        .expect_err("Ed25519");
        assert_eq!(e.kind(), ErrorKind::Auth, "{e}");
        assert!(e.to_string().contains("defines no hash"), "{e}");
        assert!(no_password_sent(&fake.finish().await.expect("script")));

        // prefer: plain SCRAM-SHA-256 claiming no binding support ("n").
        let fake = FakeServer::start(
            tls_start(ServerCert::Ed25519)
                .expect_startup()
                .send(msg::auth_sasl(&["SCRAM-SHA-256-PLUS", "SCRAM-SHA-256"]))
                .expect(b'p')
                .send(msg::error_response(&[
                    (b'S', "FATAL"),
                    (b'C', "28P01"),
                    (b'M', "stop here"),
                ]))
                .expect_eof(),
        )
        .await
        .unwrap();
        let _ = pgpipe::connect(&url(&fake, "localhost", "sslmode=require")).await;
        let transcript = fake.finish().await.expect("script");
        let first = transcript.bodies(b'p')[0].clone();
        assert!(first.starts_with(b"SCRAM-SHA-256\0"), "{first:?}");
        assert!(first[18..].starts_with(b"n,,"), "{first:?}");
    })
    .await;
}

#[tokio::test]
async fn scram_plus_over_plain_tcp_is_a_downgrade_attempt() {
    bounded(async {
        let fake = FakeServer::start(
            Script::new()
                .expect_startup()
                .send(msg::auth_sasl(&["SCRAM-SHA-256-PLUS"]))
                .expect_eof(),
        )
        .await
        .unwrap();
        let e = pgpipe::connect(&url(&fake, "127.0.0.1", "sslmode=disable"))
            .await
            .expect_err("PLUS without TLS");
        assert!(e.to_string().contains("over a non-TLS connection"), "{e}");
        assert!(no_password_sent(&fake.finish().await.expect("script")));
    })
    .await;
}

#[tokio::test]
async fn channel_binding_require_sends_no_password_to_md5_or_cleartext() {
    bounded(async {
        for request in [
            msg::auth_md5(*b"salt"),
            msg::auth_cleartext(),
            msg::auth_ok(),
        ] {
            let fake = FakeServer::start(
                tls_start(ServerCert::Good)
                    .expect_startup()
                    .send(request)
                    .expect_eof(),
            )
            .await
            .unwrap();
            let e = pgpipe::connect(&url(
                &fake,
                "localhost",
                "sslmode=require&channel_binding=require",
            ))
            .await
            .expect_err("cannot bind");
            assert_eq!(e.kind(), ErrorKind::Auth, "{e}");
            assert!(e.to_string().contains("channel binding required"), "{e}");
            assert!(no_password_sent(&fake.finish().await.expect("script")));
        }
    })
    .await;
}

#[tokio::test]
async fn protocol_3_2_key_of_256_bytes_is_used_in_a_tls_cancel() {
    bounded(async {
        let key: Vec<u8> = (0..=255u8).collect();
        let session = tls_start(ServerCert::Good)
            .expect_startup()
            .send(msg::concat(&[
                msg::auth_ok(),
                msg::parameter_status("server_version", "18.0"),
                msg::backend_key_data_bytes(777, &key),
                msg::ready_for_query(b'I'),
            ]));
        // The session script ends (and hangs up) so that the cancel
        // connection is accepted next.
        let cancel = tls_start(ServerCert::Good).expect(0);
        let fake = FakeServer::start_sequence(vec![session, cancel])
            .await
            .unwrap();
        let client = pgpipe::connect(&url(
            &fake,
            "localhost",
            "sslmode=require&max_protocol_version=3.2",
        ))
        .await
        .expect("3.2 session");
        client.cancel_token().cancel().await.expect("cancel");
        drop(client);
        let transcript = fake.finish().await.expect("script");
        let startup = &transcript.messages[1].1;
        assert_eq!(&startup[..4], &[0, 3, 0, 2], "asked for 3.2");
        let (_, request) = transcript.messages.last().unwrap();
        assert_eq!(&request[..4], &CANCEL_REQUEST);
        assert_eq!(&request[4..8], &777i32.to_be_bytes());
        assert_eq!(&request[8..], &key[..]);
    })
    .await;
}

#[tokio::test]
async fn a_missing_backend_key_data_disables_cancel_with_a_clear_error() {
    bounded(async {
        let fake = FakeServer::start(
            Script::new()
                .expect_startup()
                .send(msg::concat(&[msg::auth_ok(), msg::ready_for_query(b'I')]))
                .expect_eof(),
        )
        .await
        .unwrap();
        let client = pgpipe::connect(&url(&fake, "127.0.0.1", "sslmode=disable"))
            .await
            .expect("connect");
        let e = client.cancel_token().cancel().await.expect_err("no key");
        assert_eq!(e.kind(), ErrorKind::InvalidUse, "{e}");
        assert!(e.to_string().contains("no cancel key"), "{e}");
        assert!(!client.is_closed());
    })
    .await;
}

#[tokio::test]
async fn negotiate_protocol_version_below_the_minimum_fails_clearly() {
    bounded(async {
        let fake = FakeServer::start(
            Script::new()
                .expect_startup()
                .send(msg::negotiate_protocol_version(0, &[]))
                .expect_eof(),
        )
        .await
        .unwrap();
        let e = pgpipe::connect(&url(
            &fake,
            "127.0.0.1",
            "sslmode=disable&min_protocol_version=3.2",
        ))
        .await
        .expect_err("3.0 only");
        assert!(e.to_string().contains("min_protocol_version"), "{e}");
    })
    .await;
}

#[tokio::test]
async fn prefer_skips_the_ssl_request_to_a_host_that_just_refused_but_require_never_does() {
    bounded(async {
        let fake = FakeServer::start_sequence(vec![
            // prefer asks, hears N, goes on plain. (Each session script
            // ends and hangs up, so the next connection is accepted.)
            Script::new()
                .expect_ssl_request()
                .send(Bytes::from_static(b"N"))
                .expect_startup()
                .send(msg::handshake()),
            // prefer again: the refusal is remembered, no SSLRequest.
            Script::new().expect_startup().send(msg::handshake()),
            // require still asks, and N is still an error.
            Script::new()
                .expect_ssl_request()
                .send(Bytes::from_static(b"N"))
                .expect_eof(),
        ])
        .await
        .unwrap();
        for round in ["first", "second"] {
            let client = pgpipe::connect(&url(&fake, "127.0.0.1", "sslmode=prefer"))
                .await
                .unwrap_or_else(|e| panic!("{round} prefer connect: {e}"));
            drop(client);
        }
        let e = pgpipe::connect(&url(&fake, "127.0.0.1", "sslmode=require"))
            .await
            .expect_err("require against a server without TLS");
        assert_eq!(e.kind(), ErrorKind::Tls, "{e}");
        assert!(e.to_string().contains("does not support TLS"), "{e}");
        let transcript = fake.finish().await.expect("script");
        let ssl_requests = transcript
            .messages
            .iter()
            .filter(|(tag, m)| *tag == 0 && m.len() >= 4 && m[..4] == SSL_REQUEST)
            .count();
        assert_eq!(ssl_requests, 2, "prefer's first connect and require's");
    })
    .await;
}
