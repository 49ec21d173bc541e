//! The `shards` family: what its two clients of the same fleet share
//! (pgpipe's `Cluster` in `crate::drivers::pgpipe::shards`, one
//! deadpool-postgres pool per shard and host over tokio-postgres in
//! `crate::drivers::tokio_postgres::shards`, what a team writes by hand
//! today). Both draw the same mix: a key at random
//! over every shard's keys, one operation in [`WRITE_EVERY`] an UPDATE on
//! the shard's primary, the others a point read on its replica when it has
//! one (on its primary otherwise).

use std::cell::Cell;
use std::sync::atomic::{AtomicU64, Ordering};

use crate::error::BenchError;

/// One operation in this many is a write (20 %); the rest are reads.
pub const WRITE_EVERY: u64 = 5;

/// The read: the key's value, and whether a standby served it.
pub const READ_SQL: &str = "SELECT v, pg_is_in_recovery() FROM kv WHERE k = $1";

/// The write: one row of the key's shard.
pub const WRITE_SQL: &str = "UPDATE kv SET v = v + 1 WHERE k = $1";

/// One shard's hosts as connection strings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShardHosts {
    /// The primary.
    pub primary: String,
    /// Its streaming standby, if the shard has one.
    pub replica: Option<String>,
}

/// What both clients connect to: shard `i` is `shards[i]`; keys are
/// `0..keys`, each stored on shard [`shard_of`]`(key)` only.
#[derive(Debug, Clone)]
pub struct Topology {
    /// The shards, by id.
    pub shards: Vec<ShardHosts>,
    /// How many keys there are.
    pub keys: i64,
}

impl Topology {
    /// The shard count as a `u32` (a shard id).
    pub fn shard_count(&self) -> u32 {
        u32::try_from(self.shards.len()).unwrap_or(u32::MAX)
    }
}

/// 64-bit FNV-1a of an integer key's 8 big-endian bytes: the hash pgpipe's
/// `ShardMap::hash` uses (`ShardKey::stable_hash`), written out here as a
/// team with hand-made routing would (a test checks they agree).
pub fn fnv1a(key: i64) -> u64 {
    key.to_be_bytes()
        .iter()
        .fold(0xcbf2_9ce4_8422_2325, |h: u64, b| {
            (h ^ u64::from(*b)).wrapping_mul(0x0100_0000_01b3)
        })
}

/// The shard that holds `key` among `shards`.
pub fn shard_of(key: i64, shards: u32) -> u32 {
    (fnv1a(key) % u64::from(shards.max(1))) as u32
}

/// One drawn operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Draw {
    /// The key, in `0..keys`.
    pub key: i64,
    /// An UPDATE on the primary (else a read).
    pub write: bool,
}

static SEEDS: AtomicU64 = AtomicU64::new(1);

thread_local! {
    // A generator per thread: no shared state between tasks' draws.
    static RNG: Cell<u64> = Cell::new(
        SEEDS.fetch_add(1, Ordering::Relaxed).wrapping_mul(0x9e37_79b9_7f4a_7c15),
    );
}

/// splitmix64's output function.
fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// The next operation: a key uniformly at random in `0..keys`, a write
/// one time in [`WRITE_EVERY`].
pub fn draw(keys: i64) -> Draw {
    let r = RNG.with(|s| {
        let x = s.get().wrapping_add(0x9e37_79b9_7f4a_7c15);
        s.set(x);
        mix(x)
    });
    Draw {
        key: ((r >> 1) % keys.max(1) as u64) as i64,
        write: (r & 0xffff).is_multiple_of(WRITE_EVERY),
    }
}

/// What a client did, counted as it went: the smoke test compares them
/// with the databases.
#[derive(Debug, Default)]
pub struct Tally {
    reads: AtomicU64,
    standby_reads: AtomicU64,
    writes: AtomicU64,
}

impl Tally {
    /// Reads done.
    pub fn reads(&self) -> u64 {
        self.reads.load(Ordering::Relaxed)
    }

    /// Reads a standby served.
    pub fn standby_reads(&self) -> u64 {
        self.standby_reads.load(Ordering::Relaxed)
    }

    /// Writes done (each one row).
    pub fn writes(&self) -> u64 {
        self.writes.load(Ordering::Relaxed)
    }

    /// Checks and counts a read of `key`'s row, served by a standby or not.
    pub(crate) fn read(&self, key: i64, v: i64, standby: bool) -> Result<u64, BenchError> {
        if v < 0 {
            return Err(BenchError::new(format!(
                "shards: key {key} read v = {v}, below its initial 0"
            )));
        }
        self.reads.fetch_add(1, Ordering::Relaxed);
        if standby {
            self.standby_reads.fetch_add(1, Ordering::Relaxed);
        }
        Ok(1)
    }

    /// Checks and counts a write of `key`'s row.
    pub(crate) fn write(&self, key: i64, updated: u64) -> Result<u64, BenchError> {
        if updated != 1 {
            return Err(BenchError::new(format!(
                "shards: the UPDATE of key {key} updated {updated} rows on its shard, expected 1 \
                 (routed to the wrong shard?)"
            )));
        }
        self.writes.fetch_add(1, Ordering::Relaxed);
        Ok(0)
    }
}

/// `url` with `application_name` set, so that `pg_stat_activity` tells
/// each client's connections apart.
pub fn named(url: &str, application_name: &str) -> String {
    crate::drivers::with_param(url, "application_name", application_name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_hand_written_hash_is_pgpipes() {
        for key in [0i64, 1, 7, 42, 99_999, -5, i64::MAX] {
            assert_eq!(
                fnv1a(key),
                ::pgpipe::cluster::ShardKey::from(key).stable_hash(),
                "{key}"
            );
        }
    }

    #[test]
    fn draws_cover_the_keys_and_write_one_in_five() {
        let mut seen = vec![false; 1000];
        let mut writes = 0;
        for _ in 0..100_000 {
            let d = draw(1000);
            seen[d.key as usize] = true;
            writes += u32::from(d.write);
        }
        assert!(seen.iter().all(|s| *s));
        assert!((18_000..22_000).contains(&writes), "{writes}");
    }
}
