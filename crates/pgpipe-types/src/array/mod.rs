//! Arrays: `Vec<T>`, `Vec<Option<T>>`, slices and `[T; N]` for
//! one-dimensional arrays; nested (`Vec<Vec<T>>`, `[[T; 3]; 2]`, ...) for
//! rectangular multi-dimensional ones, one level per dimension;
//! [`Array<T>`] for any shape with its lower bounds.
//!
//! The element type written into an array parameter is always the element
//! type of the parameter's PostgreSQL type (for user-defined element types,
//! the type the client resolved), never a guess from the Rust type.
//! `Vec<u8>` and `&[u8]` are `bytea`, not arrays; `u8` has no codec of its
//! own, so the two never overlap.
//!
//! ```
//! use bytes::BytesMut;
//! use pgpipe_types::{Decode, Encode, StaticType, Type, TypeRef};
//!
//! assert_eq!(<Vec<i64> as StaticType>::TYPE, TypeRef::Oid(1016)); // int8[]
//! let mut buf = BytesMut::new();
//! vec![Some(1i32), None].encode(&Type::INT4_ARRAY, &mut buf).unwrap();
//! let back = Vec::<Option<i32>>::decode(&Type::INT4_ARRAY, &buf).unwrap();
//! assert_eq!(back, [Some(1), None]);
//! assert!(Vec::<i32>::decode(&Type::INT4_ARRAY, &buf).is_err()); // NULL needs Option
//!
//! // '{{1,2},{3,4}}'::int4[]
//! let grid = vec![vec![1i32, 2], vec![3, 4]];
//! assert_eq!(grid.type_ref(), TypeRef::Oid(1007)); // int4[] too
//! buf.clear();
//! grid.encode(&Type::INT4_ARRAY, &mut buf).unwrap();
//! assert_eq!(Vec::<Vec<i32>>::decode(&Type::INT4_ARRAY, &buf).unwrap(), grid);
//! assert!(vec![vec![1i32, 2], vec![3]].encode(&Type::INT4_ARRAY, &mut buf).is_err()); // ragged
//! ```

use bytes::BytesMut;

use crate::{BoxError, Decode, Encode, IsNull, StaticType, Type, TypeRef};

mod encode;
mod md;
mod wire;

use encode::{accepts_elements, encode_array, encode_rows};
pub use md::{Array, ArrayError, Dimension};
use wire::RawArray;

/// The single dimension of a one-dimensional array of `len` elements
/// (lower bound 1), or none for an empty one.
fn one_dim(len: usize, ty: &Type, rust_type: &str) -> Result<[Dimension; 1], BoxError> {
    if len > i32::MAX as usize {
        return Err(format!(
            "{rust_type} has {len} elements, more than a PostgreSQL {ty} can hold"
        )
        .into());
    }
    Ok([Dimension {
        len,
        lower_bound: 1,
    }])
}

/// Whether `t` is a built-in array type (so a slice of it is a
/// multi-dimensional array of the same type).
fn is_array_type(t: TypeRef) -> bool {
    match t {
        TypeRef::Oid(oid) => oid != 0 && Type::from_oid(oid).element().is_some(),
        TypeRef::ArrayOf(_) => true,
        TypeRef::Named(_) => false,
    }
}

/// The type a slice of `T` declares: `T`'s array type, or, when `T` is an
/// array itself (`Vec<Vec<i32>>`), the same array type: PostgreSQL array
/// types hold any number of dimensions.
fn slice_type_ref<T: Encode + StaticType>(values: &[T]) -> TypeRef {
    if is_array_type(T::TYPE) {
        return T::TYPE;
    }
    let declared = T::TYPE.array();
    if declared == TypeRef::Oid(0) {
        // Deeper nestings have no static type; the first row knows it.
        if let Some(first) = values.first().map(Encode::type_ref) {
            if is_array_type(first) {
                return first;
            }
        }
    }
    declared
}

/// Whether a slice of `T` can be sent as `ty`: every value as the element
/// type, or every value as `ty` itself (rows of a multi-dimensional array).
fn slice_accepts<T: Encode + StaticType>(values: &[T], ty: &Type) -> bool {
    if values.is_empty() {
        return ty
            .element()
            .is_some_and(|e| T::TYPE.matches(e) || T::TYPE.matches(ty));
    }
    accepts_elements(ty, T::TYPE, values)
        || (ty.element().is_some() && values.iter().all(|v| v.accepts(ty)))
}

fn encode_slice<T: Encode + StaticType>(
    values: &[T],
    ty: &Type,
    rust_type: &str,
    buf: &mut BytesMut,
) -> Result<IsNull, BoxError> {
    if let (Some(first), Some(element)) = (values.first(), ty.element()) {
        if !first.accepts(element) && first.accepts(ty) {
            return encode_rows(ty, values, rust_type, buf);
        }
    }
    let dims = one_dim(values.len(), ty, rust_type)?;
    encode_array(ty, &dims, values, rust_type, buf)
}

