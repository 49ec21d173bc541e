//! The `pipeline` variant with failures (`64-fail1%`): the point select of
//! `pipeline`, except that one key in a hundred divides by zero. It is what
//! coalesced Sync is afraid of: a failing statement aborts the implicit
//! transaction of its group, so pgpipe-coalesced must hand the failure to
//! its caller alone and send every neighbour again. Each operation is
//! checked: a normal key must return its row, a failing key must return
//! SQLSTATE 22012 (division by zero); both count as one operation.

use crate::error::BenchError;

/// The point select with a divisor: `$2` is 1, or 0 for a failing key.
pub const FAILING_SQL: &str = "SELECT id, v FROM bench_kv WHERE id = $1::int4 / $2::int4";

/// Whether `key`'s statement fails (1 % of the keys).
pub fn fails(key: i32) -> bool {
    key % 100 == 0
}

/// `$2` for `key`: 0 when it must fail.
pub fn divisor(key: i32) -> i32 {
    if fails(key) {
        0
    } else {
        1
    }
}

/// The error for an answer `key` must not get.
pub fn unexpected(key: i32, what: &str) -> BenchError {
    BenchError::new(format!(
        "failing-pipeline: key {key} (fails: {}) got {what}",
        fails(key)
    ))
}
