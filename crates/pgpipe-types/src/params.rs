//! Parameter lists: tuples for statically known lists, slices for lists
//! built at run time.

use pgpipe_proto::frontend::ParamWriter;
use pgpipe_proto::EncodeError;

use crate::{Encode, Oid, Type, TypeRef};

/// A list of query parameters.
///
/// Implemented for `()`, tuples of up to 16 [`Encode`] values, and slices,
/// arrays and `Vec`s of one `Encode` type (including
/// `&(dyn Encode + Sync)` for mixed types built at run time).
///
/// ```
/// use pgpipe_types::{Encode, Params};
///
/// assert_eq!((1i32, "two", Some(3.0f64)).len(), 3);
/// let dynamic: Vec<&(dyn Encode + Sync)> = vec![&1i64, &"x"];
/// assert_eq!(dynamic.len(), 2);
/// ```
pub trait Params {
    /// Number of parameters.
    fn len(&self) -> usize;

    /// Whether there are no parameters.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Calls `f` with the OID each parameter declares (see
    /// [`Encode::type_ref`]; 0 for a named type not resolved yet).
    fn with_type_oids<R>(&self, f: impl FnOnce(&[Oid]) -> R) -> R;

    /// Whether any parameter declares its type by name, so the client must
    /// resolve it (once per connection) before sending.
    fn has_named_types(&self) -> bool;

    /// The type each parameter declares.
    fn type_refs(&self) -> Vec<TypeRef>;

    /// Whether any value needs the statement's parameter types before it
    /// can be encoded (see [`Encode::needs_server_type`]). The default,
    /// `false`, is right for lists of pgpipe's own types.
    fn needs_server_types(&self) -> bool {
        false
    }

    /// Checks each value against a prepared statement's parameter types.
    /// On a mismatch returns `(index, Rust type name)`.
    fn check_types(&self, types: &[Type]) -> Result<(), (usize, &'static str)>;

    /// Whether every list of this Rust type passes
    /// [`check_types`](Params::check_types) against `types`, so a writer of
    /// many rows (binary COPY) can check once and skip the rest (see
    /// [`Encode::accepts_all_values`]). The default, `false`, is always
    /// correct.
    fn accepts_all_values(&self, types: &[Type]) -> bool {
        let _ = types;
        false
    }

    /// Writes every value through the Bind message's parameter writer.
    /// `types` are the parameter types when known (a prepared statement's,
    /// or the resolved [`TypeRef`]s); without them each value is encoded for
    /// the type its `type_ref` declares.
    fn encode(
        &self,
        types: Option<&[Type]>,
        writer: &mut ParamWriter<'_>,
    ) -> Result<(), EncodeError>;

    /// The column each value goes to, in order, when the list is a row
    /// type that names its columns (`#[derive(ToRow)]` structs); `None`
    /// (the default) for tuples and slices, whose values are positional.
    fn column_names() -> Option<&'static [&'static str]> {
        None
    }
}

/// Encodes one value for parameter `index`, as [`Params::encode`] describes.
#[inline]
pub fn encode_param<E: Encode + ?Sized>(
    value: &E,
    index: usize,
    types: Option<&[Type]>,
    writer: &mut ParamWriter<'_>,
) -> Result<(), EncodeError> {
    match types.and_then(|t| t.get(index)) {
        Some(ty) => value.write_to(ty, writer),
        None => encode_as_declared(value, writer),
    }
}

/// [`encode_param`] without the parameter's type: the type the value
/// declares. Out of line, so the typed path (every Bind of a prepared
/// statement, every binary COPY row) stays small enough to inline.
#[inline(never)]
fn encode_as_declared<E: Encode + ?Sized>(
    value: &E,
    writer: &mut ParamWriter<'_>,
) -> Result<(), EncodeError> {
    let declared = value.type_ref();
    if declared.is_named() {
        return writer.write(|_| {
            Err(format!(
                "the type {declared:?} of {} was not resolved",
                value.rust_type()
            )
            .into())
        });
    }
    let ty = Type::from_oid(declared.oid());
    writer.write(|buf| value.encode(&ty, buf))
}

