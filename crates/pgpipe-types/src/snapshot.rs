//! `pg_snapshot` and `txid_snapshot`: [`PgSnapshot`].

use std::fmt;

use bytes::BytesMut;
use pgpipe_proto::put::PutInline;

use crate::cursor::Cursor;
use crate::{BoxError, Decode, Encode, IsNull, StaticType, Type, TypeRef};

/// A transaction snapshot as `pg_current_snapshot()` (`pg_snapshot`,
/// PostgreSQL 13+) or `txid_current_snapshot()` (`txid_snapshot`) returns
/// it: every transaction before `xmin` is finished, every one from `xmax`
/// on has not started, and those in `xip` between them were in progress.
///
/// The two SQL types share one binary format; a `PgSnapshot` reads and
/// sends either (it declares `pg_snapshot` when the statement leaves the
/// type open). [`Display`](fmt::Display) writes PostgreSQL's
/// `xmin:xmax:xip,...` text.
///
/// ```
/// use pgpipe_types::PgSnapshot;
///
/// let s = PgSnapshot::new(10, 20, vec![10, 14]).unwrap();
/// assert_eq!(s.to_string(), "10:20:10,14");
/// assert!(s.is_visible(9) && !s.is_visible(14) && s.is_visible(15) && !s.is_visible(20));
/// assert!(PgSnapshot::new(20, 10, vec![]).is_err());
/// assert!(PgSnapshot::new(10, 20, vec![14, 12]).is_err());
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct PgSnapshot {
    xmin: u64,
    xmax: u64,
    xip: Vec<u64>,
}

/// A snapshot the server would refuse (see [`PgSnapshot::new`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SnapshotError {
    msg: String,
}

impl fmt::Display for SnapshotError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.msg)
    }
}

impl std::error::Error for SnapshotError {}

/// The largest `xip` list PostgreSQL holds (`PG_SNAPSHOT_MAX_NXIP`: what
/// fits in a 1 GB allocation).
const MAX_NXIP: usize = (0x3fff_ffff - 24) / 8;

impl PgSnapshot {
    /// A snapshot, checked as the server's `pg_snapshot_recv` checks it:
    /// `xmin` at least 1 (0 is the invalid transaction ID), `xmin <= xmax`,
    /// and `xip` strictly increasing within `xmin..=xmax` (the server
    /// would drop a repeated ID, so the value read back would differ).
    pub fn new(xmin: u64, xmax: u64, xip: Vec<u64>) -> Result<PgSnapshot, SnapshotError> {
        let err = |why: String| SnapshotError {
            msg: format!("invalid pg_snapshot {xmin}:{xmax}: {why}"),
        };
        if xmin == 0 {
            return Err(err("xmin 0 is not a transaction ID".into()));
        }
        if xmax < xmin {
            return Err(err("xmax is before xmin".into()));
        }
        if xip.len() > MAX_NXIP {
            return Err(err(format!(
                "{} in-progress IDs, more than PostgreSQL's {MAX_NXIP}",
                xip.len()
            )));
        }
        let mut last = 0;
        for &x in &xip {
            if x < xmin || x > xmax {
                return Err(err(format!("in-progress ID {x} is outside xmin..=xmax")));
            }
            if x <= last {
                return Err(err(format!(
                    "in-progress IDs must be strictly increasing ({x} after {last})"
                )));
            }
            last = x;
        }
        Ok(PgSnapshot { xmin, xmax, xip })
    }

    /// The earliest transaction still in progress; all before it are done.
    pub fn xmin(&self) -> u64 {
        self.xmin
    }

    /// The first transaction not yet started when the snapshot was taken.
    pub fn xmax(&self) -> u64 {
        self.xmax
    }

    /// The transactions between `xmin` and `xmax` in progress, ascending.
    pub fn xip(&self) -> &[u64] {
        &self.xip
    }

    /// Whether transaction `xid` (a full 64-bit ID, as `pg_current_xact_id()`
    /// gives it) had finished for this snapshot, as the server's
    /// `pg_visible_in_snapshot` answers (committed or not).
    pub fn is_visible(&self, xid: u64) -> bool {
        if xid < self.xmin {
            true
        } else if xid >= self.xmax {
            false
        } else {
            self.xip.binary_search(&xid).is_err()
        }
    }
}

