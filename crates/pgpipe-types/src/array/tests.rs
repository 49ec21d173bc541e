use bytes::{BufMut, BytesMut};

use super::*;
use crate::Kind;

fn encode<E: Encode + ?Sized>(v: &E, ty: &Type) -> BytesMut {
    let mut buf = BytesMut::new();
    assert_eq!(v.encode(ty, &mut buf).unwrap(), IsNull::No);
    buf
}

/// A binary array built by hand: header, dims, elements (None = NULL).
fn raw_array(
    ndim: i32,
    flags: i32,
    oid: u32,
    dims: &[(i32, i32)],
    elems: &[Option<&[u8]>],
) -> Vec<u8> {
    let mut b = BytesMut::new();
    b.put_i32(ndim);
    b.put_i32(flags);
    b.put_u32(oid);
    for &(len, lb) in dims {
        b.put_i32(len);
        b.put_i32(lb);
    }
    for e in elems {
        match e {
            Some(e) => {
                b.put_i32(e.len() as i32);
                b.put_slice(e);
            }
            None => b.put_i32(-1),
        }
    }
    b.to_vec()
}

#[test]
fn one_dimensional_wire_format() {
    let buf = encode(&vec![1i32, 2], &Type::INT4_ARRAY);
    let expected = raw_array(
        1,
        0,
        23,
        &[(2, 1)],
        &[Some(&[0, 0, 0, 1]), Some(&[0, 0, 0, 2])],
    );
    assert_eq!(&buf[..], &expected[..]);
    assert_eq!(Vec::<i32>::decode(&Type::INT4_ARRAY, &buf).unwrap(), [1, 2]);
}

#[test]
fn nulls_set_the_flag_and_need_option() {
    let buf = encode(&vec![Some("a"), None, Some("")], &Type::TEXT_ARRAY);
    let expected = raw_array(1, 1, 25, &[(3, 1)], &[Some(b"a"), None, Some(b"")]);
    assert_eq!(&buf[..], &expected[..]);
    let back = Vec::<Option<String>>::decode(&Type::TEXT_ARRAY, &buf).unwrap();
    assert_eq!(back, [Some("a".to_owned()), None, Some(String::new())]);
    let err = Vec::<String>::decode(&Type::TEXT_ARRAY, &buf)
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("text[] element [2]") && err.contains("NULL"),
        "{err}"
    );
}

#[test]
fn empty_arrays_have_no_dimensions() {
    let buf = encode(&Vec::<i64>::new(), &Type::INT8_ARRAY);
    assert_eq!(&buf[..], &raw_array(0, 0, 20, &[], &[])[..]);
    assert!(Vec::<i64>::decode(&Type::INT8_ARRAY, &buf)
        .unwrap()
        .is_empty());
    let a = Array::<i64>::decode(&Type::INT8_ARRAY, &buf).unwrap();
    assert_eq!(a.ndim(), 0);
    assert!(a.is_empty());
    // A zero-length dimension is the same empty array.
    let zero = raw_array(1, 0, 20, &[(0, 1)], &[]);
    assert_eq!(
        Array::<i64>::decode(&Type::INT8_ARRAY, &zero).unwrap(),
        Array::default()
    );
    assert_eq!(encode(&Array::<i64>::default(), &Type::INT8_ARRAY), buf);
}

#[test]
fn borrowed_elements_point_into_the_value() {
    let buf = encode(&["x", "yz"], &Type::TEXT_ARRAY);
    let back = Vec::<&str>::decode(&Type::TEXT_ARRAY, &buf).unwrap();
    assert_eq!(back, ["x", "yz"]);
    let range = buf.as_ptr_range();
    assert!(back.iter().all(|s| range.contains(&s.as_ptr())));
}

