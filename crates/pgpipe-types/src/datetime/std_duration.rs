//! `interval` as `std::time::Duration`, when the interval is an exact time.

use std::time::Duration;

use bytes::BytesMut;

use super::Interval;
use crate::{BoxError, Decode, Encode, IsNull, StaticType, Type, TypeRef};

/// The microseconds of `d`, those below a microsecond dropped (as for
/// every time sent), or an error past an interval's range.
fn micros(d: &Duration) -> Result<i64, BoxError> {
    i64::try_from(d.as_micros()).map_err(|_| {
        format!("Duration {d:?} is longer than a PostgreSQL interval holds (about 292,000 years)")
            .into()
    })
}

impl StaticType for Duration {
    const TYPE: TypeRef = TypeRef::Oid(1186);
}

impl Encode for Duration {
    fn type_ref(&self) -> TypeRef {
        Self::TYPE
    }
    fn accepts(&self, ty: &Type) -> bool {
        ty.is(&[Type::INTERVAL])
    }
    /// Sent as microseconds alone (no days or months), so the server never
    /// reinterprets 24 hours as a day.
    fn encode(&self, ty: &Type, buf: &mut BytesMut) -> Result<IsNull, BoxError> {
        Interval::new(0, 0, micros(self)?).encode(ty, buf)
    }
}

impl<'a> Decode<'a> for Duration {
    fn accepts(ty: &Type) -> bool {
        ty.is(&[Type::INTERVAL])
    }
    /// An interval with months or days, or a negative one, is an error:
    /// a month or a day has no fixed length (`justify_hours` and
    /// `extract(epoch ...)` choose one on the server), and a `Duration`
    /// cannot be negative.
    fn decode(ty: &Type, raw: &'a [u8]) -> Result<Self, BoxError> {
        let i = Interval::decode(ty, raw)?;
        if i.months != 0 || i.days != 0 {
            return Err(format!(
                "interval '{i}' has months or days, which have no fixed length, so it cannot be a std::time::Duration; read it as Interval, or convert on the server (extract(epoch from ...))"
            )
            .into());
        }
        if i.microseconds < 0 {
            return Err(format!(
                "interval '{i}' is negative and cannot be a std::time::Duration; read it as Interval"
            )
            .into());
        }
        Ok(Duration::from_micros(i.microseconds as u64))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn to_interval(d: Duration) -> Result<Interval, BoxError> {
        let mut buf = BytesMut::new();
        d.encode(&Type::INTERVAL, &mut buf)?;
        Interval::decode(&Type::INTERVAL, &buf)
    }

    fn from_interval(i: Interval) -> Result<Duration, BoxError> {
        let mut buf = BytesMut::new();
        i.encode(&Type::INTERVAL, &mut buf).unwrap();
        Duration::decode(&Type::INTERVAL, &buf)
    }

    #[test]
    fn exact_times_both_ways() {
        let max = Duration::from_micros(i64::MAX as u64);
        for (d, i) in [
            (Duration::ZERO, Interval::ZERO),
            (
                Duration::from_secs(86_400 * 40),
                Interval::new(0, 0, 86_400 * 40 * 1_000_000),
            ),
            (Duration::new(1, 999), Interval::new(0, 0, 1_000_000)),
            (Duration::new(0, 1_500), Interval::new(0, 0, 1)),
            (max, Interval::new(0, 0, i64::MAX)),
        ] {
            assert_eq!(to_interval(d).unwrap(), i);
            assert_eq!(
                from_interval(i).unwrap(),
                Duration::from_micros(i.microseconds as u64)
            );
        }
        let err = to_interval(max + Duration::from_micros(1)).unwrap_err();
        assert!(
            err.to_string()
                .contains("longer than a PostgreSQL interval"),
            "{err}"
        );
    }

    #[test]
    fn months_days_and_negatives_are_errors() {
        for i in [
            Interval::new(1, 0, 0),
            Interval::new(0, 1, 0),
            Interval::new(0, -1, 86_400_000_000),
        ] {
            let err = from_interval(i).unwrap_err();
            assert!(err.to_string().contains("has months or days"), "{i}: {err}");
        }
        let err = from_interval(Interval::new(0, 0, -1)).unwrap_err();
        assert!(err.to_string().contains("is negative"), "{err}");
        assert!(!<Duration as Decode>::accepts(&Type::TIME));
    }
}
