//! The `stream` workload through pgpipe's `query_stream`.

use crate::error::BenchError;

/// `sql` with `$1 = n`, each row handed to `each` as (int4, text).
pub async fn stream(
    url: &str,
    sql: &str,
    n: i32,
    mut each: impl FnMut(i32, &str) -> Result<(), BenchError>,
) -> Result<(), BenchError> {
    let client = pgpipe::connect(url).await?;
    let mut s = client.query_stream(sql, (n,)).await?;
    while let Some(row) = s.next().await {
        let row = row?;
        each(row.try_get(0)?, row.try_get::<&str, _>(1)?)?;
    }
    Ok(())
}