#[test]
fn slices_arrays_and_vecs_declare_the_array_type() {
    assert_eq!(<Vec<i32> as StaticType>::TYPE, TypeRef::Oid(1007));
    assert_eq!(<[bool] as StaticType>::TYPE, TypeRef::Oid(1000));
    assert_eq!(<[f64; 3] as StaticType>::TYPE, TypeRef::Oid(1022));
    assert_eq!(
        <Vec<Option<String>> as StaticType>::TYPE,
        TypeRef::Oid(1009)
    );
    assert_eq!(<Vec<Vec<u8>> as StaticType>::TYPE, TypeRef::Oid(1001)); // bytea[]
    assert_eq!(<Vec<u8> as StaticType>::TYPE, TypeRef::Oid(17)); // still bytea
    assert_eq!(<Array<i16> as StaticType>::TYPE, TypeRef::Oid(1005));
    assert_eq!(
        <Vec<Named> as StaticType>::TYPE,
        TypeRef::ArrayOf("mail.attach")
    );
    let slice: &[i64] = &[1, 2];
    assert_eq!(slice.type_ref(), TypeRef::Oid(1016));
    assert_eq!(
        encode(&slice, &Type::INT8_ARRAY),
        encode(&vec![1i64, 2], &Type::INT8_ARRAY)
    );
    assert_eq!(
        encode(&[1i64, 2], &Type::INT8_ARRAY),
        encode(&vec![1i64, 2], &Type::INT8_ARRAY)
    );
}

/// A stand-in for a user-defined element type.
struct Named;

/// A user-defined element type: a domain `cents` over int8, found by name.
#[derive(Debug, PartialEq)]
struct Cents(i64);

impl StaticType for Cents {
    const TYPE: TypeRef = TypeRef::Named("cents");
}

impl Encode for Cents {
    fn type_ref(&self) -> TypeRef {
        Self::TYPE
    }
    fn accepts(&self, ty: &Type) -> bool {
        ty.is_named("cents")
    }
    fn encode(&self, _: &Type, buf: &mut BytesMut) -> Result<IsNull, BoxError> {
        buf.put_i64(self.0);
        Ok(IsNull::No)
    }
}

impl<'a> Decode<'a> for Cents {
    fn accepts(ty: &Type) -> bool {
        ty.is_named("cents")
    }
    fn decode(ty: &Type, raw: &'a [u8]) -> Result<Self, BoxError> {
        i64::decode(&Type::INT8, raw)
            .map(Cents)
            .map_err(|e| format!("{ty}: {e}").into())
    }
}

impl StaticType for Named {
    const TYPE: TypeRef = TypeRef::Named("mail.attach");
}

#[test]
fn parameter_type_checks() {
    let v = vec![1i32];
    assert!(v.accepts(&Type::INT4_ARRAY));
    assert!(!v.accepts(&Type::INT8_ARRAY));
    assert!(!v.accepts(&Type::INT4));
    assert!(Vec::<i32>::new().accepts(&Type::INT4_ARRAY));
    assert!(!Vec::<i32>::new().accepts(&Type::INT4));
    assert!(!Vec::<i32>::new().accepts(&Type::TEXT_ARRAY));
    assert!(vec![None::<i32>].accepts(&Type::INT4_ARRAY));
    // Decoding: an int8[] column is not read as i32 elements.
    assert!(<Vec<i64> as Decode>::accepts(&Type::INT4_ARRAY));
    assert!(!<Vec<i32> as Decode>::accepts(&Type::INT8_ARRAY));
    assert!(!<Vec<i32> as Decode>::accepts(&Type::INT4));
    assert!(!<Vec<i32> as Decode>::accepts(&Type::from_oid(99999)));
    // bytea stays bytea, bytea[] is an array of it.
    assert!(<Vec<u8> as Decode>::accepts(&Type::BYTEA));
    assert!(!<Vec<u8> as Decode>::accepts(&Type::BYTEA_ARRAY));
    assert!(<Vec<Vec<u8>> as Decode>::accepts(&Type::BYTEA_ARRAY));
}

