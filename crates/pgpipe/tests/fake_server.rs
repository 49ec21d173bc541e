//! What a real server won't do: malformed, truncated, oversized and hostile
//! messages from the scripted fake server. Each must give the right error,
//! never a panic or a hang.

use std::time::Duration;

use bytes::Bytes;
use pgpipe::ErrorKind;
use pgpipe_testkit::{msg, FakeServer, Script};

const BOUND: Duration = Duration::from_secs(20);

/// The client's part of a one-query exchange: connect, run a query, return
/// its error (the script makes it fail) and the client.
async fn query_against(
    script: Script,
    url_suffix: &str,
) -> (pgpipe::Error, pgpipe::Client, FakeServer) {
    let server = FakeServer::start(script).await.unwrap();
    let url = format!("{}{url_suffix}", server.url());
    let client = tokio::time::timeout(BOUND, pgpipe::connect(&url))
        .await
        .expect("connect hung")
        .unwrap_or_else(|e| panic!("connect to the fake server failed: {e}"));
    let err = tokio::time::timeout(BOUND, client.query("SELECT 1", ()))
        .await
        .expect("query hung")
        .expect_err("the script makes the query fail");
    (err, client, server)
}

/// Handshake, then read one extended query up to its Sync.
fn after_query() -> Script {
    Script::new()
        .expect_startup()
        .send(msg::handshake())
        .expect_until(b'S')
}

#[tokio::test]
async fn truncated_message_then_eof() {
    let mut partial = msg::data_row(&[Some(b"12345678")]).to_vec();
    partial.truncate(7);
    let script = after_query()
        .send(msg::parse_complete())
        .send(Bytes::from(partial))
        .close();
    let (err, client, _server) = query_against(script, "").await;
    assert!(
        matches!(err.kind(), ErrorKind::Closed | ErrorKind::Io),
        "{err:?}"
    );
    assert!(tokio::time::timeout(BOUND, async {
        while !client.is_closed() {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    })
    .await
    .is_ok());
    let err = client.query("SELECT 1", ()).await.unwrap_err();
    assert!(err.is_closed(), "{err}");
}

#[tokio::test]
async fn declared_length_over_the_maximum() {
    let script = after_query()
        .send(msg::parse_complete())
        .send(msg::raw_with_len(b'D', 100_000_000, &[0, 1]))
        .sleep(Duration::from_secs(2));
    let (err, client, _server) = query_against(script, "&max_message_size=1048576").await;
    assert_eq!(err.kind(), ErrorKind::Protocol, "{err:?}");
    assert!(err.to_string().contains("too large"), "{err}");
    assert!(client.query("SELECT 1", ()).await.unwrap_err().is_closed());
}

#[tokio::test]
async fn unknown_message_type() {
    let script = after_query()
        .send(msg::raw(b'Q', b"oops"))
        .sleep(Duration::from_secs(2));
    let (err, client, _server) = query_against(script, "").await;
    assert_eq!(err.kind(), ErrorKind::Protocol, "{err:?}");
    assert!(err.to_string().contains("unknown message type"), "{err}");
    assert!(client.query("SELECT 1", ()).await.unwrap_err().is_closed());
}

#[tokio::test]
async fn data_row_whose_column_overruns_the_body() {
    // Rows are checked lazily: on arrival only the column count, each
    // column's length when it is read. The framing is intact (the message
    // length is checked by the decoder), so the connection stays usable.
    let script = after_query()
        .send(msg::parse_complete())
        .send(msg::bind_complete())
        .send(msg::row_description(&[("a", 23, 1)]))
        // One column declaring 100 bytes, with 2 present.
        .send(msg::raw(b'D', &[0, 1, 0, 0, 0, 100, 1, 2]))
        .send(msg::command_complete("SELECT 1"))
        .send(msg::ready_for_query(b'I'))
        .expect_until(b'S')
        .send(msg::concat(&[
            msg::parse_complete(),
            msg::bind_complete(),
            msg::row_description(&[("b", 23, 1)]),
            msg::data_row(&[Some(&7i32.to_be_bytes())]),
            msg::command_complete("SELECT 1"),
            msg::ready_for_query(b'I'),
        ]))
        .sleep(Duration::from_secs(2));
    let server = FakeServer::start(script).await.unwrap();
    let client = tokio::time::timeout(BOUND, pgpipe::connect(&server.url()))
        .await
        .expect("connect hung")
        .unwrap();
    let rows = tokio::time::timeout(BOUND, client.query("SELECT a", ()))
        .await
        .expect("query hung")
        .unwrap();
    let err = rows[0].try_get::<i32, _>(0).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Protocol, "{err:?}");
    assert!(err.to_string().contains("DataRow"), "{err}");
    assert!(format!("{:?}", rows[0]).contains("<malformed>"));
    let next = tokio::time::timeout(BOUND, client.query_one("SELECT b", ()))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(next.get::<i32, _>(0), 7);
}

