//! Requests their callers write themselves: when a connection's driver is
//! idle, a caller writes its own request to the socket instead of waking
//! the driver (plain TCP and Unix sockets). These check that every answer
//! still reaches its own caller in order, whichever way each request went
//! out: alone, mixed with queued ones, larger than the socket takes at
//! once, failing, and over TLS (where the driver writes everything).

mod common;

use std::sync::Arc;

use common::{bounded, connect, database};
use pgpipe::Client;
use pgpipe_testkit::AuthRole;

/// `tasks` tasks each run `per_task` statements one after another, each
/// checking that it got its own value back.
async fn echo_from_tasks(client: &Client, tasks: i64, per_task: i64) {
    let mut handles = Vec::new();
    for t in 0..tasks {
        let client = client.clone();
        handles.push(tokio::spawn(async move {
            for i in 0..per_task {
                let v = t * 1_000_000 + i;
                let row = client
                    .query_one("SELECT $1::int8, $1::int8::text", (v,))
                    .await
                    .unwrap();
                assert_eq!(row.get::<i64, _>(0), v);
                assert_eq!(row.get::<String, _>(1), v.to_string());
            }
        }));
    }
    for h in handles {
        h.await.unwrap();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lone_caller_writes_its_own_requests_and_gets_every_answer() {
    bounded(async {
        let db = database("own_lone");
        let client = connect(&db).await;
        let before = client.stats();
        echo_from_tasks(&client, 1, 200).await;
        let after = client.stats();
        // One caller, one statement at a time: the driver is idle each time,
        // so (after the statement is prepared) the caller writes its own.
        let own = after.own_writes - before.own_writes;
        assert!(
            own >= 190,
            "only {own} of 200 statements written by their caller"
        );
        assert!(after.socket_writes - before.socket_writes >= own);
    })
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn callers_writing_their_own_and_queued_requests_each_get_their_own_answer() {
    bounded(async {
        let db = database("own_mixed");
        let client = connect(&db).await;
        // A few tasks leave the driver idle most of the time (own writes);
        // 200 more at once make a deep pipeline whose requests are queued
        // for the driver. Both kinds interleave on one socket.
        let few = {
            let client = client.clone();
            tokio::spawn(async move { echo_from_tasks(&client, 4, 300).await })
        };
        let many = {
            let client = client.clone();
            tokio::spawn(async move { echo_from_tasks(&client, 200, 5).await })
        };
        few.await.unwrap();
        many.await.unwrap();
        let stats = client.stats();
        assert!(stats.own_writes > 0, "no caller wrote its own request");
        // 1,200 + 1,000 statements; the deep pipeline went out in fewer
        // writes than statements (the driver wrote it, gathered).
        assert!(stats.socket_writes < 2_200, "{stats:?}");
    })
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_request_larger_than_the_socket_takes_at_once_arrives_whole() {
    bounded(async {
        let db = database("own_large");
        let client = connect(&db).await;
        let check = client
            .prepare("SELECT length($1::text), md5($1::text) = md5(repeat('ab', $2::int4))")
            .await
            .unwrap();
        // 16 MiB: far more than a socket's send buffer, so the caller's own
        // write is partial and the driver writes the rest.
        let big = "ab".repeat(8 << 20);
        let send_big = || async {
            let row = client
                .query_one(&check, (big.as_str(), 8i32 << 20))
                .await
                .unwrap();
            assert_eq!(row.get::<i32, _>(0), 16 << 20);
            assert!(
                row.get::<bool, _>(1),
                "the server got other bytes than sent"
            );
        };
        let before = client.stats();
        send_big().await;
        let after = client.stats();
        assert_eq!(after.own_writes - before.own_writes, 1, "{after:?}");
        assert!(
            after.socket_writes - before.socket_writes >= 2,
            "the caller's own write took it all: {after:?}"
        );
        // Again, with small statements of other tasks queueing behind it.
        let small = {
            let client = client.clone();
            tokio::spawn(async move { echo_from_tasks(&client, 3, 100).await })
        };
        send_big().await;
        small.await.unwrap();
        // The connection is still in step.
        let row = client
            .query_one("SELECT $1::int4 + 1", (41,))
            .await
            .unwrap();
        assert_eq!(row.get::<i32, _>(0), 42);
    })
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_error_answering_a_callers_own_write_reaches_that_caller() {
    bounded(async {
        let db = database("own_error");
        let client = connect(&db).await;
        client.query_one("SELECT 1", ()).await.unwrap();
        for round in 0..50 {
            let before = client.stats().own_writes;
            // The driver reads this error with nothing of its own in
            // flight: it must not take it for the server's farewell.
            let err = client
                .query("SELECT 1/($1::int4 - $1::int4)", (round,))
                .await
                .unwrap_err();
            assert_eq!(err.code().map(|c| c.code()), Some("22012"), "{err}");
            assert!(
                !client.is_closed(),
                "the connection closed on round {round}"
            );
            let row = client.query_one("SELECT $1::int4", (round,)).await.unwrap();
            assert_eq!(row.get::<i32, _>(0), round);
            assert!(client.stats().own_writes > before);
        }
    })
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn callers_over_a_unix_socket_write_their_own_requests() {
    bounded(async {
        let db = database("own_unix");
        let client = pgpipe::connect(&db.socket_url(AuthRole::Trust))
            .await
            .unwrap();
        echo_from_tasks(&client, 6, 200).await;
        assert!(client.stats().own_writes > 0);
    })
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_closed_client_ends_the_session_although_callers_shared_its_socket() {
    bounded(async {
        let db = database("own_close");
        let observer = connect(&db).await;
        let client = connect(&db).await;
        let pid = client.backend_pid();
        echo_from_tasks(&client, 2, 50).await;
        assert!(client.stats().own_writes > 0);
        let kept = Arc::new(client.clone());
        client.close();
        // A handle still held must not keep the socket open: the server
        // ends the session.
        common::eventually("the backend is gone", || async {
            observer
                .query_opt("SELECT 1 FROM pg_stat_activity WHERE pid = $1", (pid,))
                .await
                .unwrap()
                .is_none()
        })
        .await;
        assert!(kept.query_one("SELECT 1", ()).await.is_err());
    })
    .await
}
