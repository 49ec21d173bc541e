//! `bit` and `varbit` (`bit varying`).

use pgpipe_proto::put::PutInline;
use std::fmt;
use std::str::FromStr;

use bytes::BytesMut;

use crate::{BoxError, Decode, Encode, IsNull, StaticType, Type, TypeRef};

/// A `bit` or `varbit` value: a string of bits, stored most significant bit
/// first in bytes, as PostgreSQL stores it.
///
/// The bits after the last one in the final byte are always zero (checked
/// by every constructor and by the decoder).
///
/// [`Display`](fmt::Display) prints PostgreSQL's text form (`0101`);
/// [`FromStr`] takes it too, and like PostgreSQL also `b0101` and hex
/// `x5f` (4 bits per digit).
///
/// ```
/// use pgpipe_types::BitString;
///
/// let b: BitString = "10110".parse().unwrap();
/// assert_eq!(b.len(), 5);
/// assert_eq!(b.as_bytes(), &[0b1011_0000]);
/// assert_eq!(b.get(2), Some(true));
/// assert_eq!(b.to_string(), "10110");
/// assert_eq!("xA1".parse::<BitString>().unwrap().to_string(), "10100001");
/// assert!(BitString::from_bytes(vec![0b1011_0001], 5).is_err()); // a trailing bit is set
/// ```
#[derive(Clone, PartialEq, Eq, Hash, Default)]
pub struct BitString {
    len: usize,
    bytes: Vec<u8>,
}

/// A bit string that is not valid: a byte count that does not match the bit
/// length, a set bit after the last one, or text that is not bits.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BitStringError {
    msg: String,
}

impl fmt::Display for BitStringError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.msg)
    }
}

impl std::error::Error for BitStringError {}

fn err(msg: String) -> BitStringError {
    BitStringError { msg }
}

impl BitString {
    /// An empty bit string.
    pub const fn new() -> BitString {
        BitString {
            len: 0,
            bytes: Vec::new(),
        }
    }

    /// The first `len` bits of `bytes`, most significant bit first. `bytes`
    /// must have exactly `len.div_ceil(8)` bytes, and the unused bits of the
    /// last byte must be zero.
    pub fn from_bytes(bytes: Vec<u8>, len: usize) -> Result<BitString, BitStringError> {
        if bytes.len() != len.div_ceil(8) {
            return Err(err(format!(
                "a bit string of {len} bits needs {} bytes, got {}",
                len.div_ceil(8),
                bytes.len()
            )));
        }
        let unused = bytes.len() * 8 - len;
        if let Some(last) = bytes.last() {
            if unused > 0 && last & ((1u8 << unused) - 1) != 0 {
                return Err(err(format!(
                    "a bit string of {len} bits has bits set after its end"
                )));
            }
        }
        Ok(BitString { len, bytes })
    }

    /// The number of bits.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether there are no bits.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The bit at `index` (0 is the first, leftmost), `None` past the end.
    pub fn get(&self, index: usize) -> Option<bool> {
        (index < self.len).then(|| self.bytes[index / 8] & (0x80 >> (index % 8)) != 0)
    }

    /// Appends a bit.
    pub fn push(&mut self, bit: bool) {
        if self.len % 8 == 0 {
            self.bytes.push(0);
        }
        if bit {
            let last = self.bytes.len() - 1;
            self.bytes[last] |= 0x80 >> (self.len % 8);
        }
        self.len += 1;
    }

    /// The bits in order.
    pub fn iter(&self) -> impl Iterator<Item = bool> + '_ {
        (0..self.len).map(|i| self.bytes[i / 8] & (0x80 >> (i % 8)) != 0)
    }

    /// The bytes holding the bits, most significant bit first, with the
    /// unused bits of the last byte zero.
    pub fn as_bytes(&self) -> &[u8] {
        &self.bytes
    }

    /// The bytes holding the bits (see [`as_bytes`](BitString::as_bytes)).
    pub fn into_bytes(self) -> Vec<u8> {
        self.bytes
    }
}

impl FromIterator<bool> for BitString {
    fn from_iter<I: IntoIterator<Item = bool>>(iter: I) -> BitString {
        let mut b = BitString::new();
        for bit in iter {
            b.push(bit);
        }
        b
    }
}

impl fmt::Display for BitString {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let s: String = self.iter().map(|b| if b { '1' } else { '0' }).collect();
        f.pad(&s)
    }
}

impl fmt::Debug for BitString {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "BitString({self})")
    }
}

impl FromStr for BitString {
    type Err = BitStringError;