#[test]
fn element_oid_comes_from_the_parameter_type() {
    // A user-defined element type: Vec<Cents> declares `cents[]` by name; the
    // client resolves it and the element OID written is the resolved one.
    assert_eq!(vec![Cents(1)].type_ref(), TypeRef::ArrayOf("cents"));
    let cents = Type::new(70001, "cents", "public", 70000, Kind::Domain(Type::INT8));
    let cents_array = Type::new(70000, "_cents", "public", 0, Kind::Array(cents));
    let buf = encode(&vec![Cents(5), Cents(-1)], &cents_array);
    assert_eq!(&buf[8..12], &70001u32.to_be_bytes());
    assert_eq!(
        Vec::<Cents>::decode(&cents_array, &buf).unwrap(),
        [Cents(5), Cents(-1)]
    );
    // The header's element OID must be the column's element type.
    let err = Vec::<i64>::decode(&Type::INT8_ARRAY, &buf)
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("element type OID is 70001") && err.contains("expected 20 (int8)"),
        "{err}"
    );
    // A value the element type does not accept is refused before sending.
    let mut out = BytesMut::new();
    let err = vec![1i32]
        .encode(&cents_array, &mut out)
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("cents[] element [1]") && err.contains("i32"),
        "{err}"
    );

    // Not an array type, or a type the client has not looked up: no guess.
    let err = vec![1i32]
        .encode(&Type::INT4, &mut out)
        .unwrap_err()
        .to_string();
    assert!(err.contains("not an array type"), "{err}");
    let err = vec![1i32]
        .encode(&Type::from_oid(0), &mut out)
        .unwrap_err()
        .to_string();
    assert!(err.contains("not known"), "{err}");
}

#[test]
fn unknown_array_types_decode_by_the_header_oid() {
    let raw = raw_array(1, 0, 23, &[(1, 1)], &[Some(&[0, 0, 0, 7])]);
    let unknown = Type::from_oid(99999);
    assert_eq!(Vec::<i32>::decode(&unknown, &raw).unwrap(), [7]);
    let err = Vec::<String>::decode(&unknown, &raw)
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("have type int4") && err.contains("String"),
        "{err}"
    );
}

#[test]
fn multi_dimensional_round_trip_with_lower_bounds() {
    let a = Array::new(
        vec![
            Dimension {
                len: 2,
                lower_bound: -3,
            },
            Dimension {
                len: 3,
                lower_bound: 0,
            },
        ],
        vec![Some(1i16), None, Some(3), Some(4), Some(5), Some(6)],
    )
    .unwrap();
    let buf = encode(&a, &Type::INT2_ARRAY);
    assert_eq!(&buf[..12], &[0, 0, 0, 2, 0, 0, 0, 1, 0, 0, 0, 21]);
    assert_eq!(
        &buf[12..28],
        &[0, 0, 0, 2, 255, 255, 255, 253, 0, 0, 0, 3, 0, 0, 0, 0]
    );
    let back = Array::<Option<i16>>::decode(&Type::INT2_ARRAY, &buf).unwrap();
    assert_eq!(back, a);
    assert_eq!(back.get(&[-2, 0]), Some(&Some(4)));
    assert_eq!(back.get(&[-3, 1]), Some(&None));
    assert_eq!(back.get(&[-1, 0]), None);
    assert_eq!(back.get(&[-3]), None);
    assert_eq!(back.dims()[0].upper_bound(), -2);
    let err = Vec::<Option<i16>>::decode(&Type::INT2_ARRAY, &buf)
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("2-dimensional int2[]") && err.contains("Array<T>"),
        "{err}"
    );
    let err = Array::<i16>::decode(&Type::INT2_ARRAY, &buf)
        .unwrap_err()
        .to_string();
    assert!(err.contains("int2[] element [-3][1]"), "{err}");
}

