//! A bounds-checked reader over one binary value, for the codecs whose
//! values are a sequence of fixed-size fields (geometric types,
//! `pg_snapshot`, `tsvector`): every read says which type ran short.

use crate::BoxError;

/// Reads big-endian fields from the front of a value's bytes.
pub(crate) struct Cursor<'a> {
    what: &'static str,
    raw: &'a [u8],
}

impl<'a> Cursor<'a> {
    /// A reader over `raw`, a value of PostgreSQL type `what`.
    pub(crate) fn new(what: &'static str, raw: &'a [u8]) -> Cursor<'a> {
        Cursor { what, raw }
    }

    /// The next `n` bytes.
    pub(crate) fn take(&mut self, n: usize) -> Result<&'a [u8], BoxError> {
        if self.raw.len() < n {
            return Err(format!(
                "invalid binary {} value: {} bytes missing at its end",
                self.what,
                n - self.raw.len()
            )
            .into());
        }
        let (head, rest) = self.raw.split_at(n);
        self.raw = rest;
        Ok(head)
    }

    fn array<const N: usize>(&mut self) -> Result<[u8; N], BoxError> {
        let mut out = [0; N];
        out.copy_from_slice(self.take(N)?);
        Ok(out)
    }

    pub(crate) fn u8(&mut self) -> Result<u8, BoxError> {
        Ok(self.array::<1>()?[0])
    }

    pub(crate) fn u16(&mut self) -> Result<u16, BoxError> {
        self.array().map(u16::from_be_bytes)
    }

    pub(crate) fn i32(&mut self) -> Result<i32, BoxError> {
        self.array().map(i32::from_be_bytes)
    }

    pub(crate) fn u64(&mut self) -> Result<u64, BoxError> {
        self.array().map(u64::from_be_bytes)
    }

    pub(crate) fn f64(&mut self) -> Result<f64, BoxError> {
        self.array().map(f64::from_be_bytes)
    }

    /// The bytes up to the next NUL, and the NUL skipped.
    pub(crate) fn c_string(&mut self) -> Result<&'a [u8], BoxError> {
        match self.raw.iter().position(|&b| b == 0) {
            Some(end) => {
                let s = &self.raw[..end];
                self.raw = &self.raw[end + 1..];
                Ok(s)
            }
            None => Err(format!(
                "invalid binary {} value: a string without its terminating NUL",
                self.what
            )
            .into()),
        }
    }

    /// How many bytes are left.
    pub(crate) fn remaining(&self) -> usize {
        self.raw.len()
    }

    /// Fails unless every byte was read.
    pub(crate) fn finish(self) -> Result<(), BoxError> {
        if self.raw.is_empty() {
            Ok(())
        } else {
            Err(format!(
                "invalid binary {} value: {} bytes left over after it",
                self.what,
                self.raw.len()
            )
            .into())
        }
    }
}
