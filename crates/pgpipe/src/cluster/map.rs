//! [`ShardMap`]: from a key to a shard id, statically (hash, ranges) or
//! through the user's resolver.

use std::fmt;
use std::ops::Range;

use super::key::ShardKey;
use super::resolver::Resolver;
use super::ShardId;
use crate::error::ErrorKind;
use crate::Error;

/// How a [`Cluster`](crate::cluster::Cluster) finds the shard of a key.
///
/// - [`hash(n)`](Self::hash): shard `key.stable_hash() % n`, shards `0..n`.
/// - [`ranges`](Self::ranges): integer keys in half-open ranges.
/// - [`resolver`](Self::resolver): an async function of yours (a directory
///   database, a service), cached with a TTL; see
///   [`ResolverConfig`](crate::cluster::ResolverConfig).
///
/// ```
/// use pgpipe::cluster::{ShardKey, ShardMap};
///
/// let map = ShardMap::ranges([(0..1_000_000, 1), (1_000_000..2_000_000, 2)]).unwrap();
/// assert!(ShardMap::ranges([(0..10, 1), (5..20, 2)]).is_err()); // overlap
/// let hashed = ShardMap::hash(16).unwrap();
/// ```
pub struct ShardMap(Kind);

pub(crate) enum Kind {
    Hash(u32),
    Ranges(Vec<(Range<i64>, ShardId)>),
    Resolver(Resolver),
}

impl ShardMap {
    /// Shard `key.stable_hash() % shards` (see
    /// [`ShardKey::stable_hash`]): the cluster must have shards `0` to
    /// `shards - 1`, which [`ClusterBuilder::build`](crate::cluster::ClusterBuilder::build)
    /// checks.
    ///
    /// ```
    /// # use pgpipe::cluster::ShardMap;
    /// assert!(ShardMap::hash(0).is_err());
    /// ```
    ///
    /// # Errors
    ///
    /// Kind [`Config`](ErrorKind::Config) for zero shards.
    pub fn hash(shards: u32) -> Result<ShardMap, Error> {
        if shards == 0 {
            return Err(Error::new(
                ErrorKind::Config,
                "a hash shard map needs at least one shard",
            ));
        }
        Ok(ShardMap(Kind::Hash(shards)))
    }

    /// Integer keys by range: each `(start..end, shard)` takes the keys
    /// from `start` up to, not including, `end`. A key in no range is an
    /// error at look-up, never a guess.
    ///
    /// ```
    /// # use pgpipe::cluster::ShardMap;
    /// assert!(ShardMap::ranges([(10..10, 1)]).is_err()); // empty
    /// ```
    ///
    /// # Errors
    ///
    /// Kind [`Config`](ErrorKind::Config) for an empty range or two that
    /// overlap (the message names them).
    pub fn ranges(
        ranges: impl IntoIterator<Item = (Range<i64>, ShardId)>,
    ) -> Result<ShardMap, Error> {
        let mut ranges: Vec<_> = ranges.into_iter().collect();
        ranges.sort_by_key(|(r, _)| r.start);
        for (r, shard) in &ranges {
            if r.start >= r.end {
                return Err(Error::new(
                    ErrorKind::Config,
                    format!("shard map range {r:?} (shard {shard}) is empty"),
                ));
            }
        }
        for pair in ranges.windows(2) {
            if pair[0].0.end > pair[1].0.start {
                return Err(Error::new(
                    ErrorKind::Config,
                    format!(
                        "shard map ranges {:?} (shard {}) and {:?} (shard {}) overlap",
                        pair[0].0, pair[0].1, pair[1].0, pair[1].1
                    ),
                ));
            }
        }
        Ok(ShardMap(Kind::Ranges(ranges)))
    }

    pub(crate) fn from_resolver(resolver: Resolver) -> ShardMap {
        ShardMap(Kind::Resolver(resolver))
    }

    pub(crate) fn kind(&self) -> &Kind {
        &self.0
    }

    /// The shard of `key`.
    pub(crate) async fn lookup(&self, key: &ShardKey) -> Result<ShardId, Error> {
        match &self.0 {
            Kind::Hash(n) => Ok((key.stable_hash() % u64::from(*n)) as ShardId),
            Kind::Ranges(ranges) => lookup_range(ranges, key),
            Kind::Resolver(resolver) => resolver.lookup(key).await,
        }
    }
}

fn lookup_range(ranges: &[(Range<i64>, ShardId)], key: &ShardKey) -> Result<ShardId, Error> {
    let Some(v) = key.as_int() else {
        return Err(Error::new(
            ErrorKind::Routing,
            format!("key {key} is not an integer: a range shard map takes integer keys"),
        ));
    };
    // Sorted and disjoint: the last range starting at or below v is the
    // only one that can hold it.
    let i = ranges.partition_point(|(r, _)| r.start <= v);
    match i.checked_sub(1).map(|i| &ranges[i]) {
        Some((r, shard)) if r.contains(&v) => Ok(*shard),
        _ => Err(Error::new(
            ErrorKind::Routing,
            format!("key {v} is in no range of the shard map"),
        )),
    }
}

impl fmt::Debug for ShardMap {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.0 {
            Kind::Hash(n) => f.debug_tuple("Hash").field(n).finish(),
            Kind::Ranges(r) => f.debug_tuple("Ranges").field(r).finish(),
            Kind::Resolver(r) => f.debug_tuple("Resolver").field(r).finish(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ranges_of(map: &ShardMap) -> &[(Range<i64>, ShardId)] {
        match &map.0 {
            Kind::Ranges(r) => r,
            _ => unreachable!(),
        }
    }

    #[test]
    fn ranges_find_their_shard_and_refuse_the_rest() {
        let map = ShardMap::ranges([(100..200, 2), (0..100, 1), (300..i64::MAX, 3)]).unwrap();
        let shard = |k: i64| lookup_range(ranges_of(&map), &ShardKey::from(k));
        assert_eq!(shard(0).unwrap(), 1);
        assert_eq!(shard(99).unwrap(), 1);
        assert_eq!(shard(100).unwrap(), 2);
        assert_eq!(shard(300).unwrap(), 3);
        for outside in [-1, 200, 299, i64::MIN, i64::MAX] {
            let err = shard(outside).unwrap_err();
            assert_eq!(err.kind(), ErrorKind::Routing);
            assert!(err.to_string().contains("no range"), "{err}");
        }
        let err = lookup_range(ranges_of(&map), &ShardKey::from("x")).unwrap_err();
        assert!(err.to_string().contains("not an integer"), "{err}");
    }

    #[test]
    fn bad_maps_are_refused() {
        assert!(ShardMap::ranges([(0..10, 1), (9..20, 2)])
            .unwrap_err()
            .to_string()
            .contains("overlap"));
        assert!(ShardMap::ranges([(Range { start: 5, end: 1 }, 1)]).is_err());
        assert!(ShardMap::hash(0).is_err());
    }

    #[test]
    fn hash_spreads_over_every_shard() {
        let map = ShardMap::hash(8).unwrap();
        let mut seen = [0u32; 8];
        for k in 0..8000i64 {
            let Kind::Hash(n) = map.0 else { unreachable!() };
            let s = ShardKey::from(k).stable_hash() % u64::from(n);
            seen[s as usize] += 1;
        }
        assert!(seen.iter().all(|n| *n > 700), "{seen:?}");
    }
}
