//! `macaddr` and `macaddr8`: [`MacAddr`] and [`MacAddr8`], with the text
//! forms PostgreSQL reads and writes.

use std::fmt::{self, Write as _};
use std::str::FromStr;

use bytes::BytesMut;
use pgpipe_proto::put::PutInline;

use super::NetError;
use crate::error::wrong_length;
use crate::{BoxError, Decode, Encode, IsNull, StaticType, Type, TypeRef};

/// A `macaddr` value: a 6-byte MAC address.
///
/// [`Display`](fmt::Display) gives PostgreSQL's form
/// (`08:00:2b:01:02:03`); [`FromStr`] takes the forms PostgreSQL takes:
/// `08:00:2b:01:02:03`, `08-00-2b-01-02-03`, `08002b:010203`,
/// `08002b-010203`, `0800.2b01.0203`, `0800-2b01-0203`, `08002b010203`.
///
/// ```
/// use pgpipe_types::MacAddr;
///
/// let m: MacAddr = "0800.2B01.0203".parse().unwrap();
/// assert_eq!(m, MacAddr([0x08, 0x00, 0x2b, 0x01, 0x02, 0x03]));
/// assert_eq!(m.to_string(), "08:00:2b:01:02:03");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct MacAddr(pub [u8; 6]);

/// A `macaddr8` value: an 8-byte (EUI-64) MAC address.
///
/// [`FromStr`] takes 8 (or, like PostgreSQL, 6) hex byte pairs, optionally
/// separated by one of `:`, `-` or `.` used throughout; a 6-byte address
/// becomes the EUI-64 `xx:xx:xx:ff:fe:xx:xx:xx`, as in PostgreSQL.
///
/// ```
/// use pgpipe_types::{MacAddr, MacAddr8};
///
/// let m: MacAddr8 = "08:00:2b:01:02:03".parse().unwrap();
/// assert_eq!(m.to_string(), "08:00:2b:ff:fe:01:02:03");
/// assert_eq!(m, MacAddr8::from(MacAddr([8, 0, 0x2b, 1, 2, 3])));
/// assert_eq!("0800-2b01-0203-0405".parse::<MacAddr8>().unwrap().0, [8, 0, 0x2b, 1, 2, 3, 4, 5]);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct MacAddr8(pub [u8; 8]);

impl From<MacAddr> for MacAddr8 {
    /// The EUI-64 form of a 6-byte address, as PostgreSQL's
    /// `macaddr::macaddr8` cast: `FF:FE` in the middle.
    fn from(m: MacAddr) -> MacAddr8 {
        let [a, b, c, d, e, f] = m.0;
        MacAddr8([a, b, c, 0xff, 0xfe, d, e, f])
    }
}

fn write_mac(f: &mut fmt::Formatter<'_>, bytes: &[u8]) -> fmt::Result {
    let mut s = String::with_capacity(bytes.len() * 3);
    for (i, b) in bytes.iter().enumerate() {
        if i > 0 {
            s.push(':');
        }
        let _ = write!(s, "{b:02x}");
    }
    f.pad(&s)
}

impl fmt::Display for MacAddr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write_mac(f, &self.0)
    }
}

impl fmt::Display for MacAddr8 {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write_mac(f, &self.0)
    }
}

fn hex_bytes(digits: &str) -> Option<Vec<u8>> {
    if digits.len() % 2 != 0 || !digits.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    (0..digits.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&digits[i..i + 2], 16).ok())
        .collect()
}

impl FromStr for MacAddr {
    type Err = NetError;

    fn from_str(s: &str) -> Result<MacAddr, NetError> {
        let invalid = || NetError::new(format!("invalid macaddr {s:?}"));
        let sep = s.chars().find(|c| !c.is_ascii_hexdigit());
        let groups: Vec<&str> = match sep {
            None => vec![s],
            Some(sep) => s.split(sep).collect(),
        };
        let allowed = matches!(
            (sep, groups.len()),
            (None, 1) | (Some(':' | '-'), 6 | 2) | (Some('.' | '-'), 3)
        );
        let width = 12 / groups.len().max(1);
        if !allowed || groups.iter().any(|g| g.len() != width) {
            return Err(invalid());
        }
        let bytes = hex_bytes(&groups.concat()).ok_or_else(invalid)?;
        Ok(MacAddr(bytes.try_into().map_err(|_| invalid())?))
    }
}

impl FromStr for MacAddr8 {
    type Err = NetError;

    fn from_str(s: &str) -> Result<MacAddr8, NetError> {
        let invalid = || NetError::new(format!("invalid macaddr8 {s:?}"));
        let sep = s.chars().find(|c| !c.is_ascii_hexdigit());
        if sep.is_some_and(|c| !matches!(c, ':' | '-' | '.')) {
            return Err(invalid());
        }
        let groups: Vec<&str> = match sep {
            None => vec![s],
            Some(sep) => s.split(sep).collect(),
        };
        if groups.iter().any(|g| g.is_empty()) {
            return Err(invalid());
        }
        let bytes = hex_bytes(&groups.concat()).ok_or_else(invalid)?;
        // Separators sit between byte pairs only.
        if groups.iter().any(|g| g.len() % 2 != 0) {
            return Err(invalid());
        }
        match bytes.len() {
            8 => Ok(MacAddr8(bytes.try_into().expect("8 bytes"))),
            6 => Ok(MacAddr8::from(MacAddr(bytes.try_into().expect("6 bytes")))),
            _ => Err(invalid()),
        }
    }
}

macro_rules! mac_codec {
    ($t:ident, $n:literal, $oid:literal, $ty:expr, $name:literal) => {
        impl StaticType for $t {
            const TYPE: TypeRef = TypeRef::Oid($oid);
        }

        impl Encode for $t {
            fn type_ref(&self) -> TypeRef {
                TypeRef::Oid($oid)
            }
            fn accepts(&self, ty: &Type) -> bool {
                ty.is(&[$ty])
            }
            fn encode(&self, _: &Type, buf: &mut BytesMut) -> Result<IsNull, BoxError> {
                buf.put_slice_inline(&self.0);
                Ok(IsNull::No)
            }
        }

        impl<'a> Decode<'a> for $t {
            fn accepts(ty: &Type) -> bool {
                ty.is(&[$ty])
            }
            fn decode(_: &Type, raw: &'a [u8]) -> Result<Self, BoxError> {
                let bytes: [u8; $n] = raw
                    .try_into()
                    .map_err(|_| wrong_length($name, $n, raw.len()))?;
                Ok($t(bytes))
            }
        }
    };
}

mac_codec!(MacAddr, 6, 829, Type::MACADDR, "macaddr");
mac_codec!(MacAddr8, 8, 774, Type::MACADDR8, "macaddr8");
