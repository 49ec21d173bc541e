//! [`Db`] on a pgpipe [`Pool`]: single statements run on the pool's shared,
//! pipelined connections (no checkout); the statement cache makes every
//! statement here a one-message Bind/Execute after its first use.
//!
//! By default the statements written in one go share a Sync
//! ([`coalesce_sync`](pgpipe::Config::coalesce_sync)): the server then runs
//! one implicit transaction per group instead of one per statement, which
//! is most of its work for `/queries?queries=20`. That is safe here because
//! every statement of this service is retry-safe: a neighbour's failure
//! rolls a statement back and pgpipe sends it again, and none of them has
//! an effect that ignores rollback (no sequences, no `NOTIFY`).

use bytes::Bytes;
use futures_util::future::try_join_all;
use pgpipe::{Config, Host, Pool, PoolConfig};

/// Statements per shared connection from which the service's requests
/// wait their turn (`PoolConfig::shared_line_at`): the depth measured
/// best for the saturated `queries-20` mix (docs/benchmarks.md).
pub const SHARED_LINE_AT: usize = 64;

use super::{Db, Fortune, Message, World};
use super::{FORTUNE_SQL, HEALTH_SQL, INBOX_SQL, KV_DELETE_SQL, KV_GET_SQL, KV_PUT_SQL};
use super::{UPDATE_SQL, WORLD_SQL};
use crate::errors::StoreError;

/// The shared lane's width for a pool whose default is `pool_default`,
/// serving a database with `database_cores` cores: no wider than those
/// cores (each lane connection keeps a backend busy at saturation), and no
/// wider than the pool's own default.
///
/// Measured at saturation on a 2-core host (`pgpipe-bench http --mix
/// queries-20 --connections 64`, docs/benchmarks.md): a lane of 2
/// instead of the default 4 took the p99 with shared Syncs from about
/// 0.8x to 0.5-0.65x tokio-postgres with deadpool's at the same rate, and
/// per statement from 2-2.8x to 1.1-1.4x.
///
/// ```
/// use pgpipe_service::db::shared_lane_width;
///
/// assert_eq!(shared_lane_width(4, 2), 2);
/// assert_eq!(shared_lane_width(4, 32), 4);
/// assert_eq!(shared_lane_width(0, 2), 0);
/// ```
pub fn shared_lane_width(pool_default: usize, database_cores: usize) -> usize {
    pool_default.min(database_cores.max(1))
}

/// Whether `config` reaches a server on this machine: every host a Unix
/// socket directory, `localhost` or a loopback address. A URL with no host
/// counts as local (libpq's default is a local socket), although `PGHOST`
/// may name another: this reads the URL, not the environment. Only then do
/// this host's cores stand for the server's; a remote server keeps the
/// pool's default lane.
///
/// ```
/// use pgpipe::Config;
/// use pgpipe_service::db::database_is_local;
///
/// let local = |url: &str| database_is_local(&Config::parse(url).unwrap());
/// assert!(local("postgres://u@localhost/db"));
/// assert!(local("postgres://u@127.0.0.2:5433/db"));
/// assert!(local("postgres://u@[::1]/db"));
/// assert!(local("postgres://u@%2Fvar%2Frun%2Fpostgresql/db"));
/// assert!(local("postgres:///db"));
/// assert!(!local("postgres://u@db.example.com/db"));
/// assert!(!local("postgres://u@10.0.0.5/db"));
/// assert!(!local("postgres://u@localhost,db.example.com/db"));
/// ```
pub fn database_is_local(config: &Config) -> bool {
    config.get_hosts().iter().all(|host| match host {
        Host::Unix(_) => true,
        Host::Tcp(name) => {
            name.eq_ignore_ascii_case("localhost")
                || name
                    .parse::<std::net::IpAddr>()
                    .is_ok_and(|ip| ip.is_loopback())
        }
    })
}

fn host_cores() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// The service's database on pgpipe.
#[derive(Clone, Debug)]
pub struct PgpipeDb {
    pool: Pool,
}

impl PgpipeDb {
    /// A pool of at most `pool_size` connections to `url` (settings in the
    /// URL's query, such as `pool_shared_connections`, still apply; without
    /// it the shared lane to a database on this host is no wider than the
    /// host's cores, see [`shared_lane_width`] and [`database_is_local`]),
    /// with
    /// one connection opened now so that a wrong URL fails at start-up.
    /// Statements share Syncs (see the module's documentation).
    pub async fn connect(url: &str, pool_size: usize) -> Result<PgpipeDb, StoreError> {
        PgpipeDb::connect_with(url, pool_size, true).await
    }

