//! Bulk upsert on any handle: [`GenericUpsert`], implemented for every
//! [`GenericClient`], and the inherent `upsert_rows` of the four handles,
//! written once ([`delegate_upsert`]). It lives here, not in `copy/`,
//! because it needs a transaction of its own when the caller is not in one.

use std::borrow::Borrow;
use std::future::Future;

use pgpipe_types::Params;

use super::Transaction;
use crate::copy::Upsert;
use crate::driver::NO_SESSION;
use crate::{Error, GenericClient, OnConflict, UpsertCounts};

/// Bulk upsert on anything that runs queries (see
/// [`Client::upsert_rows`](crate::Client::upsert_rows)): in a transaction
/// of its own, or in the caller's on a [`Transaction`]; on a
/// [`Pool`](crate::Pool), on a checkout for the call.
///
/// Implemented for every [`GenericClient`]; the four handles also have the
/// method of their own (no import needed there). Bring the trait in scope
/// for code generic over [`GenericClient`].
pub trait GenericUpsert: GenericClient {
    /// Bulk upsert (see [`Client::upsert_rows`](crate::Client::upsert_rows)).
    fn upsert_rows<T, I>(
        &self,
        table: &str,
        columns: &[&str],
        key: &[&str],
        on_conflict: OnConflict,
        rows: I,
    ) -> impl Future<Output = Result<UpsertCounts, Error>> + Send
    where
        T: Params + ?Sized + Sync,
        I: IntoIterator + Send,
        I::IntoIter: Send,
        I::Item: Borrow<T> + Send,
    {
        upsert_rows::<Self, T, I>(self, table, columns, key, on_conflict, rows)
    }
}

impl<C: GenericClient + ?Sized> GenericUpsert for C {}

/// The one definition of `upsert_rows`: on the handle's session, in the
/// caller's transaction if the handle is one, else in one of its own.
pub(crate) async fn upsert_rows<C, T, I>(
    db: &C,
    table: &str,
    columns: &[&str],
    key: &[&str],
    on_conflict: OnConflict,
    rows: I,
) -> Result<UpsertCounts, Error>
where
    C: GenericClient + ?Sized,
    T: Params + ?Sized,
    I: IntoIterator,
    I::Item: Borrow<T>,
{
    let upsert = Upsert {
        table,
        columns,
        key,
        on_conflict,
    };
    let session = db.session().await?;
    let conn = session.conn();
    let described = upsert.target(conn).await?;
    if conn.session() != NO_SESSION {
        // A transaction's handle: the upsert is part of the caller's work.
        return upsert.run::<T, I>(conn, rows, described).await;
    }
    let tx = Transaction::begin(conn).await?;
    let counts = upsert.run::<T, I>(tx.conn(), rows, described).await?;
    tx.commit().await?;
    Ok(counts)
}

/// Expands to the `upsert_rows` method of a handle, inside its `impl`
/// block.
macro_rules! delegate_upsert {
    () => {
        /// Bulk upsert: writes `rows` with binary COPY into a temporary
        /// staging table shaped like `columns` of `table`, then runs one
        /// `INSERT INTO table (columns) SELECT ... ON CONFLICT (key) DO
        /// UPDATE | DO NOTHING`, all in one transaction (or in the
        /// caller's, when called on a [`Transaction`](crate::Transaction);
        /// on a [`Pool`](crate::Pool), on a connection checked out for the
        /// call). Returns how many rows were inserted, updated or skipped.
        ///
        /// `key` must match a unique index or constraint of `table`. With
        /// [`OnConflict::Update`](crate::OnConflict::Update) two rows with
        /// the same key in one call are an error from the server ("cannot
        /// affect row a second time"). Rows are checked against the column
        /// types like [`copy_in_rows`](Self::copy_in_rows). Column names
        /// are quoted; `table` is SQL text (quote it yourself if it needs
        /// quoting).
        ///
        /// Inserted and updated rows are told apart by `xmax = 0` in the
        /// `RETURNING` clause (the usual PostgreSQL idiom).
        ///
        /// ```no_run
        /// # async fn f(client: &pgpipe::Client) -> Result<(), pgpipe::Error> {
        /// use pgpipe::OnConflict;
        /// let rows = vec![(1i64, "inbox"), (2, "sent")];
        /// let counts = client
        ///     .upsert_rows::<(i64, &str), _>("mailbox", &["id", "name"], &["id"], OnConflict::Update, &rows)
        ///     .await?;
        /// println!("{} new, {} updated", counts.inserted, counts.updated);
        /// # Ok(()) }
        /// ```
        pub async fn upsert_rows<T, I>(
            &self,
            table: &str,
            columns: &[&str],
            key: &[&str],
            on_conflict: $crate::OnConflict,
            rows: I,
        ) -> Result<$crate::UpsertCounts, $crate::Error>
        where
            T: $crate::Params + ?Sized,
            I: IntoIterator,
            I::Item: ::std::borrow::Borrow<T>,
        {
            $crate::transaction::upsert_rows::<Self, T, I>(
                self,
                table,
                columns,
                key,
                on_conflict,
                rows,
            )
            .await
        }
    };
}

pub(crate) use delegate_upsert;
