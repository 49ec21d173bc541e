//! The binary COPY format (`COPY ... (FORMAT binary)`): the file header and
//! trailer, and a decoder that cuts a stream of CopyData payloads into
//! tuples.
//!
//! A tuple is an `i16` field count followed by each field as an `i32`
//! length (-1 for NULL) and its bytes: exactly the body of a DataRow, so
//! a decoded tuple can be read like a row. Tuples are handed out as
//! zero-copy slices of the input when they do not span payloads.

use bytes::{Buf, BufMut, Bytes, BytesMut};

/// The 11-byte signature that starts a binary COPY stream.
pub const SIGNATURE: &[u8; 11] = b"PGCOPY\n\xff\r\n\0";

/// Appends the file header: signature, flags (0: no OIDs) and an empty
/// header extension.
pub fn write_header(buf: &mut BytesMut) {
    buf.put_slice(SIGNATURE);
    buf.put_i32(0);
    buf.put_i32(0);
}

/// Appends the file trailer (a field count of -1).
pub fn write_trailer(buf: &mut BytesMut) {
    buf.put_i16(-1);
}

/// Why a binary COPY stream could not be decoded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CopyFormatError(String);

impl std::fmt::Display for CopyFormatError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "malformed binary COPY data: {}", self.0)
    }
}

impl std::error::Error for CopyFormatError {}

fn malformed(what: impl Into<String>) -> CopyFormatError {
    CopyFormatError(what.into())
}

/// Cuts binary COPY data into tuples, whatever the payload boundaries.
#[derive(Debug, Default)]
pub struct BinaryDecoder {
    header_done: bool,
    trailer_seen: bool,
    /// The start of a tuple (or the header) whose rest has not arrived.
    carry: BytesMut,
}

impl BinaryDecoder {
    /// A decoder at the start of a stream.
    pub fn new() -> BinaryDecoder {
        BinaryDecoder::default()
    }

    /// Whether the trailer has been seen (the stream is complete).
    pub fn is_finished(&self) -> bool {
        self.trailer_seen
    }

    /// Feeds one CopyData payload; calls `tuple` with each complete tuple
    /// (its `i16` count and fields).
    pub fn feed<E>(
        &mut self,
        chunk: Bytes,
        mut tuple: impl FnMut(Bytes) -> Result<(), E>,
    ) -> Result<Result<(), E>, CopyFormatError> {
        let mut data = if self.carry.is_empty() {
            chunk
        } else {
            self.carry.extend_from_slice(&chunk);
            self.carry.split().freeze()
        };
        loop {
            if data.is_empty() {
                return Ok(Ok(()));
            }
            if self.trailer_seen {
                return Err(malformed(format!("{} bytes after the trailer", data.len())));
            }
            if !self.header_done {
                match header_len(&data)? {
                    Some(n) => {
                        data.advance(n);
                        self.header_done = true;
                        continue;
                    }
                    None => break,
                }
            }
            match tuple_len(&data)? {
                Some(TupleLen::Trailer) => {
                    data.advance(2);
                    self.trailer_seen = true;
                }
                Some(TupleLen::Tuple(n)) => {
                    if let Err(e) = tuple(data.split_to(n)) {
                        return Ok(Err(e));
                    }
                }
                None => break,
            }
        }
        self.carry.extend_from_slice(&data);
        Ok(Ok(()))
    }

    /// Checks that the stream ended cleanly (after its trailer, with no
    /// partial tuple left).
    pub fn finish(&self) -> Result<(), CopyFormatError> {
        if !self.carry.is_empty() {
            return Err(malformed(format!(
                "the data ended inside a tuple ({} bytes left over)",
                self.carry.len()
            )));
        }
        if !self.trailer_seen {
            return Err(malformed("the data ended without the trailer"));
        }
        Ok(())
    }
}

