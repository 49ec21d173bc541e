//! `Pool`: the public handle.

use std::fmt;
use std::sync::Arc;

use pgpipe_types::Params;
use tokio::time::Instant;

use super::config::{split_url, PoolConfig};
use super::guard::PooledClient;
use super::inner::PoolInner;
use super::lane::{Lease, Leased, NoLease};
use super::stats::PoolStats;
use crate::config::ConfigError;
use crate::error::ErrorKind;
use crate::{Client, Config, Error, FromRow, Row, ToStatement};

/// A pool of connections to one server. Cheap to clone (clones share the
/// pool); see the [module documentation](crate::pool) for which method to
/// use when.
#[derive(Clone)]
pub struct Pool {
    inner: Arc<PoolInner>,
}

impl PoolConfig {
    /// Parses a connection string whose `pool_*` query parameters (see
    /// [`PoolConfig`]) configure the pool and whose other parts configure
    /// the connections.
    ///
    /// ```
    /// use pgpipe::PoolConfig;
    ///
    /// let (config, pool) =
    ///     PoolConfig::from_url("postgres://app@db/app?sslmode=disable&pool_max_size=20").unwrap();
    /// assert_eq!(config.get_dbname(), Some("app"));
    /// assert_eq!(pool.get_max_size(), 20);
    ///
    /// let err = PoolConfig::from_url("postgres://app@db/app?pool_max_size=lots").unwrap_err();
    /// assert_eq!(err.part(), "pool_max_size");
    /// ```
    ///
    /// # Errors
    ///
    /// A [`ConfigError`] naming the offending parameter: an unknown
    /// `pool_*` key, a value that is not a number, settings that contradict
    /// each other, or anything [`Config::parse`] rejects.
    pub fn from_url(url: &str) -> Result<(Config, PoolConfig), ConfigError> {
        let (rest, pool) = split_url(url, PoolConfig::new())?;
        pool.validate()?;
        Ok((Config::parse(&rest)?, pool))
    }
}

impl Pool {
    // The constructors form a grid: `connect` opens one connection before
    // returning (a wrong address or password fails here), `connect_lazy`
    // opens none; each takes a connection string, or with `_with_config` a
    // `Config` and a `PoolConfig` built in code (sqlx's `PgPoolOptions`
    // names them alike).

    /// Creates a pool from a connection string (see
    /// [`PoolConfig::from_url`]) and opens one connection, so that a wrong
    /// address or password shows up here rather than at the first query.
    /// Further connections open on demand (and `min_idle` of them in the
    /// background).
    ///
    /// ```no_run
    /// # async fn f() -> Result<(), pgpipe::Error> {
    /// let pool = pgpipe::Pool::connect("postgres://app@localhost/app?pool_max_size=16").await?;
    /// # Ok(()) }
    /// ```
    pub async fn connect(url: &str) -> Result<Pool, Error> {
        let (config, pool_config) = PoolConfig::from_url(url).map_err(Error::from)?;
        Pool::connect_with_config(config, pool_config).await
    }

    /// Like [`connect`](Self::connect), from a [`Config`] and a
    /// [`PoolConfig`] built in code.
    ///
    /// ```no_run
    /// # async fn f() -> Result<(), pgpipe::Error> {
    /// use pgpipe::{Config, Pool, PoolConfig};
    ///
    /// let mut config = Config::new();
    /// config.host("localhost").user("app").dbname("app");
    /// let pool = Pool::connect_with_config(config, PoolConfig::new().max_size(16)).await?;
    /// # Ok(()) }
    /// ```
    pub async fn connect_with_config(
        config: Config,
        pool_config: PoolConfig,
    ) -> Result<Pool, Error> {
        let pool = Pool::connect_lazy_with_config(config, pool_config)?;
        // Returned untouched: it goes back to the idle list as it is.
        drop(pool.get().await?);
        Ok(pool)
    }

