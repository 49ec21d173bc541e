//! The pgpipe service's pool queues new requests once its shared lane is
//! full (`PoolConfig::shared_line_at`): its requests run many statements
//! each, where fair tails are worth the rate. The URL can turn it off.

mod common;

use common::{bounded, database};
use pgpipe_service::db::{Db, PgpipeDb, SHARED_LINE_AT};
use pgpipe_testkit::AuthRole;

#[tokio::test]
async fn the_service_pool_waits_in_line_unless_the_url_says_otherwise() {
    bounded(async {
        let db = database("pool_line").await;
        let url = db.url(AuthRole::Trust);
        let on = PgpipeDb::connect_with(&url, 8, false).await.unwrap();
        assert_eq!(
            on.pool().config().get_shared_line_at(),
            Some(SHARED_LINE_AT)
        );
        let sep = if url.contains('?') { '&' } else { '?' };
        let off = PgpipeDb::connect_with(&format!("{url}{sep}pool_shared_line_at=0"), 8, false)
            .await
            .unwrap();
        assert_eq!(off.pool().config().get_shared_line_at(), None);
        let deeper = PgpipeDb::connect_with(&format!("{url}{sep}pool_shared_line_at=200"), 8, true)
            .await
            .unwrap();
        assert_eq!(deeper.pool().config().get_shared_line_at(), Some(200));
    })
    .await;
}

/// The service's lane is no wider than this host's cores (the server's,
/// when the two run side by side as in the bench), unless the URL sets it.
#[tokio::test]
async fn the_service_lane_is_no_wider_than_the_cores_unless_the_url_says_otherwise() {
    bounded(async {
        let db = database("pool_lane_width").await;
        let url = db.url(AuthRole::Trust);
        let cores = std::thread::available_parallelism().unwrap().get();
        let capped = PgpipeDb::connect_with(&url, 64, true).await.unwrap();
        // A pool of 64 would have a lane of 16 by default.
        assert_eq!(
            capped.pool().config().get_shared_connections(),
            16.min(cores)
        );
        let sep = if url.contains('?') { '&' } else { '?' };
        let chosen =
            PgpipeDb::connect_with(&format!("{url}{sep}pool_shared_connections=5"), 64, true)
                .await
                .unwrap();
        assert_eq!(chosen.pool().config().get_shared_connections(), 5);
        // A request of many statements runs on the narrower lane.
        let ids: Vec<i32> = (1..=20).collect();
        let worlds = Db::worlds(&capped, &ids).await.unwrap();
        assert_eq!(
            worlds.iter().map(|w| w.id).collect::<Vec<_>>(),
            ids,
            "every world, in order"
        );
        assert!(capped.pool().stats().shared <= 16.min(cores));
    })
    .await;
}
