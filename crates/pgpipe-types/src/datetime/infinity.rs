//! `-infinity` and `infinity` as explicit values: [`WithInfinity`].

use pgpipe_proto::put::PutInline;
use std::fmt;

use bytes::BytesMut;

use super::civil::{read_i32, read_i64};
use crate::{BoxError, Decode, Encode, IsNull, Oid, StaticType, Type, TypeRef};

/// OIDs of the types with infinities.
pub(crate) const DATE_OID: Oid = 1082;
pub(crate) const TIMESTAMP_OID: Oid = 1114;
pub(crate) const TIMESTAMPTZ_OID: Oid = 1184;

/// A `date`, `timestamp` or `timestamptz` value that may also be
/// PostgreSQL's `-infinity` or `infinity`.
///
/// PostgreSQL stores the infinities as the smallest and largest values of
/// the wire integer; pgpipe never clamps them to a date. Reading an
/// infinite value into a plain type (`Date`, `chrono::NaiveDate`, ...) is an
/// error that points here; read the column as `WithInfinity<T>` instead.
/// The variants are declared in sort order, so the derived `Ord` agrees
/// with PostgreSQL's (`-infinity` < every date < `infinity`).
///
/// ```
/// use bytes::BytesMut;
/// use pgpipe_types::{Date, Decode, Encode, Type, WithInfinity};
///
/// let mut buf = BytesMut::new();
/// WithInfinity::<Date>::Infinity.encode(&Type::DATE, &mut buf).unwrap();
/// assert_eq!(&buf[..], &i32::MAX.to_be_bytes());
/// let back = WithInfinity::<Date>::decode(&Type::DATE, &buf).unwrap();
/// assert_eq!(back, WithInfinity::Infinity);
/// assert_eq!(back.to_string(), "infinity");
/// // A plain Date cannot hold it, and says what to use instead.
/// let err = Date::decode(&Type::DATE, &buf).unwrap_err();
/// assert!(err.to_string().contains("WithInfinity"));
///
/// let day = Date::from_ymd(2024, 2, 29).unwrap();
/// assert!(WithInfinity::NegInfinity < WithInfinity::Value(day));
/// assert_eq!(WithInfinity::from(day).finite(), Some(day));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum WithInfinity<T> {
    /// `-infinity`: before every other value.
    NegInfinity,
    /// A finite value.
    Value(T),
    /// `infinity`: after every other value.
    Infinity,
}

impl<T> WithInfinity<T> {
    /// The finite value, or `None` for either infinity.
    pub fn finite(self) -> Option<T> {
        match self {
            WithInfinity::Value(v) => Some(v),
            WithInfinity::NegInfinity | WithInfinity::Infinity => None,
        }
    }

    /// Whether this is a finite value.
    pub fn is_finite(&self) -> bool {
        matches!(self, WithInfinity::Value(_))
    }

    /// A reference to the finite value, if any.
    pub fn as_ref(&self) -> WithInfinity<&T> {
        match self {
            WithInfinity::NegInfinity => WithInfinity::NegInfinity,
            WithInfinity::Value(v) => WithInfinity::Value(v),
            WithInfinity::Infinity => WithInfinity::Infinity,
        }
    }

    /// Converts the finite value, keeping the infinities.
    pub fn map<U>(self, f: impl FnOnce(T) -> U) -> WithInfinity<U> {
        match self {
            WithInfinity::NegInfinity => WithInfinity::NegInfinity,
            WithInfinity::Value(v) => WithInfinity::Value(f(v)),
            WithInfinity::Infinity => WithInfinity::Infinity,
        }
    }
}

impl<T> From<T> for WithInfinity<T> {
    fn from(value: T) -> Self {
        WithInfinity::Value(value)
    }
}

/// PostgreSQL's text form: `-infinity`, `infinity`, or the value's own.
impl<T: fmt::Display> fmt::Display for WithInfinity<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            WithInfinity::NegInfinity => f.write_str("-infinity"),
            WithInfinity::Value(v) => v.fmt(f),
            WithInfinity::Infinity => f.write_str("infinity"),
        }
    }
}

pub(crate) mod sealed {
    use crate::{BoxError, Oid};

    /// A Rust type holding finite values of one of the PostgreSQL types with
    /// infinities (`date`, `timestamp`, `timestamptz`). Sealed: implemented
    /// by pgpipe for its own types and the `chrono`/`time` ones.
    pub trait Finite {
        /// The OID of the PostgreSQL type this Rust type is sent as and read
        /// from: `date`, `timestamp` or `timestamptz`.
        const OID: Oid;
        /// The wire integer: days since 2000-01-01 for `date` (always within
        /// `i32` and PostgreSQL's range), microseconds since 2000-01-01
        /// 00:00:00 for the timestamps; never an infinity marker.
        fn to_wire(&self) -> Result<i64, BoxError>;
    }