    /// Creates a pool from a connection string without opening any
    /// connection (`min_idle` ones open in the background); a wrong address
    /// or password shows up at the first query. Must be called inside a
    /// tokio runtime.
    ///
    /// # Errors
    ///
    /// Invalid settings (kind [`Config`](ErrorKind::Config)), or no tokio
    /// runtime (kind [`InvalidUse`](ErrorKind::InvalidUse)).
    pub fn connect_lazy(url: &str) -> Result<Pool, Error> {
        let (config, pool_config) = PoolConfig::from_url(url).map_err(Error::from)?;
        Pool::connect_lazy_with_config(config, pool_config)
    }

    /// Like [`connect_lazy`](Self::connect_lazy), from a [`Config`] and a
    /// [`PoolConfig`] built in code.
    ///
    /// # Errors
    ///
    /// Invalid settings (kind [`Config`](ErrorKind::Config)), or no tokio
    /// runtime (kind [`InvalidUse`](ErrorKind::InvalidUse)).
    pub fn connect_lazy_with_config(
        config: Config,
        pool_config: PoolConfig,
    ) -> Result<Pool, Error> {
        Ok(Pool {
            inner: PoolInner::start(config, pool_config, None)?,
        })
    }

    /// [`connect_lazy_with_config`](Self::connect_lazy_with_config) for a
    /// pool whose connections count against `budget`, shared with other
    /// pools (a cluster's host pools).
    pub(crate) fn connect_lazy_in_budget(
        config: Config,
        pool_config: PoolConfig,
        budget: Arc<super::budget::Budget>,
    ) -> Result<Pool, Error> {
        Ok(Pool {
            inner: PoolInner::start(config, pool_config, Some(budget))?,
        })
    }

    /// The old name of [`connect_with_config`](Self::connect_with_config).
    #[deprecated(note = "use Pool::connect_with_config")]
    pub async fn connect_with(config: Config, pool_config: PoolConfig) -> Result<Pool, Error> {
        Pool::connect_with_config(config, pool_config).await
    }

    /// The old name of
    /// [`connect_lazy_with_config`](Self::connect_lazy_with_config).
    ///
    /// # Errors
    ///
    /// As [`connect_lazy_with_config`](Self::connect_lazy_with_config).
    #[deprecated(note = "use Pool::connect_lazy_with_config")]
    pub fn new(config: Config, pool_config: PoolConfig) -> Result<Pool, Error> {
        Pool::connect_lazy_with_config(config, pool_config)
    }

    /// Checks out a connection for exclusive use, waiting (in FIFO order)
    /// up to the acquire timeout for a free one. Dropping the guard returns
    /// it.
    ///
    /// ```no_run
    /// # async fn f(pool: &pgpipe::Pool) -> Result<(), pgpipe::Error> {
    /// let conn = pool.get().await?;
    /// conn.batch_execute("SET statement_timeout = '5s'; CREATE TEMP TABLE t (x int)").await?;
    /// conn.execute("INSERT INTO t VALUES ($1)", (1i32,)).await?;
    /// conn.batch_execute("DROP TABLE t; RESET statement_timeout").await?;
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// Kind [`Timeout`](ErrorKind::Timeout) when no connection was free in
    /// time (the message says the pool is exhausted, its size and how long
    /// it waited), [`Closed`](ErrorKind::Closed) once the pool is closed,
    /// or the error of opening a new connection.
    ///
    /// Cancel safe: a dropped `get` leaves no slot taken.
    pub async fn get(&self) -> Result<PooledClient, Error> {
        crate::observe::traced("pool.acquire", None, None, |_| 0, self.get_untraced()).await
    }

