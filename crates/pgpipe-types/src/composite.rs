//! Composite (row) types and anonymous records in PostgreSQL's binary record
//! format.
//!
//! A record value on the wire is a field count (`int4`), then per field its
//! type OID (`oid`), its length (`int4`, -1 for NULL) and that many bytes.
//! [`CompositeWriter`] writes one for a composite type the client has
//! described (fields in the type's order, each with its declared type OID),
//! [`CompositeReader`] reads one, validating every count and length.
//! `#[derive(Composite)]` builds on both; they are public so that hand-written
//! codecs can too.
//!
//! Anonymous records (`SELECT ROW(1, 'a')`, type `record`) decode into Rust
//! tuples by position: `(A, B, ...)` implements [`Decode`] for `record` and
//! for any composite type with as many fields whose types `A`, `B`, ...
//! accept. The server cannot receive anonymous records, so tuples are not
//! [`Encode`]: send a named composite type instead.
//!
//! ```
//! use bytes::BytesMut;
//! use pgpipe_types::{CompositeReader, CompositeWriter, Decode, Field, Kind, Type};
//!
//! let attach = Type::new(16390, "attach", "mail", 16389, Kind::Composite(vec![
//!     Field { name: "filename".into(), type_: Type::TEXT },
//!     Field { name: "size".into(), type_: Type::INT8 },
//! ]));
//!
//! let mut buf = BytesMut::new();
//! let mut w = CompositeWriter::new(&attach, &mut buf).unwrap();
//! w.write("a.txt").unwrap();
//! w.write(&Some(42i64)).unwrap();
//! w.finish().unwrap();
//!
//! let mut r = CompositeReader::new(&attach, &buf).unwrap();
//! let name = r.next_field().unwrap().unwrap();
//! assert_eq!(name.name(), Some("filename"));
//! assert_eq!(name.decode::<&str>().unwrap(), "a.txt");
//! let size = r.next_field().unwrap().unwrap();
//! assert_eq!(size.decode::<Option<i64>>().unwrap(), Some(42));
//! r.finish().unwrap();
//!
//! // The same bytes as a tuple, by position.
//! let (n, s) = <(String, i64)>::decode(&attach, &buf).unwrap();
//! assert_eq!((n.as_str(), s), ("a.txt", 42));
//! ```

use pgpipe_proto::put::PutInline;
use std::borrow::Cow;

use bytes::BytesMut;

use crate::{BoxError, Decode, Encode, Field, IsNull, Kind, Type};

/// The fields of `ty` (domains looked through) when it is a composite type
/// the client has described; `None` for any other type, including the
/// anonymous `record` and a bare OID.
///
/// ```
/// use pgpipe_types::__private::composite_fields;
/// use pgpipe_types::{Field, Kind, Type};
///
/// let pair = Type::new(70000, "pair", "public", 0, Kind::Composite(vec![
///     Field { name: "a".into(), type_: Type::INT4 },
/// ]));
/// assert_eq!(composite_fields(&pair).map(|f| f.len()), Some(1));
/// assert!(composite_fields(&Type::RECORD).is_none());
/// assert!(composite_fields(&Type::from_oid(70000)).is_none());
/// ```
pub fn composite_fields(ty: &Type) -> Option<&[Field]> {
    match ty.base().kind() {
        Kind::Composite(fields) => Some(fields),
        _ => None,
    }
}

