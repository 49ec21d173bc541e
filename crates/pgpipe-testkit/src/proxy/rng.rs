//! A tiny xorshift generator for jitter: no dependency, seeded per process.

use std::hash::{BuildHasher, Hasher};

pub(crate) struct Rng(u64);

impl Rng {
    pub(crate) fn new() -> Rng {
        let mut h = std::collections::hash_map::RandomState::new().build_hasher();
        h.write_u64(0x9e37_79b9_7f4a_7c15);
        Rng(h.finish() | 1)
    }

    pub(crate) fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.0 = x;
        x
    }

    /// Uniform-enough in `0..=max`.
    pub(crate) fn up_to(&mut self, max: u64) -> u64 {
        if max == 0 {
            0
        } else {
            self.next() % (max + 1)
        }
    }
}
