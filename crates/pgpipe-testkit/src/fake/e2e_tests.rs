//! The fake server's SCRAM helpers against the setup client's SCRAM: a
//! complete, verified exchange scripted with `Respond` steps.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::fake::{msg, scram, FakeServer, Script};
use crate::mini_client::{Endpoint, Login, MiniClient};

const SALT: &[u8] = b"0123456789abcdef";
const ITERATIONS: u32 = 4096;

/// SASL: client-first -> server-first, client-final -> server-final
/// (signed with `server_password`), then a normal handshake.
fn scram_script(server_password: &'static str) -> (Script, Arc<Mutex<bool>>) {
    // (client-first, server-first) carried from one step to the next.
    let exchange = Arc::new(Mutex::new((Vec::new(), Vec::new())));
    let proof_ok = Arc::new(Mutex::new(false));
    let (first_state, final_state, proof_seen) = (exchange.clone(), exchange, proof_ok.clone());
    let script = Script::new()
        .expect_startup()
        .send(msg::auth_sasl(&["SCRAM-SHA-256"]))
        .expect(b'p')
        .respond(move |body| {
            let (server_first, _nonce) = scram::server_first(body, SALT, ITERATIONS);
            *first_state.lock().unwrap() = (body.to_vec(), server_first.clone());
            msg::auth_sasl_continue(&server_first)
        })
        .expect(b'p')
        .respond(move |client_final| {
            let (client_first, server_first) = final_state.lock().unwrap().clone();
            *proof_seen.lock().unwrap() = scram::client_proof_is_valid(
                "secret",
                SALT,
                ITERATIONS,
                &client_first,
                &server_first,
                client_final,
            );
            let server_final = scram::server_final(
                server_password,
                SALT,
                ITERATIONS,
                &client_first,
                &server_first,
                client_final,
            );
            msg::concat(&[msg::auth_sasl_final(&server_final), msg::handshake()])
        })
        .expect_eof();
    (script, proof_ok)
}

async fn login(server: &FakeServer) -> Result<(), crate::TestkitError> {
    let login = Login {
        endpoint: Endpoint::Tcp("127.0.0.1".into(), server.port()),
        user: "fake".into(),
        password: Some("secret".into()),
        dbname: "fake".into(),
        timeout: Duration::from_secs(10),
    };
    tokio::task::spawn_blocking(move || MiniClient::connect(&login).map(drop))
        .await
        .unwrap()
}

#[tokio::test]
async fn a_full_scram_exchange_verifies_both_ways() {
    let (script, proof_ok) = scram_script("secret");
    let server = FakeServer::start(script).await.unwrap();
    login(&server).await.unwrap();
    let transcript = server.finish().await.unwrap();
    assert!(
        *proof_ok.lock().unwrap(),
        "the client's proof did not verify"
    );
    assert_eq!(transcript.tags(), b"\0ppX".to_vec());
}

#[tokio::test]
async fn a_server_signature_for_another_password_is_refused() {
    let (script, _) = scram_script("not the password");
    let server = FakeServer::start(script).await.unwrap();
    let err = login(&server).await.unwrap_err();
    assert!(err.to_string().contains("signature"), "{err}");
}

/// `ExpectNothingFor` passes over a silent client and fails, naming the
/// message, when one arrives within the window.
#[tokio::test]
async fn expect_nothing_for_fails_only_when_a_message_arrives() {
    use tokio::io::AsyncWriteExt;

    let quiet = Script::new().expect_nothing_for(Duration::from_millis(100));
    let server = FakeServer::start(quiet).await.unwrap();
    let silent = tokio::net::TcpStream::connect(server.addr()).await.unwrap();
    server.finish().await.unwrap();
    drop(silent);

    let quiet = Script::new().expect_nothing_for(Duration::from_secs(60));
    let server = FakeServer::start(quiet).await.unwrap();
    let mut talker = tokio::net::TcpStream::connect(server.addr()).await.unwrap();
    // A StartupMessage: length, protocol 3.0, "user" "x", terminator.
    let mut startup = Vec::new();
    startup.extend_from_slice(&16i32.to_be_bytes());
    startup.extend_from_slice(&196_608i32.to_be_bytes());
    startup.extend_from_slice(b"user\0x\0\0");
    talker.write_all(&startup).await.unwrap();
    let err = tokio::time::timeout(Duration::from_secs(30), server.finish())
        .await
        .expect("the message went unnoticed for 30 s")
        .unwrap_err();
    match err.kind {
        crate::fake::FakeErrorKind::Mismatch {
            got: Some((0, _)), ..
        } => {}
        other => panic!("expected a mismatch naming the StartupMessage, got {other:?}"),
    }
}