impl fmt::Display for PgSnapshot {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}:", self.xmin, self.xmax)?;
        for (i, x) in self.xip.iter().enumerate() {
            if i > 0 {
                f.write_str(",")?;
            }
            write!(f, "{x}")?;
        }
        Ok(())
    }
}

fn is_snapshot(ty: &Type) -> bool {
    ty.is(&[Type::PG_SNAPSHOT, Type::TXID_SNAPSHOT])
}

impl StaticType for PgSnapshot {
    const TYPE: TypeRef = TypeRef::Oid(5038);
}

impl Encode for PgSnapshot {
    fn type_ref(&self) -> TypeRef {
        Self::TYPE
    }
    fn accepts(&self, ty: &Type) -> bool {
        is_snapshot(ty)
    }
    fn accepts_all_values(&self, ty: &Type) -> bool {
        // Which values fit depends on the type alone.
        self.accepts(ty)
    }
    fn encode(&self, _: &Type, buf: &mut BytesMut) -> Result<IsNull, BoxError> {
        // `new` bounds the count far below i32::MAX.
        buf.put_i32_inline(self.xip.len() as i32);
        buf.put_i64_inline(self.xmin as i64);
        buf.put_i64_inline(self.xmax as i64);
        for &x in &self.xip {
            buf.put_i64_inline(x as i64);
        }
        Ok(IsNull::No)
    }
}

impl<'a> Decode<'a> for PgSnapshot {
    fn accepts(ty: &Type) -> bool {
        is_snapshot(ty)
    }
    fn decode(_: &Type, raw: &'a [u8]) -> Result<Self, BoxError> {
        let mut c = Cursor::new("pg_snapshot", raw);
        let n = c.i32()?;
        let xmin = c.u64()?;
        let xmax = c.u64()?;
        // The count is checked against the bytes before anything is reserved.
        if n < 0 || c.remaining() != n as usize * 8 {
            return Err(format!(
                "invalid binary pg_snapshot value: {n} in-progress IDs in {} bytes",
                c.remaining()
            )
            .into());
        }
        let mut xip = Vec::with_capacity(n as usize);
        for _ in 0..n {
            xip.push(c.u64()?);
        }
        Ok(PgSnapshot::new(xmin, xmax, xip)?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn binary_round_trip_and_layout() {
        let s = PgSnapshot::new(5, 9, vec![5, 7, 9]).unwrap();
        let mut buf = BytesMut::new();
        s.encode(&Type::PG_SNAPSHOT, &mut buf).unwrap();
        assert_eq!(buf.len(), 4 + 16 + 24);
        assert_eq!(&buf[..4], &3i32.to_be_bytes());
        assert_eq!(PgSnapshot::decode(&Type::TXID_SNAPSHOT, &buf).unwrap(), s);
        assert_eq!(s.to_string(), "5:9:5,7,9");
        assert_eq!(PgSnapshot::new(1, 1, vec![]).unwrap().to_string(), "1:1:");
    }

    #[test]
    fn refuses_what_the_server_refuses() {
        for (xmin, xmax, xip) in [
            (0, 1, vec![]),
            (2, 1, vec![]),
            (1, 5, vec![0]),
            (1, 5, vec![6]),
            (1, 5, vec![3, 3]),
            (1, 5, vec![4, 3]),
        ] {
            let err = PgSnapshot::new(xmin, xmax, xip).unwrap_err();
            assert!(err.to_string().starts_with("invalid pg_snapshot"), "{err}");
        }
        // A count that the bytes do not hold, negative or huge.
        for n in [-1i32, 1, i32::MAX] {
            let mut raw = n.to_be_bytes().to_vec();
            raw.extend_from_slice(&[0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 2]);
            assert!(PgSnapshot::decode(&Type::PG_SNAPSHOT, &raw).is_err(), "{n}");
        }
        assert!(PgSnapshot::decode(&Type::PG_SNAPSHOT, &[0; 19]).is_err());
        assert!(!<PgSnapshot as Decode>::accepts(&Type::TEXT));
    }
}
