use std::ops::Bound::{self, Excluded, Included, Unbounded};

use bytes::{BufMut, BytesMut};

use super::*;

fn encode<E: Encode>(v: &E, ty: &Type) -> BytesMut {
    let mut buf = BytesMut::new();
    assert_eq!(v.encode(ty, &mut buf).unwrap(), IsNull::No);
    buf
}

fn int4(v: i32) -> [u8; 8] {
    let mut out = [0; 8];
    out[..4].copy_from_slice(&4i32.to_be_bytes());
    out[4..].copy_from_slice(&v.to_be_bytes());
    out
}

#[test]
fn wire_format() {
    let buf = encode(&Range::from(1..10), &Type::INT4RANGE);
    assert_eq!(&buf[..], &[&[0x02][..], &int4(1), &int4(10)].concat()[..]);
    let buf = encode(&Range::new(Excluded(1), Included(10)), &Type::INT4RANGE);
    assert_eq!(&buf[..], &[&[0x04][..], &int4(1), &int4(10)].concat()[..]);
    assert_eq!(&encode(&Range::<i32>::Empty, &Type::INT4RANGE)[..], &[0x01]);
    assert_eq!(
        &encode(&Range::<i32>::unbounded(), &Type::INT4RANGE)[..],
        &[0x18]
    );
    let buf = encode(&Range::from(..=5i32), &Type::INT4RANGE);
    assert_eq!(&buf[..], &[&[0x08 | 0x04][..], &int4(5)].concat()[..]);
    let buf = encode(&Range::from(5i32..), &Type::INT4RANGE);
    assert_eq!(&buf[..], &[&[0x02 | 0x10][..], &int4(5)].concat()[..]);
}

#[test]
fn round_trips() {
    let ranges = [
        Range::Empty,
        Range::unbounded(),
        Range::from(i64::MIN..i64::MAX),
        Range::from(-5..=5),
        Range::from(..7),
        Range::from(3..),
        Range::new(Excluded(1), Unbounded),
    ];
    for r in ranges {
        let buf = encode(&r, &Type::INT8RANGE);
        assert_eq!(Range::<i64>::decode(&Type::INT8RANGE, &buf).unwrap(), r);
    }
}

#[test]
fn borrowed_bounds_point_into_the_value() {
    let textrange = Type::new(80001, "textrange", "public", 80002, Kind::Range(Type::TEXT));
    let buf = encode(&Range::from("a".."q"), &textrange);
    let r = Range::<&str>::decode(&textrange, &buf).unwrap();
    assert_eq!(r, Range::from("a".."q"));
    let Some(Included(a)) = r.lower() else {
        panic!("{r:?}")
    };
    assert!(buf.as_ptr_range().contains(&a.as_ptr()));
}

#[test]
fn types_are_chosen_by_subtype() {
    assert_eq!(<Range<i32> as StaticType>::TYPE, TypeRef::Oid(3904));
    assert_eq!(<Range<i64> as StaticType>::TYPE, TypeRef::Oid(3926));
    assert_eq!(<Range<String> as StaticType>::TYPE, TypeRef::Oid(0));
    assert_eq!(<Range<i16> as StaticType>::TYPE, TypeRef::Oid(0));
    assert_eq!(<Multirange<i32> as StaticType>::TYPE, TypeRef::Oid(4451));
    assert_eq!(<Vec<Range<i32>> as StaticType>::TYPE, TypeRef::Oid(3905));
    assert_eq!(range_type_of(TypeRef::Oid(1700)), TypeRef::Oid(3906));
    assert_eq!(range_type_of(TypeRef::Oid(1082)), TypeRef::Oid(3912));
    assert_eq!(range_type_of(TypeRef::Oid(1114)), TypeRef::Oid(3908));
    assert_eq!(range_type_of(TypeRef::Oid(1184)), TypeRef::Oid(3910));
    assert_eq!(multirange_type_of(TypeRef::Oid(1700)), TypeRef::Oid(4532));
    assert_eq!(multirange_type_of(TypeRef::Oid(1082)), TypeRef::Oid(4535));
    assert_eq!(multirange_type_of(TypeRef::Oid(1114)), TypeRef::Oid(4533));
    assert_eq!(multirange_type_of(TypeRef::Oid(1184)), TypeRef::Oid(4534));
    // Every mapping agrees with the type table.
    for (sub, range, multi) in [
        (Type::INT4, Type::INT4RANGE, Type::INT4MULTIRANGE),
        (Type::INT8, Type::INT8RANGE, Type::INT8MULTIRANGE),
        (Type::NUMERIC, Type::NUMRANGE, Type::NUMMULTIRANGE),
        (Type::DATE, Type::DATERANGE, Type::DATEMULTIRANGE),
        (Type::TIMESTAMP, Type::TSRANGE, Type::TSMULTIRANGE),
        (Type::TIMESTAMPTZ, Type::TSTZRANGE, Type::TSTZMULTIRANGE),
    ] {
        assert_eq!(range_type_of(TypeRef::Oid(sub.oid())).oid(), range.oid());
        assert_eq!(
            multirange_type_of(TypeRef::Oid(sub.oid())).oid(),
            multi.oid()
        );
        assert_eq!(range.kind(), &Kind::Range(sub.clone()));
        assert_eq!(multi.kind(), &Kind::Multirange(range.clone()));
    }
}