    /// [`connect`](Self::connect), choosing whether statements written in
    /// one go share a Sync (`coalesce_sync = false`: each has its own, as
    /// with tokio-postgres). This argument decides: a `coalesce_sync` in
    /// `url`'s query is overridden, so the service's one switch (the
    /// `--coalesce-sync` flag) says what runs.
    pub async fn connect_with(
        url: &str,
        pool_size: usize,
        coalesce_sync: bool,
    ) -> Result<PgpipeDb, StoreError> {
        let (mut config, pool_config) =
            PoolConfig::from_url(url).map_err(StoreError::unavailable)?;
        config.coalesce_sync(coalesce_sync);
        let defaults = PoolConfig::new();
        let mut pool_config = pool_config;
        if pool_config.get_max_size() == defaults.get_max_size() {
            pool_config = pool_config.max_size(pool_size.max(1));
        }
        // Requests here run many statements each (`/queries`, `/updates`,
        // the mail mix): fair tails at saturation are worth the rate they
        // cost (see `PoolConfig::shared_line_at`). `pool_shared_line_at=0`
        // in the URL turns the line off.
        if !url.contains("pool_shared_line_at=") {
            pool_config = pool_config.shared_line_at(Some(SHARED_LINE_AT));
        }
        // Under load every shared connection's backend is busy all the
        // time; more of them than the server has cores are preempted mid-
        // pipeline, and every request queued behind one waits. A database
        // on this host (as in the bench) has this host's cores; a remote
        // one's are unknown and keep the pool's default.
        // `pool_shared_connections` in the URL says otherwise.
        if !url.contains("pool_shared_connections=") && database_is_local(&config) {
            let lane = shared_lane_width(pool_config.get_shared_connections(), host_cores());
            pool_config = pool_config.shared_connections(lane);
        }
        let pool = Pool::connect_with_config(config, pool_config).await?;
        Ok(PgpipeDb { pool })
    }

    /// The pool, for callers that want more than the trait offers.
    pub fn pool(&self) -> &Pool {
        &self.pool
    }
}

impl Db for PgpipeDb {
    fn name(&self) -> &'static str {
        "pgpipe"
    }

    async fn kv_get(&self, key: &str) -> Result<Option<Bytes>, StoreError> {
        let row = self.pool.query_opt(KV_GET_SQL, (key,)).await?;
        Ok(match row {
            Some(r) => Some(Bytes::copy_from_slice(r.try_get::<&[u8], _>(0)?)),
            None => None,
        })
    }

    async fn kv_put(&self, key: &str, value: Bytes) -> Result<(), StoreError> {
        self.pool.execute(KV_PUT_SQL, (key, &value[..])).await?;
        Ok(())
    }

    async fn kv_delete(&self, key: &str) -> Result<(), StoreError> {
        self.pool.execute(KV_DELETE_SQL, (key,)).await?;
        Ok(())
    }

    async fn worlds(&self, ids: &[i32]) -> Result<Vec<World>, StoreError> {
        // Issued together: pipelined on the shared connections, sharing
        // Syncs when coalescing is on.
        let worlds = try_join_all(
            ids.iter()
                .map(|&id| self.pool.query_one_as::<World, _, _>(WORLD_SQL, (id,))),
        )
        .await?;
        Ok(worlds)
    }

    async fn update_worlds(&self, worlds: &[World]) -> Result<(), StoreError> {
        let ids: Vec<i32> = worlds.iter().map(|w| w.id).collect();
        let numbers: Vec<i32> = worlds.iter().map(|w| w.randomnumber).collect();
        self.pool.execute(UPDATE_SQL, (ids, numbers)).await?;
        Ok(())
    }

    async fn fortunes(&self) -> Result<Vec<Fortune>, StoreError> {
        Ok(self.pool.query_as(FORTUNE_SQL, ()).await?)
    }

    async fn inbox(&self, uid: i64) -> Result<Vec<Message>, StoreError> {
        Ok(self.pool.query_as(INBOX_SQL, (uid,)).await?)
    }

    async fn ping(&self) -> Result<(), StoreError> {
        self.pool.query_one(HEALTH_SQL, ()).await?;
        Ok(())
    }

    fn close(&self) {
        self.pool.close();
    }
}
