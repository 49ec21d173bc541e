//! The codec traits.

use bytes::BytesMut;

use crate::{BoxError, IsNull, Oid, Type, UnexpectedNull};

/// A Rust value that can be sent as a query parameter in binary format.
///
/// `Encode` is object safe so that runtime-built parameter lists can be
/// `&[&(dyn Encode + Sync)]`.
pub trait Encode {
    /// The OID to declare for this parameter when the statement's parameter
    /// types are not known yet (a first-time Parse). 0 lets the server infer.
    fn type_oid(&self) -> Oid;

    /// Whether this value can be sent for a parameter of type `ty` (checked
    /// against a prepared statement's parameter types before sending).
    fn accepts(&self, ty: &Type) -> bool;

    /// Appends the binary representation to `buf`, or returns [`IsNull::Yes`]
    /// having written nothing.
    fn encode(&self, buf: &mut BytesMut) -> Result<IsNull, BoxError>;

    /// The Rust type's name, for error messages.
    fn rust_type(&self) -> &'static str {
        std::any::type_name::<Self>()
    }
}

/// Static type information of a Rust type that always maps to one
/// PostgreSQL type; lets `Option<T>` declare a type even when it is `None`.
pub trait StaticType {
    /// The OID this type is sent as.
    const TYPE_OID: Oid;
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

macro_rules! forward_encode {
    ($($t:ty),*) => {$(
        impl<T: Encode + ?Sized> Encode for $t {
            fn type_oid(&self) -> Oid {
                (**self).type_oid()
            }
            fn accepts(&self, ty: &Type) -> bool {
                (**self).accepts(ty)
            }
            fn encode(&self, buf: &mut BytesMut) -> Result<IsNull, BoxError> {
                (**self).encode(buf)
            }
            fn rust_type(&self) -> &'static str {
                (**self).rust_type()
            }
        }
    )*};
}

forward_encode!(&T, &mut T, Box<T>, std::sync::Arc<T>, std::rc::Rc<T>);

impl<T: StaticType + ?Sized> StaticType for &T {
    const TYPE_OID: Oid = T::TYPE_OID;
}
