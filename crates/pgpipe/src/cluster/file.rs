//! A cluster's shards, shard map and connection budget from a TOML file
//! (feature `cluster-toml`): [`ClusterBuilder::from_file`] and
//! [`ShardMap::from_file`].
//!
//! ```toml
//! max_connections = 64            # optional: ClusterBuilder::max_connections
//!
//! [map]                           # optional: hash over shards 0..n without it
//! hash = 2                        # or: ranges = [{ start = 0, end = 1000, shard = 0 }, ...]
//!
//! [[shards]]
//! id = 0
//! hosts = ["postgres://app@db0a/mail", "postgres://app@db0b/mail"]
//!
//! [[shards]]
//! id = 1
//! hosts = ["postgres://app@db1a/mail", "postgres://app@db1b/mail"]
//! ```

use std::collections::BTreeSet;
use std::path::Path;

use serde::Deserialize;
use toml::Spanned;

use super::builder::ClusterBuilder;
use super::map::ShardMap;
use super::{Cluster, ShardId};
use crate::error::ErrorKind;
use crate::{Config, Error};

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Document {
    max_connections: Option<Spanned<usize>>,
    map: Option<Spanned<MapSection>>,
    #[serde(default)]
    shards: Vec<Spanned<ShardSection>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct MapSection {
    hash: Option<Spanned<u32>>,
    ranges: Option<Vec<Spanned<RangeEntry>>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RangeEntry {
    start: i64,
    end: i64,
    shard: ShardId,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ShardSection {
    id: Spanned<ShardId>,
    hosts: Spanned<Vec<Spanned<String>>>,
}

/// A file being read: its name and text, for errors that point into it.
struct Source<'a> {
    path: &'a Path,
    text: &'a str,
}

impl Source<'_> {
    /// An error at byte `at` of the file, about `field`.
    fn error(&self, at: usize, field: &str, what: impl std::fmt::Display) -> Error {
        let line = self.text[..at.min(self.text.len())].matches('\n').count() + 1;
        Error::new(
            ErrorKind::Config,
            format!("{}: line {line}: {field}: {what}", self.path.display()),
        )
    }

    fn parse(&self) -> Result<Document, Error> {
        // toml's message names the line, the column and the key.
        toml::from_str(self.text).map_err(|e| {
            Error::new(
                ErrorKind::Config,
                format!("{}: {}", self.path.display(), e.to_string().trim_end()),
            )
        })
    }

    fn map(&self, section: &Spanned<MapSection>) -> Result<ShardMap, Error> {
        let at = section.span().start;
        match (&section.get_ref().hash, &section.get_ref().ranges) {
            (Some(n), None) => {
                ShardMap::hash(*n.get_ref()).map_err(|e| self.error(n.span().start, "map.hash", e))
            }
            (None, Some(ranges)) => {
                if ranges.is_empty() {
                    return Err(self.error(at, "map.ranges", "no ranges"));
                }
                let list = ranges.iter().enumerate().map(|(i, r)| {
                    let RangeEntry { start, end, shard } = *r.get_ref();
                    (i, start..end, shard)
                });
                // Each range alone first, so an empty one names its line.
                for (i, range, shard) in list.clone() {
                    if range.start >= range.end {
                        return Err(self.error(
                            ranges[i].span().start,
                            &format!("map.ranges[{i}]"),
                            format!("the range {range:?} (shard {shard}) is empty: end must be above start"),
                        ));
                    }
                }
                ShardMap::ranges(list.map(|(_, range, shard)| (range, shard)))
                    .map_err(|e| self.error(at, "map.ranges", e))
            }
            (Some(_), Some(_)) => {
                Err(self.error(at, "map", "give either `hash` or `ranges`, not both"))
            }
            (None, None) => {
                Err(self.error(at, "map", "give `hash = <shards>` or `ranges = [...]`"))
            }
        }
    }

    fn shard(&self, i: usize, shard: &ShardSection) -> Result<(ShardId, Vec<Config>), Error> {
        let id = *shard.id.get_ref();
        let hosts = shard.hosts.get_ref();
        if hosts.is_empty() {
            return Err(self.error(
                shard.hosts.span().start,
                &format!("shards[{i}].hosts"),
                format!("shard {id} has no hosts"),
            ));
        }
        let configs = hosts
            .iter()
            .enumerate()
            .map(|(j, url)| {
                Config::parse(url.get_ref()).map_err(|e| {
                    self.error(url.span().start, &format!("shards[{i}].hosts[{j}]"), e)
                })
            })
            .collect::<Result<Vec<_>, _>>()?;
        Ok((id, configs))
    }
}

fn read(path: &Path) -> Result<String, Error> {
    std::fs::read_to_string(path).map_err(|e| {
        Error::new(
            ErrorKind::Config,
            format!("cannot read the cluster file {}", path.display()),
        )
        .with_source(e)
    })
}

impl ClusterBuilder {
    /// A builder with the shards, the shard map and the connection budget
    /// of a TOML file (feature `cluster-toml`): `[[shards]]` tables with
    /// `id` and `hosts` (connection strings), an optional `[map]`
    /// (`hash = n`, or `ranges` of `{ start, end, shard }`, half-open), an
    /// optional `max_connections`. Set the rest (pool settings, timings)
    /// on the builder it returns.
    ///
    /// ```toml
    /// max_connections = 64
    ///
    /// [map]
    /// ranges = [
    ///     { start = 0, end = 1000000, shard = 0 },
    ///     { start = 1000000, end = 2000000, shard = 1 },
    /// ]
    ///
    /// [[shards]]
    /// id = 0
    /// hosts = ["postgres://app@db0a/mail", "postgres://app@db0b/mail"]
    ///
    /// [[shards]]
    /// id = 1
    /// hosts = ["postgres://app@db1a/mail", "postgres://app@db1b/mail"]
    /// ```
    ///
    /// ```no_run
    /// # fn f() -> Result<(), pgpipe::Error> {
    /// use pgpipe::cluster::ClusterBuilder;
    /// use pgpipe::PoolConfig;
    ///
    /// let cluster = ClusterBuilder::from_file("/etc/mail/shards.toml")?
    ///     .pool_config(PoolConfig::new().max_size(8))
    ///     .build()?;
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// Kind [`Config`](ErrorKind::Config), the message naming the file, the
    /// line and the field: a file that cannot be read, TOML that does not
    /// parse, an unknown key or a value of the wrong type, no shards, a
    /// shard without hosts or listed twice, a connection string that does
    /// not parse, a map with an empty or overlapping range, or with both
    /// or neither of `hash` and `ranges`. [`build`](Self::build) checks
    /// the rest (a map sending keys to a shard that is not there).
    pub fn from_file(path: impl AsRef<Path>) -> Result<ClusterBuilder, Error> {
        let path = path.as_ref();
        let text = read(path)?;
        let source = Source { path, text: &text };
        let doc = source.parse()?;
        if doc.shards.is_empty() {
            return Err(source.error(
                0,
                "shards",
                "no [[shards]] tables: a cluster needs at least one shard",
            ));
        }
        let mut builder = Cluster::builder();
        let mut seen = BTreeSet::new();
        for (i, shard) in doc.shards.iter().enumerate() {
            let (id, configs) = source.shard(i, shard.get_ref())?;
            if !seen.insert(id) {
                return Err(source.error(
                    shard.get_ref().id.span().start,
                    &format!("shards[{i}].id"),
                    format!("shard {id} is listed twice"),
                ));
            }
            builder = builder.shard_with_configs(id, configs);
        }
        if let Some(map) = &doc.map {
            builder = builder.map(source.map(map)?);
        }
        if let Some(budget) = &doc.max_connections {
            if *budget.get_ref() == 0 {
                return Err(source.error(
                    budget.span().start,
                    "max_connections",
                    "0 would allow no connection",
                ));
            }
            builder = builder.max_connections(*budget.get_ref());
        }
        Ok(builder)
    }
}

impl ShardMap {
    /// The `[map]` table of a TOML file (feature `cluster-toml`; the
    /// layout of [`ClusterBuilder::from_file`], whose other keys are
    /// checked too): `hash = n`, or `ranges = [{ start = 0, end = 1000,
    /// shard = 0 }, ...]` (half-open ranges of integer keys).
    ///
    /// ```no_run
    /// # fn f() -> Result<(), pgpipe::Error> {
    /// let map = pgpipe::cluster::ShardMap::from_file("/etc/mail/shards.toml")?;
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// Kind [`Config`](ErrorKind::Config), naming the file, the line and
    /// the field, as [`ClusterBuilder::from_file`]; also a file without a
    /// `[map]` table.
    pub fn from_file(path: impl AsRef<Path>) -> Result<ShardMap, Error> {
        let path = path.as_ref();
        let text = read(path)?;
        let source = Source { path, text: &text };
        let doc = source.parse()?;
        match &doc.map {
            Some(map) => source.map(map),
            None => Err(source.error(0, "map", "no [map] table")),
        }
    }
}