impl<T: StaticType> StaticType for [T] {
    const TYPE: TypeRef = T::TYPE.array();
}

impl<T: StaticType> StaticType for Vec<T> {
    const TYPE: TypeRef = T::TYPE.array();
}

impl<T: StaticType, const N: usize> StaticType for [T; N] {
    const TYPE: TypeRef = T::TYPE.array();
}

impl<T: Encode + StaticType> Encode for [T] {
    fn type_ref(&self) -> TypeRef {
        slice_type_ref(self)
    }
    fn accepts(&self, ty: &Type) -> bool {
        slice_accepts(self, ty)
    }
    fn encode(&self, ty: &Type, buf: &mut BytesMut) -> Result<IsNull, BoxError> {
        encode_slice(self, ty, self.rust_type(), buf)
    }
    fn rust_type(&self) -> &'static str {
        std::any::type_name::<[T]>()
    }
}

impl<T: Encode + StaticType> Encode for Vec<T> {
    fn type_ref(&self) -> TypeRef {
        slice_type_ref(self)
    }
    fn accepts(&self, ty: &Type) -> bool {
        slice_accepts(self, ty)
    }
    fn encode(&self, ty: &Type, buf: &mut BytesMut) -> Result<IsNull, BoxError> {
        encode_slice(self, ty, self.rust_type(), buf)
    }
}

impl<T: Encode + StaticType, const N: usize> Encode for [T; N] {
    fn type_ref(&self) -> TypeRef {
        slice_type_ref(self)
    }
    fn accepts(&self, ty: &Type) -> bool {
        slice_accepts(self, ty)
    }
    fn encode(&self, ty: &Type, buf: &mut BytesMut) -> Result<IsNull, BoxError> {
        encode_slice(self, ty, self.rust_type(), buf)
    }
}

/// Reads a one-dimensional (or empty) array, or, when `T` reads arrays
/// itself, the rows of a multi-dimensional one; lower bounds are not kept
/// (read [`Array<T>`] to keep them).
fn decode_vec<'a, T: Decode<'a>>(
    ty: &Type,
    raw: &'a [u8],
    rust_type: &str,
) -> Result<Vec<T>, BoxError> {
    let array = RawArray::parse(ty, raw)?;
    let ndim = array.dims().len();
    if !T::accepts(&array.element) && T::accepts(ty) {
        // Nested: `Vec<Vec<T>>` and deeper read one dimension each.
        return match ndim {
            0 => Ok(Vec::new()),
            1 => Err(format!(
                "a 1-dimensional {ty} value cannot be read as {rust_type}, which expects \
                 at least 2 dimensions"
            )
            .into()),
            _ => array.decode_rows(ty),
        };
    }
    if ndim > 1 {
        return Err(format!(
            "a {ndim}-dimensional {ty} value cannot be read as {rust_type}; read it as \
             pgpipe::types::Array<T> (any shape) or as nested Vec<Vec<T>> ({ndim} levels)"
        )
        .into());
    }
    array.decode_elements(ty)
}

/// A one-dimensional array (or an empty one). The lower bound is dropped:
/// `'[0:2]={1,2,3}'` reads as `vec![1, 2, 3]`. A multi-dimensional array
/// reads as nested vectors, one level per dimension (`Vec<Vec<T>>` for 2-D;
/// the rows of a rectangular array), or as [`Array<T>`]. A NULL element is
/// an error unless `T` is an `Option`.
impl<'a, T: Decode<'a>> Decode<'a> for Vec<T> {
    fn accepts(ty: &Type) -> bool {
        accepts_array::<T>(ty)
    }
    fn decode(ty: &Type, raw: &'a [u8]) -> Result<Self, BoxError> {
        decode_vec(ty, raw, std::any::type_name::<Self>())
    }
}

/// A one-dimensional array of exactly `N` elements; any other length is an
/// error.
impl<'a, T: Decode<'a>, const N: usize> Decode<'a> for [T; N] {
    fn accepts(ty: &Type) -> bool {
        accepts_array::<T>(ty)
    }
    fn decode(ty: &Type, raw: &'a [u8]) -> Result<Self, BoxError> {
        let rust_type = std::any::type_name::<Self>();
        let v: Vec<T> = decode_vec(ty, raw, rust_type)?;
        let len = v.len();
        v.try_into().map_err(|_| -> BoxError {
            format!("a {ty} value with {len} elements cannot be read as {rust_type}").into()
        })
    }
}

/// Whether an array of type `ty` can be read into a collection of `T`:
/// `T` reads the element type, or `T` reads `ty` itself (the rows of a
/// multi-dimensional array).
fn accepts_array<'a, T: Decode<'a>>(ty: &Type) -> bool {
    match ty.element() {
        Some(element) => T::accepts(element) || T::accepts(ty),
        None => false,
    }
}

#[cfg(test)]
mod tests;
