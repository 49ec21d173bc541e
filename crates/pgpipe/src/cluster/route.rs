//! [`Route`]: a shard's primary or replicas as one
//! [`GenericClient`](crate::GenericClient), and where each request goes.

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use pgpipe_types::Params;

use super::cluster::ClusterInner;
use super::consistency::{Consistency, Fallback};
use super::host::HostNode;
use super::position::TOKEN_SQL;
use super::shard::ShardNode;
use super::token::WriteToken;
use super::ShardId;
use crate::error::ErrorKind;
use crate::query::{impl_generic_client, Lent, Sealed};
use crate::{
    Batch, Error, FromRow, Pool, Row, RowStream, SimpleQueryMessage, SqlState, ToStatement,
    Transaction,
};

/// Where a [`Route`] sends its requests.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Target {
    Primary,
    Replica(Consistency),
}

/// A shard's primary ([`Shard::primary`](crate::cluster::Shard::primary))
/// or its replicas for one [`Consistency`]
/// ([`Shard::replica`](crate::cluster::Shard::replica)), running queries
/// like a [`Pool`]: it is a [`GenericClient`](crate::GenericClient), and
/// each request goes to the host the route picks at that moment, on that
/// host's pool (created on first use).
///
/// **Writes after a role change.** A single statement on the primary
/// (`query*`, `execute`, `query_stream`, and their `_as` forms) that fails
/// because the host is no longer primary (SQLSTATE 25006,
/// `read_only_sql_transaction`) or because no connection to it could be
/// opened is retried once, on the primary found by asking every host
/// again: the host leaves the write lane first. Both failures prove the
/// statement had no effect (the server refused it before running it, and
/// its implicit transaction rolled back; or it was never sent), so the
/// retry cannot apply it twice, whatever the statement. Nothing else is
/// retried: not a failure after the statement may have reached the
/// server (an I/O error, a closed connection: the outcome is unknown),
/// not a statement in a transaction (the transaction is gone with it; use
/// [`transaction_with_retry`](crate::Pool::transaction_with_retry) on
/// [`pool`](Self::pool)), not `simple_query`/`batch_execute` (SQL text that
/// may hold its own COMMIT), not a [`Batch`].
///
/// ```no_run
/// # async fn f(cluster: &pgpipe::cluster::Cluster) -> Result<(), pgpipe::Error> {
/// use pgpipe::cluster::Consistency;
///
/// let shard = cluster.shard(7i64).await?;
/// let (_, token) = shard
///     .primary()
///     .execute_with_token("UPDATE users SET name = $1 WHERE uid = $2", ("Ann", 7i64))
///     .await?;
/// let row = shard
///     .replica(Consistency::ReadYourWrites(token))
///     .query_one("SELECT name FROM users WHERE uid = $1", (7i64,))
///     .await?;
/// # Ok(()) }
/// ```
#[derive(Clone)]
pub struct Route {
    cluster: Arc<ClusterInner>,
    shard: Arc<ShardNode>,
    target: Target,
}

impl Route {
    pub(crate) fn new(cluster: Arc<ClusterInner>, shard: Arc<ShardNode>, target: Target) -> Route {
        Route {
            cluster,
            shard,
            target,
        }
    }

    /// The shard this route sends to.
    pub fn shard_id(&self) -> ShardId {
        self.shard.id
    }

    /// The host for the next request, and whether it is the primary.
    async fn pick(&self) -> Result<(Arc<HostNode>, bool), Error> {
        let settings = &self.cluster.settings;
        let consistency = match self.target {
            Target::Primary => return Ok((self.shard.primary(settings).await?, true)),
            Target::Replica(c) => c,
        };
        if let Some(host) = self.shard.replica(&consistency, settings).await {
            return Ok((host, false));
        }
        match settings.fallback {
            Fallback::Primary => match consistency {
                Consistency::ReadYourWrites(token) => {
                    Ok((self.shard.primary_for(token, settings).await?, true))
                }
                _ => Ok((self.shard.primary(settings).await?, true)),
            },
            Fallback::Fail => Err(Error::new(
                ErrorKind::Routing,
                format!(
                    "no replica of shard {} qualifies for {consistency:?}: {}",
                    self.shard.id,
                    self.shard.describe_hosts()
                ),
            )),
        }
    }