#[test]
fn accepts_by_subtype() {
    assert!(<Range<i32> as Decode>::accepts(&Type::INT4RANGE));
    assert!(!<Range<i32> as Decode>::accepts(&Type::INT8RANGE));
    assert!(<Range<i64> as Decode>::accepts(&Type::INT4RANGE));
    assert!(!<Range<i32> as Decode>::accepts(&Type::INT4));
    assert!(!<Range<i32> as Decode>::accepts(&Type::INT4MULTIRANGE));
    assert!(!<Range<i32> as Decode>::accepts(&Type::from_oid(99999)));
    assert!(Range::from(1..2).accepts(&Type::INT4RANGE));
    assert!(!Range::from(1i64..2).accepts(&Type::INT4RANGE));
    assert!(Range::<i32>::Empty.accepts(&Type::INT4RANGE));
    assert!(!Range::<i32>::Empty.accepts(&Type::INT8RANGE));
    assert!(!Range::from(1..2).accepts(&Type::INT4_ARRAY));
    assert!(<Multirange<i32> as Decode>::accepts(&Type::INT4MULTIRANGE));
    assert!(!<Multirange<i32> as Decode>::accepts(&Type::INT4RANGE));
    assert!(!<Multirange<i32> as Decode>::accepts(&Type::INT8MULTIRANGE));
    assert!(Multirange::<i32>::default().accepts(&Type::INT4MULTIRANGE));
    assert!(!Multirange::<i32>::default().accepts(&Type::INT8MULTIRANGE));
    // A domain over a range reads as the range.
    let dom = Type::new(80010, "small", "public", 0, Kind::Domain(Type::INT4RANGE));
    assert!(<Range<i32> as Decode>::accepts(&dom));
    let buf = encode(&Range::from(1..2), &dom);
    assert_eq!(Range::<i32>::decode(&dom, &buf).unwrap(), Range::from(1..2));
}

#[test]
fn undescribed_parameter_types() {
    // A range over a subtype without a built-in range type, sent before the
    // statement's parameter types are known: bounds encoded for T's type.
    let buf = encode(&Range::from("a".."b"), &Type::from_oid(0));
    assert_eq!(&buf[..], &[0x02, 0, 0, 0, 1, b'a', 0, 0, 0, 1, b'b']);
    let mut out = BytesMut::new();
    let err = Range::from(1..2)
        .encode(&Type::INT4, &mut out)
        .unwrap_err()
        .to_string();
    assert!(err.contains("not a range type"), "{err}");
    let err = Range::<i32>::decode(&Type::INT4, &[1])
        .unwrap_err()
        .to_string();
    assert!(err.contains("not a known range type"), "{err}");
    let err = Range::<i64>::from(1..2)
        .encode(&Type::INT4RANGE, &mut out)
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("lower bound of int4range") && err.contains("i64"),
        "{err}"
    );
    let err = Range::new(Included(None::<i32>), Unbounded)
        .encode(&Type::INT4RANGE, &mut out)
        .unwrap_err()
        .to_string();
    assert!(err.contains("lower bound of int4range is NULL"), "{err}");
}

#[test]
fn null_bound_flags_read_as_infinite() {
    let raw = [&[0x20 | 0x04][..], &int4(3)].concat();
    assert_eq!(
        Range::<i32>::decode(&Type::INT4RANGE, &raw).unwrap(),
        Range::new(Unbounded, Included(3))
    );
    let raw = [&[0x40 | 0x02][..], &int4(3)].concat();
    assert_eq!(
        Range::<i32>::decode(&Type::INT4RANGE, &raw).unwrap(),
        Range::new(Included(3), Unbounded)
    );
    // Inclusive flags on infinite bounds are ignored, as PostgreSQL does.
    assert_eq!(
        Range::<i32>::decode(&Type::INT4RANGE, &[0x1e]).unwrap(),
        Range::unbounded()
    );
}

#[test]
fn malformed_ranges_are_errors() {
    let err = |raw: &[u8]| {
        Range::<i32>::decode(&Type::INT4RANGE, raw)
            .unwrap_err()
            .to_string()
    };
    let e = err(&[]);
    assert!(e.contains("no bytes"), "{e}");
    let e = err(&[0x80]);
    assert!(e.contains("unknown range flags 0x80"), "{e}");
    let e = err(&[0x01, 0]);
    assert!(e.contains("1 bytes left after the range"), "{e}");
    let e = err(&[0x02, 0, 0]);
    assert!(
        e.contains("truncated before the lower bound's length"),
        "{e}"
    );
    let e = err(&[&[0x10][..], &int4(1)[..7]].concat());
    assert!(
        e.contains("lower bound length is 4 but 3 bytes are left"),
        "{e}"
    );
    let e = err(&[0x10, 0xff, 0xff, 0xff, 0xfe]);
    assert!(e.contains("lower bound length is -2"), "{e}");
    let e = err(&[0x10, 0xff, 0xff, 0xff, 0xff]);
    assert!(e.contains("lower bound length is -1"), "{e}");
    // Wrong length for the fixed-size subtype.
    let e = err(&[0x08, 0, 0, 0, 3, 0, 0, 1]);
    assert!(
        e.contains("upper bound of int4range") && e.contains("expected 4 bytes, got 3"),
        "{e}"
    );
    let e = err(&[&[0x00][..], &int4(1)].concat());
    assert!(
        e.contains("truncated before the upper bound's length"),
        "{e}"
    );
    let e = err(&[&[0x18][..], &int4(1)].concat());
    assert!(e.contains("8 bytes left after the range"), "{e}");
}

