//! A primary and a streaming standby from the testkit: target_session_attrs
//! picks the right one, and after a failover new connections find the new
//! primary.

use std::time::Duration;

use pgpipe::ErrorKind;
use pgpipe_testkit::Cluster;

const BOUND: Duration = Duration::from_secs(120);

fn url(primary: &Cluster, standby: &Cluster, attrs: &str) -> String {
    format!(
        "postgres://{}@127.0.0.1:{},127.0.0.1:{}/postgres?connect_timeout=3&target_session_attrs={attrs}",
        primary.superuser(),
        primary.port(),
        standby.port()
    )
}

async fn in_recovery(client: &impl pgpipe::GenericClient) -> bool {
    client
        .query_one("SELECT pg_is_in_recovery()", ())
        .await
        .unwrap()
        .get(0)
}

#[tokio::test]
async fn writes_follow_the_primary_through_a_failover() {
    tokio::time::timeout(BOUND, async {
        let primary = Cluster::start().expect("primary");
        let standby = primary.start_standby().expect("standby");
        primary
            .execute("postgres", "CREATE TABLE kv (k int PRIMARY KEY)")
            .unwrap();

        // Hosts listed standby-first too: the attribute decides, not the order.
        let rw = url(&primary, &standby, "read-write");
        let rw_reversed = format!(
            "postgres://{}@127.0.0.1:{},127.0.0.1:{}/postgres?target_session_attrs=read-write",
            primary.superuser(),
            standby.port(),
            primary.port()
        );
        for (k, u) in [&rw, &rw_reversed].into_iter().enumerate() {
            let client = pgpipe::connect(u).await.unwrap();
            assert!(!in_recovery(&client).await);
            client
                .execute("INSERT INTO kv VALUES ($1)", (k as i32,))
                .await
                .unwrap();
        }

        // prefer-standby reads go to the standby while it exists.
        let reader = pgpipe::connect(&url(&primary, &standby, "prefer-standby"))
            .await
            .unwrap();
        assert!(in_recovery(&reader).await);
        let standby_only = pgpipe::connect(&url(&primary, &standby, "standby"))
            .await
            .unwrap();
        assert!(in_recovery(&standby_only).await);

        // Failover: the primary goes away, the standby is promoted.
        let old = pgpipe::connect(&rw).await.unwrap();
        primary.stop().unwrap();
        standby.promote().unwrap();
        let err = old
            .execute("INSERT INTO kv VALUES (-1)", ())
            .await
            .unwrap_err();
        assert!(
            matches!(
                err.kind(),
                ErrorKind::Closed | ErrorKind::Io | ErrorKind::Db
            ),
            "{err:?}"
        );

        let client = pgpipe::connect(&rw).await.unwrap();
        assert!(!in_recovery(&client).await);
        client
            .execute("INSERT INTO kv VALUES (424242)", ())
            .await
            .unwrap();
        let n: i64 = client
            .query_one("SELECT count(*) FROM kv", ())
            .await
            .unwrap()
            .get(0);
        assert!(n >= 1);

        // With no standby left, prefer-standby settles for the primary.
        let reader = pgpipe::connect(&url(&primary, &standby, "prefer-standby"))
            .await
            .unwrap();
        assert!(!in_recovery(&reader).await);
    })
    .await
    .expect("failover test exceeded its bound");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pool_reconnects_to_the_new_primary() {
    tokio::time::timeout(BOUND, async {
        let primary = Cluster::start().expect("primary");
        let standby = primary.start_standby().expect("standby");
        primary
            .execute("postgres", "CREATE TABLE kv (k int PRIMARY KEY)")
            .unwrap();
        let pool_url = format!(
            "{}&pool_max_size=4&pool_acquire_timeout=20000",
            url(&primary, &standby, "read-write")
        );
        let pool = pgpipe::Pool::connect(&pool_url).await.unwrap();
        pool.execute("INSERT INTO kv VALUES (1)", ()).await.unwrap();

        primary.stop().unwrap();
        standby.promote().unwrap();

        // The first statements after the failover may meet connections that
        // died with the old primary; the pool replaces them.
        let mut written = false;
        for attempt in 0..20 {
            match pool
                .execute("INSERT INTO kv VALUES ($1)", (100 + attempt,))
                .await
            {
                Ok(_) => {
                    written = true;
                    break;
                }
                Err(e) => assert!(
                    matches!(
                        e.kind(),
                        ErrorKind::Closed | ErrorKind::Io | ErrorKind::Connect
                    ),
                    "{e:?}"
                ),
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        assert!(written, "no write succeeded after the failover");
        let c = pool.get().await.unwrap();
        assert!(!in_recovery(&c).await);
    })
    .await
    .expect("pool failover test exceeded its bound");
}

/// On a hot standby `BEGIN ISOLATION LEVEL SERIALIZABLE` fails: the
/// statement that carried it must not run outside a transaction, later ones
/// are refused, and COMMIT says nothing was committed.
#[tokio::test]
async fn a_failed_begin_runs_nothing_outside_the_transaction() {
    tokio::time::timeout(BOUND, async {
        let primary = Cluster::start().expect("primary");
        let standby = primary.start_standby().expect("standby");
        let url = format!(
            "postgres://{}@127.0.0.1:{}/postgres",
            standby.superuser(),
            standby.port()
        );
        let mut client = pgpipe::connect(&url).await.unwrap();
        let tx = client
            .build_transaction()
            .isolation(pgpipe::IsolationLevel::Serializable)
            .start()
            .await
            .unwrap();
        // Would succeed (a read) if it ran outside the transaction.
        let err = tx
            .query_one("SELECT pg_backend_pid()", ())
            .await
            .unwrap_err();
        assert_eq!(
            err.code(),
            Some(&pgpipe::SqlState::FEATURE_NOT_SUPPORTED),
            "{err}"
        );
        let err = tx.query("SELECT 1", ()).await.unwrap_err();
        assert_eq!(err.kind(), ErrorKind::TransactionAborted, "{err}");
        let err = tx.commit().await.unwrap_err();
        assert_eq!(err.kind(), ErrorKind::RolledBack, "{err}");
        // The connection is fine for the next transaction.
        let tx = client.transaction().await.unwrap();
        let one: i32 = tx.query_one("SELECT 1", ()).await.unwrap().get(0);
        assert_eq!(one, 1);
        tx.commit().await.unwrap();
    })
    .await
    .expect("test exceeded its time bound")
}
