//! A connection's driver that goes away (its `Connection` future dropped,
//! its task aborted, its runtime shut down) fails every caller at once
//! with a `Closed` error, against a real server: nothing waits for a
//! driver that will never poll again.

mod common;

use std::time::Duration;

use common::{bounded, database, eventually};
use pgpipe::{Client, Connection, Error};
use pgpipe_testkit::{AuthRole, TestDatabase};
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

/// How long any one call may take to fail once its driver is gone: far
/// more than it needs (it fails at once), so that only a hang trips it.
const FAIL_BOUND: Duration = Duration::from_secs(10);

/// How many requests are in flight when the driver goes.
const IN_FLIGHT: usize = 100;

async fn connect_driver(db: &TestDatabase) -> (Client, Connection) {
    pgpipe::connect_with_driver(&db.url(AuthRole::Trust))
        .await
        .unwrap_or_else(|e| panic!("connect failed: {e}"))
}

/// Runs the driver on a task that drops it (mid-way, without finishing
/// it) when the sender fires.
fn run_until_dropped(connection: Connection) -> (oneshot::Sender<()>, JoinHandle<()>) {
    let (stop, stopped) = oneshot::channel::<()>();
    let task = tokio::spawn(async move {
        tokio::select! {
            _ = connection => panic!("the driver ended before it was dropped"),
            _ = stopped => {}
        }
    });
    (stop, task)
}

/// Asserts that `call` fails with a `Closed` error within [`FAIL_BOUND`].
async fn assert_closed<T: std::fmt::Debug>(
    what: &str,
    call: impl std::future::Future<Output = Result<T, Error>>,
) {
    match tokio::time::timeout(FAIL_BOUND, call).await {
        Err(_) => panic!("{what}: still waiting {FAIL_BOUND:?} after the driver went away"),
        Ok(Ok(v)) => panic!("{what}: succeeded ({v:?}) after the driver went away"),
        Ok(Err(e)) => assert!(e.is_closed(), "{what}: expected a Closed error, got {e}"),
    }
}

/// Starts `IN_FLIGHT` queries (the first runs for a minute, so that every
/// other one stays in flight behind it) and waits until all are queued.
async fn start_in_flight(client: &Client) -> Vec<JoinHandle<Result<pgpipe::Row, Error>>> {
    let mut calls = Vec::with_capacity(IN_FLIGHT);
    let c = client.clone();
    calls.push(tokio::spawn(async move {
        c.query_one("SELECT pg_sleep(60)::text", ()).await
    }));
    for i in 1..IN_FLIGHT as i32 {
        let c = client.clone();
        calls.push(tokio::spawn(async move {
            c.query_one("SELECT $1::int4", (i,)).await
        }));
    }
    eventually("every request is queued", || async {
        client.pending_requests() == IN_FLIGHT
    })
    .await;
    calls
}

async fn assert_all_closed(calls: Vec<JoinHandle<Result<pgpipe::Row, Error>>>) {
    for (i, call) in calls.into_iter().enumerate() {
        let joined = async { call.await.expect("query task panicked") };
        assert_closed(&format!("request {i} in flight"), joined).await;
    }
}

/// After its driver is gone, every kind of later request fails as closed.
async fn assert_later_requests_closed(client: &Client) {
    assert!(client.is_closed(), "the client does not see itself closed");
    assert_closed("a later query_one", client.query_one("SELECT 1", ())).await;
    assert_closed("a later execute", client.execute("SELECT 1", ())).await;
    assert_closed("a later simple_query", client.simple_query("SELECT 1")).await;
    assert_closed("a later transaction", async {
        client.clone().transaction().await.map(drop)
    })
    .await;
    assert_closed(
        "a later clone's query",
        client.clone().query_one("SELECT 1", ()),
    )
    .await;
}