/// The header's length once all of it is present.
fn header_len(data: &[u8]) -> Result<Option<usize>, CopyFormatError> {
    let prefix = data.len().min(SIGNATURE.len());
    if data[..prefix] != SIGNATURE[..prefix] {
        return Err(malformed("the header signature is wrong"));
    }
    if data.len() < 19 {
        return Ok(None);
    }
    let flags = u32::from_be_bytes([data[11], data[12], data[13], data[14]]);
    if flags & (1 << 16) != 0 {
        return Err(malformed("the data carries OIDs, which are not supported"));
    }
    let ext = i32::from_be_bytes([data[15], data[16], data[17], data[18]]);
    let ext = usize::try_from(ext).map_err(|_| malformed("negative header extension length"))?;
    let total = 19usize
        .checked_add(ext)
        .ok_or_else(|| malformed("header extension too long"))?;
    Ok((data.len() >= total).then_some(total))
}

enum TupleLen {
    Trailer,
    Tuple(usize),
}

fn tuple_len(data: &[u8]) -> Result<Option<TupleLen>, CopyFormatError> {
    if data.len() < 2 {
        return Ok(None);
    }
    let count = i16::from_be_bytes([data[0], data[1]]);
    if count == -1 {
        return Ok(Some(TupleLen::Trailer));
    }
    if count < 0 {
        return Err(malformed(format!("negative field count {count}")));
    }
    let mut at = 2usize;
    for _ in 0..count {
        let Some(len) = data.get(at..at + 4) else {
            return Ok(None);
        };
        let len = i32::from_be_bytes([len[0], len[1], len[2], len[3]]);
        at += 4;
        if len < -1 {
            return Err(malformed(format!("field length {len}")));
        }
        if len > 0 {
            at = at
                .checked_add(len as usize)
                .ok_or_else(|| malformed("field too long"))?;
        }
        if at > data.len() {
            return Ok(None);
        }
    }
    Ok(Some(TupleLen::Tuple(at)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stream() -> Vec<u8> {
        let mut buf = BytesMut::new();
        write_header(&mut buf);
        // (1, NULL), ("ab")
        buf.put_i16(2);
        buf.put_i32(4);
        buf.put_i32(1);
        buf.put_i32(-1);
        buf.put_i16(1);
        buf.put_i32(2);
        buf.put_slice(b"ab");
        write_trailer(&mut buf);
        buf.to_vec()
    }

    fn decode_in_pieces(data: &[u8], piece: usize) -> Vec<Vec<u8>> {
        let mut d = BinaryDecoder::new();
        let mut out = Vec::new();
        for chunk in data.chunks(piece) {
            d.feed(Bytes::copy_from_slice(chunk), |t| {
                out.push(t.to_vec());
                Ok::<(), ()>(())
            })
            .unwrap()
            .unwrap();
        }
        d.finish().unwrap();
        out
    }

    #[test]
    fn tuples_come_out_whole_whatever_the_split() {
        let data = stream();
        let whole = decode_in_pieces(&data, data.len());
        assert_eq!(whole.len(), 2);
        assert_eq!(whole[1], [0, 1, 0, 0, 0, 2, b'a', b'b']);
        for piece in 1..data.len() {
            assert_eq!(decode_in_pieces(&data, piece), whole, "piece size {piece}");
        }
    }

    #[test]
    fn bad_input_is_an_error_not_a_panic() {
        let mut d = BinaryDecoder::new();
        assert!(d
            .feed(Bytes::from_static(b"NOTCOPY"), |_| Ok::<(), ()>(()))
            .is_err());
        let mut data = stream();
        data[19] = 0x80; // negative field count
        let mut d = BinaryDecoder::new();
        assert!(d.feed(Bytes::from(data), |_| Ok::<(), ()>(())).is_err());
        let data = stream();
        let mut d = BinaryDecoder::new();
        d.feed(Bytes::copy_from_slice(&data[..25]), |_| Ok::<(), ()>(()))
            .unwrap()
            .unwrap();
        assert!(d.finish().is_err());
        let mut d = BinaryDecoder::new();
        let mut extra = stream();
        extra.push(0);
        assert!(d.feed(Bytes::from(extra), |_| Ok::<(), ()>(())).is_err());
    }
}
