//! The COPY methods of [`Client`]: delegations to `copy/`.

use std::borrow::Borrow;

use pgpipe_types::Params;

use super::Client;
use crate::copy::{BinaryCopyWriter, CopyIn, CopyOut, CopyOutRows, OnConflict, UpsertCounts};
use crate::query::FromRow;
use crate::{Error, Transaction};

impl Client {
    /// Starts a `COPY ... FROM STDIN` and returns its writer once the
    /// server is ready for data (see [`CopyIn`]). The statement, with its
    /// `FORMAT`, `HEADER`, `DELIMITER` and other options, is passed to the
    /// server as written; the data is not parsed.
    ///
    /// While the writer is open this COPY has the connection to itself:
    /// requests from other clones of this client wait and run after it.
    /// In a service, run COPY on a connection of its own
    /// ([`Pool::get`](crate::Pool::get)). On a
    /// [`Transaction`](crate::Transaction) it runs inside the transaction.
    ///
    /// ```no_run
    /// # async fn f(client: &pgpipe::Client) -> Result<(), pgpipe::Error> {
    /// let mut copy = client.copy_in("COPY mailbox (uid, name) FROM STDIN").await?;
    /// copy.send("1\tinbox\n").await?;
    /// assert_eq!(copy.finish().await?, 1);
    /// # Ok(()) }
    /// ```
    ///
    /// Cancel safe: if dropped before it returns, the COPY is aborted.
    pub async fn copy_in(&self, sql: &str) -> Result<CopyIn, Error> {
        self.conn().copy_in(sql).await
    }

    /// Runs a `COPY ... TO STDOUT` and streams its data (see [`CopyOut`]).
    /// The statement is passed to the server as written. Returns once the
    /// server has started streaming (so an error in the statement is
    /// returned here).
    ///
    /// Cancel safe, and the stream may be dropped half-read: alone on the
    /// connection, the rest of the COPY is cancelled on the server rather
    /// than streamed and discarded.
    pub async fn copy_out(&self, sql: &str) -> Result<CopyOut, Error> {
        self.conn().copy_out(sql).await
    }

    /// Starts a binary COPY into `columns` of `table` (all columns if
    /// empty) and returns a writer of typed rows (see
    /// [`BinaryCopyWriter`]). The columns' types are described by the
    /// server first (one round trip, then cached on this connection), so a
    /// missing column is an error here and a row that does not fit is one
    /// before any data is sent.
    ///
    /// `T` is a tuple, a list of values, or a `#[derive(ToRow)]` struct
    /// (see [`ToRow`](crate::ToRow)): for a struct with named fields an
    /// empty `columns` means the struct's own columns (field names, with
    /// `rename`/`rename_all` applied); an explicit list wins and is matched
    /// to the fields by position.
    ///
    /// Column names are quoted identifiers; `table` is SQL text (a
    /// schema-qualified name such as `mail.message`; quote it yourself if
    /// it needs quoting).
    ///
    /// Cancel safe: if dropped before it returns, the COPY is aborted.
    pub async fn copy_in_rows<T: Params + ?Sized>(
        &self,
        table: &str,
        columns: &[&str],
    ) -> Result<BinaryCopyWriter<T>, Error> {
        self.conn().copy_in_rows(table, columns).await
    }

    /// Runs `COPY (query) TO STDOUT (FORMAT binary)` and decodes its rows
    /// into `T` (a tuple or a `#[derive(FromRow)]` struct; see
    /// [`CopyOutRows`]). `query` is a SELECT; its columns are described
    /// and checked against `T` before the COPY starts.
    ///
    /// ```no_run
    /// # async fn f(client: &pgpipe::Client) -> Result<(), pgpipe::Error> {
    /// let mut rows = client
    ///     .copy_out_rows::<(i64, String)>("SELECT id, subject FROM mail.message")
    ///     .await?;
    /// while let Some(row) = rows.next().await {
    ///     let (id, subject) = row?;
    /// }
    /// # Ok(()) }
    /// ```
    ///
    /// Cancel safe, and the stream may be dropped half-read.
    pub async fn copy_out_rows<T: FromRow>(&self, query: &str) -> Result<CopyOutRows<T>, Error> {
        self.conn().copy_out_rows(query).await
    }

    /// Bulk upsert: writes `rows` with binary COPY into a temporary
    /// staging table shaped like `columns` of `table`, then runs one
    /// `INSERT INTO table (columns) SELECT ... ON CONFLICT (key) DO UPDATE
    /// | DO NOTHING`, all in one transaction (or in the caller's, when
    /// called on a [`Transaction`](crate::Transaction)). Returns how many
    /// rows were inserted, updated or skipped.
    ///
    /// `key` must match a unique index or constraint of `table`. With
    /// [`OnConflict::Update`] two rows with the same key in one call are
    /// an error from the server ("cannot affect row a second time"). Rows
    /// are checked against the column types like
    /// [`copy_in_rows`](Self::copy_in_rows). Column names are quoted;
    /// `table` is SQL text (quote it yourself if it needs quoting).
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
        on_conflict: OnConflict,
        rows: I,
    ) -> Result<UpsertCounts, Error>
    where
        T: Params + ?Sized,
        I: IntoIterator,
        I::Item: Borrow<T>,
    {
        let described = self.conn().upsert_target(table, columns, key).await?;
        let tx = Transaction::begin(self.conn()).await?;
        let counts = tx
            .conn()
            .upsert_in::<T, I>(table, columns, key, on_conflict, rows, described)
            .await?;
        tx.commit().await?;
        Ok(counts)
    }
}
