//! The `stream` workload through pgpipe's `query_stream`.

use crate::error::BenchError;
use crate::measure::LowWater;

/// `sql` with `$1 = n`, each row handed to `each` as (int4, text); returns
/// the connection's low-water counts over the stream.
pub async fn stream(
    url: &str,
    sql: &str,
    n: i32,
    mut each: impl FnMut(i32, &str) -> Result<(), BenchError>,
) -> Result<LowWater, BenchError> {
    let client = pgpipe::connect(url).await?;
    let mut s = client.query_stream(sql, (n,)).await?;
    while let Some(row) = s.next().await {
        let row = row?;
        each(row.try_get(0)?, row.try_get::<&str, _>(1)?)?;
    }
    Ok(super::low_water_of(&client).unwrap_or_default())
}
