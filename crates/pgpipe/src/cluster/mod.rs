//! Scale-out: many shards, each a primary with streaming replicas, as one
//! [`Cluster`].
//!
//! - **Topology.** Each shard is a set of hosts. Which one is primary is
//!   asked of the servers, never configured: `pg_is_in_recovery()` and
//!   `transaction_read_only` when a shard is first used, then again by a
//!   background probe (one small statement per host per
//!   [`probe_interval`](ClusterBuilder::probe_interval), on a session of
//!   its own; PostgreSQL 14+ also pushes `in_hot_standby` to that open
//!   session when the host is promoted, see [`HostStatus::in_hot_standby`]).
//!   A write refused with SQLSTATE 25006 takes its host out of the write
//!   lane at once, and the primary is asked for again (see [`Route`] for
//!   what is retried).
//! - **Patroni.** Where a shard runs under Patroni, its REST API can be
//!   read beside the probes (`ClusterBuilder::patroni`, feature
//!   `patroni`): the leader it names is preferred for writes among hosts
//!   that say they are primary, and each host's member (lag in bytes
//!   included) is in [`HostStatus::patroni`].
//! - **Shard map.** A [`ShardMap`] maps a [`ShardKey`] to a shard id: a
//!   stable hash modulo the shard count, integer ranges, or your async
//!   resolver with a TTL cache and one look-up in flight per key.
//! - **Routing.** [`Cluster::shard`] (by key) and [`Cluster::shard_id`]
//!   give a [`Shard`]; [`Shard::primary`] and [`Shard::replica`] give
//!   [`Route`]s, which run queries like a [`Pool`](crate::Pool) (they are
//!   [`GenericClient`](crate::GenericClient)s).
//! - **Read your writes.** A write on the primary yields a [`WriteToken`]
//!   in the same round trip ([`Route::execute_with_token`],
//!   [`commit_with_token`]); [`Consistency::ReadYourWrites`] sends a read
//!   only to a standby that has replayed it, waits a bounded time for one,
//!   then falls back ([`Fallback`]).
//! - **Lag.** Standbys whose lag exceeds the bound
//!   ([`ClusterBuilder::max_replica_lag`], [`Consistency::MaxLag`]) get no
//!   reads until they catch up.
//! - **Fan-out.** [`Cluster::fan_out`] runs work on every shard at once
//!   and reports each shard's outcome ([`FanOut`]).
//!
//! Each host gets a [`Pool`](crate::Pool) of its own, created on first use
//! with the cluster's [`pool_config`](ClusterBuilder::pool_config); a shard
//! nobody uses holds no connection and is not probed, and one unused for
//! the pools' idle timeout goes back to that. One budget
//! ([`ClusterBuilder::max_connections`]) can cap the connections of all
//! pools together; [`Cluster::stats`] counts them per host and shard.
//!
//! ```no_run
//! # async fn f() -> Result<(), pgpipe::Error> {
//! use pgpipe::cluster::{Cluster, Consistency, ShardMap};
//!
//! let cluster = Cluster::builder()
//!     .shard(0, ["postgres://app@db0a/mail", "postgres://app@db0b/mail"])
//!     .shard(1, ["postgres://app@db1a/mail", "postgres://app@db1b/mail"])
//!     .map(ShardMap::hash(2)?)
//!     .build()?;
//!
//! let uid = 7i64;
//! let shard = cluster.shard(uid).await?;
//! let (_, token) = shard
//!     .primary()
//!     .execute_with_token("INSERT INTO mail (uid, subject) VALUES ($1, $2)", (uid, "hi"))
//!     .await?;
//! // Later, maybe in another process (the token travels as text):
//! let token: pgpipe::cluster::WriteToken = token.to_string().parse().unwrap();
//! let mail = shard
//!     .replica(Consistency::ReadYourWrites(token))
//!     .query("SELECT subject FROM mail WHERE uid = $1", (uid,))
//!     .await?;
//! # Ok(()) }
//! ```

mod builder;
#[allow(clippy::module_inception)]
mod cluster;
mod consistency;
mod fanout;
#[cfg(feature = "cluster-toml")]
mod file;
mod host;
#[cfg(feature = "patroni")]
mod http;
mod key;
mod lag;
mod map;
#[cfg(feature = "patroni")]
mod patroni;
mod patroni_member;
mod position;
#[cfg(feature = "metrics")]
mod publish;
mod resolver;
mod route;
mod settings;
mod shard;
mod shard_handle;
mod stats;
mod status;
mod token;

pub use builder::ClusterBuilder;
pub use cluster::Cluster;
pub use consistency::{Consistency, Fallback};
pub use fanout::FanOut;
pub use host::Role;
pub use key::ShardKey;
pub use map::ShardMap;
pub use patroni_member::PatroniMember;
pub use resolver::ResolverConfig;
pub use route::{commit_with_token, Route};
pub use shard_handle::Shard;
pub use stats::{BudgetStats, ClusterStats, HostStats, ShardStats};
pub use status::HostStatus;
pub use token::{TokenParseError, WriteToken};

/// A shard's id: what a [`ShardMap`] maps keys to.
pub type ShardId = u32;