impl<P: Params + ?Sized> Params for &P {
    fn len(&self) -> usize {
        (**self).len()
    }
    fn with_type_oids<R>(&self, f: impl FnOnce(&[Oid]) -> R) -> R {
        (**self).with_type_oids(f)
    }
    fn check_types(&self, types: &[Type]) -> Result<(), (usize, &'static str)> {
        (**self).check_types(types)
    }
    fn accepts_all_values(&self, types: &[Type]) -> bool {
        (**self).accepts_all_values(types)
    }
    fn has_named_types(&self) -> bool {
        (**self).has_named_types()
    }
    fn type_refs(&self) -> Vec<TypeRef> {
        (**self).type_refs()
    }
    fn needs_server_types(&self) -> bool {
        (**self).needs_server_types()
    }
    fn encode(
        &self,
        types: Option<&[Type]>,
        writer: &mut ParamWriter<'_>,
    ) -> Result<(), EncodeError> {
        (**self).encode(types, writer)
    }
    fn column_names() -> Option<&'static [&'static str]> {
        P::column_names()
    }
}

fn check_slice<E: Encode>(values: &[E], types: &[Type]) -> Result<(), (usize, &'static str)> {
    for (i, (v, ty)) in values.iter().zip(types).enumerate() {
        if !v.accepts(ty) {
            return Err((i, v.rust_type()));
        }
    }
    Ok(())
}

fn encode_slice<E: Encode>(
    values: &[E],
    types: Option<&[Type]>,
    writer: &mut ParamWriter<'_>,
) -> Result<(), EncodeError> {
    for (i, v) in values.iter().enumerate() {
        encode_param(v, i, types, writer)?;
    }
    Ok(())
}

impl<E: Encode> Params for [E] {
    fn len(&self) -> usize {
        <[E]>::len(self)
    }
    fn with_type_oids<R>(&self, f: impl FnOnce(&[Oid]) -> R) -> R {
        // Runtime-built lists are the flexible path; one small allocation
        // for a first-time Parse is acceptable here.
        let oids: Vec<Oid> = self.iter().map(|v| v.type_ref().oid()).collect();
        f(&oids)
    }
    fn check_types(&self, types: &[Type]) -> Result<(), (usize, &'static str)> {
        check_slice(self, types)
    }
    fn has_named_types(&self) -> bool {
        self.iter().any(|v| v.type_ref().is_named())
    }
    fn type_refs(&self) -> Vec<TypeRef> {
        self.iter().map(Encode::type_ref).collect()
    }
    fn needs_server_types(&self) -> bool {
        self.iter().any(Encode::needs_server_type)
    }
    fn encode(
        &self,
        types: Option<&[Type]>,
        writer: &mut ParamWriter<'_>,
    ) -> Result<(), EncodeError> {
        encode_slice(self, types, writer)
    }
}

/// Forwards to the slice implementation, except where noted.
macro_rules! forward_to_slice {
    ($($with_oids:item)?) => {
        fn len(&self) -> usize {
            self.as_slice().len()
        }
        $($with_oids)?
        fn check_types(&self, types: &[Type]) -> Result<(), (usize, &'static str)> {
            self.as_slice().check_types(types)
        }
        fn has_named_types(&self) -> bool {
            self.as_slice().has_named_types()
        }
        fn type_refs(&self) -> Vec<TypeRef> {
            self.as_slice().type_refs()
        }
        fn needs_server_types(&self) -> bool {
            self.as_slice().needs_server_types()
        }
        fn encode(
            &self,
            types: Option<&[Type]>,
            writer: &mut ParamWriter<'_>,
        ) -> Result<(), EncodeError> {
            self.as_slice().encode(types, writer)
        }
    };
}

impl<E: Encode> Params for Vec<E> {
    forward_to_slice!(
        fn with_type_oids<R>(&self, f: impl FnOnce(&[Oid]) -> R) -> R {
            self.as_slice().with_type_oids(f)
        }
    );
}

impl<E: Encode, const N: usize> Params for [E; N] {
    forward_to_slice!(
        // The length is known: no allocation for the OID list.
        fn with_type_oids<R>(&self, f: impl FnOnce(&[Oid]) -> R) -> R {
            let oids: [Oid; N] = std::array::from_fn(|i| self[i].type_ref().oid());
            f(&oids)
        }
    );
}

