//! DataRow (`'D'`): the hot path, so parsing is a tight loop over slices.

use std::ops::Range;

use bytes::Bytes;

use super::reader::{be_i32, malformed};
use crate::DecodeErrorKind;

/// A DataRow body: validated so that every column length fits in the body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DataRow {
    body: Bytes,
    column_count: u16,
}

impl DataRow {
    pub(super) fn parse(body: Bytes) -> Result<Self, DecodeErrorKind> {
        let Some((count, mut rest)) = body.split_first_chunk::<2>() else {
            return Err(malformed(format!(
                "the body ends inside the column count (2 bytes needed, {} remain)",
                body.len()
            )));
        };
        let column_count = u16::from_be_bytes(*count);
        for column in 0..column_count {
            let Some((len, tail)) = rest.split_first_chunk::<4>() else {
                return Err(truncated_length(column, rest.len()));
            };
            let len = i32::from_be_bytes(*len);
            rest = tail;
            if len >= 0 {
                match rest.get(len as usize..) {
                    Some(tail) => rest = tail,
                    None => return Err(overrun(column, len, rest.len())),
                }
            } else if len != -1 {
                return Err(malformed(format!(
                    "column {column} declares length {len}; only -1 (NULL) may be negative"
                )));
            }
        }
        if !rest.is_empty() {
            return Err(trailing(rest.len(), column_count));
        }
        Ok(DataRow { body, column_count })
    }

    /// Number of columns.
    pub fn column_count(&self) -> usize {
        self.column_count as usize
    }

    /// The whole body (starting with the 2-byte column count).
    pub fn buffer(&self) -> &Bytes {
        &self.body
    }

    /// Takes the whole body (starting with the 2-byte column count), without
    /// touching its reference count.
    pub fn into_buffer(self) -> Bytes {
        self.body
    }

    /// Each column's byte range within [`DataRow::buffer`], `None` for NULL.
    pub fn ranges(&self) -> impl Iterator<Item = Option<Range<usize>>> + '_ {
        let buf: &[u8] = &self.body;
        let mut pos = 2usize;
        (0..self.column_count).map(move |_| {
            let len = be_i32(buf, pos);
            pos = pos.saturating_add(4);
            if len < 0 {
                None
            } else {
                let start = pos;
                pos = pos.saturating_add(len as usize);
                Some(start..pos)
            }
        })
    }

    /// Each column's bytes, `None` for NULL.
    pub fn columns(&self) -> impl Iterator<Item = Option<&[u8]>> + '_ {
        self.ranges()
            .map(|range| range.and_then(|r| self.body.get(r)))
    }
}

#[cold]
fn truncated_length(column: u16, remain: usize) -> DecodeErrorKind {
    malformed(format!(
        "the body ends inside the length of column {column} (4 bytes needed, {remain} remain)"
    ))
}

#[cold]
fn trailing(n: usize, column_count: u16) -> DecodeErrorKind {
    if column_count == 0 {
        malformed(format!("{n} unexpected bytes after the column count"))
    } else {
        malformed(format!(
            "{n} unexpected bytes after the last of {column_count} columns"
        ))
    }
}

#[cold]
fn overrun(column: u16, len: i32, remain: usize) -> DecodeErrorKind {
    malformed(format!(
        "column {column} declares {len} bytes but only {remain} remain"
    ))
}
