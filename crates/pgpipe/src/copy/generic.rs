//! COPY on any handle: [`GenericCopy`], implemented for every
//! [`GenericClient`], and the inherent COPY methods of the four handles,
//! written once ([`delegate_copy`]).

use std::future::Future;

use pgpipe_types::Params;

use super::copy_in::CopyIn;
use super::copy_out::CopyOut;
use super::typed::{BinaryCopyWriter, CopyOutRows};
use crate::query::FromRow;
use crate::{Error, GenericClient};

/// COPY on anything that runs queries: a [`Client`](crate::Client), a
/// [`Transaction`](crate::Transaction), a
/// [`PooledClient`](crate::PooledClient) or a [`Pool`](crate::Pool).
///
/// Implemented for every [`GenericClient`]; the four handles also have
/// these methods of their own (no import needed there). Bring the trait in
/// scope for code generic over [`GenericClient`]:
///
/// ```no_run
/// use pgpipe::{Error, GenericClient, GenericCopy};
///
/// async fn load(db: &impl GenericClient, tsv: &str) -> Result<u64, Error> {
///     let mut copy = db.copy_in("COPY mailbox (uid, name) FROM STDIN").await?;
///     copy.send(tsv.to_owned()).await?;
///     copy.finish().await
/// }
/// ```
///
/// On a [`Pool`](crate::Pool), the COPY holds a checkout until it ends; on
/// a [`Transaction`](crate::Transaction), it runs inside the transaction.
pub trait GenericCopy: GenericClient {
    /// Starts `COPY ... FROM STDIN` (see
    /// [`Client::copy_in`](crate::Client::copy_in)).
    fn copy_in(&self, sql: &str) -> impl Future<Output = Result<CopyIn, Error>> + Send {
        copy_in(self, sql)
    }

    /// Starts `COPY ... TO STDOUT` (see
    /// [`Client::copy_out`](crate::Client::copy_out)).
    fn copy_out(&self, sql: &str) -> impl Future<Output = Result<CopyOut, Error>> + Send {
        copy_out(self, sql)
    }

    /// Starts a typed binary COPY into `table` (see
    /// [`Client::copy_in_rows`](crate::Client::copy_in_rows)).
    fn copy_in_rows<T: Params + ?Sized>(
        &self,
        table: &str,
        columns: &[&str],
    ) -> impl Future<Output = Result<BinaryCopyWriter<T>, Error>> + Send {
        copy_in_rows::<Self, T>(self, table, columns)
    }

    /// Streams a query's rows as `T` through a binary COPY (see
    /// [`Client::copy_out_rows`](crate::Client::copy_out_rows)).
    fn copy_out_rows<T: FromRow + Send>(
        &self,
        query: &str,
    ) -> impl Future<Output = Result<CopyOutRows<T>, Error>> + Send {
        copy_out_rows::<Self, T>(self, query)
    }
}

impl<C: GenericClient + ?Sized> GenericCopy for C {}

// The one definition of each COPY start on a handle: on the handle's
// session (a pool's checkout, kept by the COPY until it ends).

pub(crate) async fn copy_in<C: GenericClient + ?Sized>(db: &C, sql: &str) -> Result<CopyIn, Error> {
    let session = db.session().await?;
    let mut copy = session.conn().copy_in(sql).await?;
    copy.set_hold(session.into_hold());
    Ok(copy)
}

pub(crate) async fn copy_out<C: GenericClient + ?Sized>(
    db: &C,
    sql: &str,
) -> Result<CopyOut, Error> {
    let session = db.session().await?;
    let mut copy = session.conn().copy_out(sql).await?;
    copy.set_hold(session.into_hold());
    Ok(copy)
}

pub(crate) async fn copy_in_rows<C: GenericClient + ?Sized, T: Params + ?Sized>(
    db: &C,
    table: &str,
    columns: &[&str],
) -> Result<BinaryCopyWriter<T>, Error> {
    let session = db.session().await?;
    let mut copy = session.conn().copy_in_rows::<T>(table, columns).await?;
    copy.set_hold(session.into_hold());
    Ok(copy)
}

