//! What a [`Pool`] runs on a checkout of its own (a stream, a batch, COPY,
//! simple queries, upsert), and its [`GenericClient`](crate::GenericClient)
//! implementation.

use std::future::Future;
use std::pin::Pin;

use super::pool::Pool;
use crate::query::{impl_generic_client, Lent, Sealed};
use crate::{Batch, Error, Params, RowStream, SimpleQueryMessage, ToStatement};

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
    pub(crate) async fn checkout_session(&self) -> Result<Lent<'static>, Error> {
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

    crate::copy::delegate_copy!();

    crate::transaction::delegate_upsert!();
}
