//! The transaction methods of [`Client`]: delegations to `transaction/`.

use super::Client;
#[cfg(doc)]
use crate::Pool;
use crate::{Error, Retried, RetryFuture, RetryPolicy, Transaction, TransactionBuilder};

impl Client {
    /// Starts a transaction with default options: shorthand for
    /// `self.build_transaction().start()`.
    ///
    /// While the transaction is open it has this connection to itself:
    /// requests made through other clones of this `Client` are held back
    /// and run right after its COMMIT or ROLLBACK, never inside it. A held
    /// request (or a second transaction) waits at most the query timeout
    /// (the `query_timeout` setting or [`Client::with_timeout`]; 30 s on a
    /// connection without one): then it fails with an
    /// [`ErrorKind::Timeout`](crate::ErrorKind::Timeout) error that names
    /// the open transaction, and it is never sent. This is what ends the
    /// mistake of awaiting a clone's request in the task that holds the
    /// transaction (which would otherwise wait for itself): run such
    /// statements on the [`Transaction`]. In a service, take transactions
    /// from a [`Pool`] instead, which gives each one a connection of its
    /// own.
    ///
    /// BEGIN costs no round trip: it goes out with the first statement.
    /// Dropping the transaction without [`commit`](Transaction::commit)
    /// queues ROLLBACK at once (see [`Transaction`]).
    ///
    /// ```no_run
    /// # async fn f(client: &mut pgpipe::Client) -> Result<(), pgpipe::Error> {
    /// let tx = client.transaction().await?;
    /// tx.execute("UPDATE accounts SET balance = balance - 10 WHERE id = $1", (1i64,)).await?;
    /// tx.execute("UPDATE accounts SET balance = balance + 10 WHERE id = $1", (2i64,)).await?;
    /// tx.commit().await?;
    /// # Ok(()) }
    /// ```
    ///
    /// The transaction borrows this `Client` mutably, as in
    /// tokio-postgres: using the same `Client` while the transaction is
    /// open (which would wait behind the transaction its own task holds)
    /// does not compile. Run those statements on the transaction.
    ///
    /// Cancel safe.
    pub async fn transaction(&mut self) -> Result<Transaction<'_>, Error> {
        self.build_transaction().start().await
    }

    /// A [`TransactionBuilder`] for a transaction on this connection; like
    /// [`transaction`](Self::transaction), it borrows this `Client`
    /// mutably until the transaction ends.
    pub fn build_transaction(&mut self) -> TransactionBuilder<'_> {
        TransactionBuilder::on_conn(self.conn().clone())
    }

    /// Runs `f` in a fresh transaction and commits it; if the server
    /// reports a serialization failure (40001) or a deadlock (40P01), at
    /// any statement or at COMMIT, rolls back and runs the whole of `f`
    /// again in a new transaction, up to the policy's attempts, with
    /// jittered exponential backoff in between. Any other error, and an
    /// unknown outcome ([`Error::is_outcome_unknown`]), is returned at once
    /// and never retried.
    ///
    /// `f` gets the attempt's [`Transaction`] (savepoints work inside) and
    /// returns a boxed future (`|tx| Box::pin(async move { ... })`): it
    /// borrows the transaction, and being `Send` it keeps the whole call
    /// spawnable. The result says how many attempts it took. `f` must be safe to
    /// run more than once: everything it did in the database is rolled back
    /// between attempts, but effects outside the database (messages sent,
    /// memory changed) are not. Use
    /// [`build_transaction`](Self::build_transaction)`.isolation(..).run_with_retry(..)`
    /// for other transaction options.
    ///
    /// ```no_run
    /// # async fn f(client: &mut pgpipe::Client) -> Result<(), pgpipe::Error> {
    /// use pgpipe::{IsolationLevel, RetryPolicy};
    /// let moved = client
    ///     .build_transaction()
    ///     .isolation(IsolationLevel::Serializable)
    ///     .run_with_retry(&RetryPolicy::new(), |tx| {
    ///         Box::pin(async move {
    ///             let n: i64 = tx.query_one("SELECT balance FROM accounts WHERE id = 1", ()).await?.get(0);
    ///             tx.execute("UPDATE accounts SET balance = $1 WHERE id = 2", (n,)).await?;
    ///             Ok(n)
    ///         })
    ///     })
    ///     .await?;
    /// assert!(moved.attempts >= 1);
    /// # Ok(()) }
    /// ```
    pub async fn transaction_with_retry<'a, T, F>(
        &'a mut self,
        policy: &RetryPolicy,
        f: F,
    ) -> Result<Retried<T>, Error>
    where
        F: for<'t> FnMut(&'t mut Transaction<'a>) -> RetryFuture<'t, T>,
    {
        self.build_transaction().run_with_retry(policy, f).await
    }
}
