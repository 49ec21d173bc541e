//! [`TransactionBuilder`]: isolation level, read-only and deferrable, and
//! where the transaction's connection comes from.

use std::future::Future;
use std::marker::PhantomData;
use std::pin::Pin;
use std::sync::Arc;

use crate::error::ErrorKind;
use crate::query::{ConnRef, Lent};
use crate::Error;

use super::retry::{run_with_retry, Retried, RetryFuture, RetryPolicy};
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
    /// [`Client::transaction_with_retry`](crate::Client::transaction_with_retry) retries.
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

/// A fresh session for each transaction (a pool's checkout): its handle,
/// and what keeps it checked out until the transaction ends.
pub(crate) type Checkout = Arc<
    dyn Fn() -> Pin<Box<dyn Future<Output = Result<Lent<'static>, Error>> + Send>> + Send + Sync,
>;

/// Where a transaction's connection comes from.
#[derive(Clone)]
enum Source {
    Conn(ConnRef),
    Checkout(Checkout),
}

/// Options of a transaction before it starts: from
/// [`Client::build_transaction`](crate::Client::build_transaction), [`Pool::build_transaction`](crate::Pool::build_transaction) or
/// [`PooledClient::build_transaction`](crate::PooledClient::build_transaction).
///
/// ```no_run
/// # async fn f(client: &mut pgpipe::Client) -> Result<(), pgpipe::Error> {
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

/// The options; where the connection comes from is not shown.
impl std::fmt::Debug for TransactionBuilder<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TransactionBuilder")
            .field("isolation", &self.isolation)
            .field("read_only", &self.read_only)
            .field("deferrable", &self.deferrable)
            .finish_non_exhaustive()
    }
}

impl TransactionBuilder<'_> {
    pub(crate) fn on_conn(conn: ConnRef) -> Self {
        Self::new(Source::Conn(conn))
    }

    /// A builder whose `start` takes a session from `checkout` (a pool
    /// passes its checkout, so this folder needs no pool of its own).
    pub(crate) fn on_checkout(checkout: Checkout) -> Self {
        Self::new(Source::Checkout(checkout))
    }

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
    /// On a [`Client`](crate::Client), this waits while another handle of the same
    /// connection has a transaction open (bounded by the handle's query
    /// timeout, if it has one); on a [`Pool`](crate::Pool), it checks out a connection
    /// first (bounded by the pool's acquire timeout).
    ///
    /// Cancel safe: dropped before it completes, it leaves nothing behind.
    pub async fn start(self) -> Result<Transaction<'a>, Error> {
        let begin = self.begin_sql();
        match self.source {
            Source::Conn(conn) => Transaction::start(conn, None, begin).await,
            Source::Checkout(checkout) => {
                let session = checkout().await?;
                let conn = session.conn().clone();
                Transaction::start(conn, session.into_hold(), begin).await
            }
        }
    }

    /// Runs `f` in a transaction with these options and commits; retries
    /// the whole transaction on a serialization failure or a deadlock (see
    /// [`Client::transaction_with_retry`](crate::Client::transaction_with_retry)).
    pub async fn run_with_retry<T, F>(self, policy: &RetryPolicy, f: F) -> Result<Retried<T>, Error>
    where
        F: for<'t> FnMut(&'t mut Transaction<'a>) -> RetryFuture<'t, T>,
    {
        run_with_retry(self, policy, f).await
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
