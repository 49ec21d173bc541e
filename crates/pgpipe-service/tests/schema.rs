//! The service's schema set-up on a fresh database, several at once: two
//! service instances starting together (replicas of one deployment, or
//! the bench starting both drivers' services) must both come up.

mod common;

use common::bounded;
use pgpipe_service::schema;
use pgpipe_service::techempower::WORLD_ROWS;
use pgpipe_testkit::{AuthRole, Cluster};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_set_ups_of_a_fresh_database_all_succeed() {
    bounded(async {
        let cluster = Cluster::shared().expect("cluster");
        for round in 0..3 {
            let db = cluster.create_database("schema").expect("database");
            let url = db.url(AuthRole::Trust);
            let runs: Vec<_> = (0..4)
                .map(|_| {
                    let url = url.clone();
                    tokio::spawn(async move { schema::ensure(&url).await })
                })
                .collect();
            for run in runs {
                run.await
                    .expect("the set-up task")
                    .unwrap_or_else(|e| panic!("round {round}: {e}"));
            }
            let client = pgpipe::connect(&url).await.unwrap();
            let worlds: i64 = client
                .query_one("SELECT count(*) FROM world", ())
                .await
                .unwrap()
                .get(0);
            assert_eq!(worlds, WORLD_ROWS as i64, "round {round}");
        }
    })
    .await;
}
