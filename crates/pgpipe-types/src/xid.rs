//! Row and transaction identifiers: `tid` ([`Tid`]), `xid` ([`Xid`]),
//! `xid8` ([`Xid8`]) and `cid` ([`Cid`]).
//!
//! Each is its own Rust type rather than a bare integer: an `xid` wraps
//! around and compares only modulo 2^32 on the server, so treating it as
//! a number is usually a bug, and `u32` already means `oid` here.

use std::fmt;

use bytes::BytesMut;
use pgpipe_proto::frontend::ParamWriter;
use pgpipe_proto::put::PutInline;
use pgpipe_proto::EncodeError;

use crate::error::wrong_length;
use crate::{BoxError, Decode, Encode, IsNull, StaticType, Type, TypeRef};

macro_rules! id_type {
    ($(#[$doc:meta])* $name:ident($int:ty), $pg:literal, $oid:literal, $ty:ident) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
        pub struct $name(pub $int);

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                fmt::Display::fmt(&self.0, f)
            }
        }

        impl StaticType for $name {
            const TYPE: TypeRef = TypeRef::Oid($oid);
        }

        impl Encode for $name {
            fn type_ref(&self) -> TypeRef {
                Self::TYPE
            }
            fn accepts(&self, ty: &Type) -> bool {
                ty.is(&[Type::$ty])
            }
            #[inline]
            fn accepts_all_values(&self, ty: &Type) -> bool {
                // Which values fit depends on the type alone.
                self.accepts(ty)
            }
            fn encode(&self, _: &Type, buf: &mut BytesMut) -> Result<IsNull, BoxError> {
                buf.put_slice_inline(&self.0.to_be_bytes());
                Ok(IsNull::No)
            }
            #[inline]
            fn write_to(&self, _: &Type, writer: &mut ParamWriter<'_>) -> Result<(), EncodeError> {
                writer.write_fixed(Ok(self.0.to_be_bytes()))
            }
        }

        impl<'a> Decode<'a> for $name {
            fn accepts(ty: &Type) -> bool {
                ty.is(&[Type::$ty])
            }
            fn decode(_: &Type, raw: &'a [u8]) -> Result<Self, BoxError> {
                const N: usize = std::mem::size_of::<$int>();
                let bytes: [u8; N] = raw
                    .try_into()
                    .map_err(|_| wrong_length($pg, N, raw.len()))?;
                Ok($name(<$int>::from_be_bytes(bytes)))
            }
        }
    };
}

id_type!(
    /// A PostgreSQL `xid`: a 32-bit transaction ID as the server stores it
    /// in rows (`xmin`, `xmax`); it wraps around, so order two only through
    /// the server (`age()`), or use [`Xid8`].
    ///
    /// ```
    /// use pgpipe_types::Xid;
    /// assert_eq!(Xid(742).to_string(), "742");
    /// ```
    Xid(u32), "xid", 28, XID
);

id_type!(
    /// A PostgreSQL `xid8`: a 64-bit transaction ID that never wraps
    /// (`pg_current_xact_id()`, PostgreSQL 13+); its low 32 bits are the
    /// [`Xid`] of the same transaction.
    ///
    /// ```
    /// use pgpipe_types::{Xid, Xid8};
    /// let x = Xid8((3 << 32) | 742);
    /// assert_eq!(x.xid(), Xid(742));
    /// assert_eq!(x.to_string(), "12884902630");
    /// ```
    Xid8(u64), "xid8", 5069, XID8
);

id_type!(
    /// A PostgreSQL `cid`: a command ID within a transaction (the `cmin`
    /// and `cmax` system columns).
    ///
    /// ```
    /// use pgpipe_types::Cid;
    /// assert_eq!(Cid(3).to_string(), "3");
    /// ```
    Cid(u32), "cid", 29, CID
);

impl Xid8 {
    /// The 32-bit [`Xid`] of the same transaction (the epoch dropped),
    /// as the server's `xid8::xid` cast gives it.
    pub const fn xid(self) -> Xid {
        Xid(self.0 as u32)
    }
}

impl PartialOrd for Xid8 {
    fn partial_cmp(&self, other: &Xid8) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Xid8 {
    /// `xid8` values never wrap, so they order as numbers (as on the server).
    fn cmp(&self, other: &Xid8) -> std::cmp::Ordering {
        self.0.cmp(&other.0)
    }
}

/// A PostgreSQL `tid`: the physical location of a row version (the `ctid`
/// system column), a block number and an item offset within the block.
///
/// [`Display`](fmt::Display) writes PostgreSQL's `(block,offset)` text.
///
/// ```
/// use pgpipe_types::Tid;
/// let t = Tid::new(4294967295, 7);
/// assert_eq!(t.to_string(), "(4294967295,7)");
/// assert!(Tid::new(0, 2) > Tid::new(0, 1));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Tid {
    /// The block number.
    pub block: u32,
    /// The item (line pointer) number within the block, from 1.
    pub offset: u16,
}