    /// A [`Finite`] type that can also be decoded.
    pub trait FiniteDecode: Finite + Sized {
        /// A short Rust type name for error messages.
        const NAME: &'static str;
        /// The value for a finite wire integer, or an error when the value is
        /// outside this Rust type's range.
        fn from_wire(wire: i64) -> Result<Self, BoxError>;
    }
}

use sealed::{Finite, FiniteDecode};

/// A wire value of a type with infinities.
enum Wire {
    NegInfinity,
    Finite(i64),
    Infinity,
}

fn read_wire(oid: Oid, raw: &[u8]) -> Result<Wire, BoxError> {
    if oid == DATE_OID {
        Ok(match read_i32("date", raw)? {
            i32::MIN => Wire::NegInfinity,
            i32::MAX => Wire::Infinity,
            days => Wire::Finite(days.into()),
        })
    } else {
        let what = if oid == TIMESTAMPTZ_OID {
            "timestamptz"
        } else {
            "timestamp"
        };
        Ok(match read_i64(what, raw)? {
            i64::MIN => Wire::NegInfinity,
            i64::MAX => Wire::Infinity,
            micros => Wire::Finite(micros),
        })
    }
}

#[inline]
fn put_wire(oid: Oid, wire: i64, buf: &mut BytesMut) -> Result<IsNull, BoxError> {
    if oid == DATE_OID {
        let days = i32::try_from(wire)
            .ok()
            .filter(|d| *d != i32::MIN && *d != i32::MAX)
            .ok_or_else(|| {
                format!("date value {wire} days from 2000-01-01 does not fit the wire format")
            })?;
        buf.put_i32_inline(days);
    } else {
        if wire == i64::MIN || wire == i64::MAX {
            return Err(marker_collision(oid, wire));
        }
        buf.put_i64_inline(wire);
    }
    Ok(IsNull::No)
}

#[cold]
fn marker_collision(oid: Oid, wire: i64) -> BoxError {
    format!(
        "{} value {wire} collides with an infinity marker",
        Type::from_oid(oid)
    )
    .into()
}

/// [`Encode::write_to`](crate::Encode::write_to) of a finite value: a
/// timestamp's 8 bytes written with their length, no placeholder.
#[inline]
pub(crate) fn write_finite<T: Finite + ?Sized>(
    value: &T,
    writer: &mut pgpipe_proto::frontend::ParamWriter<'_>,
) -> Result<(), pgpipe_proto::EncodeError> {
    if T::OID == DATE_OID {
        return writer.write(|buf| encode_finite(value, buf));
    }
    writer.write_fixed(value.to_wire().and_then(|wire| {
        if wire == i64::MIN || wire == i64::MAX {
            Err(marker_collision(T::OID, wire))
        } else {
            Ok(wire.to_be_bytes())
        }
    }))
}

/// Encodes a finite value of `T`.
#[inline]
pub(crate) fn encode_finite<T: Finite + ?Sized>(
    value: &T,
    buf: &mut BytesMut,
) -> Result<IsNull, BoxError> {
    put_wire(T::OID, value.to_wire()?, buf)
}

/// Decodes a value that must be finite.
pub(crate) fn decode_finite<T: FiniteDecode>(ty: &Type, raw: &[u8]) -> Result<T, BoxError> {
    match read_wire(T::OID, raw)? {
        Wire::Finite(wire) => T::from_wire(wire),
        Wire::NegInfinity => Err(infinite_error::<T>(ty, "-infinity")),
        Wire::Infinity => Err(infinite_error::<T>(ty, "infinity")),
    }
}

fn infinite_error<T: FiniteDecode>(ty: &Type, which: &str) -> BoxError {
    format!(
        "{ty} value is {which}, which {name} cannot hold; read the column as WithInfinity<{name}>",
        name = T::NAME
    )
    .into()
}

/// Whether `ty` (or a domain over it) is the PostgreSQL type of `T`.
pub(crate) fn accepts_finite<T: Finite + ?Sized>(ty: &Type) -> bool {
    ty.is(&[Type::from_oid(T::OID)])
}

