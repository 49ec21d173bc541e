//! Feeds arbitrary bytes to every `Decode` impl of pgpipe-types (scalars,
//! dates and times, geometric and system types, arrays, ranges,
//! multiranges, composites): a server may send anything, and no input may
//! panic or allocate unchecked.

#![no_main]

use libfuzzer_sys::fuzz_target;
use pgpipe_types::{
    Array, BitString, Cidr, Circle, CompositeReader, Date, Decode, Inet, Interval, MacAddr,
    MacAddr8, Money, Multirange, Numeric, Path, PgBox, PgLsn, PgSnapshot, Polygon, Range, Tid,
    Time, TimeTz, Timestamp, TimestampTz, TsVector, Type, WithInfinity,
};

fn feed<'a, T: Decode<'a>>(ty: &Type, raw: &'a [u8]) {
    let _ = T::decode_opt(ty, Some(raw));
}

fuzz_target!(|data: &[u8]| {
    // The first byte picks the decoder, so the fuzzer can focus on one.
    let Some((&pick, raw)) = data.split_first() else {
        return;
    };
    match pick % 32 {
        0 => feed::<bool>(&Type::BOOL, raw),
        1 => feed::<i64>(&Type::INT8, raw),
        2 => feed::<f64>(&Type::FLOAT8, raw),
        3 => feed::<&str>(&Type::TEXT, raw),
        4 => feed::<Numeric>(&Type::NUMERIC, raw),
        5 => feed::<Money>(&Type::MONEY, raw),
        6 => feed::<BitString>(&Type::VARBIT, raw),
        7 => feed::<Inet>(&Type::INET, raw),
        8 => feed::<Cidr>(&Type::CIDR, raw),
        9 => feed::<MacAddr>(&Type::MACADDR, raw),
        10 => feed::<MacAddr8>(&Type::MACADDR8, raw),
        11 => feed::<Date>(&Type::DATE, raw),
        12 => feed::<Time>(&Type::TIME, raw),
        13 => feed::<TimeTz>(&Type::TIMETZ, raw),
        14 => feed::<Timestamp>(&Type::TIMESTAMP, raw),
        15 => feed::<WithInfinity<TimestampTz>>(&Type::TIMESTAMPTZ, raw),
        16 => feed::<Interval>(&Type::INTERVAL, raw),
        17 => feed::<Vec<Option<i32>>>(&Type::INT4_ARRAY, raw),
        18 => feed::<Array<Option<String>>>(&Type::TEXT_ARRAY, raw),
        19 => feed::<Range<i64>>(&Type::INT8RANGE, raw),
        20 => feed::<Multirange<i32>>(&Type::INT4MULTIRANGE, raw),
        21 => feed::<Range<Numeric>>(&Type::NUMRANGE, raw),
        22 => feed::<std::collections::BTreeMap<&str, Option<&str>>>(&Type::TEXT, raw),
        24 => feed::<Path>(&Type::PATH, raw),
        25 => feed::<Polygon>(&Type::POLYGON, raw),
        26 => feed::<PgBox>(&Type::BOX, raw),
        27 => feed::<Circle>(&Type::CIRCLE, raw),
        28 => feed::<PgSnapshot>(&Type::PG_SNAPSHOT, raw),
        29 => feed::<PgLsn>(&Type::PG_LSN, raw),
        30 => feed::<Tid>(&Type::TID, raw),
        31 => feed::<TsVector>(&Type::TSVECTOR, raw),
        _ => {
            if let Ok(mut reader) = CompositeReader::new(&Type::RECORD, raw) {
                while let Ok(Some(field)) = reader.next_field() {
                    let _ = field.decode::<Option<String>>();
                    let _ = field.decode::<Option<Vec<i64>>>();
                }
            }
        }
    }
});
