//! The bulk upsert helper: binary COPY into a temporary staging table, then
//! one `INSERT ... SELECT ... ON CONFLICT` into the target, in one
//! transaction.

use std::borrow::Borrow;
use std::sync::Arc;

use pgpipe_types::Params;

use super::sql::quoted_list;
use super::typed::{describe_target, BinaryCopyWriter};
use crate::error::ErrorKind;
use crate::query::{Column, ConnRef};
use crate::sql::quote_ident;
use crate::Error;

/// What [`Client::upsert_rows`](crate::Client::upsert_rows) does with a row whose key already exists.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum OnConflict {
    /// Overwrite the existing row's other columns with the new values
    /// (`DO UPDATE SET c = EXCLUDED.c`).
    Update,
    /// Keep the existing row (`DO NOTHING`).
    Nothing,
}

/// What [`Client::upsert_rows`](crate::Client::upsert_rows) did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct UpsertCounts {
    /// Rows that were new.
    pub inserted: u64,
    /// Existing rows that were overwritten ([`OnConflict::Update`]).
    pub updated: u64,
    /// Rows left alone because their key existed ([`OnConflict::Nothing`]).
    pub skipped: u64,
}

static STAGING: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// One bulk upsert's target and conflict rule: what
/// [`Client::upsert_rows`](crate::Client::upsert_rows) checks first
/// ([`target`](Self::target)) and then runs inside a transaction
/// ([`run`](Self::run)).
pub(crate) struct Upsert<'a> {
    pub(crate) table: &'a str,
    pub(crate) columns: &'a [&'a str],
    pub(crate) key: &'a [&'a str],
    pub(crate) on_conflict: OnConflict,
}

impl Upsert<'_> {
    /// Checks the arguments and describes the target columns, before the
    /// transaction begins.
    pub(crate) async fn target(&self, client: &ConnRef) -> Result<Arc<[Column]>, Error> {
        let Upsert {
            table,
            columns,
            key,
            ..
        } = *self;
        if columns.is_empty() || key.is_empty() {
            return Err(Error::new(
                ErrorKind::InvalidUse,
                "upsert_rows needs the columns to write and the key columns of the conflict target",
            ));
        }
        if let Some(k) = key.iter().find(|k| !columns.contains(k)) {
            return Err(Error::new(
                ErrorKind::InvalidUse,
                format!("the key column {k:?} is not one of the columns written"),
            ));
        }
        describe_target(client, table, columns).await
    }

    /// The upsert itself, on a handle inside a transaction: stage `rows`
    /// with COPY, merge them with one statement, count what happened.
    pub(crate) async fn run<T, I>(
        &self,
        client: &ConnRef,
        rows: I,
        described: Arc<[Column]>,
    ) -> Result<UpsertCounts, Error>
    where
        T: Params + ?Sized,
        I: IntoIterator,
        I::Item: Borrow<T>,
    {
        let Upsert {
            table,
            columns,
            key,
            on_conflict,
        } = *self;
        let n = STAGING.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let staging = format!("pgpipe_upsert_{}_{n}", std::process::id());
        let cols = quoted_list(columns)?;
        client
            .batch_execute(&format!(
                "CREATE TEMP TABLE {staging} ON COMMIT DROP AS SELECT {cols} FROM {table} WITH NO DATA"
            ))
            .await?;
        let mut writer = BinaryCopyWriter::<T>::start(client, &staging, columns, described).await?;
        writer.write_all(rows).await?;
        let staged = writer.finish().await?;
        let updates: Vec<String> = columns
            .iter()
            .filter(|c| !key.contains(c))
            .map(|c| quote_ident("column", c).map(|q| format!("{q} = EXCLUDED.{q}")))
            .collect::<Result<_, _>>()?;
        let action = match on_conflict {
            OnConflict::Update if !updates.is_empty() => {
                format!("DO UPDATE SET {}", updates.join(", "))
            }
            _ => "DO NOTHING".to_owned(),
        };
        let sql = format!(
            "WITH r AS (INSERT INTO {table} ({cols}) SELECT {cols} FROM {staging} \
             ON CONFLICT ({}) {action} RETURNING (xmax = 0) AS inserted) \
             SELECT count(*) FILTER (WHERE inserted), count(*) FILTER (WHERE NOT inserted) FROM r",
            quoted_list(key)?
        );
        let row = client.query_one(&sql, ()).await?;
        let inserted: i64 = row.try_get(0)?;
        let updated: i64 = row.try_get(1)?;
        client
            .batch_execute(&format!("DROP TABLE {staging}"))
            .await?;
        let (inserted, updated) = (inserted as u64, updated as u64);
        Ok(UpsertCounts {
            inserted,
            updated,
            skipped: staged.saturating_sub(inserted + updated),
        })
    }
}