impl Tid {
    /// The row version at item `offset` of block `block`.
    pub const fn new(block: u32, offset: u16) -> Tid {
        Tid { block, offset }
    }

    fn to_bytes(self) -> [u8; 6] {
        let mut out = [0; 6];
        out[..4].copy_from_slice(&self.block.to_be_bytes());
        out[4..].copy_from_slice(&self.offset.to_be_bytes());
        out
    }
}

impl fmt::Display for Tid {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "({},{})", self.block, self.offset)
    }
}

impl StaticType for Tid {
    const TYPE: TypeRef = TypeRef::Oid(27);
}

impl Encode for Tid {
    fn type_ref(&self) -> TypeRef {
        Self::TYPE
    }
    fn accepts(&self, ty: &Type) -> bool {
        ty.is(&[Type::TID])
    }
    #[inline]
    fn accepts_all_values(&self, ty: &Type) -> bool {
        // Which values fit depends on the type alone.
        self.accepts(ty)
    }
    fn encode(&self, _: &Type, buf: &mut BytesMut) -> Result<IsNull, BoxError> {
        buf.put_slice_inline(&self.to_bytes());
        Ok(IsNull::No)
    }
    #[inline]
    fn write_to(&self, _: &Type, writer: &mut ParamWriter<'_>) -> Result<(), EncodeError> {
        writer.write_fixed(Ok(self.to_bytes()))
    }
}

impl<'a> Decode<'a> for Tid {
    fn accepts(ty: &Type) -> bool {
        ty.is(&[Type::TID])
    }
    fn decode(_: &Type, raw: &'a [u8]) -> Result<Self, BoxError> {
        let bytes: [u8; 6] = raw
            .try_into()
            .map_err(|_| wrong_length("tid", 6, raw.len()))?;
        Ok(Tid {
            block: u32::from_be_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]),
            offset: u16::from_be_bytes([bytes[4], bytes[5]]),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bytes<T: Encode>(v: T, ty: &Type) -> Vec<u8> {
        let mut buf = BytesMut::new();
        v.encode(ty, &mut buf).unwrap();
        buf.to_vec()
    }

    #[test]
    fn binary_layouts() {
        assert_eq!(
            bytes(Tid::new(0x0102_0304, 0x0506), &Type::TID),
            [1, 2, 3, 4, 5, 6]
        );
        assert_eq!(
            Tid::decode(&Type::TID, &[1, 2, 3, 4, 5, 6]).unwrap(),
            Tid::new(0x0102_0304, 0x0506)
        );
        assert_eq!(bytes(Xid(u32::MAX), &Type::XID), [255; 4]);
        assert_eq!(Xid::decode(&Type::XID, &[0, 0, 1, 0]).unwrap(), Xid(256));
        assert_eq!(bytes(Xid8(u64::MAX), &Type::XID8), [255; 8]);
        assert_eq!(
            Xid8::decode(&Type::XID8, &[0, 0, 0, 1, 0, 0, 0, 2]).unwrap(),
            Xid8((1 << 32) | 2)
        );
        assert_eq!(Cid::decode(&Type::CID, &[0, 0, 0, 9]).unwrap(), Cid(9));
    }

    #[test]
    fn wrong_lengths_and_types() {
        let err = Tid::decode(&Type::TID, &[0; 8]).unwrap_err();
        assert!(
            err.to_string()
                .contains("tid value: expected 6 bytes, got 8"),
            "{err}"
        );
        let err = Xid8::decode(&Type::XID8, &[0; 4]).unwrap_err();
        assert!(
            err.to_string()
                .contains("xid8 value: expected 8 bytes, got 4"),
            "{err}"
        );
        assert!(Xid::decode(&Type::XID, &[0; 3]).is_err());
        assert!(Cid::decode(&Type::CID, &[]).is_err());
        assert!(!<Xid as Decode>::accepts(&Type::OID));
        assert!(!<Xid as Decode>::accepts(&Type::CID));
        assert!(!<u32 as Decode>::accepts(&Type::XID));
        assert!(!Xid8(1).accepts(&Type::INT8));
    }
}
