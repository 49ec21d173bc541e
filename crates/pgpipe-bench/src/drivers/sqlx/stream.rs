//! The `stream` workload through sqlx's `fetch`.

use futures_util::StreamExt;
use sqlx::{Connection, Row};

use crate::error::BenchError;

/// `sql` with `$1 = n`, each row handed to `each` as (int4, text).
pub async fn stream(
    url: &str,
    sql: &str,
    n: i32,
    mut each: impl FnMut(i32, &str) -> Result<(), BenchError>,
) -> Result<(), BenchError> {
    let mut conn = sqlx::postgres::PgConnection::connect(url).await?;
    let mut s = sqlx::query(sql).bind(n).fetch(&mut conn);
    while let Some(row) = s.next().await {
        let row = row?;
        each(row.try_get(0)?, row.try_get::<&str, _>(1)?)?;
    }
    Ok(())
}
