//! Big-endian writes into a [`BytesMut`] that compile to plain stores.
//!
//! `BufMut::put_slice` is not `#[inline]` for `BytesMut` (bytes 1.12), and
//! `put_i32`, `put_i64` and friends go through it, so in a large binary
//! each one becomes a call plus a `memcpy` of a length the compiler no
//! longer knows. `BytesMut::extend_from_slice` is `#[inline]`: through it
//! a fixed-size write is a capacity check and one store. Every value of a
//! Bind message or a binary COPY row is written this way, so the encoders
//! on those paths use these methods.

use bytes::BytesMut;

/// Inlined big-endian writes; see the module documentation.
pub trait PutInline {
    /// Appends one byte.
    fn put_u8_inline(&mut self, v: u8);
    /// Appends a big-endian `i16`.
    fn put_i16_inline(&mut self, v: i16);
    /// Appends a big-endian `u16`.
    fn put_u16_inline(&mut self, v: u16);
    /// Appends a big-endian `i32`.
    fn put_i32_inline(&mut self, v: i32);
    /// Appends a big-endian `u32`.
    fn put_u32_inline(&mut self, v: u32);
    /// Appends a big-endian `i64`.
    fn put_i64_inline(&mut self, v: i64);
    /// Appends a big-endian `f32`.
    fn put_f32_inline(&mut self, v: f32);
    /// Appends a big-endian `f64`.
    fn put_f64_inline(&mut self, v: f64);
    /// Appends `bytes`.
    fn put_slice_inline(&mut self, bytes: &[u8]);
}

impl PutInline for BytesMut {
    #[inline(always)]
    fn put_u8_inline(&mut self, v: u8) {
        self.extend_from_slice(&[v]);
    }
    #[inline(always)]
    fn put_i16_inline(&mut self, v: i16) {
        self.extend_from_slice(&v.to_be_bytes());
    }
    #[inline(always)]
    fn put_u16_inline(&mut self, v: u16) {
        self.extend_from_slice(&v.to_be_bytes());
    }
    #[inline(always)]
    fn put_i32_inline(&mut self, v: i32) {
        self.extend_from_slice(&v.to_be_bytes());
    }
    #[inline(always)]
    fn put_u32_inline(&mut self, v: u32) {
        self.extend_from_slice(&v.to_be_bytes());
    }
    #[inline(always)]
    fn put_i64_inline(&mut self, v: i64) {
        self.extend_from_slice(&v.to_be_bytes());
    }
    #[inline(always)]
    fn put_f32_inline(&mut self, v: f32) {
        self.extend_from_slice(&v.to_be_bytes());
    }
    #[inline(always)]
    fn put_f64_inline(&mut self, v: f64) {
        self.extend_from_slice(&v.to_be_bytes());
    }
    #[inline(always)]
    fn put_slice_inline(&mut self, bytes: &[u8]) {
        self.extend_from_slice(bytes);
    }
}

#[cfg(test)]
mod tests {
    use bytes::BufMut;

    use super::*;

    #[test]
    fn writes_the_same_bytes_as_buf_mut() {
        let mut ours = BytesMut::new();
        let mut theirs = BytesMut::new();
        ours.put_u8_inline(7);
        theirs.put_u8(7);
        ours.put_i16_inline(-2);
        theirs.put_i16(-2);
        ours.put_u16_inline(65_000);
        theirs.put_u16(65_000);
        ours.put_i32_inline(-70_000);
        theirs.put_i32(-70_000);
        ours.put_u32_inline(4_000_000_000);
        theirs.put_u32(4_000_000_000);
        ours.put_i64_inline(i64::MIN + 3);
        theirs.put_i64(i64::MIN + 3);
        ours.put_f32_inline(1.5);
        theirs.put_f32(1.5);
        ours.put_f64_inline(-0.25);
        theirs.put_f64(-0.25);
        ours.put_slice_inline(b"abc");
        theirs.put_slice(b"abc");
        assert_eq!(ours, theirs);
    }
}
