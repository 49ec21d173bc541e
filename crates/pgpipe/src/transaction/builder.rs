//! [`TransactionBuilder`]: isolation level, read-only and deferrable, and
//! where the transaction's connection comes from.

use std::future::Future;
use std::marker::PhantomData;

use crate::error::ErrorKind;
use crate::pool::{Pool, PooledClient};
use crate::{Client, Error};

use super::retry::{run_with_retry, RetryPolicy};
use super::Transaction;

/// The isolation level of a transaction (`BEGIN ISOLATION LEVEL ...`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum IsolationLevel {
    /// `READ UNCOMMITTED` (PostgreSQL runs it as read committed).
    ReadUncommitted,
    /// `READ COMMITTED`, PostgreSQL's default.
    ReadCommitted,
    /// `REPEATABLE READ`.
    RepeatableRead,
    /// `SERIALIZABLE`: may fail with a serialization failure (40001) that
    /// [`Client::transaction_with_retry`] retries.
    Serializable,
}

impl IsolationLevel {
    fn sql(self) -> &'static str {
        match self {
            IsolationLevel::ReadUncommitted => "READ UNCOMMITTED",
            IsolationLevel::ReadCommitted => "READ COMMITTED",
            IsolationLevel::RepeatableRead => "REPEATABLE READ",
            IsolationLevel::Serializable => "SERIALIZABLE",
        }
    }
}

/// Where a transaction's connection comes from.
#[derive(Clone)]
enum Source {
    Client(Client),
    Pool(Pool),
}

/// Options of a transaction before it starts: from
/// [`Client::build_transaction`], [`Pool::build_transaction`] or
/// [`PooledClient::build_transaction`].
///
/// ```no_run
/// # async fn f(client: &pgpipe::Client) -> Result<(), pgpipe::Error> {
/// use pgpipe::IsolationLevel;
///
/// let tx = client
///     .build_transaction()
///     .isolation(IsolationLevel::Serializable)
///     .read_only(true)
///     .deferrable(true)
///     .start()
///     .await?;
/// let n: i64 = tx.query_one("SELECT count(*) FROM users", ()).await?.get(0);
/// tx.commit().await?;
/// # Ok(()) }
/// ```
#[derive(Clone)]
#[must_use = "a builder does nothing until `start` is awaited"]
pub struct TransactionBuilder<'a> {
    source: Source,
    isolation: Option<IsolationLevel>,
    read_only: Option<bool>,
    deferrable: Option<bool>,
    _borrow: PhantomData<&'a mut ()>,
}

impl TransactionBuilder<'_> {
    fn new(source: Source) -> Self {
        TransactionBuilder {
            source,
            isolation: None,
            read_only: None,
            deferrable: None,
            _borrow: PhantomData,
        }
    }

    /// Sets the isolation level (default: the server's
    /// `default_transaction_isolation`).
    pub fn isolation(mut self, level: IsolationLevel) -> Self {
        self.isolation = Some(level);
        self
    }

    /// `READ ONLY` (true) or `READ WRITE` (false); by default the server's
    /// `default_transaction_read_only`. Note that an explicit `READ WRITE`
    /// (like `SERIALIZABLE`) makes BEGIN fail on a hot standby.
    pub fn read_only(mut self, read_only: bool) -> Self {
        self.read_only = Some(read_only);
        self
    }

    /// `DEFERRABLE` (true) or `NOT DEFERRABLE` (false); PostgreSQL honours
    /// it only for serializable read-only transactions.
    pub fn deferrable(mut self, deferrable: bool) -> Self {
        self.deferrable = Some(deferrable);
        self
    }

    /// The BEGIN statement these options make.
    pub(crate) fn begin_sql(&self) -> String {
        let mut sql = String::from("BEGIN");
        if let Some(level) = self.isolation {
            sql.push_str(" ISOLATION LEVEL ");
            sql.push_str(level.sql());
        }
        match self.read_only {
            Some(true) => sql.push_str(" READ ONLY"),
            Some(false) => sql.push_str(" READ WRITE"),
            None => {}
        }
        match self.deferrable {
            Some(true) => sql.push_str(" DEFERRABLE"),
            Some(false) => sql.push_str(" NOT DEFERRABLE"),
            None => {}
        }
        sql
    }
}