macro_rules! tuple_params {
    ($n:literal; $($idx:tt $T:ident),*) => {
        impl<$($T: Encode),*> Params for ($($T,)*) {
            fn len(&self) -> usize {
                $n
            }
            #[allow(unused_variables)]
            fn with_type_oids<R>(&self, f: impl FnOnce(&[Oid]) -> R) -> R {
                let oids: [Oid; $n] = [$(self.$idx.type_ref().oid()),*];
                f(&oids)
            }
            #[allow(unused_variables)]
            fn check_types(&self, types: &[Type]) -> Result<(), (usize, &'static str)> {
                $(
                    if let Some(ty) = types.get($idx) {
                        if !self.$idx.accepts(ty) {
                            return Err(($idx, self.$idx.rust_type()));
                        }
                    }
                )*
                Ok(())
            }
            #[allow(unused_variables)]
            #[inline]
            fn accepts_all_values(&self, types: &[Type]) -> bool {
                types.len() == $n $(&& self.$idx.accepts_all_values(&types[$idx]))*
            }
            fn has_named_types(&self) -> bool {
                false $(|| self.$idx.type_ref().is_named())*
            }
            fn type_refs(&self) -> Vec<TypeRef> {
                vec![$(self.$idx.type_ref()),*]
            }
            fn needs_server_types(&self) -> bool {
                false $(|| self.$idx.needs_server_type())*
            }
            #[allow(unused_variables)]
            fn encode(
                &self,
                types: Option<&[Type]>,
                writer: &mut ParamWriter<'_>,
            ) -> Result<(), EncodeError> {
                $(encode_param(&self.$idx, $idx, types, writer)?;)*
                Ok(())
            }
        }
    };
}

tuple_params!(0;);
tuple_params!(1; 0 A);
tuple_params!(2; 0 A, 1 B);
tuple_params!(3; 0 A, 1 B, 2 C);
tuple_params!(4; 0 A, 1 B, 2 C, 3 D);
tuple_params!(5; 0 A, 1 B, 2 C, 3 D, 4 E);
tuple_params!(6; 0 A, 1 B, 2 C, 3 D, 4 E, 5 F);
tuple_params!(7; 0 A, 1 B, 2 C, 3 D, 4 E, 5 F, 6 G);
tuple_params!(8; 0 A, 1 B, 2 C, 3 D, 4 E, 5 F, 6 G, 7 H);
tuple_params!(9; 0 A, 1 B, 2 C, 3 D, 4 E, 5 F, 6 G, 7 H, 8 I);
tuple_params!(10; 0 A, 1 B, 2 C, 3 D, 4 E, 5 F, 6 G, 7 H, 8 I, 9 J);
tuple_params!(11; 0 A, 1 B, 2 C, 3 D, 4 E, 5 F, 6 G, 7 H, 8 I, 9 J, 10 K);
tuple_params!(12; 0 A, 1 B, 2 C, 3 D, 4 E, 5 F, 6 G, 7 H, 8 I, 9 J, 10 K, 11 L);
tuple_params!(13; 0 A, 1 B, 2 C, 3 D, 4 E, 5 F, 6 G, 7 H, 8 I, 9 J, 10 K, 11 L, 12 M);
tuple_params!(14; 0 A, 1 B, 2 C, 3 D, 4 E, 5 F, 6 G, 7 H, 8 I, 9 J, 10 K, 11 L, 12 M, 13 N);
tuple_params!(15; 0 A, 1 B, 2 C, 3 D, 4 E, 5 F, 6 G, 7 H, 8 I, 9 J, 10 K, 11 L, 12 M, 13 N, 14 O);
tuple_params!(16; 0 A, 1 B, 2 C, 3 D, 4 E, 5 F, 6 G, 7 H, 8 I, 9 J, 10 K, 11 L, 12 M, 13 N, 14 O, 15 P);

#[cfg(test)]
mod tests {
    use super::*;

