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