    async fn get_untraced(&self) -> Result<PooledClient, Error> {
        let start = Instant::now();
        match self
            .inner
            .acquire(start, self.inner.acquire_deadline(start))
            .await
        {
            Ok((conn, permit)) => {
                self.inner.counters.acquired(start.elapsed());
                #[cfg(any(feature = "metrics", feature = "opentelemetry"))]
                super::metrics::acquired(
                    &self.inner.counters,
                    self.inner.gauges(),
                    start.elapsed(),
                    false,
                );
                Ok(PooledClient::new(conn, permit, self.inner.clone()))
            }
            Err(e) => {
                self.inner.counters.acquire_failed();
                #[cfg(any(feature = "metrics", feature = "opentelemetry"))]
                super::metrics::acquired(
                    &self.inner.counters,
                    self.inner.gauges(),
                    start.elapsed(),
                    e.is_timeout(),
                );
                Err(e)
            }
        }
    }

    /// Runs one statement on a shared connection (pipelined with other
    /// callers' statements, no checkout) and returns its rows. For
    /// statements that need session state or a transaction use
    /// [`get`](Self::get) or [`transaction`](Self::transaction).
    ///
    /// Cancel safe.
    pub async fn query<S, P>(&self, statement: &S, params: P) -> Result<Vec<Row>, Error>
    where
        S: ToStatement + ?Sized,
        P: Params,
    {
        let conn = self.shared().await?;
        let result = conn.client().query(statement, params).await;
        conn.finish(result.as_ref().err());
        result
    }

    /// Like [`query`](Self::query) for a statement that must return exactly
    /// one row (see [`Client::query_one`]).
    pub async fn query_one<S, P>(&self, statement: &S, params: P) -> Result<Row, Error>
    where
        S: ToStatement + ?Sized,
        P: Params,
    {
        let conn = self.shared().await?;
        let result = conn.client().query_one(statement, params).await;
        conn.finish(result.as_ref().err());
        result
    }

    /// Like [`query`](Self::query) for a statement that returns at most
    /// one row (see [`Client::query_opt`]).
    pub async fn query_opt<S, P>(&self, statement: &S, params: P) -> Result<Option<Row>, Error>
    where
        S: ToStatement + ?Sized,
        P: Params,
    {
        let conn = self.shared().await?;
        let result = conn.client().query_opt(statement, params).await;
        conn.finish(result.as_ref().err());
        result
    }

    /// Like [`query`](Self::query), returning the number of rows affected
    /// (see [`Client::execute`]).
    pub async fn execute<S, P>(&self, statement: &S, params: P) -> Result<u64, Error>
    where
        S: ToStatement + ?Sized,
        P: Params,
    {
        let conn = self.shared().await?;
        let result = conn.client().execute(statement, params).await;
        conn.finish(result.as_ref().err());
        result
    }

    /// Like [`query`](Self::query), reading every row into `T` after checking
    /// the columns once (see [`Client::query_as`]).
    pub async fn query_as<T, S, P>(&self, statement: &S, params: P) -> Result<Vec<T>, Error>
    where
        T: FromRow,
        S: ToStatement + ?Sized,
        P: Params,
    {
        let conn = self.shared().await?;
        let result = conn.client().query_as(statement, params).await;
        conn.finish(result.as_ref().err());
        result
    }

    /// Like [`query_as`](Self::query_as) for exactly one row (see
    /// [`Client::query_one_as`]).
    pub async fn query_one_as<T, S, P>(&self, statement: &S, params: P) -> Result<T, Error>
    where
        T: FromRow,
        S: ToStatement + ?Sized,
        P: Params,
    {
        let conn = self.shared().await?;
        let result = conn.client().query_one_as(statement, params).await;
        conn.finish(result.as_ref().err());
        result
    }

    /// Like [`query_as`](Self::query_as) for at most one row (see
    /// [`Client::query_opt_as`]).
    pub async fn query_opt_as<T, S, P>(&self, statement: &S, params: P) -> Result<Option<T>, Error>
    where
        T: FromRow,
        S: ToStatement + ?Sized,
        P: Params,
    {
        let conn = self.shared().await?;
        let result = conn.client().query_opt_as(statement, params).await;
        conn.finish(result.as_ref().err());
        result
    }