#[test]
fn display_matches_range_out() {
    assert_eq!(Range::from(1..10).to_string(), "[1,10)");
    assert_eq!(Range::new(Excluded(-1), Included(1)).to_string(), "(-1,1]");
    assert_eq!(Range::<i32>::unbounded().to_string(), "(,)");
    assert_eq!(Range::from(..=2).to_string(), "(,2]");
    assert_eq!(Range::from("a b".."c").to_string(), r#"["a b",c)"#);
    assert_eq!(Range::from("".."x").to_string(), r#"["",x)"#);
    assert_eq!(
        Range::from(r#"q"x"#..r"y\z").to_string(),
        r#"["q""x","y\\z")"#
    );
    assert_eq!(Range::from("(".."]").to_string(), r#"["(","]")"#);
    assert_eq!(Multirange::<i32>::default().to_string(), "{}");
    assert_eq!(
        Multirange(vec![Range::from(..0), Range::from(2..=4)]).to_string(),
        "{(,0),[2,4]}"
    );
}

#[test]
fn helpers() {
    let r = Range::from(1..=3);
    assert!(r.contains(&1) && r.contains(&3) && !r.contains(&4));
    assert!(!Range::<i32>::Empty.contains(&0));
    assert!(Range::<i32>::unbounded().contains(&i32::MIN));
    assert_eq!(r.lower(), Some(Included(&1)));
    assert_eq!(Range::<i32>::Empty.upper(), None);
    assert_eq!(r.map(i64::from), Range::from(1i64..=3));
    assert_eq!(Range::<i32>::from(..), Range::unbounded());
    assert!(Range::<i32>::empty().is_empty());
    let _: Bound<i32> = Unbounded;
}

#[test]
fn multirange_wire_format_and_round_trip() {
    let m = Multirange(vec![Range::from(1..3), Range::from(5..)]);
    let buf = encode(&m, &Type::INT4MULTIRANGE);
    let mut expected = BytesMut::new();
    expected.put_i32(2);
    expected.put_i32(17);
    expected.put_u8(0x02);
    expected.put_slice(&int4(1));
    expected.put_slice(&int4(3));
    expected.put_i32(9);
    expected.put_u8(0x12);
    expected.put_slice(&int4(5));
    assert_eq!(buf, expected);
    assert_eq!(
        Multirange::<i32>::decode(&Type::INT4MULTIRANGE, &buf).unwrap(),
        m
    );
    let empty = encode(&Multirange::<i64>::default(), &Type::INT8MULTIRANGE);
    assert_eq!(&empty[..], &[0, 0, 0, 0]);
    assert!(Multirange::<i64>::decode(&Type::INT8MULTIRANGE, &empty)
        .unwrap()
        .is_empty());
    // Undescribed parameter type: ranges encoded for i32's range type.
    assert_eq!(encode(&m, &Type::from_oid(0)), buf);
}

#[test]
fn malformed_multiranges_are_errors() {
    let err = |raw: &[u8]| {
        Multirange::<i32>::decode(&Type::INT4MULTIRANGE, raw)
            .unwrap_err()
            .to_string()
    };
    let e = err(&[0, 0]);
    assert!(e.contains("needs a 4-byte range count, got 2"), "{e}");
    let e = err(&[0x7f, 0xff, 0xff, 0xff]);
    assert!(
        e.contains("range count 2147483647 does not fit the 0 bytes"),
        "{e}"
    );
    let e = err(&[0xff, 0xff, 0xff, 0xff]);
    assert!(e.contains("range count -1"), "{e}");
    let e = err(&[0, 0, 0, 1, 0, 0, 0, 9, 1]);
    assert!(
        e.contains("range 1 length is 9 but 1 bytes are left"),
        "{e}"
    );
    let e = err(&[0, 0, 0, 1, 0, 0, 0, 1, 0x80]);
    assert!(
        e.contains("int4multirange range 1: ") && e.contains("unknown range flags"),
        "{e}"
    );
    let e = err(&[0, 0, 0, 1, 0, 0, 0, 1, 1, 9]);
    assert!(e.contains("1 bytes left after 1 ranges"), "{e}");
    let e = err(&[&[0, 0, 0, 2, 0, 0, 0, 9, 0x12][..], &int4(5), &[0, 0, 0]].concat());
    assert!(e.contains("truncated before range 2"), "{e}");
}
