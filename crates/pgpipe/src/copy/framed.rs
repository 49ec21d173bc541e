//! [`Framed`]: COPY data gathered behind room for its CopyData header, so
//! that a full chunk becomes a message by writing five bytes in front of
//! it, and the buffer itself can become the connection's write buffer
//! (no copy of the data on the way to the socket).

use bytes::{Buf, BytesMut};

/// The CopyData message's type byte and length.
const HEADER: usize = 5;

/// Data not yet sent, with a CopyData header slot at the front.
#[derive(Debug)]
pub(crate) struct Framed {
    buf: BytesMut,
}

impl Framed {
    pub(crate) fn new() -> Framed {
        let mut framed = Framed {
            buf: BytesMut::new(),
        };
        framed.reset();
        framed
    }

    /// Bytes of data gathered (the header slot not counted).
    #[inline]
    pub(crate) fn data_len(&self) -> usize {
        self.buf.len() - HEADER
    }

    /// The buffer to append data to. Only appending (and truncating back
    /// to a length it had) keeps the header slot intact.
    #[inline]
    pub(crate) fn append(&mut self) -> &mut BytesMut {
        &mut self.buf
    }

    /// The first `n` bytes of data.
    pub(crate) fn data(&self, n: usize) -> &[u8] {
        &self.buf[HEADER..HEADER + n]
    }

    /// Forgets the first `n` bytes of data (already sent some other way).
    /// The last bytes of what is forgotten become the next header slot, so
    /// nothing is moved.
    pub(crate) fn consume(&mut self, n: usize) {
        self.buf.advance(n);
    }

    /// Writes the header for all the data gathered and returns the whole
    /// CopyData message, for the caller to take (by swapping it out) or
    /// copy. The caller then calls [`reset`](Self::reset).
    pub(crate) fn frame_all(&mut self) -> &mut BytesMut {
        // Fits: the caller keeps messages under the protocol's limit,
        // which is below i32::MAX.
        let len = (self.data_len() + 4) as i32;
        self.buf[0] = b'd';
        self.buf[1..HEADER].copy_from_slice(&len.to_be_bytes());
        &mut self.buf
    }

    /// Makes the buffer empty but for a fresh header slot: drops the
    /// gathered data, or follows a message taken or copied (the buffer may
    /// be another one now).
    pub(crate) fn reset(&mut self) {
        self.buf.clear();
        self.buf.extend_from_slice(&[0; HEADER]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_all_data_as_one_copy_data_message() {
        let mut f = Framed::new();
        assert_eq!(f.data_len(), 0);
        f.append().extend_from_slice(b"abc");
        assert_eq!(f.data_len(), 3);
        assert_eq!(&f.frame_all()[..], b"d\0\0\0\x07abc");
        f.reset();
        assert_eq!(f.data_len(), 0);
        f.append().extend_from_slice(b"x");
        assert_eq!(&f.frame_all()[..], b"d\0\0\0\x05x");
    }

    #[test]
    fn consuming_keeps_a_header_slot_in_front_of_the_rest() {
        let mut f = Framed::new();
        f.append().extend_from_slice(b"0123456789");
        assert_eq!(f.data(4), b"0123");
        f.consume(4);
        assert_eq!(f.data_len(), 6);
        assert_eq!(f.data(6), b"456789");
        assert_eq!(&f.frame_all()[..], b"d\0\0\0\x0a456789");
    }

    #[test]
    fn reset_drops_the_data() {
        let mut f = Framed::new();
        f.append().extend_from_slice(b"abc");
        f.reset();
        assert_eq!(f.data_len(), 0);
        assert_eq!(&f.frame_all()[..], b"d\0\0\0\x04");
    }
}
