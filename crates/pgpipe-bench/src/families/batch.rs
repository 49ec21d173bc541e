//! The `batch` workload: each operation is an explicit batch of N point
//! selects sent together and answered together, the shape of pgbench's
//! `\startpipeline` .. `\endpipeline` (N statements, one Sync).
//!
//! pgpipe sends `client.batch()` with `run_atomic` (one Sync for the
//! batch); tokio-postgres has no batch API, so its adapter polls N
//! `query_one` futures together, which it pipelines with a Sync each; the
//! pgbench row is the libpq floor for the same batch. Every row of every
//! statement is checked. One "operation" in the results is one select, so
//! the rows compare directly with `pipeline`.

use crate::fixtures::KV_ROWS;

/// The key of the `i`-th select of a batch that starts at `key`.
pub fn nth_key(key: i32, i: usize) -> i32 {
    ((key as i64 - 1 + i as i64).rem_euclid(i64::from(KV_ROWS)) + 1) as i32
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_stay_in_the_table() {
        assert_eq!(nth_key(1, 0), 1);
        assert_eq!(nth_key(KV_ROWS, 1), 1);
        for k in [1, 7, KV_ROWS] {
            for i in 0..200 {
                let n = nth_key(k, i);
                assert!((1..=KV_ROWS).contains(&n), "{k} {i} {n}");
            }
        }
    }
}
