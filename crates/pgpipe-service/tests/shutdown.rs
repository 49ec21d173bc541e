//! Graceful shutdown on both drivers: a request in flight when the
//! shutdown starts completes; the server then stops and closes its pool.

mod common;

use std::time::Duration;

use bytes::Bytes;
use common::{bounded, database, request, start};
use hyper::{Method, StatusCode};
use pgpipe_service::cli::Driver;
use pgpipe_service::router::Limits;
use pgpipe_testkit::AuthRole;

async fn completes_in_flight(driver: Driver) {
    let db = database("shutdown").await;
    let url = db.url(AuthRole::Trust);
    let mut svc = start(driver, &url, Limits::default()).await;

    // Hold the row lock of key `held`, so that a PUT of it waits in the
    // database until we let go.
    let locker = pgpipe::connect(&url).await.unwrap();
    locker
        .batch_execute("INSERT INTO kv VALUES ('held', 'old'); BEGIN; SELECT * FROM kv WHERE k = 'held' FOR UPDATE")
        .await
        .unwrap();
    let addr = svc.addr;
    let put = tokio::spawn(async move {
        request(
            addr,
            Method::PUT,
            "/v0/entity?id=held",
            Bytes::from_static(b"new"),
        )
        .await
    });

    // Wait (bounded by the test) until the PUT is blocked on the lock,
    // watching from another connection (the locker's is inside its
    // transaction). Only this test's database counts: the other driver's
    // test runs at the same time on the same cluster, and counting its
    // blocked PUT too made `waiting` 2 and this loop spin forever.
    let observer = pgpipe::connect(&url).await.unwrap();
    loop {
        let waiting: i64 = observer
            .query_one(
                "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE 'INSERT INTO kv%'",
                (),
            )
            .await
            .unwrap()
            .get(0);
        if waiting == 1 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }

    svc.shutdown();
    // The server keeps running while the request is in flight.
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert!(!svc.task.is_finished(), "stopped with a request in flight");
    assert!(!put.is_finished());

    locker.batch_execute("COMMIT").await.unwrap();
    let r = put.await.unwrap();
    assert_eq!(r.status, StatusCode::CREATED, "{r:?}");
    svc.task.await.unwrap().unwrap();

    // It was written, and the server no longer accepts connections.
    let v: Vec<u8> = observer
        .query_one("SELECT v FROM kv WHERE k = 'held'", ())
        .await
        .unwrap()
        .get(0);
    assert_eq!(v, b"new");
    assert!(tokio::net::TcpStream::connect(addr).await.is_err());
}

#[tokio::test]
async fn graceful_shutdown_completes_in_flight_pgpipe() {
    bounded(completes_in_flight(Driver::Pgpipe)).await;
}

#[tokio::test]
async fn graceful_shutdown_completes_in_flight_tokio_postgres() {
    bounded(completes_in_flight(Driver::TokioPostgres)).await;
}