pub(crate) async fn copy_out_rows<C: GenericClient + ?Sized, T: FromRow>(
    db: &C,
    query: &str,
) -> Result<CopyOutRows<T>, Error> {
    let session = db.session().await?;
    let mut copy = session.conn().copy_out_rows::<T>(query).await?;
    copy.set_hold(session.into_hold());
    Ok(copy)
}

/// Expands to the COPY methods of a handle, inside its `impl` block: each
/// runs the [`GenericCopy`] method of the same name, so the four handles
/// share one definition.
macro_rules! delegate_copy {
    () => {
        /// Starts a `COPY ... FROM STDIN` and returns its writer once the
        /// server is ready for data (see [`CopyIn`](crate::CopyIn)). The
        /// statement, with its `FORMAT`, `HEADER`, `DELIMITER` and other
        /// options, is passed to the server as written; the data is not
        /// parsed.
        ///
        /// While the writer is open this COPY has the connection to itself:
        /// requests from other clones of a [`Client`](crate::Client) wait
        /// and run after it. In a service, run COPY on a connection of its
        /// own ([`Pool::get`](crate::Pool::get)). On a
        /// [`Transaction`](crate::Transaction) it runs inside the
        /// transaction; on a [`Pool`](crate::Pool), on a connection checked
        /// out until the COPY ends.
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
        pub async fn copy_in(&self, sql: &str) -> Result<$crate::CopyIn, $crate::Error> {
            $crate::copy::copy_in(self, sql).await
        }

        /// Runs a `COPY ... TO STDOUT` and streams its data (see
        /// [`CopyOut`](crate::CopyOut)). The statement is passed to the
        /// server as written. Returns once the server has started streaming
        /// (so an error in the statement is returned here). On a
        /// [`Pool`](crate::Pool), on a connection checked out until the
        /// COPY ends.
        ///
        /// Cancel safe, and the stream may be dropped half-read: alone on
        /// the connection, the rest of the COPY is cancelled on the server
        /// rather than streamed and discarded.
        pub async fn copy_out(&self, sql: &str) -> Result<$crate::CopyOut, $crate::Error> {
            $crate::copy::copy_out(self, sql).await
        }

        /// Starts a binary COPY into `columns` of `table` (all columns if
        /// empty) and returns a writer of typed rows (see
        /// [`BinaryCopyWriter`](crate::BinaryCopyWriter)). The columns'
        /// types are described by the server first (one round trip, then
        /// cached on this connection), so a missing column is an error here
        /// and a row that does not fit is one before any data is sent.
        ///
        /// `T` is a tuple, a list of values, or a `#[derive(ToRow)]` struct
        /// (see [`ToRow`](crate::ToRow)): for a struct with named fields an
        /// empty `columns` means the struct's own columns (field names, with
        /// `rename`/`rename_all` applied); an explicit list wins and is
        /// matched to the fields by position.
        ///
        /// Column names are quoted identifiers; `table` is SQL text (a
        /// schema-qualified name such as `mail.message`; quote it yourself
        /// if it needs quoting).
        ///
        /// Cancel safe: if dropped before it returns, the COPY is aborted.
        pub async fn copy_in_rows<T: $crate::Params + ?Sized>(
            &self,
            table: &str,
            columns: &[&str],
        ) -> Result<$crate::BinaryCopyWriter<T>, $crate::Error> {
            $crate::copy::copy_in_rows::<Self, T>(self, table, columns).await
        }

        /// Runs `COPY (query) TO STDOUT (FORMAT binary)` and decodes its
        /// rows into `T` (a tuple or a `#[derive(FromRow)]` struct; see
        /// [`CopyOutRows`](crate::CopyOutRows)). `query` is a SELECT; its
        /// columns are described and checked against `T` before the COPY
        /// starts.
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
        pub async fn copy_out_rows<T: $crate::FromRow>(
            &self,
            query: &str,
        ) -> Result<$crate::CopyOutRows<T>, $crate::Error> {
            $crate::copy::copy_out_rows::<Self, T>(self, query).await
        }
    };
}

pub(crate) use delegate_copy;
