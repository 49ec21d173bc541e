//! The per-connection statement cache: SQL text + parameter types -> a named
//! server-side statement, its result columns and, once a query needed them,
//! the parameter types the server inferred.
//!
//! Bounded LRU. Eviction is O(n) over at most `capacity` entries, which only
//! happens when a new statement arrives at a full cache; lookups, the hot
//! path, are one hash of the SQL text with a fixed-state hasher and no
//! allocation.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hash, Hasher};
use std::sync::Arc;

use pgpipe_types::{Oid, Type};

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
    /// The parameter types the server inferred, kept once a query whose
    /// values need them (`Encode::needs_server_type`) has learnt them, so
    /// the next one skips the Describe round trip.
    params: Option<Arc<[Type]>>,
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
                params: None,
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

    /// The result columns kept for the statement of this SQL text and
    /// declared types, once a run described them. Not counted as a lookup:
    /// the query that asks then runs through [`get`](Self::get).
    pub(crate) fn columns(&self, sql: &str, oids: &[Oid]) -> Option<Arc<[Column]>> {
        self.entry(sql, oids)?.columns.clone()
    }

    /// Replaces the kept columns of this statement with the same columns,
    /// their user-defined types now described (a run that skipped the
    /// catalog look-up kept them with bare OIDs).
    pub(crate) fn replace_columns(&mut self, sql: &str, oids: &[Oid], columns: &Arc<[Column]>) {
        if let Some(e) = self.entry_mut(sql, oids) {
            e.columns = Some(columns.clone());
        }
    }

    fn entry(&self, sql: &str, oids: &[Oid]) -> Option<&Entry> {
        self.by_hash
            .get(&key_hash(sql, oids))?
            .iter()
            .find(|e| &*e.sql == sql && &*e.oids == oids)
    }

    fn entry_mut(&mut self, sql: &str, oids: &[Oid]) -> Option<&mut Entry> {
        self.by_hash
            .get_mut(&key_hash(sql, oids))?
            .iter_mut()
            .find(|e| &*e.sql == sql && &*e.oids == oids)
    }

    /// The parameter types kept for this SQL text and declared types (see
    /// [`set_param_types`](Self::set_param_types)). Not counted as a
    /// lookup: the query that asks then runs through [`get`](Self::get).
    pub(crate) fn param_types(&self, sql: &str, oids: &[Oid]) -> Option<Arc<[Type]>> {
        self.entry(sql, oids)?.params.clone()
    }

    /// Keeps the parameter types the server inferred for the statement of
    /// this SQL text and declared types, if the cache holds it (its entry
    /// was made by the query that learnt them; one that failed to parse is
    /// gone, and then there is nothing to keep).
    pub(crate) fn set_param_types(&mut self, sql: &str, oids: &[Oid], types: &Arc<[Type]>) {
        if let Some(e) = self.entry_mut(sql, oids) {
            e.params.get_or_insert_with(|| types.clone());
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

    #[test]
    fn parameter_types_live_and_die_with_their_entry() {
        let mut c = StatementCache::new(1);
        let types: Arc<[Type]> = Arc::from(vec![Type::TEXT]);
        // Nothing to keep them on yet.
        c.set_param_types("q", &[0], &types);
        assert!(c.param_types("q", &[0]).is_none());
        c.insert("q", &[0], "s1".into());
        assert!(c.param_types("q", &[0]).is_none());
        c.set_param_types("q", &[0], &types);
        assert_eq!(c.param_types("q", &[0]).as_deref(), Some(&[Type::TEXT][..]));
        assert!(
            c.param_types("q", &[25]).is_none(),
            "declared types are part of the key"
        );
        // Evicted: the next statement of that text is parsed anew.
        c.insert("r", &[], "s2".into());
        assert!(c.param_types("q", &[0]).is_none());
        c.insert("q", &[0], "s3".into());
        assert!(c.param_types("q", &[0]).is_none());
    }
}