/// Writes a value of a composite type in binary record format, one field at
/// a time, in the order of the type's fields.
///
/// Each field is written with the OID of the field's declared type (which
/// the server checks) and encoded for that type, after checking that the
/// Rust value [accepts](Encode::accepts) it. Field counts are checked: a
/// value with too few or too many fields is an error, not a malformed
/// record.
///
/// ```
/// use bytes::BytesMut;
/// use pgpipe_types::{CompositeWriter, Field, Kind, Type};
///
/// let point = Type::new(70001, "point2", "public", 0, Kind::Composite(vec![
///     Field { name: "x".into(), type_: Type::INT4 },
///     Field { name: "y".into(), type_: Type::INT4 },
/// ]));
/// let mut buf = BytesMut::new();
/// let mut w = CompositeWriter::new(&point, &mut buf).unwrap();
/// // Fields can be looked up by name, in the type's order.
/// while let Some(field) = w.next_field() {
///     match field.name.as_str() {
///         "x" => w.write(&1i32).unwrap(),
///         "y" => w.write(&2i32).unwrap(),
///         other => panic!("unexpected field {other}"),
///     }
/// }
/// w.finish().unwrap();
/// assert_eq!(&buf[..4], &[0, 0, 0, 2]); // the field count
/// assert!(CompositeWriter::new(&Type::INT4, &mut buf).is_err());
/// ```
pub struct CompositeWriter<'a> {
    ty: &'a Type,
    fields: &'a [Field],
    buf: &'a mut BytesMut,
    next: usize,
}

/// The type and progress, not the buffer (which holds other messages too).
impl std::fmt::Debug for CompositeWriter<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CompositeWriter")
            .field("ty", &format_args!("{}", self.ty))
            .field("fields", &self.fields.len())
            .field("next", &self.next)
            .finish_non_exhaustive()
    }
}

impl<'a> CompositeWriter<'a> {
    /// Starts a value of the composite type `ty` (a domain over one works
    /// too) and writes its field count. An error unless `ty` is a composite
    /// type the client has described: field types and order come from the
    /// server catalog.
    pub fn new(ty: &'a Type, buf: &'a mut BytesMut) -> Result<CompositeWriter<'a>, BoxError> {
        let fields = composite_fields(ty).ok_or_else(|| not_composite(ty))?;
        let count = i32::try_from(fields.len())
            .map_err(|_| format!("composite type {ty} has too many fields"))?;
        buf.put_i32_inline(count);
        Ok(CompositeWriter {
            ty,
            fields,
            buf,
            next: 0,
        })
    }

    /// The composite type being written.
    pub fn type_(&self) -> &'a Type {
        self.ty
    }

    /// The type's fields, in order.
    pub fn fields(&self) -> &'a [Field] {
        self.fields
    }

    /// The field the next [`write`](Self::write) is for, or `None` when all
    /// fields have been written.
    pub fn next_field(&self) -> Option<&'a Field> {
        self.fields.get(self.next)
    }

    /// Writes the next field. `None` (any value encoding as
    /// [`IsNull::Yes`]) writes NULL.
    pub fn write<E: Encode + ?Sized>(&mut self, value: &E) -> Result<(), BoxError> {
        let Some(field) = self.fields.get(self.next) else {
            return Err(format!(
                "composite type {} has {} fields; a value of {} writes more",
                self.ty,
                self.fields.len(),
                value.rust_type()
            )
            .into());
        };
        if !value.accepts(&field.type_) {
            return Err(format!(
                "field {:?} of composite type {} has type {}, which Rust type {} cannot be sent as",
                field.name,
                self.ty,
                field.type_,
                value.rust_type()
            )
            .into());
        }
        self.buf.put_u32_inline(field.type_.oid());
        let len_at = self.buf.len();
        self.buf.put_i32_inline(0);
        let start = self.buf.len();
        let is_null = value
            .encode(&field.type_, self.buf)
            .map_err(|e| -> BoxError {
                format!("field {:?} of composite type {}: {e}", field.name, self.ty).into()
            })?;
        let len = match is_null {
            IsNull::Yes => {
                self.buf.truncate(start);
                -1
            }
            IsNull::No => i32::try_from(self.buf.len() - start).map_err(|_| {
                format!(
                    "field {:?} of composite type {} is larger than 2 GiB",
                    field.name, self.ty
                )
            })?,
        };
        self.buf[len_at..start].copy_from_slice(&len.to_be_bytes());
        self.next += 1;
        Ok(())
    }

    /// An error for a field of the type that the Rust type `rust_type` has
    /// no counterpart for (a helper for derived encoders). Call it while
    /// [`next_field`](Self::next_field) is that field.
    pub fn unknown_field(&self, rust_type: &'static str) -> BoxError {
        match self.next_field() {
            Some(field) => format!(
                "field {:?} of composite type {} has no counterpart in Rust type {rust_type}",
                field.name, self.ty
            )
            .into(),
            None => format!("composite type {} has no more fields", self.ty).into(),
        }
    }

    /// Checks that the type has exactly `count` fields, the number the Rust
    /// type `rust_type` has (a helper for derived encoders, which match
    /// fields by name).
    pub fn expect_fields(&self, count: usize, rust_type: &'static str) -> Result<(), BoxError> {
        check_count(self.ty, self.fields.len(), count, rust_type)
    }

    /// Ends the value; an error if fields are left unwritten.
    pub fn finish(self) -> Result<IsNull, BoxError> {
        if self.next != self.fields.len() {
            return Err(format!(
                "composite type {} has {} fields, but only {} were written",
                self.ty,
                self.fields.len(),
                self.next
            )
            .into());
        }
        Ok(IsNull::No)
    }
}

