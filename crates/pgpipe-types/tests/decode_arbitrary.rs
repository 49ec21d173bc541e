//! Hostile bytes from a server: every `Decode` impl, and the composite,
//! array and range decoders, fed arbitrary bytes (and bytes that start like
//! a valid header, or carry huge counts), must return a value or an error,
//! never panic, and never allocate from a length they have not checked
//! against the input (a 4-byte count of 2^31 must not reserve 2^31 slots).

use std::collections::BTreeMap;
use std::net::IpAddr;

use pgpipe_types::{
    Array, BitString, Cid, Cidr, Circle, CompositeReader, Date, Decode, Field, Inet, Interval,
    Kind, Line, LineSegment, MacAddr, MacAddr8, Money, Multirange, Numeric, Path, PgBox, PgLsn,
    PgSnapshot, Point, Polygon, Range, Tid, Time, TimeTz, Timestamp, TimestampTz, TsVector, Type,
    WithInfinity, Xid, Xid8,
};
use proptest::prelude::*;

/// Runs the decoder; a panic fails the property.
fn feed<'a, T: Decode<'a>>(ty: &Type, raw: &'a [u8]) {
    let _ = T::decode_opt(ty, Some(raw));
}

/// Arbitrary bytes, mostly short (where the interesting boundaries are),
/// sometimes with a plausible array header in front or a huge count.
fn hostile() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        4 => proptest::collection::vec(any::<u8>(), 0..48),
        1 => proptest::collection::vec(any::<u8>(), 0..600),
        // ndim, has-null flag, element OID, then dimensions and data.
        2 => (0u32..8, 0u32..2, prop_oneof![Just(23u32), Just(25), Just(20), Just(17), any::<u32>()],
              proptest::collection::vec(any::<u8>(), 0..96))
            .prop_map(|(ndim, flag, oid, rest)| {
                let mut v = Vec::new();
                v.extend_from_slice(&ndim.to_be_bytes());
                v.extend_from_slice(&flag.to_be_bytes());
                v.extend_from_slice(&oid.to_be_bytes());
                v.extend_from_slice(&rest);
                v
            }),
        1 => (prop_oneof![Just(i32::MAX), Just(-1i32), Just(i32::MIN), Just(0x0100_0000)],
              proptest::collection::vec(any::<u8>(), 0..64))
            .prop_map(|(n, rest)| {
                let mut v = n.to_be_bytes().to_vec();
                v.extend_from_slice(&rest);
                v
            }),
    ]
}

fn composite_type() -> Type {
    Type::new(
        90_001,
        "attach",
        "mail",
        90_002,
        Kind::Composite(vec![
            Field {
                name: "filename".into(),
                type_: Type::TEXT,
            },
            Field {
                name: "size".into(),
                type_: Type::INT8,
            },
            Field {
                name: "tags".into(),
                type_: Type::TEXT_ARRAY,
            },
        ]),
    )
}

