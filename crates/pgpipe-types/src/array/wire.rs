//! The binary array format shared by `Vec<T>`, slices and [`Array<T>`]:
//!
//! ```text
//! ndim i32 | has-null flag i32 | element OID u32
//! ndim x (length i32, lower bound i32)
//! per element: length i32 (-1 = NULL), then that many bytes
//! ```
//!
//! Every header value is checked against the bytes actually present before
//! anything is allocated. This file reads the format (`RawArray`) and holds
//! the dimension arithmetic both directions share; writing it is
//! [`encode`](super::encode)'s job.
//!
//! [`Array<T>`]: super::Array

use std::fmt::Write as _;

use super::Dimension;
use crate::{BoxError, Decode, Kind, Oid, Type};

/// PostgreSQL's `MAXDIM`: arrays have at most 6 dimensions.
pub(crate) const MAXDIM: usize = 6;

pub(crate) const HEADER_LEN: usize = 12;

/// A validated array header and the element data that follows it.
pub(crate) struct RawArray<'a> {
    dims: [Dimension; MAXDIM],
    ndim: usize,
    /// The type the elements are decoded with.
    pub(crate) element: Type,
    /// The number of elements the dimensions describe.
    pub(crate) count: usize,
    /// The has-null flag.
    pub(crate) has_null: bool,
    /// The length of the header and dimensions before the element data.
    pub(crate) header_len: usize,
    data: &'a [u8],
}

fn read_i32(raw: &[u8], at: usize) -> i32 {
    i32::from_be_bytes([raw[at], raw[at + 1], raw[at + 2], raw[at + 3]])
}

impl<'a> RawArray<'a> {
    /// Parses and validates the header of a binary array of type `ty`.
    ///
    /// The element type is `ty`'s element type when `ty` is a known array
    /// type (and the header's element OID must match it), else the type of
    /// the OID in the header.
    pub(crate) fn parse(ty: &Type, raw: &'a [u8]) -> Result<Self, BoxError> {
        if ty.schema() == Some(SUBARRAY) {
            return Self::parse_subarray(ty, raw);
        }
        if raw.len() < HEADER_LEN {
            return Err(format!(
                "invalid binary {ty} value: the array header needs {HEADER_LEN} bytes, got {}",
                raw.len()
            )
            .into());
        }
        let ndim = read_i32(raw, 0);
        let flags = read_i32(raw, 4);
        let element_oid = read_i32(raw, 8) as Oid;
        let ndim = match usize::try_from(ndim) {
            Ok(n) if n <= MAXDIM => n,
            _ => {
                return Err(format!(
                    "invalid binary {ty} value: {ndim} dimensions (PostgreSQL allows 0 to {MAXDIM})"
                )
                .into())
            }
        };
        if flags != 0 && flags != 1 {
            return Err(format!(
                "invalid binary {ty} value: has-null flag is {flags}, expected 0 or 1"
            )
            .into());
        }
        let element = match ty.element() {
            Some(expected) if expected.oid() != element_oid => {
                return Err(format!(
                    "invalid binary {ty} value: element type OID is {element_oid} ({}), \
                     expected {} ({expected})",
                    Type::from_oid(element_oid),
                    expected.oid(),
                )
                .into())
            }
            Some(expected) => expected.clone(),
            None => Type::from_oid(element_oid),
        };
        let dims_end = HEADER_LEN + ndim * 8;
        if raw.len() < dims_end {
            return Err(format!(
                "invalid binary {ty} value: {ndim} dimensions need {dims_end} header bytes, got {}",
                raw.len()
            )
            .into());
        }
        let mut dims = [Dimension {
            len: 0,
            lower_bound: 1,
        }; MAXDIM];
        let mut count: usize = 1;
        for (i, dim) in dims.iter_mut().take(ndim).enumerate() {
            let len = read_i32(raw, HEADER_LEN + i * 8);
            let lower_bound = read_i32(raw, HEADER_LEN + i * 8 + 4);
            let Ok(len) = usize::try_from(len) else {
                return Err(format!(
                    "invalid binary {ty} value: dimension {} has negative length {len}",
                    i + 1
                )
                .into());
            };
            if i64::from(lower_bound) + len as i64 > i64::from(i32::MAX) {
                return Err(format!(
                    "invalid binary {ty} value: dimension {}: lower bound {lower_bound} plus \
                     length {len} exceeds {} (PostgreSQL's limit)",
                    i + 1,
                    i32::MAX
                )
                .into());
            }
            count = count.checked_mul(len).ok_or_else(|| -> BoxError {
                format!("invalid binary {ty} value: the product of the dimension lengths overflows")
                    .into()
            })?;
            *dim = Dimension { len, lower_bound };
        }
        if ndim == 0 {
            count = 0;
        }
        let data = &raw[dims_end..];
        // Every element takes at least its 4-byte length word: a count the
        // data cannot hold is rejected before anything is allocated for it.
        if count > data.len() / 4 {
            return Err(format!(
                "invalid binary {ty} value: the dimensions describe {count} elements \
                 but only {} bytes of element data follow",
                data.len()
            )
            .into());
        }
        let mut this = RawArray {
            dims,
            ndim,
            element,
            count,
            has_null: flags == 1,
            header_len: dims_end,
            data,
        };
        if count == 0 {
            // PostgreSQL's empty array has no dimensions; `'{}'` and a
            // zero-length dimension are the same value.
            this.ndim = 0;
        }
        Ok(this)
    }

