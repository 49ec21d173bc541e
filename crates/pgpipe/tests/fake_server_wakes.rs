//! One read of the driver often answers many callers, and it wakes each of
//! them. These tests make the scripted fake server answer many callers in
//! one write (one read for the client) and check that every caller gets
//! its own answer: with a statement failing among them, and with the read
//! breaking off in a message the client cannot parse (the callers answered
//! before it must still be woken with their answers, the others with the
//! connection's error; nobody may hang). The server answers in the order
//! the statements arrived, whatever order the callers' tasks ran in.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use pgpipe::SimpleQueryMessage;
use pgpipe_testkit::{msg, FakeServer, Script};

const BOUND: Duration = Duration::from_secs(60);

/// Callers, each sending one statement; all answered by one write. No
/// more than the depth from which the driver lets new requests gather
/// (16): the script answers only once every statement has arrived.
const CALLERS: usize = 16;

fn answer(i: usize) -> Bytes {
    msg::concat(&[
        msg::command_complete(&format!("SELECT {i}")),
        msg::ready_for_query(b'I'),
    ])
}

fn failure(i: usize) -> Bytes {
    msg::concat(&[
        msg::error_response(&[
            (b'S', "ERROR"),
            (b'C', "22012"),
            (b'M', &format!("division by zero in statement {i}")),
        ]),
        msg::ready_for_query(b'I'),
    ])
}

/// Starts `CALLERS` tasks, each sending `SELECT i` once, after the server
/// has been scripted to expect them all before answering: the answers then
/// arrive in one write. Returns each caller's result, in caller order.
async fn run_callers(server: &FakeServer) -> Vec<Result<u64, pgpipe::Error>> {
    let client = pgpipe::connect(&server.url()).await.unwrap();
    let tasks: Vec<_> = (0..CALLERS)
        .map(|i| {
            let client = client.clone();
            tokio::spawn(async move {
                match client
                    .simple_query(&format!("SELECT {i}"))
                    .await?
                    .as_slice()
                {
                    [SimpleQueryMessage::CommandComplete(n)] => Ok(*n),
                    other => panic!("caller {i}: unexpected answer of {} messages", other.len()),
                }
            })
        })
        .collect();
    let mut results = Vec::new();
    for task in tasks {
        results.push(task.await.unwrap());
    }
    results
}

/// The callers' statements in the order they arrived (their numbers) and,
/// once all have, one write made by `answers` from that order.
type Arrivals = Arc<Mutex<Vec<usize>>>;

fn expect_all(
    mut script: Script,
    answers: impl Fn(&[usize]) -> Bytes + Send + Sync + 'static,
) -> (Script, Arrivals) {
    let arrivals = Arrivals::default();
    let answers = Arc::new(answers);
    for _ in 0..CALLERS {
        let arrivals = arrivals.clone();
        let answers = answers.clone();
        script = script.expect(b'Q').respond(move |body| {
            // "SELECT n\0"
            let text = std::str::from_utf8(body).unwrap().trim_end_matches('\0');
            let n = text.strip_prefix("SELECT ").unwrap().parse().unwrap();
            let mut order = arrivals.lock().unwrap();
            order.push(n);
            if order.len() == CALLERS {
                answers(&order)
            } else {
                Bytes::new()
            }
        });
    }
    (script, arrivals)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_caller_answered_by_one_read_gets_its_own_answer() {
    let failing = 7;
    let start = Script::new().expect_startup().send(msg::handshake());
    let (script, _) = expect_all(start, move |order| {
        let parts: Vec<Bytes> = order
            .iter()
            .map(|&i| if i == failing { failure(i) } else { answer(i) })
            .collect();
        msg::concat(&parts)
    });
    let server = FakeServer::start(script.expect_eof()).await.unwrap();
    let results = tokio::time::timeout(BOUND, run_callers(&server))
        .await
        .expect("a caller answered by the read was never woken");
    for (i, result) in results.iter().enumerate() {
        if i == failing {
            let err = result
                .as_ref()
                .expect_err("statement 7 failed on the server");
            assert_eq!(err.code().map(|c| c.code()), Some("22012"), "{err}");
        } else {
            assert_eq!(*result.as_ref().unwrap(), i as u64, "caller {i}");
        }
    }
    server.finish().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_read_that_breaks_off_still_wakes_those_it_answered() {
    let answered = 10;
    let start = Script::new().expect_startup().send(msg::handshake());
    let (script, arrivals) = expect_all(start, move |order| {
        let mut parts: Vec<Bytes> = order[..answered].iter().map(|&i| answer(i)).collect();
        // A message type PostgreSQL never sends: the driver stops routing
        // here and closes the connection.
        parts.push(msg::raw(b'!', b"not a message"));
        msg::concat(&parts)
    });
    let server = FakeServer::start(script).await.unwrap();
    let results = tokio::time::timeout(BOUND, run_callers(&server))
        .await
        .expect("a caller hung after the read broke off");
    let order = arrivals.lock().unwrap().clone();
    assert_eq!(order.len(), CALLERS);
    for (i, result) in results.iter().enumerate() {
        if order[..answered].contains(&i) {
            assert_eq!(*result.as_ref().unwrap(), i as u64, "caller {i}");
        } else {
            assert!(result.is_err(), "caller {i} has no answer but succeeded");
        }
    }
}
