//! `pg_lsn`: [`PgLsn`], a position in the write-ahead log.

use std::fmt;
use std::str::FromStr;

use bytes::BytesMut;
use pgpipe_proto::frontend::ParamWriter;
use pgpipe_proto::put::PutInline;
use pgpipe_proto::EncodeError;

use crate::error::wrong_length;
use crate::{BoxError, Decode, Encode, IsNull, StaticType, Type, TypeRef};

/// A PostgreSQL `pg_lsn`: a byte position in the write-ahead log, as
/// `pg_current_wal_lsn()` or `pg_last_wal_replay_lsn()` return it.
///
/// LSNs order as the log does, so a read-your-writes token is the
/// primary's LSN after a commit, and a standby whose replay LSN is at
/// least that far has the write. [`Display`](fmt::Display) and
/// [`FromStr`] use PostgreSQL's `X/Y` form (the high and low 32 bits in
/// hex). Arithmetic is in bytes and never wraps: `checked_*` return
/// `None` where PostgreSQL's `pg_lsn + numeric` raises "pg_lsn out of
/// range", `saturating_*` stop at the ends.
///
/// ```
/// use pgpipe_types::PgLsn;
///
/// let lsn: PgLsn = "16/B374D848".parse().unwrap();
/// assert_eq!(u64::from(lsn), 0x16_B374_D848);
/// assert_eq!(lsn.to_string(), "16/B374D848");
/// let later = lsn.checked_add(0x100).unwrap();
/// assert!(later > lsn);
/// assert_eq!(later.to_string(), "16/B374D948");
/// assert_eq!(later.diff(lsn), 256);
/// assert_eq!(lsn.diff(later), -256);
/// assert_eq!(PgLsn::MAX.checked_add(1), None);
/// assert!("16/".parse::<PgLsn>().is_err());
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct PgLsn(u64);

impl PgLsn {
    /// `0/0`, PostgreSQL's `InvalidXLogRecPtr` (no position).
    pub const INVALID: PgLsn = PgLsn(0);
    /// `FFFFFFFF/FFFFFFFF`, the largest `pg_lsn`.
    pub const MAX: PgLsn = PgLsn(u64::MAX);

    /// The LSN at byte position `pos`.
    pub const fn new(pos: u64) -> PgLsn {
        PgLsn(pos)
    }

    /// The byte position.
    pub const fn as_u64(self) -> u64 {
        self.0
    }

    /// Whether this is `0/0` (no position).
    pub const fn is_invalid(self) -> bool {
        self.0 == 0
    }

    /// `bytes` further on, or `None` past `FFFFFFFF/FFFFFFFF`.
    pub const fn checked_add(self, bytes: u64) -> Option<PgLsn> {
        match self.0.checked_add(bytes) {
            Some(v) => Some(PgLsn(v)),
            None => None,
        }
    }

    /// `bytes` back, or `None` before `0/0`.
    pub const fn checked_sub(self, bytes: u64) -> Option<PgLsn> {
        match self.0.checked_sub(bytes) {
            Some(v) => Some(PgLsn(v)),
            None => None,
        }
    }

    /// `bytes` further on, at most [`PgLsn::MAX`].
    pub const fn saturating_add(self, bytes: u64) -> PgLsn {
        PgLsn(self.0.saturating_add(bytes))
    }

    /// `bytes` back, at least `0/0`.
    pub const fn saturating_sub(self, bytes: u64) -> PgLsn {
        PgLsn(self.0.saturating_sub(bytes))
    }

    /// `self - other` in bytes, negative when `self` is earlier (as
    /// PostgreSQL's `pg_lsn - pg_lsn`, which is a `numeric`); always exact.
    pub const fn diff(self, other: PgLsn) -> i128 {
        self.0 as i128 - other.0 as i128
    }
}

impl From<u64> for PgLsn {
    fn from(pos: u64) -> PgLsn {
        PgLsn(pos)
    }
}

impl From<PgLsn> for u64 {
    fn from(lsn: PgLsn) -> u64 {
        lsn.0
    }
}

impl fmt::Display for PgLsn {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:X}/{:X}", self.0 >> 32, self.0 & 0xffff_ffff)
    }
}

/// Text that is not an LSN in PostgreSQL's `X/Y` form.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LsnParseError {
    input: String,
}

impl fmt::Display for LsnParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "invalid pg_lsn {:?}: expected two groups of 1 to 8 hex digits separated by '/'",
            self.input
        )
    }
}

impl std::error::Error for LsnParseError {}

impl FromStr for PgLsn {
    type Err = LsnParseError;

