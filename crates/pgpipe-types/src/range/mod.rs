//! Ranges (`int4range`, `int8range`, `numrange`, `daterange`, `tsrange`,
//! `tstzrange` and user-defined ones) as [`Range<T>`], multiranges
//! (PostgreSQL 14+) as [`Multirange<T>`].
//!
//! Binary format of a range: a flags byte, then the lower bound (length
//! `i32` and bytes) unless it is infinite, then the upper bound likewise.
//! A multirange is a count `i32`, then each range as length `i32` and the
//! range's bytes.
//!
//! Discrete ranges come back from the server in canonical form: `[1,3]`
//! over `int4` reads back as `[1,4)`, and `[3,3)` as empty.

use pgpipe_proto::put::PutInline;
use std::fmt;
use std::ops::Bound;

use bytes::BytesMut;

use crate::{BoxError, Decode, Encode, IsNull, Kind, StaticType, Type, TypeRef};

mod multirange;

pub use multirange::Multirange;

const EMPTY: u8 = 0x01;
const LB_INC: u8 = 0x02;
const UB_INC: u8 = 0x04;
const LB_INF: u8 = 0x08;
const UB_INF: u8 = 0x10;
/// "Bound is NULL": never set by PostgreSQL itself, read as infinite as
/// PostgreSQL does (no bound bytes follow).
const LB_NULL: u8 = 0x20;
const UB_NULL: u8 = 0x40;
const KNOWN_FLAGS: u8 = EMPTY | LB_INC | UB_INC | LB_INF | UB_INF | LB_NULL | UB_NULL;

/// A PostgreSQL range value: empty, or a lower and an upper bound, each
/// inclusive, exclusive or unbounded (infinite).
///
/// Sent as the range type of its subtype for the built-in ranges (`i32` ->
/// `int4range`, `i64` -> `int8range`, and the numeric, date and timestamp
/// types -> `numrange`, `daterange`, `tsrange`, `tstzrange`); any range
/// type whose subtype `T` reads can be read, user-defined ones included.
/// `Display` gives PostgreSQL's text form when `T`'s `Display` matches the
/// subtype's.
///
/// ```
/// use std::ops::Bound;
/// use bytes::BytesMut;
/// use pgpipe_types::{Decode, Encode, Range, Type};
///
/// let r = Range::from(1..10); // [1,10)
/// assert_eq!(r.to_string(), "[1,10)");
/// assert!(r.contains(&9) && !r.contains(&10));
/// assert_eq!(Range::new(Bound::Unbounded, Bound::Included(5)).to_string(), "(,5]");
/// assert_eq!(Range::<i32>::Empty.to_string(), "empty");
///
/// let mut buf = BytesMut::new();
/// r.encode(&Type::INT4RANGE, &mut buf).unwrap();
/// assert_eq!(Range::<i32>::decode(&Type::INT4RANGE, &buf).unwrap(), r);
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Range<T> {
    /// The empty range (`'empty'`).
    Empty,
    /// A range between two bounds; [`Bound::Unbounded`] is infinite.
    Bounds {
        /// The lower bound.
        lower: Bound<T>,
        /// The upper bound.
        upper: Bound<T>,
    },
}

impl<T> Range<T> {
    /// A range between two bounds.
    pub const fn new(lower: Bound<T>, upper: Bound<T>) -> Self {
        Range::Bounds { lower, upper }
    }

    /// The empty range.
    pub const fn empty() -> Self {
        Range::Empty
    }

    /// The range of every value, `(,)`.
    pub const fn unbounded() -> Self {
        Range::Bounds {
            lower: Bound::Unbounded,
            upper: Bound::Unbounded,
        }
    }

    /// Whether this is [`Range::Empty`]. (Bounds that enclose nothing, like
    /// `[3,3)`, are only made empty by the server.)
    pub fn is_empty(&self) -> bool {
        matches!(self, Range::Empty)
    }

    /// The lower bound, `None` for the empty range.
    pub fn lower(&self) -> Option<Bound<&T>> {
        match self {
            Range::Empty => None,
            Range::Bounds { lower, .. } => Some(lower.as_ref()),
        }
    }

    /// The upper bound, `None` for the empty range.
    pub fn upper(&self) -> Option<Bound<&T>> {
        match self {
            Range::Empty => None,
            Range::Bounds { upper, .. } => Some(upper.as_ref()),
        }
    }

