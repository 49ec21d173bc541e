//! Under a deep pipeline, on a current-thread runtime, the driver lets new
//! requests gather instead of writing each on its own, and writes them as
//! soon as fewer than 16 requests are in flight or 8 have gathered; on a
//! multi-thread runtime only from 64 in flight (see
//! `pipelining::a_pipeline_deep_enough_to_gather_on_a_multi_thread_runtime_answers_everyone`). The scripted fake server
//! decides when answers go out, so it can show what the client holds back
//! and when it lets go (a real server answers too fast to tell). The
//! `#[tokio::test]`s below run on a current-thread runtime.

use std::time::Duration;

use bytes::Bytes;
use pgpipe_testkit::{msg, FakeServer, Script};

const BOUND: Duration = Duration::from_secs(60);

/// Callers of the CopyFail test, each sending one statement: more than
/// the driver's depth from which requests gather (`GATHER_DEPTH`, 16).
const CALLERS: usize = 20;

fn answer() -> Bytes {
    msg::concat(&[
        msg::command_complete("SELECT 1"),
        msg::ready_for_query(b'I'),
    ])
}

fn expect_queries(mut script: Script, n: usize) -> Script {
    for _ in 0..n {
        script = script.expect(b'Q');
    }
    script
}

fn answers(mut script: Script, n: usize) -> Script {
    for _ in 0..n {
        script = script.send(answer());
    }
    script
}

/// `callers` tasks on one client, each running `statements` statements
/// one after another (`SELECT i`, `SELECT i + 1`) and stopping at its
/// first error; their results, in caller order. On the default
/// current-thread runtime they are spawned before the driver runs again,
/// so the first statements leave in one write (it runs tasks in the order
/// they were woken); the scripts do not depend on how writes split.
async fn run_callers(
    server: &FakeServer,
    callers: usize,
    statements: usize,
    hung: &str,
) -> Vec<Result<(), pgpipe::Error>> {
    tokio::time::timeout(BOUND, async {
        let client = pgpipe::connect(&server.url()).await.unwrap();
        let tasks: Vec<_> = (0..callers)
            .map(|i| {
                let client = client.clone();
                tokio::spawn(async move {
                    client.batch_execute(&format!("SELECT {i}")).await?;
                    if statements > 1 {
                        client.batch_execute(&format!("SELECT {i} + 1")).await?;
                    }
                    Ok(())
                })
            })
            .collect();
        let mut results = Vec::new();
        for task in tasks {
            results.push(task.await.unwrap());
        }
        drop(client);
        results
    })
    .await
    .unwrap_or_else(|_| panic!("{hung}"))
}

/// The server's answer to a CopyFail: the COPY's error, then
/// ReadyForQuery.
fn copy_failed(script: Script) -> Script {
    script
        .send(msg::error_response(&[
            (b'S', "ERROR"),
            (b'C', "57014"),
            (b'M', "COPY from stdin failed"),
        ]))
        .send(msg::ready_for_query(b'I'))
}

/// The one failure among `results`: the server's COPY error.
fn only_the_copy_failed(results: &[Result<(), pgpipe::Error>]) {
    let failed: Vec<_> = results.iter().filter_map(|r| r.as_ref().err()).collect();
    assert_eq!(failed.len(), 1, "{failed:?}");
    assert!(
        failed[0].to_string().contains("COPY from stdin failed"),
        "{}",
        failed[0]
    );
}

/// `callers` first statements in flight; `answered` of them answered: the
/// callers' second statements must wait (a second is far longer than the
/// client needs to write them if it did not hold them back). One more
/// answer: `released` second statements must arrive. Then the rest.
async fn gather_then_release(callers: usize, answered: usize, released: usize) {
    let mut script = Script::new().expect_startup().send(msg::handshake());
    script = expect_queries(script, callers);
    script = answers(script, answered);
    script = script.expect_nothing_for(Duration::from_secs(1));
    script = answers(script, 1);
    script = expect_queries(script, released);
    script = answers(script, callers - answered - 1);
    script = expect_queries(script, callers - released);
    script = answers(script, callers);
    let script = script.expect_eof();

    let server = FakeServer::start(script).await.unwrap();
    for result in run_callers(&server, callers, 2, "the callers hung").await {
        result.unwrap();
    }
    // `finish` bounds its own wait and names the step it stopped at.
    let transcript = server.finish().await.unwrap();
    let queries = transcript.bodies(b'Q');
    assert_eq!(queries.len(), 2 * callers);
    // Every caller's statements arrived, each caller's in its order.
    for i in 0..callers {
        let first = format!("SELECT {i}\0");
        let second = format!("SELECT {i} + 1\0");
        let at = |sql: &str| queries.iter().position(|q| q.as_ref() == sql.as_bytes());
        let (Some(a), Some(b)) = (at(&first), at(&second)) else {
            panic!("caller {i}'s statements did not both arrive");
        };
        assert!(a < b, "caller {i}'s second statement came first");
    }
}