    /// PostgreSQL's `pg_lsn_in`: 1 to 8 hex digits, `/`, 1 to 8 hex digits,
    /// nothing else (no spaces, no sign).
    fn from_str(s: &str) -> Result<PgLsn, LsnParseError> {
        let err = || LsnParseError {
            input: s.to_owned(),
        };
        let half = |h: &str| {
            if h.is_empty() || h.len() > 8 || !h.bytes().all(|b| b.is_ascii_hexdigit()) {
                return Err(err());
            }
            u64::from_str_radix(h, 16).map_err(|_| err())
        };
        let (hi, lo) = s.split_once('/').ok_or_else(err)?;
        Ok(PgLsn(half(hi)? << 32 | half(lo)?))
    }
}

impl StaticType for PgLsn {
    const TYPE: TypeRef = TypeRef::Oid(3220);
}

impl Encode for PgLsn {
    fn type_ref(&self) -> TypeRef {
        Self::TYPE
    }
    fn accepts(&self, ty: &Type) -> bool {
        ty.is(&[Type::PG_LSN])
    }
    #[inline]
    fn accepts_all_values(&self, ty: &Type) -> bool {
        // Which values fit depends on the type alone.
        self.accepts(ty)
    }
    fn encode(&self, _: &Type, buf: &mut BytesMut) -> Result<IsNull, BoxError> {
        buf.put_slice_inline(&self.0.to_be_bytes());
        Ok(IsNull::No)
    }
    #[inline]
    fn write_to(&self, _: &Type, writer: &mut ParamWriter<'_>) -> Result<(), EncodeError> {
        writer.write_fixed(Ok(self.0.to_be_bytes()))
    }
}

impl<'a> Decode<'a> for PgLsn {
    fn accepts(ty: &Type) -> bool {
        ty.is(&[Type::PG_LSN])
    }
    fn decode(_: &Type, raw: &'a [u8]) -> Result<Self, BoxError> {
        let bytes: [u8; 8] = raw
            .try_into()
            .map_err(|_| wrong_length("pg_lsn", 8, raw.len()))?;
        Ok(PgLsn(u64::from_be_bytes(bytes)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_form_is_postgresqls() {
        for (text, v) in [
            ("0/0", 0),
            ("0/1", 1),
            ("1/0", 1 << 32),
            ("FFFFFFFF/FFFFFFFF", u64::MAX),
            ("16/B374D848", 0x16_B374_D848),
        ] {
            assert_eq!(PgLsn(v).to_string(), text);
            assert_eq!(text.parse::<PgLsn>().unwrap(), PgLsn(v));
        }
        assert_eq!(
            "00000016/b374d848".parse::<PgLsn>().unwrap().0,
            0x16_B374_D848
        );
        for bad in [
            "",
            "/",
            "0/",
            "/0",
            "0",
            "123456789/0",
            "0/123456789",
            " 0/0",
            "0/0 ",
            "+1/0",
            "g/0",
            "0/0/0",
        ] {
            let err = bad.parse::<PgLsn>().unwrap_err();
            assert!(err.to_string().contains("invalid pg_lsn"), "{bad}: {err}");
        }
    }

    #[test]
    fn arithmetic_never_wraps() {
        assert_eq!(PgLsn::MAX.checked_add(1), None);
        assert_eq!(PgLsn::INVALID.checked_sub(1), None);
        assert_eq!(PgLsn::MAX.saturating_add(5), PgLsn::MAX);
        assert_eq!(PgLsn::INVALID.saturating_sub(5), PgLsn::INVALID);
        assert_eq!(PgLsn::MAX.diff(PgLsn::INVALID), u64::MAX as i128);
        assert_eq!(PgLsn::INVALID.diff(PgLsn::MAX), -(u64::MAX as i128));
        assert!(PgLsn::new(1 << 32) > PgLsn::new(0xffff_ffff));
    }

    #[test]
    fn binary_is_eight_bytes() {
        let mut buf = BytesMut::new();
        PgLsn(0x0102_0304_0506_0708)
            .encode(&Type::PG_LSN, &mut buf)
            .unwrap();
        assert_eq!(&buf[..], &[1, 2, 3, 4, 5, 6, 7, 8]);
        assert_eq!(
            PgLsn::decode(&Type::PG_LSN, &buf).unwrap().0,
            0x0102_0304_0506_0708
        );
        let err = PgLsn::decode(&Type::PG_LSN, &[0; 7]).unwrap_err();
        assert!(
            err.to_string()
                .contains("pg_lsn value: expected 8 bytes, got 7"),
            "{err}"
        );
        assert!(!<PgLsn as Decode>::accepts(&Type::INT8));
        assert!(!<i64 as Decode>::accepts(&Type::PG_LSN));
    }
}