/// Reads a value in binary record format: a composite type's value or an
/// anonymous `record`.
///
/// When the column's type is a composite the client has described, each
/// field gets its described name and type (and the OID on the wire must
/// agree with it); otherwise (`record`, or a type known only by OID) each
/// field gets the type named by the OID on the wire and no name. Every count
/// and length is validated: malformed bytes are an error, never a panic or
/// a read past the value.
///
/// ```
/// use pgpipe_types::{CompositeReader, Type};
///
/// // ROW(7, NULL) as the server sends it for `record`.
/// let raw = [0, 0, 0, 2, 0, 0, 0, 23, 0, 0, 0, 4, 0, 0, 0, 7, 0, 0, 0, 25, 255, 255, 255, 255];
/// let mut r = CompositeReader::new(&Type::RECORD, &raw).unwrap();
/// assert_eq!(r.len(), 2);
/// let first = r.next_field().unwrap().unwrap();
/// assert_eq!(first.type_(), &Type::INT4);
/// assert_eq!(first.decode::<i32>().unwrap(), 7);
/// let second = r.next_field().unwrap().unwrap();
/// assert_eq!(second.value(), None);
/// assert!(second.decode::<String>().is_err()); // NULL needs Option<String>
/// assert!(r.next_field().unwrap().is_none());
/// r.finish().unwrap();
///
/// // A count larger than the bytes, or a length past the end, is an error,
/// // not a panic.
/// assert!(CompositeReader::new(&Type::RECORD, &[0, 0, 0, 9]).is_err());
/// let mut r = CompositeReader::new(&Type::RECORD, &raw[..20]).unwrap();
/// assert!(r.next_field().is_ok());
/// assert!(r.next_field().is_err());
/// ```
pub struct CompositeReader<'t, 'a> {
    ty: &'t Type,
    fields: Option<&'t [Field]>,
    raw: &'a [u8],
    pos: usize,
    count: usize,
    index: usize,
}

/// The type and progress, not the value's bytes.
impl std::fmt::Debug for CompositeReader<'_, '_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CompositeReader")
            .field("ty", &format_args!("{}", self.ty))
            .field("count", &self.count)
            .field("index", &self.index)
            .finish_non_exhaustive()
    }
}

impl<'t, 'a> CompositeReader<'t, 'a> {
    /// Starts reading `raw`, a value of type `ty`, and reads its field
    /// count. For a described composite type the count must equal the
    /// type's field count.
    pub fn new(ty: &'t Type, raw: &'a [u8]) -> Result<CompositeReader<'t, 'a>, BoxError> {
        let count = raw
            .get(..4)
            .map(|b| i32::from_be_bytes([b[0], b[1], b[2], b[3]]))
            .ok_or_else(|| {
                malformed(
                    ty,
                    format!("{} bytes, too short for a field count", raw.len()),
                )
            })?;
        let count = usize::try_from(count)
            .map_err(|_| malformed(ty, format!("negative field count {count}")))?;
        // Every field takes at least 8 bytes: an OID and a length.
        if count > (raw.len() - 4) / 8 {
            return Err(malformed(
                ty,
                format!("{count} fields cannot fit in {} bytes", raw.len()),
            ));
        }
        let fields = composite_fields(ty);
        if let Some(fields) = fields {
            if fields.len() != count {
                return Err(format!(
                    "composite type {ty} has {} fields, but the value has {count} (the type changed since the client described it?)",
                    fields.len()
                )
                .into());
            }
        }
        Ok(CompositeReader {
            ty,
            fields,
            raw,
            pos: 4,
            count,
            index: 0,
        })
    }

