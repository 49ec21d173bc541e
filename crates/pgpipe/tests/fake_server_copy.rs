//! How COPY FROM STDIN data is cut into CopyData messages, as the server
//! receives them (the scripted fake server records every message; a real
//! server reassembles the stream and cannot show the cut).

use std::time::Duration;

use pgpipe_testkit::{msg, FakeServer, Script};

const BOUND: Duration = Duration::from_secs(30);

/// The writer gathers 64 KiB before handing data over, so a message holds
/// at most that plus the part of a piece that crossed it.
const MAX_MESSAGE_DATA: usize = 128 * 1024;

#[tokio::test]
async fn copy_data_is_cut_into_bounded_messages_and_arrives_whole() {
    let script = Script::new()
        .expect_startup()
        .send(msg::handshake())
        // Parse, Bind, Execute, Flush of the COPY statement.
        .expect_until(b'H')
        .send(msg::parse_complete())
        .send(msg::bind_complete())
        // CopyInResponse: text, two columns.
        .send(msg::raw(b'G', &[0, 0, 2, 0, 0, 0, 0]))
        // The data, CopyDone and Sync.
        .expect_until(b'S')
        .send(msg::command_complete("COPY 5002"))
        .send(msg::ready_for_query(b'I'))
        .expect_eof();
    let server = FakeServer::start(script).await.unwrap();
    let mut sent = Vec::new();
    tokio::time::timeout(BOUND, async {
        let client = pgpipe::connect(&server.url()).await.unwrap();
        let mut copy = client
            .copy_in("COPY t (id, name) FROM STDIN")
            .await
            .unwrap();
        // Small rows, a row far larger than a message, small rows again.
        let mut pieces: Vec<Vec<u8>> = (0..2500)
            .map(|i| format!("{i}\tname {i}\n").into_bytes())
            .collect();
        pieces.push(format!("big\t{}\n", "x".repeat(3 * 1024 * 1024 + 17)).into_bytes());
        pieces.extend((0..2501).map(|i| format!("{i}\tafter {i}\n").into_bytes()));
        for piece in &pieces {
            copy.send(piece).await.unwrap();
            sent.extend_from_slice(piece);
        }
        assert_eq!(copy.finish().await.unwrap(), 5002);
        drop(client);
    })
    .await
    .expect("the COPY hung");
    // `finish` bounds its own wait and names the step it stopped at.
    let transcript = server.finish().await.unwrap();
    let messages = transcript.bodies(b'd');
    let received: Vec<u8> = messages.iter().flat_map(|b| b.iter().copied()).collect();
    assert_eq!(received.len(), sent.len());
    assert!(received == sent, "the data arrived changed");
    let largest = messages.iter().map(|b| b.len()).max().unwrap();
    assert!(
        largest <= MAX_MESSAGE_DATA,
        "a CopyData message of {largest} bytes"
    );
    // The 3 MiB row alone needs at least 24 messages of 128 KiB.
    assert!(messages.len() >= 24, "{} messages", messages.len());
    // CopyDone then Sync end the request.
    let tags = transcript.tags();
    assert_eq!(&tags[tags.len() - 3..], b"cSX");
}