#[test]
fn rows_convert_both_ways() {
    let a = Array::from_rows(vec![vec!["a", "b"], vec!["c", "d"], vec!["e", "f"]]).unwrap();
    assert_eq!(a.dims().iter().map(|d| d.len).collect::<Vec<_>>(), [3, 2]);
    assert_eq!(a.elements(), ["a", "b", "c", "d", "e", "f"]);
    let err = Array::from_rows(vec![vec![1], vec![2, 3]])
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("row 2 has 2 elements but row 1 has 1"),
        "{err}"
    );
    assert_eq!(a.clone().into_rows().unwrap()[2], ["e", "f"]);
    assert_eq!(
        Array::<u8>::default().into_rows().unwrap(),
        Vec::<Vec<u8>>::new()
    );
}

#[test]
fn shapes_are_checked_on_construction() {
    let d = |len, lower_bound| Dimension { len, lower_bound };
    assert!(Array::new(vec![d(2, 1)], vec![1, 2, 3]).is_err());
    assert!(Array::new(vec![d(1, 1); 7], vec![1]).is_err());
    assert!(Array::new(vec![d(1, i32::MAX - 1)], vec![1]).is_ok());
    // PostgreSQL refuses lower bound + length past i32::MAX.
    assert!(Array::new(vec![d(1, i32::MAX)], vec![1]).is_err());
    assert!(Array::new(vec![d(usize::MAX, 1), d(2, 1)], vec![1]).is_err());
    assert_eq!(
        Array::new(vec![d(0, 5), d(3, 1)], Vec::<i32>::new()).unwrap(),
        Array::default()
    );
    assert!(Array::new(vec![], vec![1]).is_err());
    assert!(Array::from_vec(vec![1, 2])
        .with_lower_bounds(&[0, 0])
        .is_err());
    assert_eq!(
        Array::from_vec(vec![1, 2])
            .with_lower_bounds(&[i32::MIN])
            .unwrap()
            .get(&[i32::MIN + 1]),
        Some(&2)
    );
}

#[test]
fn fixed_size_arrays_decode_exact_lengths() {
    let buf = encode(&vec![1.5f64, -0.0], &Type::FLOAT8_ARRAY);
    let [a, b] = <[f64; 2]>::decode(&Type::FLOAT8_ARRAY, &buf).unwrap();
    assert_eq!((a, b.to_bits()), (1.5, (-0.0f64).to_bits()));
    let err = <[f64; 3]>::decode(&Type::FLOAT8_ARRAY, &buf)
        .unwrap_err()
        .to_string();
    assert!(err.contains("2 elements"), "{err}");
}

fn decode_err(raw: &[u8]) -> String {
    let err = Vec::<Option<i32>>::decode(&Type::INT4_ARRAY, raw)
        .unwrap_err()
        .to_string();
    // The multi-dimensional reader rejects the same input.
    assert!(Array::<Option<i32>>::decode(&Type::INT4_ARRAY, raw).is_err());
    err
}

#[test]
fn malformed_headers_are_errors() {
    let one = 1i32.to_be_bytes();
    let e = decode_err(&[0, 0, 0, 1, 0, 0]);
    assert!(e.contains("header needs 12 bytes, got 6"), "{e}");
    let e = decode_err(&raw_array(7, 0, 23, &[(1, 1); 7], &[Some(&one)]));
    assert!(e.contains("7 dimensions"), "{e}");
    let e = decode_err(&raw_array(-1, 0, 23, &[], &[]));
    assert!(e.contains("-1 dimensions"), "{e}");
    let e = decode_err(&raw_array(1, 2, 23, &[(1, 1)], &[Some(&one)]));
    assert!(e.contains("has-null flag is 2"), "{e}");
    let e = decode_err(&raw_array(2, 0, 23, &[(1, 1)], &[]));
    assert!(e.contains("2 dimensions need 28 header bytes"), "{e}");
    let e = decode_err(&raw_array(1, 0, 23, &[(-1, 1)], &[]));
    assert!(e.contains("negative length -1"), "{e}");
    let e = decode_err(&raw_array(
        1,
        0,
        23,
        &[(2, i32::MAX - 1)],
        &[Some(&one), Some(&one)],
    ));
    assert!(
        e.contains("lower bound 2147483646 plus length 2 exceeds 2147483647"),
        "{e}"
    );
    let e = decode_err(&raw_array(1, 0, 20, &[(1, 1)], &[Some(&[0; 8])]));
    assert!(
        e.contains("element type OID is 20 (int8), expected 23 (int4)"),
        "{e}"
    );
}