    /// The type being read.
    pub fn type_(&self) -> &'t Type {
        self.ty
    }

    /// The described fields, when the type is a described composite.
    pub fn fields(&self) -> Option<&'t [Field]> {
        self.fields
    }

    /// The number of fields in the value.
    pub fn len(&self) -> usize {
        self.count
    }

    /// Whether the value has no fields (`ROW()`).
    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// Checks that the value has exactly `count` fields, the number the Rust
    /// type `rust_type` has.
    pub fn expect_fields(&self, count: usize, rust_type: &'static str) -> Result<(), BoxError> {
        check_count(self.ty, self.count, count, rust_type)
    }

    /// Reads the next field, or `None` after the last one.
    pub fn next_field(&mut self) -> Result<Option<CompositeField<'t, 'a>>, BoxError> {
        if self.index == self.count {
            return Ok(None);
        }
        let index = self.index;
        let header = self
            .raw
            .get(self.pos..self.pos + 8)
            .ok_or_else(|| malformed(self.ty, format!("field {index} is cut short")))?;
        let oid = u32::from_be_bytes([header[0], header[1], header[2], header[3]]);
        let len = i32::from_be_bytes([header[4], header[5], header[6], header[7]]);
        self.pos += 8;
        let value = match len {
            -1 => None,
            len if len < 0 => {
                return Err(malformed(
                    self.ty,
                    format!("field {index} has length {len}"),
                ))
            }
            len => {
                let end = self.pos + len as usize;
                let value = self.raw.get(self.pos..end).ok_or_else(|| {
                    malformed(
                        self.ty,
                        format!(
                            "field {index} declares {len} bytes, but {} remain",
                            self.raw.len() - self.pos
                        ),
                    )
                })?;
                self.pos = end;
                Some(value)
            }
        };
        let (name, type_) = match self.fields {
            Some(fields) => {
                let field = &fields[index];
                if field.type_.oid() != oid {
                    return Err(format!(
                        "field {:?} of composite type {} has type {}, but the value's field has type OID {oid} (the type changed since the client described it?)",
                        field.name, self.ty, field.type_
                    )
                    .into());
                }
                (Some(field.name.as_str()), Cow::Borrowed(&field.type_))
            }
            None => (None, Cow::Owned(Type::from_oid(oid))),
        };
        self.index += 1;
        Ok(Some(CompositeField {
            composite: self.ty,
            index,
            name,
            type_,
            value,
        }))
    }

    /// Reads the next field, which must exist (a helper for positional
    /// decoders that checked the count with
    /// [`expect_fields`](Self::expect_fields)).
    pub fn next_required(&mut self) -> Result<CompositeField<'t, 'a>, BoxError> {
        let index = self.index;
        self.next_field()?.ok_or_else(|| {
            format!(
                "a value of {} has {} fields; field {index} is missing",
                self.ty, self.count
            )
            .into()
        })
    }

    /// Ends the value: every field must have been read and no bytes may
    /// follow the last one.
    pub fn finish(self) -> Result<(), BoxError> {
        if self.index != self.count {
            return Err(format!(
                "a value of {} has {} fields, but only {} were read",
                self.ty, self.count, self.index
            )
            .into());
        }
        if self.pos != self.raw.len() {
            return Err(malformed(
                self.ty,
                format!("{} bytes follow the last field", self.raw.len() - self.pos),
            ));
        }
        Ok(())
    }
}

/// One field of a record value read by [`CompositeReader`].
#[derive(Debug, Clone)]
pub struct CompositeField<'t, 'a> {
    composite: &'t Type,
    index: usize,
    name: Option<&'t str>,
    type_: Cow<'t, Type>,
    value: Option<&'a [u8]>,
}

