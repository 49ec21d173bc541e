//! Multiranges (PostgreSQL 14+) as [`Multirange<T>`]: a count, then each
//! range as length and the range's bytes.

use std::fmt;

use bytes::BytesMut;
use pgpipe_proto::put::PutInline;

use super::{
    bounds_accept, multirange_type_of, range_of_multirange, range_type_of, subtype_of, Range,
};
use crate::{BoxError, Decode, Encode, IsNull, StaticType, Type, TypeRef};

/// A PostgreSQL multirange (PostgreSQL 14+): an ordered list of
/// non-overlapping ranges, as the server normalizes it.
///
/// `Vec<Range<T>>` is an array of ranges (`int4range[]`); a multirange is
/// its own type.
///
/// ```
/// use pgpipe_types::{Multirange, Range, StaticType, TypeRef};
///
/// let m = Multirange(vec![Range::from(1..3), Range::from(5..7)]);
/// assert_eq!(m.to_string(), "{[1,3),[5,7)}");
/// assert_eq!(<Multirange<i64> as StaticType>::TYPE, TypeRef::Oid(4536)); // int8multirange
/// assert_eq!(<Vec<Range<i64>> as StaticType>::TYPE, TypeRef::Oid(3927)); // int8range[]
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct Multirange<T>(pub Vec<Range<T>>);

impl<T> Multirange<T> {
    /// The ranges in order.
    pub fn ranges(&self) -> &[Range<T>] {
        &self.0
    }

    /// Whether there are no ranges (the empty multirange, `'{}'`).
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl<T> From<Vec<Range<T>>> for Multirange<T> {
    fn from(ranges: Vec<Range<T>>) -> Self {
        Multirange(ranges)
    }
}

impl<T> FromIterator<Range<T>> for Multirange<T> {
    fn from_iter<I: IntoIterator<Item = Range<T>>>(iter: I) -> Self {
        Multirange(iter.into_iter().collect())
    }
}

impl<T> IntoIterator for Multirange<T> {
    type Item = Range<T>;
    type IntoIter = std::vec::IntoIter<Range<T>>;
    fn into_iter(self) -> Self::IntoIter {
        self.0.into_iter()
    }
}

impl<T: fmt::Display> fmt::Display for Multirange<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("{")?;
        for (i, r) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str(",")?;
            }
            write!(f, "{r}")?;
        }
        f.write_str("}")
    }
}

impl<T: StaticType> StaticType for Multirange<T> {
    const TYPE: TypeRef = multirange_type_of(T::TYPE);
}

impl<T: Encode + StaticType> Encode for Multirange<T> {
    fn type_ref(&self) -> TypeRef {
        multirange_type_of(T::TYPE)
    }
    fn accepts(&self, ty: &Type) -> bool {
        let Some(sub) = range_of_multirange(ty).and_then(subtype_of) else {
            return false;
        };
        if self.0.is_empty() {
            return T::TYPE.matches(sub);
        }
        self.0.iter().all(|r| bounds_accept(r, sub))
    }
    fn encode(&self, ty: &Type, buf: &mut BytesMut) -> Result<IsNull, BoxError> {
        let fallback;
        let range_type = match range_of_multirange(ty) {
            Some(r) => r,
            // Like a range, a multirange carries no type OIDs on the wire:
            // for an undescribed parameter type the ranges are encoded for
            // `T`'s built-in range type (or, failing that, `T`'s own type).
            None if !ty.is_known() => {
                fallback = Type::from_oid(range_type_of(T::TYPE).oid());
                &fallback
            }
            None => {
                return Err(format!(
                    "{} is a multirange and cannot be sent as {ty}, which is not a multirange type",
                    self.rust_type()
                )
                .into())
            }
        };
        let count = i32::try_from(self.0.len()).map_err(|_| -> BoxError {
            format!("{} ranges are more than a {ty} can hold", self.0.len()).into()
        })?;
        buf.put_i32_inline(count);
        for (i, range) in self.0.iter().enumerate() {
            let len_at = buf.len();
            buf.put_i32_inline(0);
            range
                .encode(range_type, buf)
                .map_err(|e| -> BoxError { format!("{ty} range {}: {e}", i + 1).into() })?;
            let len = buf.len() - len_at - 4;
            let len = i32::try_from(len).map_err(|_| -> BoxError {
                format!(
                    "{ty} range {}: {len} bytes is more than a value can hold",
                    i + 1
                )
                .into()
            })?;
            buf[len_at..len_at + 4].copy_from_slice(&len.to_be_bytes());
        }
        Ok(IsNull::No)
    }
}

/// Any multirange type whose ranges' subtype `T` reads.
impl<'a, T: Decode<'a>> Decode<'a> for Multirange<T> {
    fn accepts(ty: &Type) -> bool {
        range_of_multirange(ty).is_some_and(<Range<T> as Decode>::accepts)
    }
    fn decode(ty: &Type, raw: &'a [u8]) -> Result<Self, BoxError> {
        let range_type = range_of_multirange(ty).ok_or_else(|| -> BoxError {
            format!("{ty} is not a known multirange type, so its range type is unknown").into()
        })?;
        if raw.len() < 4 {
            return Err(format!(
                "invalid binary {ty} value: needs a 4-byte range count, got {} bytes",
                raw.len()
            )
            .into());
        }
        let count = i32::from_be_bytes([raw[0], raw[1], raw[2], raw[3]]);
        let mut rest = &raw[4..];
        // Each range takes at least its length word and a flags byte.
        let count = match usize::try_from(count) {
            Ok(n) if n <= rest.len() / 5 => n,
            _ => {
                return Err(format!(
                    "invalid binary {ty} value: range count {count} does not fit the {} bytes that follow",
                    rest.len()
                )
                .into())
            }
        };
        let mut ranges = Vec::with_capacity(count);
        for i in 0..count {
            let len =
                i32::from_be_bytes(rest.get(..4).and_then(|b| b.try_into().ok()).ok_or_else(
                    || -> BoxError {
                        format!(
                            "invalid binary {ty} value: truncated before range {}",
                            i + 1
                        )
                        .into()
                    },
                )?);
            let value = usize::try_from(len)
                .ok()
                .and_then(|len| rest[4..].get(..len))
                .ok_or_else(|| -> BoxError {
                    format!(
                        "invalid binary {ty} value: range {} length is {len} but {} bytes are left",
                        i + 1,
                        rest.len() - 4
                    )
                    .into()
                })?;
            rest = &rest[4 + value.len()..];
            ranges.push(
                Range::decode(range_type, value)
                    .map_err(|e| -> BoxError { format!("{ty} range {}: {e}", i + 1).into() })?,
            );
        }
        if !rest.is_empty() {
            return Err(format!(
                "invalid binary {ty} value: {} bytes left after {count} ranges",
                rest.len()
            )
            .into());
        }
        Ok(Multirange(ranges))
    }
}