#[test]
fn dimension_overflow_is_an_error_not_an_allocation() {
    // 6 x i32::MAX elements overflow any usize.
    let e = decode_err(&raw_array(6, 0, 23, &[(i32::MAX, 0); 6], &[]));
    assert!(
        e.contains("product of the dimension lengths overflows"),
        "{e}"
    );
    // A huge count that does not overflow still cannot fit the data.
    let e = decode_err(&raw_array(
        2,
        0,
        23,
        &[(i32::MAX, 0), (i32::MAX, 0)],
        &[Some(&[0; 4])],
    ));
    assert!(
        e.contains("describe 4611686014132420609 elements but only 8 bytes"),
        "{e}"
    );
    let e = decode_err(&raw_array(1, 0, 23, &[(3, 1)], &[Some(&[0; 4])]));
    assert!(e.contains("describe 3 elements but only 8 bytes"), "{e}");
    // Enough bytes for the length words, not for the values.
    let e = decode_err(&raw_array(1, 0, 23, &[(3, 1)], &[Some(&[0; 4]), None]));
    assert!(e.contains("element [3]: truncated"), "{e}");
    // No dimensions and trailing element data.
    let e = decode_err(&raw_array(0, 0, 23, &[], &[Some(&[0; 4])]));
    assert!(
        e.contains("8 bytes left after the last of 0 elements"),
        "{e}"
    );
}

#[test]
fn malformed_elements_are_errors() {
    // Wrong length for a fixed-size element.
    let e = decode_err(&raw_array(
        1,
        0,
        23,
        &[(2, 1)],
        &[Some(&[0; 4]), Some(&[0; 3])],
    ));
    assert!(
        e.contains("int4[] element [2]") && e.contains("expected 4 bytes, got 3"),
        "{e}"
    );
    // Element length past the end.
    let mut raw = raw_array(1, 0, 23, &[(2, 1)], &[Some(&[0; 4]), Some(&[0; 4])]);
    raw.truncate(raw.len() - 1);
    let e = decode_err(&raw);
    assert!(
        e.contains("element [2]") && e.contains("element length is 4 but only 3"),
        "{e}"
    );
    // A negative length other than -1.
    let mut raw = raw_array(1, 0, 23, &[(2, 1)], &[Some(&[0; 4]), None]);
    let at = raw.len() - 4;
    raw[at..].copy_from_slice(&(-2i32).to_be_bytes());
    let e = decode_err(&raw);
    assert!(e.contains("invalid element length -2"), "{e}");
    // Bytes after the last element.
    let mut raw = raw_array(1, 0, 23, &[(1, 1)], &[Some(&[0; 4])]);
    raw.extend_from_slice(&[0; 4]);
    let e = decode_err(&raw);
    assert!(
        e.contains("4 bytes left after the last of 1 elements"),
        "{e}"
    );
    // Invalid UTF-8 inside a text[]: the element's own error, located.
    let raw = raw_array(1, 0, 25, &[(1, 5)], &[Some(&[0xff])]);
    let e = Vec::<String>::decode(&Type::TEXT_ARRAY, &raw)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("text[] element [5]") && e.contains("UTF-8"),
        "{e}"
    );
}

