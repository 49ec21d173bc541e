//! Result checks shared by every driver adapter: a fast driver that returns
//! wrong data is a bug, so each operation's results are verified.

use crate::error::BenchError;
use crate::fixtures::{KV_ROWS, ROWS, TS_COLUMNS};

/// The `n`-th key a task asks for: spread over `1..=KV_ROWS`.
pub fn key(task: usize, n: u64) -> i32 {
    let k = (task as u64)
        .wrapping_mul(7919)
        .wrapping_add(n.wrapping_mul(31))
        % KV_ROWS as u64;
    k as i32 + 1
}

/// A point select for `key` returned `(id, v)`.
pub fn point(key: i32, id: i32, v: i64) -> Result<(), BenchError> {
    if id != key || v != i64::from(key) * 3 {
        return Err(BenchError::new(format!(
            "point select for id {key} returned ({id}, {v}), expected ({key}, {})",
            i64::from(key) * 3
        )));
    }
    Ok(())
}

/// A statement reported `got` rows where `expected` were meant.
pub fn count(what: &str, expected: u64, got: u64) -> Result<(), BenchError> {
    if got != expected {
        return Err(BenchError::new(format!(
            "{what} affected {got} row(s), expected {expected}"
        )));
    }
    Ok(())
}

/// Verifies a full read of a `rows-*` table: the count and the sum of ids.
#[derive(Debug, Default)]
pub struct RowsCheck {
    count: u64,
    id_sum: u64,
}

impl RowsCheck {
    /// One row whose id is `id`.
    #[inline]
    pub fn id(&mut self, id: i32) {
        self.count += 1;
        self.id_sum = self.id_sum.wrapping_add(id as u64);
    }

    /// One row of `bench_rows9`, every column checked against its id.
    #[allow(clippy::too_many_arguments)]
    #[inline]
    pub fn row9(
        &mut self,
        id: i32,
        a: i64,
        b: &str,
        c: &str,
        d: f64,
        e: bool,
        f: i16,
        g: &[u8],
        h: f32,
    ) -> Result<(), BenchError> {
        let ok = a == i64::from(id) * 1000
            && b.len() > 5
            && c.len() == 32
            && d == f64::from(id) * 0.5
            && e == (id % 2 == 0)
            && i32::from(f) == id % 1000
            && g.len() == 16
            && h > 0.0;
        if !ok {
            return Err(BenchError::new(format!(
                "bench_rows9 row {id} has wrong values"
            )));
        }
        self.id(id);
        Ok(())
    }

    /// One row of `bench_json`: the document is the object built for `id`
    /// (its text starts with `{"id": <id>,` and ends with `}`).
    #[inline]
    pub fn json(&mut self, id: i32, doc: &str) -> Result<(), BenchError> {
        let ok = doc.ends_with('}')
            && doc
                .strip_prefix("{\"id\": ")
                .and_then(|rest| rest.split_once(','))
                .is_some_and(|(n, _)| n.parse::<i32>() == Ok(id));
        if !ok {
            return Err(BenchError::new(format!(
                "bench_json row {id} has a wrong document: {doc:.60}"
            )));
        }
        self.id(id);
        Ok(())
    }

    /// One row of `bench_ts60` (microseconds since 2000-01-01): consecutive
    /// columns are one second apart.
    #[inline]
    pub fn ts_row(&mut self, ts: &[i64; TS_COLUMNS]) -> Result<(), BenchError> {
        for k in 1..TS_COLUMNS {
            if ts[k] - ts[0] != k as i64 * 1_000_000 {
                return Err(BenchError::new("bench_ts60 row has wrong timestamps"));
            }
        }
        self.count += 1;
        Ok(())
    }

    /// Checks the totals; returns the row count.
    pub fn finish(&self, with_ids: bool) -> Result<u64, BenchError> {
        let expected_sum = ROWS * (ROWS + 1) / 2;
        if self.count != ROWS || (with_ids && self.id_sum != expected_sum) {
            return Err(BenchError::new(format!(
                "read {} rows (id sum {}), expected {ROWS} (id sum {expected_sum})",
                self.count, self.id_sum
            )));
        }
        Ok(self.count)
    }
}