    /// A row of a multi-dimensional array handed to a nested decoder: the
    /// element data alone, its shape carried by the marker type (see
    /// [`subarray_type`]).
    fn parse_subarray(ty: &Type, raw: &'a [u8]) -> Result<Self, BoxError> {
        let bad =
            || -> BoxError { format!("internal error: malformed sub-array type {ty:?}").into() };
        let element = ty.element().ok_or_else(bad)?.clone();
        let mut dims = [Dimension {
            len: 0,
            lower_bound: 1,
        }; MAXDIM];
        let mut ndim = 0;
        for part in ty.name().ok_or_else(bad)?.split(',') {
            let (len, lb) = part.split_once(':').ok_or_else(bad)?;
            let dim = dims.get_mut(ndim).ok_or_else(bad)?;
            *dim = Dimension {
                len: len.parse().map_err(|_| bad())?,
                lower_bound: lb.parse().map_err(|_| bad())?,
            };
            ndim += 1;
        }
        let count =
            dims_product(&dims[..ndim]).map_err(|e| -> BoxError { format!("{ty}: {e}").into() })?;
        if count > raw.len() / 4 {
            return Err(bad());
        }
        Ok(RawArray {
            dims,
            ndim,
            element,
            count,
            has_null: false,
            header_len: 0,
            data: raw,
        })
    }

    /// Decodes each row (the sub-arrays along the first dimension) with
    /// `T`, an array reader itself, for `Vec<Vec<T>>` and deeper nestings.
    pub(crate) fn decode_rows<T: Decode<'a>>(&self, ty: &Type) -> Result<Vec<T>, BoxError> {
        let dims = self.dims();
        let Some((outer, inner)) = dims.split_first() else {
            return Ok(Vec::new());
        };
        // Validated with the header: the product of all lengths is `count`.
        let per_row: usize = inner.iter().map(|d| d.len).product();
        let marker = subarray_type(&self.element, inner);
        if !T::accepts(&marker) {
            // `T` reads this array type but not as one of pgpipe's array
            // readers (it would not understand a headerless row).
            return Err(format!(
                "a {}-dimensional {ty} value cannot be read row by row as {}",
                dims.len(),
                std::any::type_name::<T>()
            )
            .into());
        }
        let mut out = Vec::with_capacity(outer.len);
        let mut data = self.data;
        for row in 0..outer.len {
            let start = data;
            for k in 0..per_row {
                if let Err(e) = take_element(&mut data) {
                    return Err(self.element_error(ty, row * per_row + k, e));
                }
            }
            let bytes = &start[..start.len() - data.len()];
            let value = T::decode(&marker, bytes).map_err(|e| -> BoxError {
                format!(
                    "{ty} row [{}]: {e}",
                    i64::from(outer.lower_bound) + row as i64
                )
                .into()
            })?;
            out.push(value);
        }
        if !data.is_empty() {
            return Err(format!(
                "invalid binary {ty} value: {} bytes left after the last of {} elements",
                data.len(),
                self.count
            )
            .into());
        }
        Ok(out)
    }

    /// The dimensions (none for an empty array).
    pub(crate) fn dims(&self) -> &[Dimension] {
        &self.dims[..self.ndim]
    }

    /// Decodes every element with `T`, in storage (row-major) order.
    pub(crate) fn decode_elements<T: Decode<'a>>(&self, ty: &Type) -> Result<Vec<T>, BoxError> {
        if !T::accepts(&self.element) {
            return Err(format!(
                "the elements of this {ty} value have type {}, which cannot be read as {}",
                self.element,
                std::any::type_name::<T>()
            )
            .into());
        }
        let mut out = Vec::with_capacity(self.count);
        let mut data = self.data;
        for index in 0..self.count {
            let value = match take_element(&mut data) {
                Ok(value) => value,
                Err(e) => return Err(self.element_error(ty, index, e)),
            };
            match T::decode_opt(&self.element, value) {
                Ok(v) => out.push(v),
                Err(e) => return Err(self.element_error(ty, index, e)),
            }
        }
        if !data.is_empty() {
            return Err(format!(
                "invalid binary {ty} value: {} bytes left after the last of {} elements",
                data.len(),
                self.count
            )
            .into());
        }
        Ok(out)
    }

    /// An error about one element, naming it by its PostgreSQL subscripts.
    fn element_error(&self, ty: &Type, index: usize, e: BoxError) -> BoxError {
        format!("{ty} element {}: {e}", subscripts(self.dims(), index)).into()
    }
}

