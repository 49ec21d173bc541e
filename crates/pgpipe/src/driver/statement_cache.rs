//! The per-connection statement cache: SQL text + parameter types -> a named
//! server-side statement and its result columns.
//!
//! Bounded LRU. Eviction is O(n) over at most `capacity` entries, which only
//! happens when a new statement arrives at a full cache; lookups, the hot
//! path, are one hash of the SQL text with a fixed-state hasher and no
//! allocation.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hash, Hasher};
use std::sync::Arc;

use pgpipe_types::Oid;

use crate::types::column::Column;

/// FxHash: a fast, non-randomised hash. The keys are the application's own
/// SQL texts, not attacker-chosen, so HashDoS resistance buys nothing here.
#[derive(Default)]
pub(crate) struct FxHasher(u64);

impl Hasher for FxHasher {
    fn write(&mut self, bytes: &[u8]) {
        const K: u64 = 0x517c_c1b7_2722_0a95;
        let mut chunks = bytes.chunks_exact(8);
        for c in &mut chunks {
            let v = u64::from_le_bytes([c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]]);
            self.0 = (self.0.rotate_left(5) ^ v).wrapping_mul(K);
        }
        for &b in chunks.remainder() {
            self.0 = (self.0.rotate_left(5) ^ b as u64).wrapping_mul(K);
        }
    }
    fn finish(&self) -> u64 {
        self.0
    }
}

fn key_hash(sql: &str, oids: &[Oid]) -> u64 {
    let mut h = FxHasher::default();
    sql.hash(&mut h);
    for oid in oids {
        h.write(&oid.to_le_bytes());
    }
    h.finish()
}

struct Entry {
    sql: Box<str>,
    oids: Box<[Oid]>,
    name: Arc<str>,
    /// Known once the first execution's RowDescription came back.
    columns: Option<Arc<[Column]>>,
    last_used: u64,
}

/// What a lookup found.
pub(crate) struct Cached {
    pub(crate) name: Arc<str>,
    pub(crate) columns: Option<Arc<[Column]>>,
}

pub(crate) struct StatementCache {
    capacity: usize,
    tick: u64,
    len: usize,
    by_hash: HashMap<u64, Vec<Entry>, BuildHasherDefault<FxHasher>>,
}

impl StatementCache {
    pub(crate) fn new(capacity: usize) -> StatementCache {
        StatementCache {
            capacity,
            tick: 0,
            len: 0,
            by_hash: HashMap::default(),
        }
    }

    pub(crate) fn enabled(&self) -> bool {
        self.capacity > 0
    }

    pub(crate) fn get(&mut self, sql: &str, oids: &[Oid]) -> Option<Cached> {
        let found = self.lookup(sql, oids);
        #[cfg(feature = "metrics")]
        crate::observe::metrics::cache_lookup(found.is_some());
        found
    }

    fn lookup(&mut self, sql: &str, oids: &[Oid]) -> Option<Cached> {
        self.tick += 1;
        let tick = self.tick;
        let bucket = self.by_hash.get_mut(&key_hash(sql, oids))?;
        let e = bucket
            .iter_mut()
            .find(|e| &*e.sql == sql && &*e.oids == oids)?;
        e.last_used = tick;
        Some(Cached {
            name: e.name.clone(),
            columns: e.columns.clone(),
        })
    }

    /// Adds an entry under `name`; returns the name of the statement evicted
    /// to make room, which the caller must close on the server.
    pub(crate) fn insert(&mut self, sql: &str, oids: &[Oid], name: Arc<str>) -> Option<Arc<str>> {
        let evicted = if self.len >= self.capacity {
            #[cfg(feature = "metrics")]
            crate::observe::metrics::cache_eviction();
            self.evict_lru()
        } else {
            None
        };
        self.tick += 1;
        self.by_hash
            .entry(key_hash(sql, oids))
            .or_default()
            .push(Entry {
                sql: sql.into(),
                oids: oids.into(),
                name,
                columns: None,
                last_used: self.tick,
            });
        self.len += 1;
        evicted
    }

    pub(crate) fn set_columns(&mut self, name: &str, columns: &Arc<[Column]>) {
        if let Some(e) = self
            .by_hash
            .values_mut()
            .flatten()
            .find(|e| &*e.name == name)
        {
            e.columns.get_or_insert_with(|| columns.clone());
        }
    }

    /// Forgets a statement (it failed to parse, went stale, or vanished).
    pub(crate) fn remove(&mut self, name: &str) -> bool {
        for bucket in self.by_hash.values_mut() {
            if let Some(i) = bucket.iter().position(|e| &*e.name == name) {
                bucket.swap_remove(i);
                self.len -= 1;
                return true;
            }
        }
        false
    }

    fn evict_lru(&mut self) -> Option<Arc<str>> {
        let (hash, idx) = self
            .by_hash
            .iter()
            .flat_map(|(h, b)| b.iter().enumerate().map(move |(i, e)| (*h, i, e.last_used)))
            .min_by_key(|&(_, _, used)| used)
            .map(|(h, i, _)| (h, i))?;
        let bucket = self.by_hash.get_mut(&hash)?;
        let entry = bucket.swap_remove(idx);
        if bucket.is_empty() {
            self.by_hash.remove(&hash);
        }
        self.len -= 1;
        Some(entry.name)
    }

    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.len
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lru_eviction_and_lookup() {
        let mut c = StatementCache::new(2);
        assert!(c.insert("a", &[], "s1".into()).is_none());
        assert!(c.insert("b", &[23], "s2".into()).is_none());
        assert!(c.get("a", &[]).is_some());
        assert!(
            c.get("b", &[]).is_none(),
            "parameter types are part of the key"
        );
        // "b" is now least recently used.
        assert_eq!(c.insert("c", &[], "s3".into()).as_deref(), Some("s2"));
        assert_eq!(c.len(), 2);
        assert!(c.get("b", &[23]).is_none());
        assert!(c.remove("s1"));
        assert!(!c.remove("s1"));
        assert_eq!(c.len(), 1);
    }

    #[test]
    fn columns_are_filled_in_later() {
        let mut c = StatementCache::new(4);
        c.insert("q", &[], "s1".into());
        assert!(c.get("q", &[]).unwrap().columns.is_none());
        c.set_columns("s1", &Arc::from(Vec::new()));
        assert!(c.get("q", &[]).unwrap().columns.is_some());
    }
}
