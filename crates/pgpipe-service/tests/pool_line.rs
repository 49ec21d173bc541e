//! The pgpipe service's pool queues new requests once its shared lane is
//! full (`PoolConfig::shared_line_at`): its requests run many statements
//! each, where fair tails are worth the rate. The URL can turn it off.

mod common;

use common::{bounded, database};
use pgpipe_service::db::{PgpipeDb, SHARED_LINE_AT};
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