/// The schema of the marker type that hands one row of a multi-dimensional
/// array to a nested array decoder (no real schema starts with NUL).
const SUBARRAY: &str = "\0pgpipe sub-array";

/// The marker type for rows of shape `dims` of an array of `element`: an
/// array type whose name carries the shape and whose OID (0) matches no
/// real type, so only pgpipe's array readers accept it. It only travels
/// from [`RawArray::decode_rows`] to the row reader's [`RawArray::parse`].
fn subarray_type(element: &Type, dims: &[Dimension]) -> Type {
    let mut shape = String::new();
    for (i, d) in dims.iter().enumerate() {
        let sep = if i == 0 { "" } else { "," };
        let _ = write!(shape, "{sep}{}:{}", d.len, d.lower_bound);
    }
    Type::new(0, shape, SUBARRAY, 0, Kind::Array(element.clone()))
}

/// Splits one element (length word and bytes) off the front of `data`.
fn take_element<'a>(data: &mut &'a [u8]) -> Result<Option<&'a [u8]>, BoxError> {
    if data.len() < 4 {
        return Err(format!(
            "truncated: {} bytes left where a 4-byte element length was expected",
            data.len()
        )
        .into());
    }
    let len = read_i32(data, 0);
    let rest = &data[4..];
    if len == -1 {
        *data = rest;
        return Ok(None);
    }
    let Ok(len) = usize::try_from(len) else {
        return Err(format!("invalid element length {len}").into());
    };
    if rest.len() < len {
        return Err(format!(
            "truncated: element length is {len} but only {} bytes are left",
            rest.len()
        )
        .into());
    }
    let (value, rest) = rest.split_at(len);
    *data = rest;
    Ok(Some(value))
}

/// The PostgreSQL subscripts (`[1][3]`) of the element at flat position
/// `index` in row-major order.
pub(crate) fn subscripts(dims: &[Dimension], mut index: usize) -> String {
    let mut subs = [0i64; MAXDIM];
    for (i, dim) in dims.iter().enumerate().rev() {
        let len = dim.len.max(1);
        subs[i] = i64::from(dim.lower_bound) + (index % len) as i64;
        index /= len;
    }
    let mut out = String::new();
    for s in &subs[..dims.len()] {
        let _ = write!(out, "[{s}]");
    }
    if dims.is_empty() {
        out.push_str("[?]");
    }
    out
}

/// The number of elements `dims` describe (0 for no dimensions), checking
/// PostgreSQL's limits; the message says what is wrong.
pub(crate) fn dims_product(dims: &[Dimension]) -> Result<usize, String> {
    if dims.len() > MAXDIM {
        return Err(format!(
            "{} dimensions (PostgreSQL allows at most {MAXDIM})",
            dims.len()
        ));
    }
    let mut product: usize = 1;
    for (i, dim) in dims.iter().enumerate() {
        if dim.len > i32::MAX as usize {
            return Err(format!(
                "dimension {} has length {}, more than PostgreSQL's {}",
                i + 1,
                dim.len,
                i32::MAX
            ));
        }
        if i64::from(dim.lower_bound) + dim.len as i64 > i64::from(i32::MAX) {
            return Err(format!(
                "dimension {}: lower bound {} plus length {} exceeds {} (PostgreSQL's limit)",
                i + 1,
                dim.lower_bound,
                dim.len,
                i32::MAX
            ));
        }
        product = product
            .checked_mul(dim.len)
            .ok_or_else(|| "the product of the dimension lengths overflows".to_owned())?;
    }
    Ok(if dims.is_empty() { 0 } else { product })
}

/// Checks that `dims` describe exactly `count` elements (see
/// [`dims_product`]).
pub(crate) fn check_dims(dims: &[Dimension], count: usize) -> Result<(), String> {
    let product = dims_product(dims)?;
    if product != count {
        return Err(format!(
            "the dimensions describe {product} elements but there are {count}"
        ));
    }
    Ok(())
}