    /// Runs `op` on the picked host's pool; retries once where the failure
    /// proves nothing ran (see the type's documentation).
    async fn run<T, F, Fut>(&self, op: F) -> Result<T, Error>
    where
        F: Fn(Pool) -> Fut,
        Fut: Future<Output = Result<T, Error>>,
    {
        let (host, on_primary) = self.pick().await?;
        let e = match host.count(async { op(host.pool()?).await }.await) {
            Ok(v) => return Ok(v),
            Err(e) => e,
        };
        let read_only = e.code() == Some(&SqlState::READ_ONLY_SQL_TRANSACTION);
        let not_sent = e.kind() == ErrorKind::Connect;
        if read_only && on_primary {
            host.mark_read_only(&e);
        } else if not_sent {
            host.mark_unreachable(&e);
        } else {
            return Err(e);
        }
        let retry_on = if on_primary {
            match self.shard.resolve_primary(&self.cluster.settings).await {
                Ok(host) => host,
                Err(_) => return Err(e),
            }
        } else {
            match self.pick().await {
                Ok((host, _)) => host,
                Err(_) => return Err(e),
            }
        };
        if Arc::ptr_eq(&retry_on, &host) {
            return Err(e);
        }
        tracing::debug!(target: "pgpipe::cluster", shard = self.shard.id, from = %host.label, to = %retry_on.label, error = %e, "retrying a statement that did not run");
        retry_on.count(async { op(retry_on.pool()?).await }.await)
    }

    /// The pool of the host the next request would go to (for what the
    /// route does not offer itself: a checkout for session state, COPY,
    /// LISTEN). No retry happens on it.
    ///
    /// ```no_run
    /// # async fn f(shard: pgpipe::cluster::Shard) -> Result<(), pgpipe::Error> {
    /// let conn = shard.primary().pool().await?.get().await?;
    /// conn.batch_execute("SET statement_timeout = '1s'").await?;
    /// # Ok(()) }
    /// ```
    pub async fn pool(&self) -> Result<Pool, Error> {
        self.pick().await?.0.pool()
    }

    /// Starts a transaction on a connection of the picked host (the
    /// primary for [`Shard::primary`](crate::cluster::Shard::primary)).
    /// End it with [`commit_with_token`](crate::cluster::commit_with_token)
    /// to read its writes back on a replica.
    ///
    /// ```no_run
    /// # async fn f(shard: pgpipe::cluster::Shard) -> Result<(), pgpipe::Error> {
    /// let tx = shard.primary().transaction().await?;
    /// tx.execute("INSERT INTO mail (uid, subject) VALUES ($1, $2)", (7i64, "hi")).await?;
    /// let token = pgpipe::cluster::commit_with_token(tx).await?;
    /// # Ok(()) }
    /// ```
    pub async fn transaction(&self) -> Result<Transaction<'static>, Error> {
        self.pool().await?.transaction().await
    }

    /// Runs one write statement on the primary and returns the rows it
    /// affected with a [`WriteToken`] of its commit: the statement and
    /// `SELECT pg_current_wal_insert_lsn()` go out together, each with its
    /// own Sync (so the statement has committed when the position is
    /// read), on one connection: one round trip. Retried like
    /// [`execute`](Self::execute).
    ///
    /// ```no_run
    /// # async fn f(shard: pgpipe::cluster::Shard) -> Result<(), pgpipe::Error> {
    /// let (n, token) = shard
    ///     .primary()
    ///     .execute_with_token("DELETE FROM mail WHERE uid = $1", (7i64,))
    ///     .await?;
    /// let cookie = token.to_string();
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// The statement's error; [`ErrorKind::InvalidUse`] on a replica
    /// route (writes go to [`Shard::primary`](crate::cluster::Shard::primary)).
    pub async fn execute_with_token<S, P>(
        &self,
        statement: &S,
        params: P,
    ) -> Result<(u64, WriteToken), Error>
    where
        S: ToStatement + ?Sized,
        P: Params + Send + Sync,
    {
        if let Target::Replica(_) = self.target {
            return Err(Error::new(
                ErrorKind::InvalidUse,
                "execute_with_token on a replica route: writes go through Shard::primary()",
            ));
        }
        let params = &params;
        self.run(|pool| async move {
            let mut batch = pool.batch();
            batch.add(statement, params);
            batch.add(TOKEN_SQL, ());
            let mut results = batch.run().await?.into_iter();
            let affected = results
                .next()
                .ok_or_else(|| Error::protocol("the write's result is missing"))??
                .rows_affected();
            let position = results
                .next()
                .ok_or_else(|| Error::protocol("the WAL position's result is missing"))??;
            let text: &str = position
                .rows()
                .first()
                .ok_or_else(|| Error::protocol("the WAL position came back without a row"))?
                .try_get(0)?;
            Ok((affected, parse_token(text)?))
        })
        .await
    }

    /// Like [`Pool::query`], on the picked host.
    pub async fn query<S, P>(&self, statement: &S, params: P) -> Result<Vec<Row>, Error>
    where
        S: ToStatement + ?Sized,
        P: Params,
    {
        let params = &params;
        self.run(|pool| async move { pool.query(statement, params).await })
            .await
    }

    /// Like [`Pool::query_one`], on the picked host.
    pub async fn query_one<S, P>(&self, statement: &S, params: P) -> Result<Row, Error>
    where
        S: ToStatement + ?Sized,
        P: Params,
    {
        let params = &params;
        self.run(|pool| async move { pool.query_one(statement, params).await })
            .await
    }

    /// Like [`Pool::query_opt`], on the picked host.
    pub async fn query_opt<S, P>(&self, statement: &S, params: P) -> Result<Option<Row>, Error>
    where
        S: ToStatement + ?Sized,
        P: Params,
    {
        let params = &params;
        self.run(|pool| async move { pool.query_opt(statement, params).await })
            .await
    }

    /// Like [`Pool::query_as`], on the picked host.
    pub async fn query_as<T, S, P>(&self, statement: &S, params: P) -> Result<Vec<T>, Error>
    where
        T: FromRow,
        S: ToStatement + ?Sized,
        P: Params,
    {
        let params = &params;
        self.run(|pool| async move { pool.query_as(statement, params).await })
            .await
    }

    /// Like [`Pool::query_one_as`], on the picked host.
    pub async fn query_one_as<T, S, P>(&self, statement: &S, params: P) -> Result<T, Error>
    where
        T: FromRow,
        S: ToStatement + ?Sized,
        P: Params,
    {
        let params = &params;
        self.run(|pool| async move { pool.query_one_as(statement, params).await })
            .await
    }

    /// Like [`Pool::query_opt_as`], on the picked host.
    pub async fn query_opt_as<T, S, P>(&self, statement: &S, params: P) -> Result<Option<T>, Error>
    where
        T: FromRow,
        S: ToStatement + ?Sized,
        P: Params,
    {
        let params = &params;
        self.run(|pool| async move { pool.query_opt_as(statement, params).await })
            .await
    }

    /// Like [`Pool::execute`], on the picked host.
    pub async fn execute<S, P>(&self, statement: &S, params: P) -> Result<u64, Error>
    where
        S: ToStatement + ?Sized,
        P: Params,
    {
        let params = &params;
        self.run(|pool| async move { pool.execute(statement, params).await })
            .await
    }

    /// Like [`Pool::query_stream`], on the picked host.
    pub async fn query_stream<S, P>(&self, statement: &S, params: P) -> Result<RowStream, Error>
    where
        S: ToStatement + ?Sized,
        P: Params,
    {
        let params = &params;
        self.run(|pool| async move { pool.query_stream(statement, params).await })
            .await
    }

    /// Like [`Pool::simple_query`], on the picked host (not retried).
    pub async fn simple_query(&self, sql: &str) -> Result<Vec<SimpleQueryMessage>, Error> {
        self.pool().await?.simple_query(sql).await
    }

    /// Like [`Pool::batch_execute`], on the picked host (not retried).
    pub async fn batch_execute(&self, sql: &str) -> Result<(), Error> {
        self.pool().await?.batch_execute(sql).await
    }

    /// Like [`Pool::batch`]: the batch checks out a connection of the
    /// picked host when it runs (not retried).
    pub fn batch(&self) -> Batch<'_> {
        Batch::deferred(self)
    }
}