#[tokio::test]
async fn data_row_with_the_wrong_column_count() {
    let script = after_query()
        .send(msg::parse_complete())
        .send(msg::bind_complete())
        .send(msg::row_description(&[("a", 23, 1)]))
        .send(msg::data_row(&[Some(&1i32.to_be_bytes()), None]))
        .send(msg::command_complete("SELECT 1"))
        .send(msg::ready_for_query(b'I'))
        .sleep(Duration::from_secs(2));
    let (err, client, _server) = query_against(script, "").await;
    assert_eq!(err.kind(), ErrorKind::Protocol, "{err:?}");
    assert!(
        err.to_string()
            .contains("DataRow has 2 columns but RowDescription announced 1"),
        "{err}"
    );
    // A server that miscounts its own columns is not trusted further.
    let next = tokio::time::timeout(BOUND, client.query("SELECT 1", ()))
        .await
        .unwrap();
    assert!(next.unwrap_err().is_closed());
}

/// Read in place, good rows come out and the miscounted one is the same
/// protocol error as through `next`, not a skipped row or a panic.
#[tokio::test]
async fn a_miscounted_data_row_ends_a_batch_read_with_a_protocol_error() {
    // A stream's first run of an SQL text describes it first (Parse +
    // Describe + Sync) so that its column types are known before any row.
    let script = after_query()
        .send(msg::parse_complete())
        .send(msg::parameter_description(&[]))
        .send(msg::row_description(&[("a", 23, 0)]))
        .send(msg::ready_for_query(b'I'))
        .expect_until(b'S')
        .send(msg::parse_complete())
        .send(msg::bind_complete())
        .send(msg::row_description(&[("a", 23, 1)]))
        .send(msg::data_row(&[Some(&1i32.to_be_bytes())]))
        .send(msg::data_row(&[Some(&2i32.to_be_bytes())]))
        .send(msg::data_row(&[Some(&3i32.to_be_bytes()), None]))
        .send(msg::data_row(&[Some(&4i32.to_be_bytes())]))
        .send(msg::command_complete("SELECT 4"))
        .send(msg::ready_for_query(b'I'))
        .sleep(Duration::from_secs(2));
    let server = FakeServer::start(script).await.unwrap();
    let client = tokio::time::timeout(BOUND, pgpipe::connect(&server.url()))
        .await
        .expect("connect hung")
        .unwrap();
    let read = async {
        let mut rows = client.query_stream("SELECT 1", ()).await.unwrap();
        let mut seen = Vec::new();
        while let Some(batch) = rows.next_batch().await {
            match batch {
                Ok(batch) => seen.extend(batch.map(|r| r.get::<i32, _>(0))),
                Err(e) => return (seen, Some(e)),
            }
        }
        (seen, None)
    };
    let (seen, err) = tokio::time::timeout(BOUND, read).await.expect("hung");
    assert_eq!(seen, vec![1, 2]);
    let err = err.expect("the miscounted row is an error");
    assert_eq!(err.kind(), ErrorKind::Protocol, "{err:?}");
    assert!(
        err.to_string()
            .contains("DataRow has 2 columns but RowDescription announced 1"),
        "{err}"
    );
}

#[tokio::test]
async fn command_complete_without_its_nul_is_a_protocol_error() {
    // The query path reads the row count straight from these bytes.
    let script = after_query()
        .send(msg::parse_complete())
        .send(msg::bind_complete())
        .send(msg::no_data())
        .send(msg::raw(b'C', b"SELECT 1"))
        .send(msg::ready_for_query(b'I'))
        .sleep(Duration::from_secs(2));
    let (err, _client, _server) = query_against(script, "").await;
    assert_eq!(err.kind(), ErrorKind::Protocol, "{err:?}");
    assert!(err.to_string().contains("command tag"), "{err}");
}

#[tokio::test]
async fn error_response_without_sqlstate() {
    let script = after_query()
        .send(msg::error_response(&[
            (b'S', "ERROR"),
            (b'M', "something broke"),
        ]))
        .send(msg::ready_for_query(b'I'))
        .sleep(Duration::from_secs(2));
    let (err, _client, _server) = query_against(script, "").await;
    assert_eq!(err.kind(), ErrorKind::Protocol, "{err:?}");
    assert!(err.to_string().contains("SQLSTATE"), "{err}");
}