impl<'a> TransactionBuilder<'a> {
    /// Starts the transaction. Nothing is sent yet: BEGIN goes out with the
    /// first statement (see [`Transaction`]).
    ///
    /// On a [`Client`], this waits while another handle of the same
    /// connection has a transaction open (bounded by the handle's query
    /// timeout, if it has one); on a [`Pool`], it checks out a connection
    /// first (bounded by the pool's acquire timeout).
    ///
    /// Cancel safe: dropped before it completes, it leaves nothing behind.
    pub async fn start(self) -> Result<Transaction<'a>, Error> {
        let begin = self.begin_sql();
        match self.source {
            Source::Client(client) => Transaction::start(client, None, begin).await,
            Source::Pool(pool) => {
                let guard = pool.get().await?;
                let client = guard.session_client().clone();
                Transaction::start(client, Some(guard), begin).await
            }
        }
    }

    /// Runs `f` in a transaction with these options and commits; retries
    /// the whole transaction on a serialization failure or a deadlock (see
    /// [`Client::transaction_with_retry`]).
    pub async fn run_with_retry<T, F, Fut>(self, policy: &RetryPolicy, f: F) -> Result<T, Error>
    where
        F: FnMut(Client) -> Fut,
        Fut: Future<Output = Result<T, Error>>,
    {
        run_with_retry(self, policy, f).await
    }
}

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
    /// # async fn f(client: &pgpipe::Client) -> Result<(), pgpipe::Error> {
    /// let tx = client.transaction().await?;
    /// tx.execute("UPDATE accounts SET balance = balance - 10 WHERE id = $1", (1i64,)).await?;
    /// tx.execute("UPDATE accounts SET balance = balance + 10 WHERE id = $1", (2i64,)).await?;
    /// tx.commit().await?;
    /// # Ok(()) }
    /// ```
    ///
    /// Cancel safe.
    pub async fn transaction(&self) -> Result<Transaction<'static>, Error> {
        self.build_transaction().start().await
    }

    /// A [`TransactionBuilder`] for a transaction on this connection.
    pub fn build_transaction(&self) -> TransactionBuilder<'static> {
        TransactionBuilder::new(Source::Client(self.clone()))
    }
}

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
        TransactionBuilder::new(Source::Pool(self.clone()))
    }

    /// [`Client::transaction_with_retry`] on a connection of the pool
    /// (a fresh checkout per attempt).
    pub async fn transaction_with_retry<T, F, Fut>(
        &self,
        policy: &RetryPolicy,
        f: F,
    ) -> Result<T, Error>
    where
        F: FnMut(Client) -> Fut,
        Fut: Future<Output = Result<T, Error>>,
    {
        self.build_transaction().run_with_retry(policy, f).await
    }
}

impl PooledClient {
    /// Starts a transaction on this checked-out connection; the guard stays
    /// borrowed until the transaction ends.
    pub async fn transaction(&mut self) -> Result<Transaction<'_>, Error> {
        self.build_transaction().start().await
    }

    /// A [`TransactionBuilder`] for a transaction on this checked-out
    /// connection.
    pub fn build_transaction(&mut self) -> TransactionBuilder<'_> {
        TransactionBuilder::new(Source::Client(self.client().clone()))
    }
}

/// The error for starting a transaction on a handle that is already in one.
pub(crate) fn already_in_transaction() -> Error {
    Error::new(
        ErrorKind::InvalidUse,
        "this handle is already inside a transaction: use savepoint() or transaction() on the \
         Transaction for a nested one",
    )
}