    /// Fixed-size values write their length directly; the bytes on the
    /// wire must be exactly what the placeholder-and-patch path writes.
    #[test]
    fn fixed_size_writes_match_the_general_path() {
        use bytes::BytesMut;
        use std::time::{Duration, UNIX_EPOCH};

        fn both<E: Encode>(value: &E, ty: &Type) -> (BytesMut, BytesMut) {
            let (mut fast, mut general) = (BytesMut::new(), BytesMut::new());
            value
                .write_to(ty, &mut ParamWriter::copy_tuple(&mut fast))
                .unwrap();
            ParamWriter::copy_tuple(&mut general)
                .write(|buf| value.encode(ty, buf))
                .unwrap();
            (fast, general)
        }
        let at = UNIX_EPOCH + Duration::from_micros(1_767_225_600_123_456);
        let cases: Vec<(BytesMut, BytesMut)> = vec![
            both(&-7i16, &Type::INT2),
            both(&i32::MIN, &Type::INT4),
            both(&i64::MAX, &Type::INT8),
            both(&1.5f32, &Type::FLOAT4),
            both(&f64::NAN, &Type::FLOAT8),
            both(&at, &Type::TIMESTAMPTZ),
            both(&Some(3i64), &Type::INT8),
            both(&None::<i64>, &Type::INT8),
            both(&&42i32, &Type::INT4),
        ];
        for (i, (fast, general)) in cases.iter().enumerate() {
            assert_eq!(fast, general, "case {i}");
        }
        assert_eq!(&cases[2].0[..4], &8i32.to_be_bytes());
        assert_eq!(&cases[7].0[..], &(-1i32).to_be_bytes());
        // A value that cannot be sent is the same error, naming its index,
        // with nothing of it left in the buffer.
        let far = UNIX_EPOCH + Duration::from_secs(400_000 * 366 * 86_400);
        let mut buf = BytesMut::new();
        let mut w = ParamWriter::copy_tuple(&mut buf);
        1i64.write_to(&Type::INT8, &mut w).unwrap();
        let e = far.write_to(&Type::TIMESTAMPTZ, &mut w).unwrap_err();
        assert!(
            matches!(e, EncodeError::Parameter { index: 1, .. }),
            "{e:?}"
        );
        assert_eq!(buf.len(), 12);
    }

    #[test]
    fn all_values_fit_only_where_the_type_alone_decides() {
        let cols = [Type::INT8, Type::TEXT, Type::TIMESTAMPTZ];
        let now = std::time::SystemTime::now();
        assert!((1i64, String::from("x"), now).accepts_all_values(&cols));
        assert!((1i64, Some(String::from("x")), now).accepts_all_values(&cols));
        // A None tells nothing of later Somes; a wrong type never fits.
        assert!(!(1i64, None::<String>, now).accepts_all_values(&cols));
        assert!(!(1i32, String::from("x"), now).accepts_all_values(&cols));
        // Arrays depend on their elements; a `&dyn Encode` slot may hold
        // another type in the next row; a wrong column count never fits.
        assert!(!(vec![1i64],).accepts_all_values(&[Type::INT8_ARRAY]));
        let dynamic: &(dyn Encode + Sync) = &1i64;
        assert!(!(dynamic,).accepts_all_values(&[Type::INT8]));
        assert!(!(1i64,).accepts_all_values(&cols));
    }

    #[test]
    fn tuple_oids_and_checks() {
        let p = (1i32, "x", None::<i64>);
        assert_eq!(p.len(), 3);
        p.with_type_oids(|oids| assert_eq!(oids, &[23, 25, 20]));
        assert!(p.check_types(&[Type::INT4, Type::TEXT, Type::INT8]).is_ok());
        let (idx, name) = p
            .check_types(&[Type::INT8, Type::TEXT, Type::INT8])
            .unwrap_err();
        assert_eq!(idx, 0);
        assert_eq!(name, "i32");
        assert_eq!(().len(), 0);
    }

    #[test]
    fn dynamic_lists() {
        let v: Vec<&(dyn Encode + Sync)> = vec![&1i16, &"a"];
        v.with_type_oids(|oids| assert_eq!(oids, &[21, 25]));
        let arr = [1i64, 2, 3];
        arr.with_type_oids(|oids| assert_eq!(oids, &[20, 20, 20]));
    }
}