impl Sealed for Route {
    fn session(&self) -> Pin<Box<dyn Future<Output = Result<Lent<'_>, Error>> + Send + '_>> {
        Box::pin(async move {
            let session: Lent<'_> = self.pool().await?.checkout_session().await?;
            Ok(session)
        })
    }
}

impl_generic_client!(Route);

impl fmt::Debug for Route {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Route")
            .field("shard", &self.shard.id)
            .field("target", &self.target)
            .finish()
    }
}

/// Commits `tx` and returns a [`WriteToken`] of the commit, fetched with
/// COMMIT in the same round trip (see
/// [`Transaction::commit_with_lsn`]).
///
/// ```no_run
/// # async fn f(shard: pgpipe::cluster::Shard) -> Result<(), pgpipe::Error> {
/// use pgpipe::cluster::{commit_with_token, Consistency};
///
/// let tx = shard.primary().transaction().await?;
/// tx.execute("UPDATE folders SET unread = unread + 1 WHERE uid = $1", (7i64,)).await?;
/// let token = commit_with_token(tx).await?;
/// let fresh = shard.replica(Consistency::ReadYourWrites(token));
/// # Ok(()) }
/// ```
///
/// # Errors
///
/// As [`Transaction::commit_with_lsn`].
pub async fn commit_with_token(tx: Transaction<'_>) -> Result<WriteToken, Error> {
    let text = tx.commit_then("commit_with_token", TOKEN_SQL).await?;
    parse_token(std::str::from_utf8(&text).unwrap_or(""))
}

/// The token [`TOKEN_SQL`] returned.
fn parse_token(text: &str) -> Result<WriteToken, Error> {
    text.parse().map_err(|e: super::token::TokenParseError| {
        Error::protocol(format!("the server's WAL position after the write: {e}"))
    })
}