#[tokio::test]
async fn first_time_statement_is_one_round_trip() {
    let script = after_query()
        .send(msg::parse_complete())
        .send(msg::bind_complete())
        .send(msg::row_description(&[("n", 23, 1)]))
        .send(msg::data_row(&[Some(&7i32.to_be_bytes())]))
        .send(msg::command_complete("SELECT 1"))
        .send(msg::ready_for_query(b'I'))
        .expect_eof();
    let server = FakeServer::start(script).await.unwrap();
    let client = pgpipe::connect(&server.url()).await.unwrap();
    let row = tokio::time::timeout(BOUND, client.query_one("SELECT $1::int4", (7i32,)))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(row.get::<i32, _>(0), 7);
    drop(client);
    let transcript = server.finish().await.unwrap();
    let tags: Vec<u8> = transcript.messages.iter().map(|(t, _)| *t).collect();
    // Startup is recorded with tag 0; then Parse, Bind, Describe, Execute, Sync, Terminate.
    assert!(
        tags.ends_with(b"PBDESX"),
        "{:?}",
        String::from_utf8_lossy(&tags)
    );
    // ...and Parse..Sync arrived in a single read: one round trip.
    assert!(
        transcript.reads.contains(&5),
        "messages per read: {:?}",
        transcript.reads
    );
}

/// `close()` ends our half of the stream right after Terminate (as libpq
/// and tokio-postgres do) and goes on reading: this server answers the
/// query sent before Terminate only once it has seen the client's end of
/// stream, which a client that kept its half open (waiting for the server
/// to hang up first) would never get.
#[tokio::test]
async fn close_shuts_writes_down_after_terminate_and_still_reads_the_answers() {
    let script = after_query()
        .expect_eof()
        .send(msg::parse_complete())
        .send(msg::bind_complete())
        .send(msg::row_description(&[("n", 23, 1)]))
        .send(msg::data_row(&[Some(&7i32.to_be_bytes())]))
        .send(msg::command_complete("SELECT 1"))
        .send(msg::ready_for_query(b'I'));
    let server = FakeServer::start(script).await.unwrap();
    let client = pgpipe::connect(&server.url()).await.unwrap();
    let asking = client.clone();
    let query = tokio::spawn(async move { asking.query_one("SELECT $1::int4", (7i32,)).await });
    tokio::time::timeout(BOUND, async {
        while client.pending_requests() == 0 {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    })
    .await
    .expect("the query was never queued");
    client.close();
    let row = tokio::time::timeout(BOUND, query)
        .await
        .expect("the answer never came")
        .unwrap()
        .expect("the answer to a request sent before close() arrives");
    assert_eq!(row.get::<i32, _>(0), 7);
    let transcript = tokio::time::timeout(BOUND, server.finish())
        .await
        .expect("the server never finished")
        .unwrap();
    let tags: Vec<u8> = transcript.messages.iter().map(|(t, _)| *t).collect();
    assert!(tags.ends_with(b"X"), "{:?}", String::from_utf8_lossy(&tags));
}

/// After `close()` with nothing in flight the driver ends as soon as
/// Terminate and its end of stream are written, as tokio-postgres's does:
/// it does not wait for the server to hang up. This server, once it has
/// seen the client's end of stream, sends a stray message instead of
/// hanging up; a driver still reading would take it as a protocol error
/// and end with it (the test runs on one thread, so the driver's poll that
/// writes Terminate finishes before this server reads it).
#[tokio::test]
async fn a_closed_clients_driver_ends_without_waiting_for_the_server_to_hang_up() {
    let script = Script::new()
        .expect_startup()
        .send(msg::handshake())
        .expect_eof()
        .send(msg::ready_for_query(b'I'));
    let server = FakeServer::start(script).await.unwrap();
    let (client, driver) = tokio::time::timeout(BOUND, pgpipe::connect_with_driver(&server.url()))
        .await
        .expect("connect hung")
        .unwrap();
    let driver = tokio::spawn(driver);
    client.close();
    tokio::time::timeout(BOUND, driver)
        .await
        .expect("the driver never ended")
        .unwrap()
        .expect("a closed client's driver ends cleanly, whatever the server sends after Terminate");
    let transcript = tokio::time::timeout(BOUND, server.finish())
        .await
        .expect("the server never finished")
        .unwrap();
    let tags: Vec<u8> = transcript.messages.iter().map(|(t, _)| *t).collect();
    assert!(tags.ends_with(b"X"), "{:?}", String::from_utf8_lossy(&tags));
}

/// Parses a SASLInitialResponse body: mechanism\0, i32 length, client-first.
fn client_first(body: &[u8]) -> Vec<u8> {
    let nul = body.iter().position(|&b| b == 0).unwrap();
    body[nul + 5..].to_vec()
}

fn scram_script(iterations: u32, server_final: &'static [u8]) -> Script {
    Script::new()
        .expect_startup()
        .send(msg::auth_sasl(&["SCRAM-SHA-256"]))
        .expect(b'p')
        .respond(move |body| {
            let (first, _nonce) = pgpipe_testkit::scram::server_first(
                &client_first(body),
                b"0123456789abcdef",
                iterations,
            );
            msg::auth_sasl_continue(&first)
        })
        .expect(b'p')
        .send(msg::auth_sasl_final(server_final))
        .sleep(Duration::from_secs(1))
}

#[tokio::test]
async fn scram_with_a_wrong_server_signature_is_refused() {
    let server = FakeServer::start(scram_script(
        4096,
        b"v=AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=",
    ))
    .await
    .unwrap();
    let err = tokio::time::timeout(BOUND, pgpipe::connect(&server.url()))
        .await
        .expect("connect hung")
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Auth, "{err:?}");
    assert!(err.to_string().contains("signature"), "{err}");
}

