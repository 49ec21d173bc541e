//! Bounds-checked reading of message bodies at parse time, and infallible
//! reads for the accessors that run on bodies already validated.

use std::fmt::Display;

use memchr::memchr;

use crate::DecodeErrorKind;

/// Builds a `Malformed` error. Kept out of line: it only runs on bad input.
#[cold]
#[inline(never)]
pub(super) fn malformed(reason: String) -> DecodeErrorKind {
    DecodeErrorKind::Malformed { reason }
}

/// A cursor over a message body. Every read names what it reads, so an error
/// can say where the body went wrong; the name is only formatted on error.
pub(super) struct Reader<'a> {
    buf: &'a [u8],
    pos: usize,
}

impl<'a> Reader<'a> {
    pub(super) fn new(buf: &'a [u8]) -> Self {
        Reader { buf, pos: 0 }
    }

    /// Bytes not read yet.
    pub(super) fn rest(&self) -> &'a [u8] {
        self.buf.get(self.pos..).unwrap_or(&[])
    }

    pub(super) fn remaining(&self) -> usize {
        self.rest().len()
    }

    pub(super) fn bytes(
        &mut self,
        n: usize,
        what: impl Display,
    ) -> Result<&'a [u8], DecodeErrorKind> {
        let rest = self.rest();
        match rest.get(..n) {
            Some(bytes) => {
                self.pos += n;
                Ok(bytes)
            }
            None => Err(malformed(format!(
                "the body ends inside the {what} ({n} bytes needed, {} remain)",
                rest.len()
            ))),
        }
    }

    pub(super) fn array<const N: usize>(
        &mut self,
        what: impl Display,
    ) -> Result<[u8; N], DecodeErrorKind> {
        let rest = self.rest();
        match rest.first_chunk::<N>() {
            Some(bytes) => {
                self.pos += N;
                Ok(*bytes)
            }
            None => Err(malformed(format!(
                "the body ends inside the {what} ({N} bytes needed, {} remain)",
                rest.len()
            ))),
        }
    }

    pub(super) fn u8(&mut self, what: impl Display) -> Result<u8, DecodeErrorKind> {
        self.array::<1>(what).map(|[b]| b)
    }

    pub(super) fn u16(&mut self, what: impl Display) -> Result<u16, DecodeErrorKind> {
        self.array(what).map(u16::from_be_bytes)
    }

    pub(super) fn i32(&mut self, what: impl Display) -> Result<i32, DecodeErrorKind> {
        self.array(what).map(i32::from_be_bytes)
    }

    /// A NUL-terminated string, without its NUL.
    pub(super) fn cstr(&mut self, what: impl Display) -> Result<&'a [u8], DecodeErrorKind> {
        let rest = self.rest();
        match memchr(0, rest) {
            Some(n) => {
                self.pos += n + 1;
                Ok(&rest[..n])
            }
            None => Err(malformed(format!("the {what} is not NUL-terminated"))),
        }
    }

    /// A NUL-terminated string that must be UTF-8.
    pub(super) fn str(&mut self, what: impl Display) -> Result<&'a str, DecodeErrorKind> {
        let start = self.pos;
        let bytes = self.cstr(&what)?;
        std::str::from_utf8(bytes).map_err(|e| {
            malformed(format!(
                "the {what} is not valid UTF-8 (invalid byte at body offset {})",
                start + e.valid_up_to()
            ))
        })
    }

    /// Succeeds only if the whole body has been read.
    pub(super) fn finish(&self, after: impl Display) -> Result<(), DecodeErrorKind> {
        match self.remaining() {
            0 => Ok(()),
            n => Err(malformed(format!("{n} unexpected bytes after the {after}"))),
        }
    }
}

/// Reads a big-endian integer at `pos` of a validated body; 0 if out of range,
/// which validation makes unreachable, so accessors need no `Result`.
pub(super) fn be_u16(buf: &[u8], pos: usize) -> u16 {
    read(buf, pos).map_or(0, u16::from_be_bytes)
}

pub(super) fn be_i16(buf: &[u8], pos: usize) -> i16 {
    read(buf, pos).map_or(0, i16::from_be_bytes)
}

pub(super) fn be_i32(buf: &[u8], pos: usize) -> i32 {
    read(buf, pos).map_or(0, i32::from_be_bytes)
}

pub(super) fn be_u32(buf: &[u8], pos: usize) -> u32 {
    read(buf, pos).map_or(0, u32::from_be_bytes)
}

fn read<const N: usize>(buf: &[u8], pos: usize) -> Option<[u8; N]> {
    buf.get(pos..)?.first_chunk::<N>().copied()
}

/// Iterates the NUL-terminated strings that make up `buf` (a body validated
/// to end right after a NUL), as UTF-8 validated at parse time.
pub(super) fn cstrs(buf: &[u8]) -> impl Iterator<Item = &str> + '_ {
    let mut rest = buf;
    std::iter::from_fn(move || {
        let n = memchr(0, rest)?;
        let s = &rest[..n];
        rest = &rest[n + 1..];
        Some(std::str::from_utf8(s).unwrap_or(""))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reason(kind: DecodeErrorKind) -> String {
        match kind {
            DecodeErrorKind::Malformed { reason } => reason,
            other => panic!("unexpected {other:?}"),
        }
    }

    #[test]
    fn reads_and_reports() {
        let mut r = Reader::new(b"\x01\x00\x02\xff\xff\xff\xfeab\0c");
        assert_eq!(r.u8("a").unwrap(), 1);
        assert_eq!(r.u16("b").unwrap(), 2);
        assert_eq!(r.i32("c").unwrap(), -2);
        assert_eq!(r.cstr("d").unwrap(), b"ab");
        assert_eq!(r.remaining(), 1);
        assert_eq!(
            reason(r.finish("name").unwrap_err()),
            "1 unexpected bytes after the name"
        );
        assert_eq!(
            reason(r.i32("count").unwrap_err()),
            "the body ends inside the count (4 bytes needed, 1 remain)"
        );
        assert_eq!(
            reason(r.cstr("tag").unwrap_err()),
            "the tag is not NUL-terminated"
        );
        assert_eq!(
            reason(r.bytes(2, "value").unwrap_err()),
            "the body ends inside the value (2 bytes needed, 1 remain)"
        );
        assert_eq!(r.bytes(1, "value").unwrap(), b"c");
        r.finish("value").unwrap();
    }

    #[test]
    fn utf8_errors_give_the_offset() {
        let mut r = Reader::new(b"ok\0a\xffb\0");
        assert_eq!(r.str("first").unwrap(), "ok");
        assert_eq!(
            reason(r.str("second").unwrap_err()),
            "the second is not valid UTF-8 (invalid byte at body offset 4)"
        );
    }

    #[test]
    fn infallible_reads() {
        let buf = [0x12, 0x34, 0x56, 0x78];
        assert_eq!(be_u16(&buf, 0), 0x1234);
        assert_eq!(be_i16(&buf, 2), 0x5678);
        assert_eq!(be_i32(&buf, 0), 0x1234_5678);
        assert_eq!(be_u32(&buf, 0), 0x1234_5678);
        assert_eq!(be_u32(&buf, 1), 0);
        assert_eq!(be_u16(&buf, 100), 0);
        assert_eq!(cstrs(b"a\0\0bc\0").collect::<Vec<_>>(), ["a", "", "bc"]);
        assert_eq!(cstrs(b"").count(), 0);
    }
}