    /// The same range with each bound converted by `f`.
    pub fn map<U>(self, mut f: impl FnMut(T) -> U) -> Range<U> {
        match self {
            Range::Empty => Range::Empty,
            Range::Bounds { lower, upper } => Range::Bounds {
                lower: lower.map(&mut f),
                upper: upper.map(&mut f),
            },
        }
    }

    /// Whether `value` lies in the range (PostgreSQL's `@>`).
    pub fn contains(&self, value: &T) -> bool
    where
        T: PartialOrd,
    {
        match self {
            Range::Empty => false,
            Range::Bounds { lower, upper } => {
                let above = match lower {
                    Bound::Unbounded => true,
                    Bound::Included(l) => value >= l,
                    Bound::Excluded(l) => value > l,
                };
                let below = match upper {
                    Bound::Unbounded => true,
                    Bound::Included(u) => value <= u,
                    Bound::Excluded(u) => value < u,
                };
                above && below
            }
        }
    }
}

impl<T> From<std::ops::Range<T>> for Range<T> {
    /// `a..b` is `[a,b)`.
    fn from(r: std::ops::Range<T>) -> Self {
        Range::new(Bound::Included(r.start), Bound::Excluded(r.end))
    }
}

impl<T> From<std::ops::RangeInclusive<T>> for Range<T> {
    /// `a..=b` is `[a,b]`.
    fn from(r: std::ops::RangeInclusive<T>) -> Self {
        let (start, end) = r.into_inner();
        Range::new(Bound::Included(start), Bound::Included(end))
    }
}

impl<T> From<std::ops::RangeFrom<T>> for Range<T> {
    /// `a..` is `[a,)`.
    fn from(r: std::ops::RangeFrom<T>) -> Self {
        Range::new(Bound::Included(r.start), Bound::Unbounded)
    }
}

impl<T> From<std::ops::RangeTo<T>> for Range<T> {
    /// `..b` is `(,b)`.
    fn from(r: std::ops::RangeTo<T>) -> Self {
        Range::new(Bound::Unbounded, Bound::Excluded(r.end))
    }
}

impl<T> From<std::ops::RangeToInclusive<T>> for Range<T> {
    /// `..=b` is `(,b]`.
    fn from(r: std::ops::RangeToInclusive<T>) -> Self {
        Range::new(Bound::Unbounded, Bound::Included(r.end))
    }
}

impl<T> From<std::ops::RangeFull> for Range<T> {
    /// `..` is `(,)`.
    fn from(_: std::ops::RangeFull) -> Self {
        Range::unbounded()
    }
}

/// Writes a bound value as PostgreSQL's `range_out` does: in double quotes
/// when it is empty or contains `"`, `\`, `(`, `)`, `[`, `]`, `,` or white
/// space, with `"` and `\` doubled.
fn write_bound(f: &mut fmt::Formatter<'_>, value: &dyn fmt::Display) -> fmt::Result {
    let text = value.to_string();
    let quote = text.is_empty()
        || text.bytes().any(|c| {
            matches!(
                c,
                b'"' | b'\\'
                    | b'('
                    | b')'
                    | b'['
                    | b']'
                    | b','
                    | b' '
                    | b'\t'
                    | b'\n'
                    | b'\x0b'
                    | b'\x0c'
                    | b'\r'
            )
        });
    if !quote {
        return f.write_str(&text);
    }
    f.write_str("\"")?;
    for c in text.chars() {
        if c == '"' || c == '\\' {
            write!(f, "{c}")?;
        }
        write!(f, "{c}")?;
    }
    f.write_str("\"")
}

impl<T: fmt::Display> fmt::Display for Range<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (lower, upper) = match self {
            Range::Empty => return f.write_str("empty"),
            Range::Bounds { lower, upper } => (lower, upper),
        };
        match lower {
            Bound::Included(v) => {
                f.write_str("[")?;
                write_bound(f, v)?;
            }
            Bound::Excluded(v) => {
                f.write_str("(")?;
                write_bound(f, v)?;
            }
            Bound::Unbounded => f.write_str("(")?,
        }
        f.write_str(",")?;
        match upper {
            Bound::Included(v) => {
                write_bound(f, v)?;
                f.write_str("]")
            }
            Bound::Excluded(v) => {
                write_bound(f, v)?;
                f.write_str(")")
            }
            Bound::Unbounded => f.write_str(")"),
        }
    }
}

