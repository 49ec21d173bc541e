//! [`Consistency`]: what a read on a replica must see, and [`Fallback`]:
//! what happens when no replica qualifies.

use std::time::Duration;

use super::token::WriteToken;

/// What a read sent to a replica must see (see
/// [`Shard::replica`](crate::cluster::Shard::replica)).
///
/// ```
/// use std::time::Duration;
/// use pgpipe::cluster::{Consistency, WriteToken};
///
/// let any = Consistency::Any;
/// let fresh = Consistency::MaxLag(Duration::from_secs(1));
/// let token: WriteToken = "16/B374D848".parse().unwrap();
/// let mine = Consistency::ReadYourWrites(token);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Consistency {
    /// Any standby whose lag is within the cluster's
    /// [`max_replica_lag`](crate::cluster::ClusterBuilder::max_replica_lag).
    Any,
    /// A standby at most this far behind the primary (in time, measured
    /// from replay positions; see
    /// [`HostStatus::lag`](crate::cluster::HostStatus::lag)).
    MaxLag(Duration),
    /// A standby that has replayed the write the token was taken after:
    /// the read sees that write. If none has within the cluster's
    /// [`token_wait`](crate::cluster::ClusterBuilder::token_wait), the
    /// [`Fallback`] decides.
    ReadYourWrites(WriteToken),
}

/// What a replica read does when no standby qualifies for its
/// [`Consistency`].
///
/// ```
/// use pgpipe::cluster::{Cluster, Fallback};
///
/// let builder = Cluster::builder().replica_fallback(Fallback::Fail);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum Fallback {
    /// Read from the primary (which has every committed write): the
    /// default.
    #[default]
    Primary,
    /// Fail with a [`Routing`](crate::ErrorKind::Routing) error.
    Fail,
}