fn read_composite(ty: &Type, raw: &[u8]) {
    if let Ok(mut reader) = CompositeReader::new(ty, raw) {
        while let Ok(Some(field)) = reader.next_field() {
            let _ = field.decode::<Option<String>>();
            let _ = field.decode::<Option<i64>>();
            let _ = field.decode::<Option<Vec<Option<String>>>>();
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2048, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn scalars_never_panic(raw in hostile()) {
        feed::<bool>(&Type::BOOL, &raw);
        feed::<i16>(&Type::INT2, &raw);
        feed::<i32>(&Type::INT4, &raw);
        feed::<i64>(&Type::INT8, &raw);
        feed::<f32>(&Type::FLOAT4, &raw);
        feed::<f64>(&Type::FLOAT8, &raw);
        feed::<String>(&Type::TEXT, &raw);
        feed::<&str>(&Type::VARCHAR, &raw);
        feed::<Box<str>>(&Type::NAME, &raw);
        feed::<Vec<u8>>(&Type::BYTEA, &raw);
        feed::<&[u8]>(&Type::BYTEA, &raw);
        feed::<Numeric>(&Type::NUMERIC, &raw);
        feed::<Money>(&Type::MONEY, &raw);
        feed::<BitString>(&Type::VARBIT, &raw);
        feed::<BitString>(&Type::BIT, &raw);
        feed::<Inet>(&Type::INET, &raw);
        feed::<Cidr>(&Type::CIDR, &raw);
        feed::<IpAddr>(&Type::INET, &raw);
        feed::<MacAddr>(&Type::MACADDR, &raw);
        feed::<MacAddr8>(&Type::MACADDR8, &raw);
        feed::<BTreeMap<String, Option<String>>>(&Type::TEXT, &raw);
        feed::<BTreeMap<&str, Option<&str>>>(&Type::TEXT, &raw);
    }

    #[test]
    fn dates_and_times_never_panic(raw in hostile()) {
        feed::<Date>(&Type::DATE, &raw);
        feed::<Time>(&Type::TIME, &raw);
        feed::<TimeTz>(&Type::TIMETZ, &raw);
        feed::<Timestamp>(&Type::TIMESTAMP, &raw);
        feed::<TimestampTz>(&Type::TIMESTAMPTZ, &raw);
        feed::<Interval>(&Type::INTERVAL, &raw);
        feed::<WithInfinity<Date>>(&Type::DATE, &raw);
        feed::<WithInfinity<TimestampTz>>(&Type::TIMESTAMPTZ, &raw);
    }

    #[test]
    fn arrays_never_panic(raw in hostile()) {
        feed::<Vec<i32>>(&Type::INT4_ARRAY, &raw);
        feed::<Vec<Option<i32>>>(&Type::INT4_ARRAY, &raw);
        feed::<Vec<String>>(&Type::TEXT_ARRAY, &raw);
        feed::<Vec<Option<&str>>>(&Type::TEXT_ARRAY, &raw);
        feed::<Vec<i64>>(&Type::INT8_ARRAY, &raw);
        feed::<Array<i32>>(&Type::INT4_ARRAY, &raw);
        feed::<Array<Option<String>>>(&Type::TEXT_ARRAY, &raw);
        feed::<[i32; 3]>(&Type::INT4_ARRAY, &raw);
        feed::<Vec<Numeric>>(&Type::NUMERIC_ARRAY, &raw);
        feed::<Vec<Range<i32>>>(&Type::INT4RANGE_ARRAY, &raw);
        // An array of composites: each element read field by field.
        if let Ok(values) = Vec::<Option<&[u8]>>::decode_opt(&Type::BYTEA_ARRAY, Some(&raw)) {
            for v in values.iter().flatten() {
                read_composite(&composite_type(), v);
            }
        }
    }

    #[test]
    fn ranges_never_panic(raw in hostile()) {
        feed::<Range<i32>>(&Type::INT4RANGE, &raw);
        feed::<Range<i64>>(&Type::INT8RANGE, &raw);
        feed::<Range<Numeric>>(&Type::NUMRANGE, &raw);
        feed::<Range<Date>>(&Type::DATERANGE, &raw);
        feed::<Range<TimestampTz>>(&Type::TSTZRANGE, &raw);
        feed::<Multirange<i32>>(&Type::INT4MULTIRANGE, &raw);
        feed::<Multirange<i64>>(&Type::INT8MULTIRANGE, &raw);
    }

    #[test]
    fn geometric_and_system_types_never_panic(raw in hostile()) {
        feed::<Point>(&Type::POINT, &raw);
        feed::<LineSegment>(&Type::LSEG, &raw);
        feed::<PgBox>(&Type::BOX, &raw);
        feed::<Path>(&Type::PATH, &raw);
        feed::<Polygon>(&Type::POLYGON, &raw);
        feed::<Line>(&Type::LINE, &raw);
        feed::<Circle>(&Type::CIRCLE, &raw);
        feed::<PgLsn>(&Type::PG_LSN, &raw);
        feed::<Tid>(&Type::TID, &raw);
        feed::<Xid>(&Type::XID, &raw);
        feed::<Xid8>(&Type::XID8, &raw);
        feed::<Cid>(&Type::CID, &raw);
        feed::<PgSnapshot>(&Type::PG_SNAPSHOT, &raw);
        feed::<TsVector>(&Type::TSVECTOR, &raw);
        feed::<Vec<Option<Polygon>>>(&Type::POLYGON_ARRAY, &raw);
        feed::<Vec<PgSnapshot>>(&Type::PG_SNAPSHOT_ARRAY, &raw);
    }

    #[test]
    fn composites_never_panic(raw in hostile()) {
        read_composite(&composite_type(), &raw);
        read_composite(&Type::RECORD, &raw);
    }
}
