//! The codec traits.

use bytes::BytesMut;

use pgpipe_proto::frontend::ParamWriter;
use pgpipe_proto::EncodeError;

use crate::{BoxError, IsNull, Oid, Type, UnexpectedNull};

/// The PostgreSQL type a Rust value is sent as: a fixed OID for built-in
/// types, a name for user-defined ones (composites, enums, extension types),
/// which the client looks up in the server catalog once per connection.
///
/// ```
/// use pgpipe_types::{StaticType, TypeRef};
///
/// assert_eq!(<i32 as StaticType>::TYPE, TypeRef::Oid(23));
/// assert_eq!(<i32 as StaticType>::TYPE.array(), TypeRef::Oid(1007));
/// assert_eq!(TypeRef::Named("mail.attach").array(), TypeRef::ArrayOf("mail.attach"));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TypeRef {
    /// A type by OID; 0 lets the server infer the type from the statement.
    Oid(Oid),
    /// A user-defined type by name, optionally schema-qualified
    /// (`"mail.attach"`); looked up with `to_regtype`, so the search path
    /// applies to unqualified names.
    Named(&'static str),
    /// The array type of the named type.
    ArrayOf(&'static str),
}

impl TypeRef {
    /// The OID to declare in a Parse message: the OID itself, or 0 for a
    /// name that has not been resolved.
    pub const fn oid(self) -> Oid {
        match self {
            TypeRef::Oid(oid) => oid,
            TypeRef::Named(_) | TypeRef::ArrayOf(_) => 0,
        }
    }

    /// Whether resolving this reference needs the server catalog.
    pub const fn is_named(self) -> bool {
        !matches!(self, TypeRef::Oid(_))
    }

    /// The array type of this type (`TypeRef::Oid(0)` for a built-in type
    /// without an array type).
    pub const fn array(self) -> TypeRef {
        match self {
            TypeRef::Oid(oid) => TypeRef::Oid(crate::ty::builtin_array_of(oid)),
            TypeRef::Named(name) | TypeRef::ArrayOf(name) => TypeRef::ArrayOf(name),
        }
    }

    /// Whether `ty` is the type this reference names (domains are looked
    /// through). A `TypeRef::Oid(0)` matches anything.
    pub fn matches(self, ty: &Type) -> bool {
        match self {
            TypeRef::Oid(0) => true,
            TypeRef::Oid(oid) => ty.base().oid() == oid || ty.oid() == oid,
            TypeRef::Named(name) => ty.is_named(name),
            TypeRef::ArrayOf(name) => ty.element().is_some_and(|e| e.is_named(name)),
        }
    }
}

/// A Rust value that can be sent as a query parameter in binary format.
///
/// `Encode` is object safe so that runtime-built parameter lists can be
/// `&[&(dyn Encode + Sync)]`.
pub trait Encode {
    /// The type to declare for this parameter when the statement's parameter
    /// types are not known yet (a first-time Parse).
    fn type_ref(&self) -> TypeRef;

    /// Whether this value can be sent for a parameter of type `ty` (checked
    /// against a prepared statement's parameter types before sending).
    fn accepts(&self, ty: &Type) -> bool;

    /// Whether every value of this Rust type fits `ty`, so that a writer
    /// sending many values of one type to one column (binary COPY) can
    /// check the first and skip [`accepts`](Encode::accepts) for the rest.
    /// The default, `false`, is always correct (every value is checked);
    /// an encoder whose `accepts` looks at the type only answers
    /// `self.accepts(ty)`. Arrays, ranges and `None` answer `false`: what
    /// fits depends on the value.
    fn accepts_all_values(&self, ty: &Type) -> bool {
        let _ = ty;
        false
    }

    /// Appends the binary representation to `buf` for a parameter of type
    /// `ty`, or returns [`IsNull::Yes`] having written nothing.
    ///
    /// `ty` is the statement's parameter type when it is known, else the type
    /// [`Encode::type_ref`] declared (resolved by the client for names); array
    /// and composite encoders read their element and field types from it.
    fn encode(&self, ty: &Type, buf: &mut BytesMut) -> Result<IsNull, BoxError>;

    /// The Rust type's name, for error messages.
    fn rust_type(&self) -> &'static str {
        std::any::type_name::<Self>()
    }

    /// Whether this value can only be encoded for the type the server
    /// inferred for its parameter: values that declare no type of their own
    /// ([`TypeRef::Oid(0)`](TypeRef::Oid)) and cannot write their bytes
    /// without knowing it, such as `postgres_types::ToSql` values (see the
    /// `compat` module, feature `postgres-types`). The client then learns
    /// the statement's parameter types before encoding: from its statement
    /// cache, or with one Describe round trip the first time. The default,
    /// `false`, keeps pgpipe's one-round-trip path.
    fn needs_server_type(&self) -> bool {
        false
    }

    /// Writes this value as one parameter (or binary COPY field) of type
    /// `ty`: its length prefix and [`encode`](Encode::encode)'s bytes. Types
    /// whose size is known before encoding override it to write the length
    /// directly ([`ParamWriter::write_fixed`]); the result on the wire is
    /// the same.
    #[inline]
    fn write_to(&self, ty: &Type, writer: &mut ParamWriter<'_>) -> Result<(), EncodeError> {
        writer.write(|buf| self.encode(ty, buf))
    }
}