impl<'t, 'a> CompositeField<'t, 'a> {
    /// The field's position, from 0.
    pub fn index(&self) -> usize {
        self.index
    }

    /// The field's name, when the composite type is described (`None` for
    /// the fields of an anonymous `record`).
    pub fn name(&self) -> Option<&'t str> {
        self.name
    }

    /// The field's name, or an error saying that the composite type
    /// `self` belongs to is not described, so fields cannot be matched by
    /// name to Rust type `rust_type`.
    pub fn require_name(&self, rust_type: &'static str) -> Result<&'t str, BoxError> {
        self.name.ok_or_else(|| {
            format!(
                "{rust_type} matches fields by name, but {} is not a described composite type (its field names are unknown)",
                self.composite
            )
            .into()
        })
    }

    /// The field's type.
    pub fn type_(&self) -> &Type {
        &self.type_
    }

    /// The field's raw binary value, `None` for NULL.
    pub fn value(&self) -> Option<&'a [u8]> {
        self.value
    }

    /// Decodes the field as `T`, checking first that `T` accepts the field's
    /// type. Errors name the field and the composite type.
    pub fn decode<T: Decode<'a>>(&self) -> Result<T, BoxError> {
        if !T::accepts(&self.type_) {
            return Err(format!(
                "{} of {} has type {}, which cannot be read as Rust type {}",
                self.describe(),
                self.composite,
                self.type_(),
                std::any::type_name::<T>()
            )
            .into());
        }
        T::decode_opt(&self.type_, self.value).map_err(|e| -> BoxError {
            format!(
                "{} of {} as {}: {e}",
                self.describe(),
                self.composite,
                std::any::type_name::<T>()
            )
            .into()
        })
    }

    /// An error for a field that Rust type `rust_type` has no counterpart
    /// for (a helper for derived decoders).
    pub fn unknown(&self, rust_type: &'static str) -> BoxError {
        format!(
            "{} of {} has no counterpart in Rust type {rust_type}",
            self.describe(),
            self.composite
        )
        .into()
    }

    fn describe(&self) -> String {
        match self.name {
            Some(name) => format!("field {name:?}"),
            None => format!("field {}", self.index),
        }
    }
}

/// An error for a field that a decoded value lacks (a helper for derived
/// decoders: the count and names are checked, so this means the type's
/// description changed).
pub fn missing_field(ty: &Type, field: &str, rust_type: &'static str) -> BoxError {
    format!("a value of {ty} has no field {field:?}, which Rust type {rust_type} needs").into()
}

fn check_count(
    ty: &Type,
    has: usize,
    want: usize,
    rust_type: &'static str,
) -> Result<(), BoxError> {
    if has == want {
        return Ok(());
    }
    Err(format!("{ty} has {has} fields, but Rust type {rust_type} has {want}").into())
}

fn not_composite(ty: &Type) -> BoxError {
    if ty.is_known() {
        format!("{ty} is not a composite type").into()
    } else {
        format!(
            "{ty} is not described (the client has not looked it up), so its fields are unknown"
        )
        .into()
    }
}

fn malformed(ty: &Type, what: String) -> BoxError {
    format!("invalid binary {ty} value: {what}").into()
}

/// Whether a positional reader (a tuple) can read type `ty`: any anonymous
/// `record` (field types are checked per value), or a composite type with
/// `count` fields whose types `accepts` approves by position.
fn tuple_accepts(ty: &Type, count: usize, accepts: &[fn(&Type) -> bool]) -> bool {
    match composite_fields(ty) {
        Some(fields) => {
            fields.len() == count && fields.iter().zip(accepts).all(|(f, ok)| ok(&f.type_))
        }
        None => ty.base().oid() == Type::RECORD.oid(),
    }
}