#[test]
fn subscripts_are_row_major() {
    let dims = [
        Dimension {
            len: 2,
            lower_bound: 1,
        },
        Dimension {
            len: 3,
            lower_bound: 0,
        },
    ];
    assert_eq!(wire::subscripts(&dims, 0), "[1][0]");
    assert_eq!(wire::subscripts(&dims, 4), "[2][1]");
}

#[test]
fn nested_vecs_are_multi_dimensional() {
    let grid = vec![vec![1i32, 2, 3], vec![4, 5, 6]];
    assert_eq!(grid.type_ref(), TypeRef::Oid(1007));
    assert!(grid.accepts(&Type::INT4_ARRAY));
    assert!(!grid.accepts(&Type::INT8_ARRAY));
    assert!(!grid.accepts(&Type::INT4));
    let buf = encode(&grid, &Type::INT4_ARRAY);
    let as_array = Array::from_rows(grid.clone()).unwrap();
    assert_eq!(buf, encode(&as_array, &Type::INT4_ARRAY));
    assert!(<Vec<Vec<i32>> as Decode>::accepts(&Type::INT4_ARRAY));
    assert!(!<Vec<Vec<i32>> as Decode>::accepts(&Type::INT8_ARRAY));
    assert_eq!(
        Vec::<Vec<i32>>::decode(&Type::INT4_ARRAY, &buf).unwrap(),
        grid
    );
    assert_eq!(
        <[[i32; 3]; 2]>::decode(&Type::INT4_ARRAY, &buf).unwrap(),
        [[1, 2, 3], [4, 5, 6]]
    );
    assert_eq!(
        Vec::<Array<i32>>::decode(&Type::INT4_ARRAY, &buf).unwrap()[1].elements(),
        [4, 5, 6]
    );

    // Three levels, NULLs inside, fixed-size rows and slices.
    let cube = vec![vec![vec![Some(1i64), None]], vec![vec![Some(3), Some(4)]]];
    assert_eq!(cube.type_ref(), TypeRef::Oid(1016));
    let buf = encode(&cube, &Type::INT8_ARRAY);
    assert_eq!(&buf[..12], &[0, 0, 0, 3, 0, 0, 0, 1, 0, 0, 0, 20]);
    let back = Vec::<Vec<Vec<Option<i64>>>>::decode(&Type::INT8_ARRAY, &buf).unwrap();
    assert_eq!(back, cube);
    let a = Array::<Option<i64>>::decode(&Type::INT8_ARRAY, &buf).unwrap();
    assert_eq!(
        a.dims().iter().map(|d| d.len).collect::<Vec<_>>(),
        [2, 1, 2]
    );
    assert_eq!(a.get(&[1, 1, 2]), Some(&None));
    let rows: &[[i16; 2]] = &[[1, 2], [3, 4]];
    let buf = encode(&rows, &Type::INT2_ARRAY);
    assert_eq!(
        Vec::<Vec<i16>>::decode(&Type::INT2_ARRAY, &buf).unwrap(),
        [[1, 2], [3, 4]]
    );

    // Borrowed elements in nested rows.
    let words = vec![vec!["a", "b"], vec!["c", "d"]];
    let buf = encode(&words, &Type::TEXT_ARRAY);
    let back = Vec::<Vec<&str>>::decode(&Type::TEXT_ARRAY, &buf).unwrap();
    assert_eq!(back, words);
    assert!(back[1][1].as_ptr() >= buf.as_ptr());

    // Rows with lower bounds keep them.
    let rows = vec![
        Array::from_vec(vec![1, 2]).with_lower_bounds(&[0]).unwrap(),
        Array::from_vec(vec![3, 4]).with_lower_bounds(&[0]).unwrap(),
    ];
    let a = Array::<i32>::decode(&Type::INT4_ARRAY, &encode(&rows, &Type::INT4_ARRAY)).unwrap();
    assert_eq!(
        a.dims()[1],
        Dimension {
            len: 2,
            lower_bound: 0
        }
    );
}

