//! What a [`Pool`] runs on a checkout of its own (a stream, a batch, COPY,
//! simple queries, upsert), and its [`GenericClient`] implementation.

use std::borrow::Borrow;
use std::future::Future;
use std::pin::Pin;

use super::pool::Pool;
use crate::query::{impl_generic_client, Lent, Sealed};
use crate::{
    Batch, BinaryCopyWriter, CopyIn, CopyOut, CopyOutRows, Error, FromRow, OnConflict, Params,
    RowStream, SimpleQueryMessage, ToStatement, Transaction, UpsertCounts,
};

impl Sealed for Pool {
    fn session(&self) -> Pin<Box<dyn Future<Output = Result<Lent<'_>, Error>> + Send + '_>> {
        Box::pin(async move {
            let session: Lent<'_> = self.checkout_session().await?;
            Ok(session)
        })
    }
}

impl_generic_client!(Pool);

impl Pool {
    /// A checkout, as a session that keeps it until dropped.
    async fn checkout_session(&self) -> Result<Lent<'static>, Error> {
        let guard = self.get().await?;
        let conn = guard.conn().clone();
        Ok(Lent::held(conn, Box::new(guard)))
    }

    /// Like [`Client::query_stream`](crate::Client::query_stream), on a
    /// connection checked out for the stream: it goes back to the pool when
    /// the stream is dropped.
    ///
    /// Cancel safe.
    pub async fn query_stream<S, P>(&self, statement: &S, params: P) -> Result<RowStream, Error>
    where
        S: ToStatement + ?Sized,
        P: Params,
    {
        let session = self.checkout_session().await?;
        let mut stream = session.conn().query_stream(statement, params).await?;
        stream.set_hold(session.into_hold());
        Ok(stream)
    }

    /// Like [`Client::simple_query`](crate::Client::simple_query), on a
    /// connection checked out for the call (session changes such as `SET`
    /// stay with that connection; see [`PooledClient`](crate::PooledClient)).
    ///
    /// Cancel safe.
    pub async fn simple_query(&self, sql: &str) -> Result<Vec<SimpleQueryMessage>, Error> {
        let session = self.checkout_session().await?;
        session.conn().simple_query(sql).await
    }

    /// Like [`Client::batch_execute`](crate::Client::batch_execute), on a
    /// connection checked out for the call.
    ///
    /// Cancel safe.
    pub async fn batch_execute(&self, sql: &str) -> Result<(), Error> {
        let session = self.checkout_session().await?;
        session.conn().batch_execute(sql).await
    }

    /// Like [`Client::batch`](crate::Client::batch); the batch checks out a
    /// connection when it runs, for as long as it runs.
    pub fn batch(&self) -> Batch<'_> {
        Batch::deferred(self)
    }

    /// Like [`Client::copy_in`](crate::Client::copy_in), on a connection
    /// checked out until the COPY ends.
    pub async fn copy_in(&self, sql: &str) -> Result<CopyIn, Error> {
        let session = self.checkout_session().await?;
        let mut copy = session.conn().copy_in(sql).await?;
        copy.set_hold(session.into_hold());
        Ok(copy)
    }

    /// Like [`Client::copy_out`](crate::Client::copy_out), on a connection
    /// checked out until the COPY ends.
    pub async fn copy_out(&self, sql: &str) -> Result<CopyOut, Error> {
        let session = self.checkout_session().await?;
        let mut copy = session.conn().copy_out(sql).await?;
        copy.set_hold(session.into_hold());
        Ok(copy)
    }

    /// Like [`Client::copy_in_rows`](crate::Client::copy_in_rows), on a
    /// connection checked out until the COPY ends.
    pub async fn copy_in_rows<T: Params + ?Sized>(
        &self,
        table: &str,
        columns: &[&str],
    ) -> Result<BinaryCopyWriter<T>, Error> {
        let session = self.checkout_session().await?;
        let mut copy = session.conn().copy_in_rows::<T>(table, columns).await?;
        copy.set_hold(session.into_hold());
        Ok(copy)
    }

    /// Like [`Client::copy_out_rows`](crate::Client::copy_out_rows), on a
    /// connection checked out until the COPY ends.
    pub async fn copy_out_rows<T: FromRow>(&self, query: &str) -> Result<CopyOutRows<T>, Error> {
        let session = self.checkout_session().await?;
        let mut copy = session.conn().copy_out_rows::<T>(query).await?;
        copy.set_hold(session.into_hold());
        Ok(copy)
    }

    /// Like [`Client::upsert_rows`](crate::Client::upsert_rows), in a
    /// transaction on a connection checked out for the call.
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
        let session = self.checkout_session().await?;
        let described = session.conn().upsert_target(table, columns, key).await?;
        let tx = Transaction::begin(session.conn()).await?;
        let counts = tx
            .conn()
            .upsert_in::<T, I>(table, columns, key, on_conflict, rows, described)
            .await?;
        tx.commit().await?;
        Ok(counts)
    }
}
