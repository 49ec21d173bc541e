//! The `stream` workload through tokio-postgres's `query_raw`.

use futures_util::StreamExt;
use tokio_postgres::types::ToSql;
use tokio_postgres::NoTls;

use crate::error::BenchError;

/// `sql` with `$1 = n`, each row handed to `each` as (int4, text).
pub async fn stream(
    url: &str,
    sql: &str,
    n: i32,
    mut each: impl FnMut(i32, &str) -> Result<(), BenchError>,
) -> Result<(), BenchError> {
    let (client, conn) = tokio_postgres::connect(url, NoTls).await?;
    tokio::spawn(async move {
        let _ = conn.await;
    });
    let stmt = client.prepare(sql).await?;
    let params: [&(dyn ToSql + Sync); 1] = [&n];
    let s = client.query_raw(&stmt, params).await?;
    let mut s = std::pin::pin!(s);
    while let Some(row) = s.next().await {
        let row = row?;
        each(row.try_get(0)?, row.try_get::<_, &str>(1)?)?;
    }
    Ok(())
}