    fn from_str(s: &str) -> Result<BitString, BitStringError> {
        let (hex, body) = match s.as_bytes().first() {
            Some(b'x' | b'X') => (true, &s[1..]),
            Some(b'b' | b'B') => (false, &s[1..]),
            _ => (false, s),
        };
        let mut bits = BitString::new();
        for c in body.chars() {
            if hex {
                let d = c.to_digit(16).ok_or_else(|| {
                    err(format!("{c:?} is not a valid hexadecimal digit in {s:?}"))
                })?;
                for shift in (0..4).rev() {
                    bits.push(d >> shift & 1 == 1);
                }
            } else {
                match c {
                    '0' => bits.push(false),
                    '1' => bits.push(true),
                    _ => return Err(err(format!("{c:?} is not a valid binary digit in {s:?}"))),
                }
            }
        }
        Ok(bits)
    }
}

impl StaticType for BitString {
    const TYPE: TypeRef = TypeRef::Oid(1562);
}

impl Encode for BitString {
    fn type_ref(&self) -> TypeRef {
        TypeRef::Oid(1562)
    }
    fn accepts(&self, ty: &Type) -> bool {
        ty.is(&[Type::BIT, Type::VARBIT])
    }
    fn encode(&self, _: &Type, buf: &mut BytesMut) -> Result<IsNull, BoxError> {
        let len = i32::try_from(self.len).map_err(|_| {
            format!(
                "a bit string of {} bits is too long for PostgreSQL",
                self.len
            )
        })?;
        buf.reserve(4 + self.bytes.len());
        buf.put_i32_inline(len);
        buf.put_slice_inline(&self.bytes);
        Ok(IsNull::No)
    }
}

impl<'a> Decode<'a> for BitString {
    fn accepts(ty: &Type) -> bool {
        ty.is(&[Type::BIT, Type::VARBIT])
    }
    fn decode(ty: &Type, raw: &'a [u8]) -> Result<Self, BoxError> {
        let Some((len, bytes)) = raw.split_first_chunk::<4>() else {
            return Err(format!(
                "invalid binary {ty} value: expected at least 4 bytes, got {}",
                raw.len()
            )
            .into());
        };
        let len = i32::from_be_bytes(*len);
        let len = usize::try_from(len)
            .map_err(|_| format!("invalid binary {ty} value: negative bit length {len}"))?;
        BitString::from_bytes(bytes.to_vec(), len)
            .map_err(|e| format!("invalid binary {ty} value: {e}").into())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn binary_round_trip() {
        for s in [
            "",
            "0",
            "1",
            "10110",
            "11111111",
            "101100111",
            &"10".repeat(100),
        ] {
            let b: BitString = s.parse().unwrap();
            let mut buf = BytesMut::new();
            b.encode(&Type::VARBIT, &mut buf).unwrap();
            assert_eq!(&buf[..4], &(s.len() as i32).to_be_bytes());
            assert_eq!(buf.len(), 4 + s.len().div_ceil(8));
            let back = BitString::decode(&Type::BIT, &buf).unwrap();
            assert_eq!(back, b);
            assert_eq!(back.to_string(), s);
        }
    }

    #[test]
    fn malformed_binary_is_an_error() {
        for (raw, want) in [
            (&[0u8, 0, 0][..], "at least 4 bytes, got 3"),
            (&[0xff, 0xff, 0xff, 0xff], "negative bit length -1"),
            (&[0, 0, 0, 9, 0xff], "9 bits needs 2 bytes, got 1"),
            (&[0, 0, 0, 1, 0x80, 0], "1 bits needs 1 bytes, got 2"),
            (&[0, 0, 0, 3, 0xf0], "bits set after its end"),
            (&[0x7f, 0xff, 0xff, 0xff], "needs 268435456 bytes, got 0"),
        ] {
            let e = BitString::decode(&Type::VARBIT, raw)
                .unwrap_err()
                .to_string();
            assert!(e.contains(want), "{e:?} vs {want:?}");
        }
    }

    #[test]
    fn text_forms() {
        assert_eq!("B101".parse::<BitString>().unwrap().to_string(), "101");
        assert_eq!("x0F".parse::<BitString>().unwrap().to_string(), "00001111");
        assert!("102".parse::<BitString>().is_err());
        assert!("xG".parse::<BitString>().is_err());
        let b: BitString = [true, false, true].into_iter().collect();
        assert_eq!(b.to_string(), "101");
        assert_eq!(b.get(3), None);
        assert_eq!(format!("{b:?}"), "BitString(101)");
        assert!(!<BitString as Decode>::accepts(&Type::BYTEA));
    }
}