/// Implements `StaticType`, `Encode` and (optionally) `Decode` for a type
/// implementing the sealed `Finite` traits. `via` does the sealed traits
/// too, for a `Copy` type of another crate converted through one of our
/// own (`TryFrom` both ways): `finite_codec!(via Date: NaiveDate, "chrono::NaiveDate")`.
macro_rules! finite_codec {
    (via $own:ident: $t:ty, $name:literal) => {
        impl $crate::datetime::infinity::sealed::Finite for $t {
            const OID: $crate::Oid = <$own as $crate::datetime::infinity::sealed::Finite>::OID;
            fn to_wire(&self) -> Result<i64, $crate::BoxError> {
                $crate::datetime::infinity::sealed::Finite::to_wire(&$own::try_from(*self)?)
            }
        }

        impl $crate::datetime::infinity::sealed::FiniteDecode for $t {
            const NAME: &'static str = $name;
            fn from_wire(wire: i64) -> Result<Self, $crate::BoxError> {
                let own = <$own as $crate::datetime::infinity::sealed::FiniteDecode>::from_wire(wire)?;
                Ok(<$t>::try_from(own)?)
            }
        }

        finite_codec!($t);
    };
    (encode impl<$g:ident: $b:path> $t:ty) => {
        finite_codec!(@encode [<$g: $b>] $t);
    };
    (encode $t:ty) => {
        finite_codec!(@encode [] $t);
    };
    (@encode [$($gen:tt)*] $t:ty) => {
        impl $($gen)* $crate::StaticType for $t {
            const TYPE: $crate::TypeRef =
                $crate::TypeRef::Oid(<$t as $crate::datetime::infinity::sealed::Finite>::OID);
        }

        impl $($gen)* $crate::Encode for $t {
            fn type_ref(&self) -> $crate::TypeRef {
                <Self as $crate::StaticType>::TYPE
            }
            fn accepts(&self, ty: &$crate::Type) -> bool {
                $crate::datetime::infinity::accepts_finite::<Self>(ty)
            }
            #[inline]
            fn accepts_all_values(&self, ty: &$crate::Type) -> bool {
                // Which values fit depends on the type alone.
                self.accepts(ty)
            }
            #[inline]
            fn encode(
                &self,
                _: &$crate::Type,
                buf: &mut ::bytes::BytesMut,
            ) -> Result<$crate::IsNull, $crate::BoxError> {
                $crate::datetime::infinity::encode_finite(self, buf)
            }
            #[inline]
            fn write_to(
                &self,
                _: &$crate::Type,
                writer: &mut ::pgpipe_proto::frontend::ParamWriter<'_>,
            ) -> Result<(), ::pgpipe_proto::EncodeError> {
                $crate::datetime::infinity::write_finite(self, writer)
            }
        }
    };
    (decode $t:ty) => {
        impl<'a> $crate::Decode<'a> for $t {
            fn accepts(ty: &$crate::Type) -> bool {
                $crate::datetime::infinity::accepts_finite::<Self>(ty)
            }
            fn decode(ty: &$crate::Type, raw: &'a [u8]) -> Result<Self, $crate::BoxError> {
                $crate::datetime::infinity::decode_finite(ty, raw)
            }
        }
    };
    ($t:ty) => {
        finite_codec!(encode $t);
        finite_codec!(decode $t);
    };
}

pub(crate) use finite_codec;

impl<T: Finite> StaticType for WithInfinity<T> {
    const TYPE: TypeRef = TypeRef::Oid(T::OID);
}

impl<T: Finite> Encode for WithInfinity<T> {
    fn type_ref(&self) -> TypeRef {
        TypeRef::Oid(T::OID)
    }
    fn accepts(&self, ty: &Type) -> bool {
        accepts_finite::<T>(ty)
    }
    #[inline]
    fn accepts_all_values(&self, ty: &Type) -> bool {
        // Which values fit depends on the type alone.
        self.accepts(ty)
    }
    fn encode(&self, _: &Type, buf: &mut BytesMut) -> Result<IsNull, BoxError> {
        let date = T::OID == DATE_OID;
        match self {
            WithInfinity::Value(v) => encode_finite(v, buf),
            WithInfinity::NegInfinity if date => {
                buf.put_i32_inline(i32::MIN);
                Ok(IsNull::No)
            }
            WithInfinity::Infinity if date => {
                buf.put_i32_inline(i32::MAX);
                Ok(IsNull::No)
            }
            WithInfinity::NegInfinity => {
                buf.put_i64_inline(i64::MIN);
                Ok(IsNull::No)
            }
            WithInfinity::Infinity => {
                buf.put_i64_inline(i64::MAX);
                Ok(IsNull::No)
            }
        }
    }
}

impl<'a, T: FiniteDecode> Decode<'a> for WithInfinity<T> {
    fn accepts(ty: &Type) -> bool {
        accepts_finite::<T>(ty)
    }
    fn decode(_: &Type, raw: &'a [u8]) -> Result<Self, BoxError> {
        Ok(match read_wire(T::OID, raw)? {
            Wire::NegInfinity => WithInfinity::NegInfinity,
            Wire::Finite(wire) => WithInfinity::Value(T::from_wire(wire)?),
            Wire::Infinity => WithInfinity::Infinity,
        })
    }
}