/// The built-in range type over a built-in subtype, `TypeRef::Oid(0)` (let
/// the server infer it) for any other.
const fn range_type_of(subtype: TypeRef) -> TypeRef {
    TypeRef::Oid(match subtype {
        TypeRef::Oid(23) => 3904,   // int4 -> int4range
        TypeRef::Oid(20) => 3926,   // int8 -> int8range
        TypeRef::Oid(1700) => 3906, // numeric -> numrange
        TypeRef::Oid(1082) => 3912, // date -> daterange
        TypeRef::Oid(1114) => 3908, // timestamp -> tsrange
        TypeRef::Oid(1184) => 3910, // timestamptz -> tstzrange
        _ => 0,
    })
}

/// The built-in multirange type over a built-in subtype, `TypeRef::Oid(0)`
/// for any other.
const fn multirange_type_of(subtype: TypeRef) -> TypeRef {
    TypeRef::Oid(match subtype {
        TypeRef::Oid(23) => 4451,   // int4multirange
        TypeRef::Oid(20) => 4536,   // int8multirange
        TypeRef::Oid(1700) => 4532, // nummultirange
        TypeRef::Oid(1082) => 4535, // datemultirange
        TypeRef::Oid(1114) => 4533, // tsmultirange
        TypeRef::Oid(1184) => 4534, // tstzmultirange
        _ => 0,
    })
}

/// The subtype of a range type (domains looked through).
fn subtype_of(ty: &Type) -> Option<&Type> {
    match ty.base().kind() {
        Kind::Range(sub) => Some(sub),
        _ => None,
    }
}

/// The range type of a multirange type (domains looked through).
fn range_of_multirange(ty: &Type) -> Option<&Type> {
    match ty.base().kind() {
        Kind::Multirange(range) => Some(range),
        _ => None,
    }
}

impl<T: StaticType> StaticType for Range<T> {
    const TYPE: TypeRef = range_type_of(T::TYPE);
}

/// Whether every bound of `range` can be sent as `sub`; with no bound
/// values, whether `T`'s static type is `sub`.
fn bounds_accept<T: Encode + StaticType>(range: &Range<T>, sub: &Type) -> bool {
    let values = match range {
        Range::Empty => [None, None],
        Range::Bounds { lower, upper } => [bound_value(lower), bound_value(upper)],
    };
    if values.iter().all(Option::is_none) {
        return T::TYPE.matches(sub);
    }
    values.iter().flatten().all(|v| v.accepts(sub))
}

fn bound_value<T>(b: &Bound<T>) -> Option<&T> {
    match b {
        Bound::Included(v) | Bound::Excluded(v) => Some(v),
        Bound::Unbounded => None,
    }
}

impl<T: Encode + StaticType> Encode for Range<T> {
    fn type_ref(&self) -> TypeRef {
        range_type_of(T::TYPE)
    }
    fn accepts(&self, ty: &Type) -> bool {
        subtype_of(ty).is_some_and(|sub| bounds_accept(self, sub))
    }
    fn encode(&self, ty: &Type, buf: &mut BytesMut) -> Result<IsNull, BoxError> {
        let (lower, upper) = match self {
            Range::Empty => {
                buf.put_u8_inline(EMPTY);
                return Ok(IsNull::No);
            }
            Range::Bounds { lower, upper } => (lower, upper),
        };
        // The subtype of the parameter's range type. Unlike an array, a
        // range does not carry its subtype's OID on the wire, so for a
        // parameter type the client has not described (a user-defined range
        // declared as OID 0) the bounds are encoded for `T`'s own type, as a
        // scalar parameter would be.
        let fallback;
        let sub = match subtype_of(ty) {
            Some(sub) => sub,
            None if !ty.is_known() && !T::TYPE.is_named() => {
                fallback = Type::from_oid(T::TYPE.oid());
                &fallback
            }
            None if !ty.is_known() => {
                return Err(format!(
                    "the range parameter's type ({ty}) is not known and the subtype {:?} is not \
                     resolved; declare the range type in SQL (`$1::myrange`) or prepare the statement",
                    T::TYPE
                )
                .into())
            }
            None => {
                return Err(format!(
                    "{} is a range and cannot be sent as {ty}, which is not a range type",
                    self.rust_type()
                )
                .into())
            }
        };
        let mut flags = 0;
        match lower {
            Bound::Included(_) => flags |= LB_INC,
            Bound::Excluded(_) => {}
            Bound::Unbounded => flags |= LB_INF,
        }
        match upper {
            Bound::Included(_) => flags |= UB_INC,
            Bound::Excluded(_) => {}
            Bound::Unbounded => flags |= UB_INF,
        }
        buf.put_u8_inline(flags);
        for (which, bound) in [("lower", lower), ("upper", upper)] {
            if let Some(v) = bound_value(bound) {
                encode_bound(v, which, ty, sub, buf)?;
            }
        }
        Ok(IsNull::No)
    }
}