#[test]
fn nested_vecs_must_be_rectangular_and_deep_enough() {
    let mut out = BytesMut::new();
    let ragged = vec![vec![1i32, 2], vec![3]];
    let err = ragged
        .encode(&Type::INT4_ARRAY, &mut out)
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("row [2] has dimensions [1:1] but row [1] has [1:2]"),
        "{err}"
    );
    let err = vec![vec![1i32], vec![]]
        .encode(&Type::INT4_ARRAY, &mut out)
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("has dimensions none (empty) but row [1] has [1:1]"),
        "{err}"
    );
    // All rows empty, or no rows: the empty array.
    let empty = encode(&vec![Vec::<i32>::new(), vec![]], &Type::INT4_ARRAY);
    assert_eq!(&empty[..], &raw_array(0, 0, 23, &[], &[])[..]);
    assert_eq!(encode(&Vec::<Vec<i32>>::new(), &Type::INT4_ARRAY), empty);
    assert!(Vec::<Vec<i32>>::decode(&Type::INT4_ARRAY, &empty)
        .unwrap()
        .is_empty());
    // NULL rows do not exist in PostgreSQL.
    let err = vec![Some(vec![1i32]), None]
        .encode(&Type::INT4_ARRAY, &mut out)
        .unwrap_err()
        .to_string();
    assert!(err.contains("row [2]: is NULL"), "{err}");
    // Seven levels are more than PostgreSQL's six dimensions.
    let deep = vec![vec![vec![vec![vec![vec![vec![1i32]]]]]]];
    let err = deep
        .encode(&Type::INT4_ARRAY, &mut out)
        .unwrap_err()
        .to_string();
    assert!(err.contains("7 dimensions"), "{err}");
    // A 1-D array is not a Vec<Vec<T>>, a 3-D one not a Vec<Vec<T>> either.
    let flat = encode(&vec![1i32, 2], &Type::INT4_ARRAY);
    let err = Vec::<Vec<i32>>::decode(&Type::INT4_ARRAY, &flat)
        .unwrap_err()
        .to_string();
    assert!(err.contains("1-dimensional int4[]"), "{err}");
    let cube = encode(&vec![vec![vec![1i32]]], &Type::INT4_ARRAY);
    let err = Vec::<Vec<i32>>::decode(&Type::INT4_ARRAY, &cube)
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("row [1]") && err.contains("2-dimensional"),
        "{err}"
    );
    // Errors inside a row name the row.
    let raw = raw_array(2, 0, 23, &[(2, 1), (1, 1)], &[Some(&[0; 4]), Some(&[0; 2])]);
    let err = Vec::<Vec<i32>>::decode(&Type::INT4_ARRAY, &raw)
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("int4[] row [2]") && err.contains("expected 4 bytes, got 2"),
        "{err}"
    );
    let err = <[[i32; 2]; 2]>::decode(&Type::INT4_ARRAY, &raw)
        .unwrap_err()
        .to_string();
    assert!(err.contains("1 elements"), "{err}");
}

/// A hand-written reader of whole int4[] values (by OID), as a user might
/// write: it must not be handed the headerless rows of a nested read.
#[derive(Debug)]
struct IntList;

impl<'a> Decode<'a> for IntList {
    fn accepts(ty: &Type) -> bool {
        *ty == Type::INT4_ARRAY
    }
    fn decode(_: &Type, raw: &'a [u8]) -> Result<Self, BoxError> {
        assert!(raw.len() >= 12, "handed a headerless row");
        Ok(IntList)
    }
}

#[test]
fn nested_rows_only_go_to_array_readers() {
    let buf = encode(&vec![vec![1i32], vec![2]], &Type::INT4_ARRAY);
    assert!(<Vec<IntList> as Decode>::accepts(&Type::INT4_ARRAY));
    let err = Vec::<IntList>::decode(&Type::INT4_ARRAY, &buf)
        .unwrap_err()
        .to_string();
    assert!(err.contains("cannot be read row by row"), "{err}");
}