#[tokio::test]
async fn dropping_the_driver_with_requests_in_flight_fails_them_all() {
    bounded(async {
        let db = database("drop_in_flight");
        let (client, connection) = connect_driver(&db).await;
        let (stop, driver) = run_until_dropped(connection);
        let calls = start_in_flight(&client).await;
        stop.send(()).unwrap();
        driver.await.unwrap();
        assert_all_closed(calls).await;
        assert_later_requests_closed(&client).await;
    })
    .await;
}

#[tokio::test]
async fn dropping_an_idle_driver_fails_later_requests() {
    bounded(async {
        let db = database("drop_idle");
        let (client, connection) = connect_driver(&db).await;
        let (stop, driver) = run_until_dropped(connection);
        let row = client.query_one("SELECT 41 + 1", ()).await.unwrap();
        assert_eq!(row.get::<i32, _>(0), 42);
        stop.send(()).unwrap();
        driver.await.unwrap();
        assert_later_requests_closed(&client).await;
    })
    .await;
}

#[tokio::test]
async fn dropping_a_driver_never_polled_fails_requests() {
    bounded(async {
        let db = database("drop_unpolled");
        let (client, connection) = connect_driver(&db).await;
        let pending = {
            let c = client.clone();
            tokio::spawn(async move { c.query_one("SELECT 1", ()).await })
        };
        eventually("the request is queued", || async {
            client.pending_requests() == 1
        })
        .await;
        drop(connection);
        assert_closed("the queued request", async {
            pending.await.expect("query task panicked")
        })
        .await;
        assert_later_requests_closed(&client).await;
    })
    .await;
}

#[tokio::test]
async fn aborting_the_driver_task_fails_every_request() {
    bounded(async {
        let db = database("abort_driver");
        let (client, connection) = connect_driver(&db).await;
        let driver = tokio::spawn(connection);
        let calls = start_in_flight(&client).await;
        driver.abort();
        assert!(driver.await.unwrap_err().is_cancelled());
        assert_all_closed(calls).await;
        assert_later_requests_closed(&client).await;
    })
    .await;
}

/// A client made on one runtime and used from another: once the first
/// runtime (which runs the driver) shuts down, the client's requests end
/// with Closed, those in flight and those made later.
#[tokio::test]
async fn shutting_down_the_drivers_runtime_fails_every_request() {
    bounded(async {
        let db = database("runtime_shutdown");
        let url = db.url(AuthRole::Trust);
        let (client, runtime) = tokio::task::spawn_blocking(move || {
            let runtime = tokio::runtime::Builder::new_multi_thread()
                .worker_threads(1)
                .enable_all()
                .build()
                .unwrap();
            let client = runtime
                .block_on(pgpipe::connect(&url))
                .unwrap_or_else(|e| panic!("connect failed: {e}"));
            (client, runtime)
        })
        .await
        .unwrap();
        // Used from this (another) runtime while the driver runs there.
        let row = client.query_one("SELECT 41 + 1", ()).await.unwrap();
        assert_eq!(row.get::<i32, _>(0), 42);
        let calls = start_in_flight(&client).await;
        tokio::task::spawn_blocking(move || runtime.shutdown_timeout(FAIL_BOUND))
            .await
            .unwrap();
        assert_all_closed(calls).await;
        assert_later_requests_closed(&client).await;
    })
    .await;
}

/// A session on the server is gone once its driver is: the server sees
/// the socket close (nothing of the connection lingers).
#[tokio::test]
async fn a_dropped_driver_closes_its_server_session() {
    bounded(async {
        let db = database("drop_session");
        let observer = common::connect(&db).await;
        let (client, connection) = connect_driver(&db).await;
        let (stop, driver) = run_until_dropped(connection);
        let pid = client.backend_pid();
        client.execute("SELECT 1", ()).await.unwrap();
        stop.send(()).unwrap();
        driver.await.unwrap();
        common::backend_gone(&observer, pid, "the dropped driver's backend is gone").await;
    })
    .await;
}
