//! refinery's `AsyncTransaction`, `AsyncQuery` and `AsyncMigrate` for the
//! handles that can open a transaction.

use refinery_core::traits::r#async::{AsyncMigrate, AsyncQuery, AsyncTransaction};
use refinery_core::{Migration, SchemaVersion};
use time::format_description::well_known::Rfc3339;
use time::OffsetDateTime;

use crate::error::ErrorKind;
use crate::{Client, Error, GenericClient, Pool, PooledClient, Transaction};

/// Runs each of `queries` (a migration's SQL, which may hold several
/// statements, then its history row) in `tx` and commits.
async fn execute_all<'a>(
    tx: Transaction<'_>,
    queries: impl Iterator<Item = &'a str>,
) -> Result<usize, Error> {
    let mut count = 0;
    for query in queries {
        tx.batch_execute(query).await?;
        count += 1;
    }
    tx.commit().await?;
    Ok(count)
}

/// Reads refinery's schema history rows (`version, name, applied_on,
/// checksum`, in the order of `query`).
async fn applied_migrations(db: &impl GenericClient, query: &str) -> Result<Vec<Migration>, Error> {
    let rows = db.query(query, ()).await?;
    let mut applied = Vec::with_capacity(rows.len());
    for row in rows {
        let version: i64 = row.try_get(0)?;
        let name: String = row.try_get(1)?;
        let applied_on: String = row.try_get(2)?;
        let checksum: String = row.try_get(3)?;
        let bad = |what: &str| {
            Error::new(
                ErrorKind::Decode,
                format!("refinery's history table: migration {version} ({name}) has {what}"),
            )
        };
        let version = SchemaVersion::try_from(version)
            .map_err(|_| bad("a version out of refinery's range"))?;
        let applied_on = OffsetDateTime::parse(&applied_on, &Rfc3339).map_err(|e| {
            bad(&format!(
                "an applied_on that is not RFC 3339 ({e}): {applied_on:?}"
            ))
        })?;
        let checksum = checksum
            .parse::<u64>()
            .map_err(|_| bad(&format!("a checksum that is not a u64: {checksum:?}")))?;
        applied.push(Migration::applied(version, name, applied_on, checksum));
    }
    Ok(applied)
}

macro_rules! refinery_for {
    ($($handle:ty),*) => {$(
        impl AsyncTransaction for $handle {
            type Error = Error;

            async fn execute<'a, T: Iterator<Item = &'a str> + Send + 'a>(
                &'a mut self,
                queries: T,
            ) -> Result<usize, Error> {
                let tx = self.transaction().await?;
                execute_all(tx, queries).await
            }
        }

        impl AsyncQuery<Vec<Migration>> for $handle {
            async fn query<'a>(&'a mut self, query: &'a str) -> Result<Vec<Migration>, Error> {
                applied_migrations(&*self, query).await
            }
        }

        impl AsyncMigrate for $handle {}
    )*};
}

refinery_for!(Client, PooledClient, Pool);
