//! The scripted fake server, driven by a hand-written client.

use std::time::Duration;

use bytes::Bytes;
use pgpipe_testkit::{msg, FakeErrorKind, FakeServer, Script};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

const BOUND: Duration = Duration::from_secs(20);

fn startup_message() -> Vec<u8> {
    let mut body = 196_608i32.to_be_bytes().to_vec();
    body.extend_from_slice(b"user\0fake\0database\0fake\0\0");
    let mut m = ((body.len() + 4) as i32).to_be_bytes().to_vec();
    m.extend_from_slice(&body);
    m
}

fn frontend(tag: u8, body: &[u8]) -> Vec<u8> {
    let mut m = vec![tag];
    m.extend_from_slice(&((body.len() + 4) as i32).to_be_bytes());
    m.extend_from_slice(body);
    m
}

/// Reads exactly `n` bytes.
async fn read_n(stream: &mut TcpStream, n: usize) -> Vec<u8> {
    let mut buf = vec![0; n];
    tokio::time::timeout(BOUND, stream.read_exact(&mut buf))
        .await
        .unwrap()
        .unwrap();
    buf
}

#[tokio::test]
async fn a_script_plays_and_records_pipelined_reads() {
    let script = Script::new()
        .expect_startup()
        .send(msg::handshake())
        .expect(b'P')
        .expect_until(b'S')
        .send(msg::concat(&[msg::parse_complete(), msg::bind_complete()]))
        .expect_eof();
    let server = FakeServer::start(script).await.unwrap();
    assert!(server
        .url()
        .contains(&format!("127.0.0.1:{}", server.port())));
    assert_eq!(server.addr().port(), server.port());

    let mut client = TcpStream::connect(server.addr()).await.unwrap();
    client.write_all(&startup_message()).await.unwrap();
    let handshake = msg::handshake();
    assert_eq!(
        read_n(&mut client, handshake.len()).await,
        handshake.to_vec()
    );
    // Parse, Bind, Execute, Sync in one write: one read on the server.
    let mut pipeline = frontend(b'P', b"\0SELECT 1\0\0\0");
    pipeline.extend(frontend(b'B', b"\0\0\0\0\0\0\0\0"));
    pipeline.extend(frontend(b'E', b"\0\0\0\0\0"));
    pipeline.extend(frontend(b'S', b""));
    client.write_all(&pipeline).await.unwrap();
    assert_eq!(
        read_n(&mut client, 10).await,
        b"1\0\0\0\x042\0\0\0\x04".to_vec()
    );
    client.write_all(&frontend(b'X', b"")).await.unwrap();
    drop(client);

    let transcript = tokio::time::timeout(BOUND, server.finish())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(transcript.tags(), b"\0PBESX".to_vec());
    assert_eq!(transcript.reads, vec![1, 4, 1]);
    assert_eq!(
        transcript.bodies(b'P'),
        vec![&Bytes::from_static(b"\0SELECT 1\0\0\0")]
    );
    assert!(transcript.messages[0]
        .1
        .ends_with(b"user\0fake\0database\0fake\0\0"));
}

#[tokio::test]
async fn ssl_request_is_refused_then_startup_read() {
    let script = Script::new()
        .expect_startup()
        .send(msg::handshake())
        .expect_eof();
    let server = FakeServer::start(script).await.unwrap();
    let mut client = TcpStream::connect(server.addr()).await.unwrap();
    client
        .write_all(&[0, 0, 0, 8, 4, 210, 22, 47])
        .await
        .unwrap();
    assert_eq!(read_n(&mut client, 1).await, b"N");
    client.write_all(&startup_message()).await.unwrap();
    read_n(&mut client, msg::handshake().len()).await;
    drop(client);
    let transcript = server.finish().await.unwrap();
    assert_eq!(transcript.tags(), vec![0, 0]);
    assert_eq!(&transcript.messages[0].1[..], &[4, 210, 22, 47]);
}

