//! The transaction methods of [`Pool`]: each transaction on a connection
//! checked out for it.

use std::sync::Arc;

use super::pool::Pool;
use crate::query::Lent;
#[cfg(doc)]
use crate::Client;
use crate::{Error, Retried, RetryFuture, RetryPolicy, Transaction, TransactionBuilder};

impl Pool {
    /// Checks out a connection and starts a transaction on it; the
    /// connection goes back to the pool when the transaction ends (or is
    /// dropped, which rolls it back at once).
    ///
    /// ```no_run
    /// # async fn f(pool: &pgpipe::Pool) -> Result<(), pgpipe::Error> {
    /// let tx = pool.transaction().await?;
    /// tx.execute("INSERT INTO audit (who) VALUES ($1)", ("admin",)).await?;
    /// tx.commit().await?;
    /// # Ok(()) }
    /// ```
    ///
    /// Cancel safe.
    pub async fn transaction(&self) -> Result<Transaction<'static>, Error> {
        self.build_transaction().start().await
    }

    /// A [`TransactionBuilder`] whose `start` checks out a connection.
    pub fn build_transaction(&self) -> TransactionBuilder<'static> {
        let pool = self.clone();
        TransactionBuilder::on_checkout(Arc::new(move || {
            let pool = pool.clone();
            Box::pin(async move { pool.transaction_session().await })
        }))
    }

    /// [`Client::transaction_with_retry`] on a connection of the pool
    /// (a fresh checkout per attempt).
    pub async fn transaction_with_retry<T, F>(
        &self,
        policy: &RetryPolicy,
        f: F,
    ) -> Result<Retried<T>, Error>
    where
        F: for<'t> FnMut(&'t mut Transaction<'static>) -> RetryFuture<'t, T>,
    {
        self.build_transaction().run_with_retry(policy, f).await
    }

    /// A checkout for a transaction: the transaction ends its own work
    /// before the connection goes back, so the guard is not marked used.
    async fn transaction_session(&self) -> Result<Lent<'static>, Error> {
        let guard = self.get().await?;
        let conn = guard.session_conn().clone();
        Ok(Lent::held(conn, Box::new(guard)))
    }
}