/// Static type information of a Rust type that always maps to one
/// PostgreSQL type; lets `Option<T>` declare a type even when it is `None`,
/// and `Vec<T>` declare its array type even when empty.
pub trait StaticType {
    /// The type this Rust type is sent as.
    const TYPE: TypeRef;
}

/// A Rust value that can be read from a column in binary format.
///
/// The lifetime lets borrowed targets (`&str`, `&[u8]`) point into the row
/// without copying.
pub trait Decode<'a>: Sized {
    /// Whether a column of PostgreSQL type `ty` can be read as `Self`. Checked
    /// before decoding, so a mismatch names both types instead of failing
    /// on the bytes.
    fn accepts(ty: &Type) -> bool;

    /// Decodes a non-NULL value.
    fn decode(ty: &Type, raw: &'a [u8]) -> Result<Self, BoxError>;

    /// The value for SQL NULL; an error unless `Self` can represent NULL.
    fn decode_null(ty: &Type) -> Result<Self, BoxError> {
        let _ = ty;
        Err(Box::new(UnexpectedNull))
    }

    /// Decodes a column that may be NULL.
    fn decode_opt(ty: &Type, raw: Option<&'a [u8]>) -> Result<Self, BoxError> {
        match raw {
            Some(raw) => Self::decode(ty, raw),
            None => Self::decode_null(ty),
        }
    }
}

// `accepts_all_values` is not forwarded: a `&dyn Encode` slot of a row
// type may hold another Rust type in the next row, so "every value of
// this type fits" cannot be answered from one value (the default, false,
// keeps every row checked).
macro_rules! forward_encode {
    ($($t:ty),*) => {$(
        impl<T: Encode + ?Sized> Encode for $t {
            fn type_ref(&self) -> TypeRef {
                (**self).type_ref()
            }
            fn accepts(&self, ty: &Type) -> bool {
                (**self).accepts(ty)
            }
            fn encode(&self, ty: &Type, buf: &mut BytesMut) -> Result<IsNull, BoxError> {
                (**self).encode(ty, buf)
            }
            fn rust_type(&self) -> &'static str {
                (**self).rust_type()
            }
            fn needs_server_type(&self) -> bool {
                (**self).needs_server_type()
            }
            #[inline]
            fn write_to(&self, ty: &Type, writer: &mut ParamWriter<'_>) -> Result<(), EncodeError> {
                (**self).write_to(ty, writer)
            }
        }
    )*};
}

forward_encode!(&T, &mut T, Box<T>, std::sync::Arc<T>, std::rc::Rc<T>);

impl<T: StaticType + ?Sized> StaticType for &T {
    const TYPE: TypeRef = T::TYPE;
}