macro_rules! tuple_decode {
    ($n:literal; $($T:ident),+) => {
        /// Reads an anonymous `record` (or a composite type) by position.
        impl<'a, $($T: Decode<'a>),+> Decode<'a> for ($($T,)+) {
            fn accepts(ty: &Type) -> bool {
                tuple_accepts(ty, $n, &[$(<$T as Decode<'a>>::accepts),+])
            }

            fn decode(ty: &Type, raw: &'a [u8]) -> Result<Self, BoxError> {
                let mut r = CompositeReader::new(ty, raw)?;
                r.expect_fields($n, std::any::type_name::<Self>())?;
                let value = ($(r.next_required()?.decode::<$T>()?,)+);
                r.finish()?;
                Ok(value)
            }
        }
    };
}

tuple_decode!(1; A);
tuple_decode!(2; A, B);
tuple_decode!(3; A, B, C);
tuple_decode!(4; A, B, C, D);
tuple_decode!(5; A, B, C, D, E);
tuple_decode!(6; A, B, C, D, E, F);
tuple_decode!(7; A, B, C, D, E, F, G);
tuple_decode!(8; A, B, C, D, E, F, G, H);
tuple_decode!(9; A, B, C, D, E, F, G, H, I);
tuple_decode!(10; A, B, C, D, E, F, G, H, I, J);
tuple_decode!(11; A, B, C, D, E, F, G, H, I, J, K);
tuple_decode!(12; A, B, C, D, E, F, G, H, I, J, K, L);
tuple_decode!(13; A, B, C, D, E, F, G, H, I, J, K, L, M);
tuple_decode!(14; A, B, C, D, E, F, G, H, I, J, K, L, M, N);
tuple_decode!(15; A, B, C, D, E, F, G, H, I, J, K, L, M, N, O);
tuple_decode!(16; A, B, C, D, E, F, G, H, I, J, K, L, M, N, O, P);

#[cfg(test)]
mod tests {
    use super::*;

    fn attach() -> Type {
        Type::new(
            16390,
            "attach",
            "mail",
            16389,
            Kind::Composite(vec![
                Field {
                    name: "filename".into(),
                    type_: Type::TEXT,
                },
                Field {
                    name: "type".into(),
                    type_: Type::TEXT,
                },
                Field {
                    name: "size".into(),
                    type_: Type::INT8,
                },
            ]),
        )
    }

    #[test]
    fn debug_shows_type_and_progress_not_bytes() {
        let ty = attach();
        let mut buf = BytesMut::from(&b"secret"[..]);
        let mut w = CompositeWriter::new(&ty, &mut buf).unwrap();
        w.write(&"a.txt").unwrap();
        assert_eq!(
            format!("{w:?}"),
            "CompositeWriter { ty: mail.attach, fields: 3, next: 1, .. }"
        );
        let raw = record(&[(25, Some(b"secret"))]);
        let r = CompositeReader::new(&Type::RECORD, &raw).unwrap();
        assert_eq!(
            format!("{r:?}"),
            "CompositeReader { ty: record, count: 1, index: 0, .. }"
        );
    }

    /// A record as the server sends it.
    fn record(fields: &[(u32, Option<&[u8]>)]) -> Vec<u8> {
        let mut out = (fields.len() as i32).to_be_bytes().to_vec();
        for (oid, value) in fields {
            out.extend_from_slice(&oid.to_be_bytes());
            match value {
                Some(v) => {
                    out.extend_from_slice(&(v.len() as i32).to_be_bytes());
                    out.extend_from_slice(v);
                }
                None => out.extend_from_slice(&(-1i32).to_be_bytes()),
            }
        }
        out
    }

    #[test]
    fn writer_matches_the_server_format() {
        let ty = attach();
        let mut buf = BytesMut::new();
        let mut w = CompositeWriter::new(&ty, &mut buf).unwrap();
        w.write("a.txt").unwrap();
        w.write(&None::<String>).unwrap();
        w.write(&7i64).unwrap();
        assert!(w.next_field().is_none());
        assert_eq!(w.finish().unwrap(), IsNull::No);
        let expected = record(&[
            (25, Some(b"a.txt")),
            (25, None),
            (20, Some(&7i64.to_be_bytes())),
        ]);
        assert_eq!(&buf[..], &expected[..]);
    }

    #[test]
    fn writer_checks_counts_and_types() {
        let ty = attach();
        let mut buf = BytesMut::new();
        let mut w = CompositeWriter::new(&ty, &mut buf).unwrap();
        let err = w.write(&1i32).unwrap_err().to_string();
        assert!(
            err.contains("field \"filename\" of composite type mail.attach has type text"),
            "{err}"
        );
        assert!(err.contains("i32"), "{err}");
        w.write("x").unwrap();
        let err = w.finish().unwrap_err().to_string();
        assert!(
            err.contains("has 3 fields, but only 1 were written"),
            "{err}"
        );

        let mut w = CompositeWriter::new(&ty, &mut buf).unwrap();
        for _ in 0..2 {
            w.write("x").unwrap();
        }
        w.write(&1i64).unwrap();
        let err = w.write(&1i64).unwrap_err().to_string();
        assert!(err.contains("writes more"), "{err}");
        assert!(w.expect_fields(3, "Attach").is_ok());
        let err = w.expect_fields(2, "Attach").unwrap_err().to_string();
        assert_eq!(err, "mail.attach has 3 fields, but Rust type Attach has 2");

        let err = CompositeWriter::new(&Type::from_oid(16390), &mut buf)
            .err()
            .unwrap()
            .to_string();
        assert!(err.contains("is not described"), "{err}");
        let err = CompositeWriter::new(&Type::TEXT, &mut buf)
            .err()
            .unwrap()
            .to_string();
        assert_eq!(err, "text is not a composite type");
    }

    #[test]
    fn reader_uses_described_fields() {
        let ty = attach();
        let raw = record(&[
            (25, Some(b"a.txt")),
            (25, None),
            (20, Some(&7i64.to_be_bytes())),
        ]);
        let mut r = CompositeReader::new(&ty, &raw).unwrap();
        assert_eq!(r.len(), 3);
        let f = r.next_field().unwrap().unwrap();
        assert_eq!((f.index(), f.name()), (0, Some("filename")));
        // Borrowed decodes point into the value.
        let s: &str = f.decode().unwrap();
        assert_eq!(s.as_ptr(), raw[12..].as_ptr());
        let f = r.next_field().unwrap().unwrap();
        assert_eq!(f.decode::<Option<String>>().unwrap(), None);
        let err = f.decode::<String>().unwrap_err().to_string();
        assert!(
            err.starts_with(
                "field \"type\" of mail.attach as alloc::string::String: unexpected NULL"
            ),
            "{err}"
        );
        let f = r.next_field().unwrap().unwrap();
        let err = f.decode::<i32>().unwrap_err().to_string();
        assert_eq!(
            err,
            "field \"size\" of mail.attach has type int8, which cannot be read as Rust type i32"
        );
        assert_eq!(f.decode::<i64>().unwrap(), 7);
        assert!(r.next_field().unwrap().is_none());
        r.finish().unwrap();
    }

    #[test]
    fn reader_rejects_a_changed_type() {
        let ty = attach();
        let two = record(&[(25, Some(b"a")), (25, Some(b"b"))]);
        let err = CompositeReader::new(&ty, &two).err().unwrap().to_string();
        assert!(err.contains("has 3 fields, but the value has 2"), "{err}");
        let wrong_oid = record(&[
            (25, Some(b"a")),
            (25, Some(b"b")),
            (23, Some(&[0, 0, 0, 1])),
        ]);
        let mut r = CompositeReader::new(&ty, &wrong_oid).unwrap();
        r.next_field().unwrap();
        r.next_field().unwrap();
        let err = r.next_field().unwrap_err().to_string();
        assert!(err.contains("field \"size\" of composite type mail.attach has type int8, but the value's field has type OID 23"), "{err}");
    }

    #[test]
    fn malformed_records_are_errors_not_panics() {
        let ok = record(&[(23, Some(&[0, 0, 0, 1])), (25, Some(b"abc"))]);
        // Every truncation of a valid value, and every single-byte
        // corruption, must be an error or a value, never a panic.
        for cut in 0..ok.len() {
            let res = <(i32, String)>::decode(&Type::RECORD, &ok[..cut]);
            assert!(res.is_err(), "cut at {cut}");
        }
        for i in 0..ok.len() {
            for b in [0u8, 1, 0x7f, 0x80, 0xff] {
                let mut bad = ok.clone();
                bad[i] = b;
                let _ = <(i32, String)>::decode(&Type::RECORD, &bad);
                let _ = <(Option<i64>, Option<&str>)>::decode(&Type::RECORD, &bad);
            }
        }
        let cases: &[(&[u8], &str)] = &[
            (&[0, 0], "too short for a field count"),
            (&[0xff, 0xff, 0xff, 0xff], "negative field count -1"),
            (
                &[0x7f, 0xff, 0xff, 0xff, 0, 0, 0, 0],
                "fields cannot fit in 8 bytes",
            ),
            (
                &[0, 0, 0, 1, 0, 0, 0, 23, 0xff, 0xff, 0xff, 0xfe],
                "field 0 has length -2",
            ),
            (
                &[0, 0, 0, 1, 0, 0, 0, 23, 0, 0, 0, 9, 1],
                "field 0 declares 9 bytes, but 1 remain",
            ),
        ];
        for (raw, want) in cases {
            let err = match CompositeReader::new(&Type::RECORD, raw) {
                Err(e) => e,
                Ok(mut r) => r.next_field().unwrap_err(),
            };
            assert!(
                err.to_string().contains(want),
                "{err} should contain {want}"
            );
        }
        let mut trailing = ok.clone();
        trailing.push(0);
        let err = <(i32, String)>::decode(&Type::RECORD, &trailing).unwrap_err();
        assert!(
            err.to_string().contains("1 bytes follow the last field"),
            "{err}"
        );
    }

    #[test]
    fn tuples_read_records_by_position() {
        let raw = record(&[(23, Some(&[0, 0, 0, 1])), (25, None)]);
        let v = <(i32, Option<String>)>::decode(&Type::RECORD, &raw).unwrap();
        assert_eq!(v, (1, None));
        // i64 widens from int4; a text field is not an integer.
        assert_eq!(
            <(i64, Option<&str>)>::decode(&Type::RECORD, &raw).unwrap(),
            (1, None)
        );
        let err = <(i32, i32)>::decode(&Type::RECORD, &raw)
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("field 1 of record has type text, which cannot be read as Rust type i32"),
            "{err}"
        );
        let err = <(i32,)>::decode(&Type::RECORD, &raw)
            .unwrap_err()
            .to_string();
        assert_eq!(err, "record has 2 fields, but Rust type (i32,) has 1");

        assert!(<(i32, String) as Decode>::accepts(&Type::RECORD));
        assert!(!<(i32, String) as Decode>::accepts(&Type::TEXT));
        // A described composite is checked up front, by position.
        let ty = attach();
        assert!(<(String, String, i64) as Decode>::accepts(&ty));
        assert!(<(String, Option<String>, Option<i64>) as Decode>::accepts(
            &ty
        ));
        assert!(!<(String, String, i32) as Decode>::accepts(&ty));
        assert!(!<(String, String) as Decode>::accepts(&ty));
        // A composite known only by OID cannot be checked: not accepted.
        assert!(!<(String, String, i64) as Decode>::accepts(
            &Type::from_oid(16390)
        ));
    }

    #[test]
    fn domains_over_composites_are_looked_through() {
        let dom = Type::new(16400, "attach_d", "mail", 0, Kind::Domain(attach()));
        assert_eq!(composite_fields(&dom).map(<[Field]>::len), Some(3));
        let mut buf = BytesMut::new();
        let mut w = CompositeWriter::new(&dom, &mut buf).unwrap();
        w.write("a").unwrap();
        w.write("b").unwrap();
        w.write(&1i64).unwrap();
        w.finish().unwrap();
        let v = <(String, String, i64)>::decode(&dom, &buf).unwrap();
        assert_eq!(v, ("a".into(), "b".into(), 1));
    }
}