#[tokio::test]
async fn scram_demanding_a_billion_iterations_is_refused() {
    let server = FakeServer::start(scram_script(1_000_000_000, b"v=unused"))
        .await
        .unwrap();
    // Within the bound: refused before any key derivation (10^9 rounds
    // would take minutes).
    let err = tokio::time::timeout(BOUND, pgpipe::connect(&server.url()))
        .await
        .expect("connect hung")
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Auth, "{err:?}");
    assert!(err.to_string().contains("1000000000"), "{err}");
}

#[tokio::test]
async fn a_server_that_ignores_a_cancel_loses_the_connection_not_the_caller() {
    // The server takes the query and never answers, nor accepts the cancel.
    let script = after_query().sleep(Duration::from_secs(8));
    let server = FakeServer::start(script).await.unwrap();
    let client = pgpipe::connect(&server.url()).await.unwrap();
    let err = tokio::time::timeout(
        BOUND,
        client
            .with_timeout(Duration::from_millis(200))
            .query("SELECT 1", ()),
    )
    .await
    .expect("the timeout itself must be bounded")
    .unwrap_err();
    assert!(err.is_timeout(), "{err}");
    assert!(err.to_string().contains("connection was closed"), "{err}");
    // The connection is given up: a late answer can't be mistaken for another query's.
    let next = tokio::time::timeout(BOUND, client.query("SELECT 1", ()))
        .await
        .unwrap();
    assert!(next.unwrap_err().is_closed());
}

#[tokio::test]
async fn a_flood_of_reported_parameters_neither_hangs_the_connect_nor_loses_the_real_ones() {
    // 100,000 distinct names before ReadyForQuery, then a change of a real
    // one: a store that scanned every name kept would take minutes here.
    let mut flood = bytes::BytesMut::new();
    flood.extend_from_slice(&msg::auth_ok());
    flood.extend_from_slice(&msg::parameter_status("server_version", "18.1"));
    flood.extend_from_slice(&msg::parameter_status("client_encoding", "UTF8"));
    for n in 0..100_000 {
        flood.extend_from_slice(&msg::parameter_status(&format!("flood_{n}"), "x"));
    }
    flood.extend_from_slice(&msg::parameter_status("server_version", "18.2"));
    flood.extend_from_slice(&msg::backend_key_data(1, 2));
    flood.extend_from_slice(&msg::ready_for_query(b'I'));
    // The server holds the connection until the client hangs up.
    let script = Script::new()
        .expect_startup()
        .send(flood.freeze())
        .expect_eof();
    let server = FakeServer::start(script).await.unwrap();
    // The fake server's URL bounds a connect at 5 s; a debug build on a
    // loaded CI machine may need longer to read 2 MB of messages, and BOUND
    // is the hang check here.
    let url = format!("{}&connect_timeout=60", server.url());
    let config: pgpipe::config::Config = url.parse().unwrap();
    assert_eq!(config.get_connect_timeout(), Some(Duration::from_secs(60)));
    let client = tokio::time::timeout(BOUND, pgpipe::connect(&url))
        .await
        .expect("connect hung")
        .unwrap();
    assert_eq!(client.parameter("server_version").as_deref(), Some("18.2"));
    assert_eq!(client.parameter("client_encoding").as_deref(), Some("UTF8"));
    assert_eq!(client.parameter("flood_0").as_deref(), Some("x"));
    assert_eq!(client.parameter("flood_99999"), None);
    drop(client);
    server.finish().await.unwrap();
}
