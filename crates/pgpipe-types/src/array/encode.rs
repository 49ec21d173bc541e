//! Writing the binary array format (see [`wire`](super::wire)): one
//! array from its dimensions and elements, or a multi-dimensional one from
//! rows that each encode as an array of one dimension less.

use std::fmt::Write as _;

use bytes::BytesMut;
use pgpipe_proto::put::PutInline;

use super::wire::{dims_product, subscripts, RawArray, HEADER_LEN};
use super::Dimension;
use crate::{BoxError, Encode, IsNull, Type};

/// The element type to encode with for a parameter of type `ty`.
fn element_type<'t>(ty: &'t Type, rust_type: &str) -> Result<&'t Type, BoxError> {
    ty.element().ok_or_else(|| -> BoxError {
        if ty.is_known() {
            format!(
                "{rust_type} is an array and cannot be sent as {ty}, which is not an array type"
            )
            .into()
        } else {
            format!(
                "{rust_type} is an array, but the parameter type ({ty}) is not known, so its \
                 element type is not either; declare the parameter type in SQL (`$1::int4[]`) \
                 or prepare the statement"
            )
            .into()
        }
    })
}

/// Whether every element can be sent as the element type of `ty`; for no
/// elements, whether `declared` (the element's static type) matches it.
pub(crate) fn accepts_elements<'v, T: Encode + 'v>(
    ty: &Type,
    declared: crate::TypeRef,
    elements: impl IntoIterator<Item = &'v T>,
) -> bool {
    let Some(element) = ty.element() else {
        return false;
    };
    let mut any = false;
    for v in elements {
        if !v.accepts(element) {
            return false;
        }
        any = true;
    }
    any || declared.matches(element)
}

/// Writes a binary array of type `ty` with the given dimensions (already
/// checked against the element count, see [`check_dims`](super::wire::check_dims)).
pub(crate) fn encode_array<'v, T: Encode + 'v>(
    ty: &Type,
    dims: &[Dimension],
    elements: impl IntoIterator<Item = &'v T>,
    rust_type: &str,
    buf: &mut BytesMut,
) -> Result<IsNull, BoxError> {
    let element = element_type(ty, rust_type)?;
    // An empty array is sent without dimensions, as PostgreSQL stores it.
    let dims = if dims.iter().any(|d| d.len == 0) {
        &[][..]
    } else {
        dims
    };
    buf.reserve(HEADER_LEN + dims.len() * 8);
    buf.put_i32_inline(dims.len() as i32);
    let flags_at = buf.len();
    buf.put_i32_inline(0);
    buf.put_u32_inline(element.oid());
    for dim in dims {
        buf.put_i32_inline(dim.len as i32);
        buf.put_i32_inline(dim.lower_bound);
    }
    let mut has_null = false;
    for (index, v) in elements.into_iter().enumerate() {
        if !v.accepts(element) {
            return Err(format!(
                "{ty} element {}: Rust type {} cannot be sent as {element}",
                subscripts(dims, index),
                v.rust_type()
            )
            .into());
        }
        let len_at = buf.len();
        buf.put_i32_inline(0);
        let is_null = v.encode(element, buf).map_err(|e| -> BoxError {
            format!("{ty} element {}: {e}", subscripts(dims, index)).into()
        })?;
        match is_null {
            IsNull::Yes => {
                buf.truncate(len_at + 4);
                buf[len_at..len_at + 4].copy_from_slice(&(-1i32).to_be_bytes());
                has_null = true;
            }
            IsNull::No => {
                let len = buf.len() - len_at - 4;
                let len = i32::try_from(len).map_err(|_| -> BoxError {
                    format!(
                        "{ty} element {}: {len} bytes is more than a value can hold",
                        subscripts(dims, index)
                    )
                    .into()
                })?;
                buf[len_at..len_at + 4].copy_from_slice(&len.to_be_bytes());
            }
        }
    }
    if has_null {
        buf[flags_at..flags_at + 4].copy_from_slice(&1i32.to_be_bytes());
    }
    Ok(IsNull::No)
}

/// Writes a multi-dimensional array whose rows are array values themselves
/// (`Vec<Vec<T>>` and deeper): each row is encoded as an array of `ty`, the
/// rows' shapes must agree, and their element data is joined under one
/// header with the row count as the first dimension.
pub(crate) fn encode_rows<T: Encode>(
    ty: &Type,
    rows: &[T],
    rust_type: &str,
    buf: &mut BytesMut,
) -> Result<IsNull, BoxError> {
    let element = element_type(ty, rust_type)?;
    let mut data = BytesMut::new();
    let mut row_dims: Vec<Dimension> = Vec::new();
    let mut has_null = false;
    for (i, row) in rows.iter().enumerate() {
        let at = || format!("{ty} row [{}]", i + 1);
        if !row.accepts(ty) {
            return Err(format!(
                "{}: Rust type {} cannot be sent as {ty}",
                at(),
                row.rust_type()
            )
            .into());
        }
        let start = data.len();
        match row.encode(ty, &mut data) {
            Ok(IsNull::No) => {}
            Ok(IsNull::Yes) => {
                return Err(format!(
                    "{}: is NULL; a sub-array of a PostgreSQL array cannot be NULL",
                    at()
                )
                .into())
            }
            Err(e) => return Err(format!("{}: {e}", at()).into()),
        }
        let (dims, header_len, row_has_null) = {
            let parsed = RawArray::parse(ty, &data[start..])
                .map_err(|e| -> BoxError { format!("{}: {e}", at()).into() })?;
            (parsed.dims().to_vec(), parsed.header_len, parsed.has_null)
        };
        if i == 0 {
            row_dims = dims;
        } else if dims != row_dims {
            return Err(format!(
                "{} has dimensions {} but row [1] has {}; PostgreSQL arrays are rectangular",
                at(),
                shape(&dims),
                shape(&row_dims)
            )
            .into());
        }
        has_null |= row_has_null;
        let end = data.len();
        data.copy_within(start + header_len..end, start);
        data.truncate(end - header_len);
    }
    let mut dims = Vec::with_capacity(row_dims.len() + 1);
    if !row_dims.is_empty() {
        dims.push(Dimension {
            len: rows.len(),
            lower_bound: 1,
        });
        dims.extend_from_slice(&row_dims);
    }
    dims_product(&dims)
        .map_err(|e| -> BoxError { format!("cannot send {rust_type} as {ty}: {e}").into() })?;
    buf.reserve(HEADER_LEN + dims.len() * 8 + data.len());
    buf.put_i32_inline(dims.len() as i32);
    buf.put_i32_inline(i32::from(has_null));
    buf.put_u32_inline(element.oid());
    for dim in &dims {
        buf.put_i32_inline(dim.len as i32);
        buf.put_i32_inline(dim.lower_bound);
    }
    buf.put_slice_inline(&data);
    Ok(IsNull::No)
}

/// A shape in PostgreSQL's `array_dims` notation (`[1:2][0:3]`).
fn shape(dims: &[Dimension]) -> String {
    if dims.is_empty() {
        return "none (empty)".to_owned();
    }
    let mut out = String::new();
    for d in dims {
        let _ = write!(out, "[{}:{}]", d.lower_bound, d.upper_bound());
    }
    out
}