    /// A connection for one statement: the quickest shared one; on a
    /// cold lane, an idle connection if one is in hand, else the lane's
    /// first connection once it has opened (one connect, not two); a
    /// checkout when the lane is disabled or could not open.
    async fn shared(&self) -> Result<SharedConn<'_>, Error> {
        if self.inner.is_closed() {
            return Err(PoolInner::closed_error());
        }
        let mut admitted = false;
        let mut waiting_since = None;
        let grow = loop {
            match self.inner.lane.lease_in_turn(admitted) {
                Leased::Lease(lease, grow) => {
                    if grow {
                        self.inner.grow_lane();
                    }
                    return Ok(SharedConn::Lane(lease));
                }
                Leased::Empty(grow) => break grow,
                Leased::Wait(id) => {
                    let start = *waiting_since.get_or_insert_with(Instant::now);
                    let deadline = self.inner.acquire_deadline(start);
                    if tokio::time::timeout_at(deadline, self.inner.lane.turn(id))
                        .await
                        .is_err()
                    {
                        return Err(self.inner.line_timed_out(start));
                    }
                    admitted = true;
                }
            }
        };
        if grow {
            self.inner.grow_lane();
        }
        if self.inner.idle_count() == 0 {
            let start = Instant::now();
            match self
                .inner
                .lane
                .wait_for_growth(self.inner.acquire_deadline(start))
                .await
            {
                Ok(lease) => return Ok(SharedConn::Lane(lease)),
                Err(NoLease::TimedOut) => return Err(self.inner.exhausted(start)),
                // The growth failed (its error is logged) or the lane is
                // disabled: a checkout reports why, or serves.
                Err(NoLease::NotGrowing) => {}
            }
        }
        Ok(SharedConn::Checkout(self.get().await?))
    }

    /// A live shared-lane connection to run a statement on without it
    /// counting as the pool's use (neither in flight nor a last use): the
    /// cluster's probes ride on it instead of holding a session of their
    /// own. The statement goes in the connection's pipeline like any other;
    /// the connection may close under it (reaped), which the caller must
    /// take as "ask elsewhere", not as the server gone.
    pub(crate) fn unleased_client(&self) -> Option<Client> {
        if self.inner.is_closed() {
            return None;
        }
        self.inner.lane.unleased_client()
    }

    /// A snapshot of the pool's gauges and counters.
    pub fn stats(&self) -> PoolStats {
        self.inner.counters.snapshot(
            self.inner.idle_count(),
            (self.inner.lane.len(), self.inner.lane.waiting()),
            self.inner.config.get_max_size(),
        )
    }

    /// The pool's settings.
    pub fn config(&self) -> &PoolConfig {
        &self.inner.config
    }

    /// Closes the pool for every clone: idle and shared connections close
    /// now, checked-out ones when they are returned, and acquires (waiting
    /// ones included) fail with a [`Closed`](ErrorKind::Closed) error.
    pub fn close(&self) {
        self.inner.close();
    }

    /// Whether [`close`](Self::close) was called.
    pub fn is_closed(&self) -> bool {
        self.inner.is_closed()
    }
}

impl fmt::Debug for Pool {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Pool")
            .field("config", &self.inner.config)
            .field("stats", &self.stats())
            .finish()
    }
}

/// Where a single statement of `Pool::query` and friends runs.
enum SharedConn<'a> {
    Lane(Lease<'a>),
    Checkout(PooledClient),
}

impl SharedConn<'_> {
    fn client(&self) -> &Client {
        match self {
            SharedConn::Lane(lease) => lease.client(),
            SharedConn::Checkout(conn) => conn.client(),
        }
    }

    fn finish(self, error: Option<&Error>) {
        match self {
            SharedConn::Lane(lease) => lease.finish(error),
            SharedConn::Checkout(conn) => {
                // The statement's future completed, so its request was
                // answered: nothing in flight, unless a client-side query
                // timeout gave up on it early.
                if !error.is_some_and(|e| e.kind() == ErrorKind::Timeout) {
                    conn.mark_settled();
                }
            }
        }
    }
}