fn encode_bound<T: Encode>(
    v: &T,
    which: &str,
    ty: &Type,
    sub: &Type,
    buf: &mut BytesMut,
) -> Result<(), BoxError> {
    if !v.accepts(sub) {
        return Err(format!(
            "{which} bound of {ty}: Rust type {} cannot be sent as {sub}",
            v.rust_type()
        )
        .into());
    }
    let len_at = buf.len();
    buf.put_i32_inline(0);
    match v.encode(sub, buf) {
        Ok(IsNull::No) => {}
        Ok(IsNull::Yes) => {
            return Err(format!(
                "{which} bound of {ty} is NULL; use Bound::Unbounded for an infinite bound"
            )
            .into())
        }
        Err(e) => return Err(format!("{which} bound of {ty}: {e}").into()),
    }
    let len = buf.len() - len_at - 4;
    let len = i32::try_from(len).map_err(|_| -> BoxError {
        format!("{which} bound of {ty}: {len} bytes is more than a value can hold").into()
    })?;
    buf[len_at..len_at + 4].copy_from_slice(&len.to_be_bytes());
    Ok(())
}

/// Any range type whose subtype `T` reads (user-defined ranges included).
impl<'a, T: Decode<'a>> Decode<'a> for Range<T> {
    fn accepts(ty: &Type) -> bool {
        subtype_of(ty).is_some_and(T::accepts)
    }
    fn decode(ty: &Type, raw: &'a [u8]) -> Result<Self, BoxError> {
        let sub = subtype_of(ty).ok_or_else(|| -> BoxError {
            format!("{ty} is not a known range type, so its subtype is unknown").into()
        })?;
        let (&flags, mut rest) = raw
            .split_first()
            .ok_or_else(|| -> BoxError { format!("invalid binary {ty} value: no bytes").into() })?;
        if flags & !KNOWN_FLAGS != 0 {
            return Err(
                format!("invalid binary {ty} value: unknown range flags {flags:#04x}").into(),
            );
        }
        let range = if flags & EMPTY != 0 {
            Range::Empty
        } else {
            let lower = decode_bound(ty, sub, "lower", flags, LB_INF | LB_NULL, LB_INC, &mut rest)?;
            let upper = decode_bound(ty, sub, "upper", flags, UB_INF | UB_NULL, UB_INC, &mut rest)?;
            Range::Bounds { lower, upper }
        };
        if !rest.is_empty() {
            return Err(format!(
                "invalid binary {ty} value: {} bytes left after the range",
                rest.len()
            )
            .into());
        }
        Ok(range)
    }
}

fn decode_bound<'a, T: Decode<'a>>(
    ty: &Type,
    sub: &Type,
    which: &str,
    flags: u8,
    infinite: u8,
    inclusive: u8,
    rest: &mut &'a [u8],
) -> Result<Bound<T>, BoxError> {
    if flags & infinite != 0 {
        return Ok(Bound::Unbounded);
    }
    let data = *rest;
    if data.len() < 4 {
        return Err(format!(
            "invalid binary {ty} value: truncated before the {which} bound's length"
        )
        .into());
    }
    let len = i32::from_be_bytes([data[0], data[1], data[2], data[3]]);
    let value = usize::try_from(len)
        .ok()
        .and_then(|len| data[4..].get(..len))
        .ok_or_else(|| -> BoxError {
            format!(
                "invalid binary {ty} value: {which} bound length is {len} but {} bytes are left",
                data.len() - 4
            )
            .into()
        })?;
    *rest = &data[4 + value.len()..];
    let value = T::decode(sub, value)
        .map_err(|e| -> BoxError { format!("{which} bound of {ty}: {e}").into() })?;
    Ok(if flags & inclusive != 0 {
        Bound::Included(value)
    } else {
        Bound::Excluded(value)
    })
}

#[cfg(test)]
mod tests;
