//! The COPY methods of [`Client`].

use pgpipe_types::Params;

use super::copy_in::CopyIn;
use super::copy_out::CopyOut;
use super::typed::{
    describe_query, describe_target, forget_targets, BinaryCopyWriter, CopyOutRows,
};
use crate::observe::Op;
use crate::query::FromRow;
use crate::{Client, Error};

/// Runs the start of a COPY under the span of `operation`, and hands the
/// span to the COPY it started: the span covers the whole COPY, until it
/// finishes, fails, is aborted or is dropped.
async fn traced_copy<C, F>(
    client: &Client,
    operation: &'static str,
    sql: Option<&str>,
    start: F,
    attach: impl FnOnce(&mut C, Op),
) -> Result<C, Error>
where
    F: std::future::Future<Output = Result<C, Error>>,
{
    use tracing::Instrument;
    let op = Op::start(operation, Some(client.shared()), sql);
    match start.instrument(op.span().clone()).await {
        Ok(mut copy) => {
            attach(&mut copy, op);
            Ok(copy)
        }
        Err(e) => Err(op.failed(e)),
    }
}

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
        let start = CopyIn::start(self, sql);
        traced_copy(self, "copy_in", Some(sql), start, CopyIn::set_op).await
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
        let start = CopyOut::start(self, sql);
        traced_copy(self, "copy_out", Some(sql), start, CopyOut::set_op).await
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
        let columns = match T::column_names() {
            Some(names) if columns.is_empty() => names,
            _ => columns,
        };
        let start = async {
            let described = describe_target(self, table, columns).await?;
            let started = BinaryCopyWriter::start(self, table, columns, described).await;
            if started.is_err() {
                // The table may have changed under the cached description.
                forget_targets(self);
            }
            started
        };
        traced_copy(self, "copy_in", None, start, BinaryCopyWriter::set_op).await
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
        let start = async {
            let columns = describe_query(self, query).await?;
            CopyOutRows::start(self, query, columns).await
        };
        traced_copy(self, "copy_out", Some(query), start, CopyOutRows::set_op).await
    }
}