/// Four answers of 20 leave 16 in flight: four requests gather. The
/// fifth answer leaves 15: they go.
#[tokio::test]
async fn gathered_requests_go_when_the_pipeline_is_no_longer_deep() {
    gather_then_release(20, 4, 4).await;
}

/// Seven answers of 40: seven requests gather with 33 in flight. The
/// eighth makes eight, the most that gather: they go, although 32 are
/// still in flight.
#[tokio::test]
async fn gathered_requests_go_when_eight_wait() {
    gather_then_release(40, 7, 8).await;
}

/// A server that answers a query with CopyInResponse waits for COPY data;
/// the client answers with CopyFail. That CopyFail must go out at once
/// even with more requests in flight than the driver lets gather:
/// nothing in flight is answered until the server has it. (PostgreSQL
/// only does this for COPY FROM STDIN, which pgpipe refuses before
/// sending; the fake server does it for a plain SELECT.)
#[tokio::test]
async fn a_copy_fail_is_never_held_back() {
    let mut script = Script::new().expect_startup().send(msg::handshake());
    script = expect_queries(script, CALLERS);
    // CopyInResponse: text, no columns.
    script = script.send(msg::raw(b'G', &[0, 0, 0])).expect(b'f');
    script = copy_failed(script);
    script = answers(script, CALLERS - 1);
    let script = script.expect_eof();

    let server = FakeServer::start(script).await.unwrap();
    let hung = "the callers hung: the CopyFail was held back";
    only_the_copy_failed(&run_callers(&server, CALLERS, 1, hung).await);
    // `finish` bounds its own wait and names the step it stopped at.
    let transcript = server.finish().await.unwrap();
    assert_eq!(transcript.bodies(b'f').len(), 1);
}

/// The same CopyFail queued behind statements the driver holds back: 20
/// in flight, four answered, so those four callers' second statements
/// gather (16 in flight, fewer than 8 waiting). The fifth answer is
/// CopyInResponse: the CopyFail must go at once, and the four with it.
#[tokio::test]
async fn a_copy_fail_behind_held_back_statements_goes_at_once() {
    let mut script = Script::new().expect_startup().send(msg::handshake());
    script = expect_queries(script, CALLERS);
    script = answers(script, 4);
    // Held back, as in `gather_then_release`: the client sends nothing
    // until the next answer (waiting longer only makes the check stricter).
    script = script.expect_nothing_for(Duration::from_secs(1));
    script = script.send(msg::raw(b'G', &[0, 0, 0]));
    script = expect_queries(script, 4).expect(b'f');
    script = copy_failed(script);
    // The other first statements, then the four second ones sent with the
    // CopyFail; then the second statements of the rest, answered as they
    // come.
    script = answers(script, CALLERS - 5);
    script = answers(script, 4);
    for _ in 0..CALLERS - 5 {
        script = answers(script.expect(b'Q'), 1);
    }
    let script = script.expect_eof();

    let server = FakeServer::start(script).await.unwrap();
    let hung = "the callers hung: the CopyFail waited behind held-back statements";
    only_the_copy_failed(&run_callers(&server, CALLERS, 2, hung).await);
    let transcript = server.finish().await.unwrap();
    assert_eq!(transcript.bodies(b'f').len(), 1);
    assert_eq!(transcript.bodies(b'Q').len(), 2 * CALLERS - 1);
}

/// On a multi-thread runtime nothing gathers below 64 in flight: held
/// requests would wait for the driver's next read, which waits for a
/// worker to poll tokio's I/O driver, and meanwhile the server can run
/// dry. With 16 requests still in flight, the four answered callers'
/// second statements must reach the server before it sends another
/// answer.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn on_a_multi_thread_runtime_requests_go_at_once_under_a_deep_pipeline() {
    let mut script = Script::new().expect_startup().send(msg::handshake());
    script = expect_queries(script, CALLERS);
    script = answers(script, 4);
    // Held back, these would wait for an answer that only comes after them.
    script = expect_queries(script, 4);
    // The other first statements, then the four second ones; then the
    // second statements of the rest, sent as their first were answered.
    script = answers(script, CALLERS - 4);
    script = answers(script, 4);
    script = expect_queries(script, CALLERS - 4);
    script = answers(script, CALLERS - 4);
    let script = script.expect_eof();

    let server = FakeServer::start(script).await.unwrap();
    let hung = "the callers hung: their requests were held back on a multi-thread runtime";
    for result in run_callers(&server, CALLERS, 2, hung).await {
        result.unwrap();
    }
    // `finish` bounds its own wait and names the step it stopped at.
    let transcript = server.finish().await.unwrap();
    assert_eq!(transcript.bodies(b'Q').len(), 2 * CALLERS);
}
