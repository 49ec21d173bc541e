//! The raw floor's `rows-*` decoding: every value of every DataRow read by
//! hand from the read buffer and checked exactly as the drivers' rows are
//! (`RowsCheck`), so the floor does the drivers' work with nothing around
//! it. A floor that only counted DataRows would charge the drivers for
//! decoding values the floor never looked at.

use crate::checks::RowsCheck;
use crate::drivers::jsonb::jsonb_text;
use crate::error::BenchError;
use crate::fixtures::TS_COLUMNS;

/// Which `rows-*` table a DataRow comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RowsTable {
    /// `bench_rows1`: id int4.
    Rows1,
    /// `bench_rows9`: int4, int8, text, text, float8, bool, int2, bytea, float4.
    Rows9,
    /// `bench_json`: int4, jsonb.
    Json,
    /// `bench_ts60`: 60 timestamptz.
    Ts60,
}

impl RowsTable {
    /// Whether `RowsCheck::finish` can check the sum of ids.
    pub fn has_ids(self) -> bool {
        self != RowsTable::Ts60
    }
}

/// The columns of one DataRow body, read in order.
struct Columns<'a> {
    body: &'a [u8],
    pos: usize,
}

fn short() -> BenchError {
    BenchError::new("raw: DataRow shorter than its columns")
}

impl<'a> Columns<'a> {
    fn new(body: &'a [u8], count: usize) -> Result<Columns<'a>, BenchError> {
        match body.first_chunk::<2>() {
            Some(n) if u16::from_be_bytes(*n) as usize == count => Ok(Columns { body, pos: 2 }),
            _ => Err(BenchError::new(format!(
                "raw: DataRow does not have {count} columns"
            ))),
        }
    }

    /// The next value; NULL is an error (no benchmark column is NULL).
    #[inline]
    fn value(&mut self) -> Result<&'a [u8], BenchError> {
        let len = self
            .body
            .get(self.pos..)
            .and_then(|b| b.first_chunk::<4>())
            .ok_or_else(short)?;
        let len = usize::try_from(i32::from_be_bytes(*len))
            .map_err(|_| BenchError::new("raw: unexpected NULL"))?;
        let start = self.pos + 4;
        let v = self.body.get(start..start + len).ok_or_else(short)?;
        self.pos = start + len;
        Ok(v)
    }

    #[inline]
    fn fixed<const N: usize>(&mut self) -> Result<[u8; N], BenchError> {
        <[u8; N]>::try_from(self.value()?)
            .map_err(|_| BenchError::new(format!("raw: value is not {N} bytes")))
    }

    fn i16(&mut self) -> Result<i16, BenchError> {
        Ok(i16::from_be_bytes(self.fixed()?))
    }
    fn i32(&mut self) -> Result<i32, BenchError> {
        Ok(i32::from_be_bytes(self.fixed()?))
    }
    fn i64(&mut self) -> Result<i64, BenchError> {
        Ok(i64::from_be_bytes(self.fixed()?))
    }
    fn f32(&mut self) -> Result<f32, BenchError> {
        Ok(f32::from_be_bytes(self.fixed()?))
    }
    fn f64(&mut self) -> Result<f64, BenchError> {
        Ok(f64::from_be_bytes(self.fixed()?))
    }
    fn bool(&mut self) -> Result<bool, BenchError> {
        Ok(self.fixed::<1>()?[0] != 0)
    }
    fn str(&mut self) -> Result<&'a str, BenchError> {
        std::str::from_utf8(self.value()?).map_err(|e| BenchError::new(format!("raw: {e}")))
    }
}

/// Decodes every value of one DataRow `body` of `table` and checks it.
#[inline]
pub(super) fn check(
    table: RowsTable,
    check: &mut RowsCheck,
    body: &[u8],
) -> Result<(), BenchError> {
    match table {
        RowsTable::Rows1 => {
            let mut c = Columns::new(body, 1)?;
            check.id(c.i32()?);
        }
        RowsTable::Rows9 => {
            let mut c = Columns::new(body, 9)?;
            check.row9(
                c.i32()?,
                c.i64()?,
                c.str()?,
                c.str()?,
                c.f64()?,
                c.bool()?,
                c.i16()?,
                c.value()?,
                c.f32()?,
            )?;
        }
        RowsTable::Json => {
            let mut c = Columns::new(body, 2)?;
            let id = c.i32()?;
            let doc = jsonb_text(c.value()?).map_err(|e| BenchError::new(format!("raw: {e}")))?;
            check.json(id, doc)?;
        }
        RowsTable::Ts60 => {
            let mut c = Columns::new(body, TS_COLUMNS)?;
            let mut ts = [0i64; TS_COLUMNS];
            for t in &mut ts {
                *t = c.i64()?;
            }
            check.ts_row(&ts)?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn body(values: &[&[u8]]) -> Vec<u8> {
        let mut b = (values.len() as u16).to_be_bytes().to_vec();
        for v in values {
            b.extend_from_slice(&(v.len() as i32).to_be_bytes());
            b.extend_from_slice(v);
        }
        b
    }

    #[test]
    fn decodes_and_checks_a_rows9_row() {
        let id = 4i32;
        let b = body(&[
            &id.to_be_bytes(),
            &4000i64.to_be_bytes(),
            b"abcdefg",
            &[b'x'; 32],
            &2.0f64.to_be_bytes(),
            &[1],
            &4i16.to_be_bytes(),
            &[0; 16],
            &1.5f32.to_be_bytes(),
        ]);
        let mut rc = RowsCheck::default();
        check(RowsTable::Rows9, &mut rc, &b).unwrap();
        // A wrong value is caught, as in the drivers.
        let bad = body(&[&id.to_be_bytes(), &4001i64.to_be_bytes()]);
        assert!(check(RowsTable::Rows9, &mut rc, &bad).is_err());
    }

    #[test]
    fn short_bodies_nulls_and_wrong_counts_are_errors() {
        let mut rc = RowsCheck::default();
        assert!(check(RowsTable::Rows1, &mut rc, &[0, 1, 0, 0, 0, 4, 1]).is_err());
        assert!(check(RowsTable::Rows1, &mut rc, &[0, 1, 255, 255, 255, 255]).is_err());
        assert!(check(RowsTable::Rows1, &mut rc, &body(&[&[0, 0, 0, 1], &[0]])).is_err());
        check(RowsTable::Rows1, &mut rc, &body(&[&7i32.to_be_bytes()])).unwrap();
    }
}