#[tokio::test]
async fn expect_mismatch_is_reported_with_what_arrived() {
    let script = Script::new()
        .expect_startup()
        .send(msg::handshake())
        .expect(b'P');
    let server = FakeServer::start(script).await.unwrap();
    let mut client = TcpStream::connect(server.addr()).await.unwrap();
    client.write_all(&startup_message()).await.unwrap();
    read_n(&mut client, msg::handshake().len()).await;
    client
        .write_all(&frontend(b'Q', b"SELECT 1\0"))
        .await
        .unwrap();

    let err = tokio::time::timeout(BOUND, server.finish())
        .await
        .unwrap()
        .unwrap_err();
    match &err.kind {
        FakeErrorKind::Mismatch { expected, got } => {
            assert!(expected.contains("'P'"), "{expected}");
            let (tag, body) = got.as_ref().expect("a message arrived");
            assert_eq!(*tag, b'Q');
            assert_eq!(&body[..], b"SELECT 1\0");
        }
        other => panic!("expected a mismatch, got {other:?}"),
    }
    assert_eq!(err.step.as_ref().map(|s| s.0), Some(2));
    let text = err.to_string();
    assert!(
        text.contains("expected 'P'") && text.contains("'Q'") && text.contains("SELECT 1"),
        "{text}"
    );
    assert_eq!(err.transcript.tags(), b"\0Q".to_vec());
}

#[tokio::test]
async fn a_client_leaving_early_is_a_mismatch_with_end_of_stream() {
    let script = Script::new().expect_startup().expect_until(b'S');
    let server = FakeServer::start(script).await.unwrap();
    let mut client = TcpStream::connect(server.addr()).await.unwrap();
    client.write_all(&startup_message()).await.unwrap();
    client
        .write_all(&frontend(b'P', b"\0x\0\0\0"))
        .await
        .unwrap();
    drop(client);
    let err = server.finish().await.unwrap_err();
    assert!(
        matches!(err.kind, FakeErrorKind::Mismatch { got: None, .. }),
        "{err}"
    );
    assert!(err.to_string().contains("end of stream"), "{err}");
}

#[tokio::test]
async fn malformed_frontend_messages_are_protocol_errors() {
    let script = Script::new().expect_startup().expect(b'Q');
    let server = FakeServer::start(script).await.unwrap();
    let mut client = TcpStream::connect(server.addr()).await.unwrap();
    client.write_all(&startup_message()).await.unwrap();
    client.write_all(&[b'Q', 0, 0, 0, 2]).await.unwrap();
    let err = tokio::time::timeout(BOUND, server.finish())
        .await
        .unwrap()
        .unwrap_err();
    assert!(matches!(err.kind, FakeErrorKind::Protocol(_)), "{err}");
    assert!(err.to_string().contains("invalid length"), "{err}");
}

#[tokio::test]
async fn respond_sees_the_last_message_and_close_ends_the_connection() {
    let script = Script::new()
        .expect_startup()
        .send(msg::auth_cleartext())
        .expect(b'p')
        .respond(|body| {
            if body == b"letmein\0" {
                msg::handshake()
            } else {
                msg::error_response(&[(b'S', "FATAL"), (b'C', "28P01"), (b'M', "bad password")])
            }
        })
        .close();
    let server = FakeServer::start(script).await.unwrap();
    let mut client = TcpStream::connect(server.addr()).await.unwrap();
    client.write_all(&startup_message()).await.unwrap();
    assert_eq!(read_n(&mut client, 9).await, msg::auth_cleartext().to_vec());
    client
        .write_all(&frontend(b'p', b"letmein\0"))
        .await
        .unwrap();
    let mut rest = Vec::new();
    tokio::time::timeout(BOUND, client.read_to_end(&mut rest))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(rest, msg::handshake().to_vec(), "then EOF");
    server.finish().await.unwrap();
}

#[tokio::test]
async fn only_one_connection_is_served() {
    let server = FakeServer::start(
        Script::new()
            .expect_startup()
            .sleep(Duration::from_millis(300)),
    )
    .await
    .unwrap();
    let mut first = TcpStream::connect(server.addr()).await.unwrap();
    first.write_all(&startup_message()).await.unwrap();
    // Give the server time to accept and drop its listener.
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert!(TcpStream::connect(server.addr()).await.is_err());
    server.finish().await.unwrap();
}
