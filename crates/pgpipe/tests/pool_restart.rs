//! A pool rides through a server restart: queries in flight fail with a
//! closed/io error, later ones succeed, nothing hangs.

use std::time::Duration;

use pgpipe::{ErrorKind, Pool};
use pgpipe_testkit::{AuthRole, Cluster};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn queries_after_a_server_restart_succeed() {
    tokio::time::timeout(Duration::from_secs(120), async {
        let cluster = Cluster::start().expect("cluster");
        let url = format!(
            "{}?pool_max_size=4&pool_acquire_timeout=10000",
            cluster.url(AuthRole::Trust, "postgres")
        );
        let pool = Pool::connect(&url).await.unwrap();
        for i in 0..20i32 {
            assert_eq!(
                pool.query_one("SELECT $1::int4", (i,))
                    .await
                    .unwrap()
                    .get::<i32, _>(0),
                i
            );
        }

        // Queries in flight while the server goes down.
        let in_flight: Vec<_> = (0..4)
            .map(|_| {
                let pool = pool.clone();
                tokio::spawn(async move { pool.execute("SELECT pg_sleep(5)", ()).await })
            })
            .collect();
        tokio::time::sleep(Duration::from_millis(300)).await;
        cluster.restart().expect("restart");
        // Each fails on its connection, or (when the pool was still opening
        // a connection for it as the server went down) while connecting.
        for t in in_flight {
            let err = t.await.unwrap().unwrap_err();
            assert!(
                matches!(
                    err.kind(),
                    ErrorKind::Closed | ErrorKind::Io | ErrorKind::Db | ErrorKind::Connect
                ),
                "in-flight query: {err:?}"
            );
        }

        // The application keeps its pool; new requests find new connections.
        for i in 0..20i32 {
            let v: i32 = pool
                .query_one("SELECT $1::int4", (i,))
                .await
                .unwrap()
                .get(0);
            assert_eq!(v, i);
            let c = pool.get().await.unwrap();
            assert_eq!(
                c.query_one("SELECT 1::int4", ())
                    .await
                    .unwrap()
                    .get::<i32, _>(0),
                1
            );
        }
    })
    .await
    .expect("restart test exceeded its bound");
}
