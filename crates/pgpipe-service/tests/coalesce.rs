//! The pgpipe service shares Syncs between the statements it writes in one
//! go, so `/queries?queries=20` costs the server a few transactions rather
//! than twenty. Counted by the server itself (`pg_stat_database`), with the
//! tokio-postgres service (one Sync per statement) as the control that
//! shows the count can tell the two apart.

mod common;

use std::time::{Duration, Instant};

use common::{bounded, database, get, start};
use hyper::StatusCode;
use pgpipe::Client;
use pgpipe_service::cli::Driver;
use pgpipe_service::router::Limits;
use pgpipe_testkit::{AuthRole, Cluster};

const REQUESTS: i64 = 10;
const QUERIES: i64 = 20;

/// Commits the server counted in database `name`, read once every other
/// session on it has ended: a backend reports its counts before it leaves
/// `pg_stat_activity`, so by then nothing is pending.
async fn settled_commits(observer: &Client, name: &str) -> i64 {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let others: i64 = observer
            .query_one(
                "SELECT count(*) FROM pg_stat_activity \
                 WHERE datname = $1 AND pid <> pg_backend_pid()",
                (name,),
            )
            .await
            .unwrap()
            .get(0);
        if others == 0 {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "{others} sessions still on {name} after 60 s"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    observer
        .execute("SELECT pg_stat_clear_snapshot()", ())
        .await
        .unwrap();
    observer
        .query_one(
            "SELECT xact_commit FROM pg_stat_database WHERE datname = $1",
            (name,),
        )
        .await
        .unwrap()
        .get(0)
}

/// Server transactions spent by the service on `driver` answering
/// `REQUESTS` requests of `QUERIES` selects each, start-up included.
async fn transactions_for_queries(driver: Driver) -> i64 {
    let db = database("coalesce").await;
    let url = db.url(AuthRole::Trust);
    // The observer's own statements run in the postgres database, so they
    // are not counted against the service's.
    let postgres = Cluster::shared().unwrap().superuser_url("postgres");
    let observer = pgpipe::connect(&postgres).await.unwrap();
    let before = settled_commits(&observer, db.name()).await;

    let mut svc = start(driver, &url, Limits::default()).await;
    for _ in 0..REQUESTS {
        let r = get(svc.addr, &format!("/queries?queries={QUERIES}")).await;
        assert_eq!(r.status, StatusCode::OK, "{}", r.text());
        assert_eq!(r.json().as_array().unwrap().len(), QUERIES as usize);
    }
    svc.shutdown();
    svc.task.await.unwrap().unwrap();

    let spent = settled_commits(&observer, db.name()).await - before;
    spent
}

#[tokio::test]
async fn pgpipe_service_runs_a_request_s_twenty_selects_in_a_few_transactions() {
    bounded(async {
        let spent = transactions_for_queries(Driver::Pgpipe).await;
        eprintln!("pgpipe service: {spent} transactions");
        // Uncoalesced it is at least REQUESTS * QUERIES (200); coalesced,
        // a request's selects go out in one write or a few.
        assert!(
            spent <= REQUESTS * QUERIES / 4,
            "pgpipe: {spent} server transactions for {} selects",
            REQUESTS * QUERIES
        );
    })
    .await;
}

#[tokio::test]
async fn tokio_postgres_service_spends_a_transaction_per_select() {
    bounded(async {
        let spent = transactions_for_queries(Driver::TokioPostgres).await;
        eprintln!("tokio-postgres service: {spent} transactions");
        assert!(
            spent >= REQUESTS * QUERIES,
            "tokio-postgres: {spent} server transactions for {} selects",
            REQUESTS * QUERIES
        );
    })
    .await;
}
