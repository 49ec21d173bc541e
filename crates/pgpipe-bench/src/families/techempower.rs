//! The `techempower` workload: the database side of TechEmpower's
//! Fortunes (12 rows into structs, one added, sorted by message; no HTML),
//! Multiple queries (20 random `world` rows by id) and Updates (20 random
//! rows read, then written back with new random numbers). Drivers that can
//! pipeline send the 20 statements of an operation together.

use crate::error::BenchError;
use crate::fixtures::WORLD_ROWS;
use crate::shape::{Shape, TeCase, TE_N};
use crate::workload::Variant;

/// Fortunes.
pub const FORTUNE_SQL: &str = "SELECT id, message FROM fortune";
/// One world row.
pub const WORLD_SQL: &str = "SELECT id, randomnumber FROM world WHERE id = $1";
/// One world update.
pub const UPDATE_SQL: &str = "UPDATE world SET randomnumber = $1 WHERE id = $2";
/// The fortune added at request time.
pub const ADDED_FORTUNE: &str = "Additional fortune added at request time.";

/// A fortune, read into an owned struct as a web handler would.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fortune {
    /// id (0 for the added one).
    pub id: i32,
    /// The message.
    pub message: String,
}

/// A world row.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct World {
    /// 1..=10,000.
    pub id: i32,
    /// 1..=10,000.
    pub randomnumber: i32,
}

/// The random numbers of one operation, from its key (splitmix64): the 20
/// ids, and the 20 new random numbers of Updates.
pub fn randoms(key: i32) -> ([i32; TE_N], [i32; TE_N]) {
    let mut state = (key as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ 0xD1B5_4A32_D192_ED03;
    let mut next = || {
        state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        ((z ^ (z >> 31)) % WORLD_ROWS as u64) as i32 + 1
    };
    let mut ids = [0; TE_N];
    let mut numbers = [0; TE_N];
    ids.iter_mut().for_each(|x| *x = next());
    numbers.iter_mut().for_each(|x| *x = next());
    (ids, numbers)
}

/// Adds the request-time fortune, sorts, checks; returns the rows read.
pub fn finish_fortunes(mut fortunes: Vec<Fortune>) -> Result<u64, BenchError> {
    let read = fortunes.len() as u64;
    fortunes.push(Fortune {
        id: 0,
        message: ADDED_FORTUNE.to_string(),
    });
    fortunes.sort_unstable_by(|a, b| a.message.cmp(&b.message));
    let id_sum: i32 = fortunes.iter().map(|f| f.id).sum();
    if fortunes.len() != 13 || id_sum != 78 || !fortunes[0].message.starts_with("<script>") {
        return Err(BenchError::new(format!(
            "fortunes: {} rows (id sum {id_sum}), first {:?}",
            fortunes.len(),
            fortunes.first().map(|f| &f.message)
        )));
    }
    Ok(read)
}

/// Checks the worlds read for `ids`; returns the rows read.
pub fn check_worlds(ids: &[i32], worlds: &[World]) -> Result<u64, BenchError> {
    let ok = ids.len() == worlds.len()
        && ids
            .iter()
            .zip(worlds)
            .all(|(&id, w)| w.id == id && (1..=WORLD_ROWS).contains(&w.randomnumber));
    if !ok {
        return Err(BenchError::new(format!(
            "world rows for {ids:?} came back as {worlds:?}"
        )));
    }
    Ok(worlds.len() as u64)
}

/// Checks the row counts of the updates.
pub fn check_updated(counts: &[u64]) -> Result<(), BenchError> {
    if counts.len() != TE_N || counts.iter().any(|&n| n != 1) {
        return Err(BenchError::new(format!(
            "world updates affected {counts:?}"
        )));
    }
    Ok(())
}

/// The case of a techempower variant.
pub fn case(variant: &Variant) -> Result<TeCase, BenchError> {
    match variant.shape {
        Shape::Te(c) => Ok(c),
        other => Err(BenchError::new(format!(
            "not a techempower variant: {other:?}"
        ))),
    }
}
