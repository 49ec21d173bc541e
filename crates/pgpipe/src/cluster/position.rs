//! Comparing WAL positions across what the functions report: an insert
//! position just past a page header against a replay position at the page
//! start.

use pgpipe_types::PgLsn;

/// The most bytes a WAL page header takes (the long header at a segment's
/// start; a plain page's is 24).
const MAX_PAGE_HEADER: u64 = 40;

/// The primary's current insert position and timeline as one text,
/// `16/B374D848@2` (a [`WriteToken`](super::WriteToken)'s form): the
/// timeline is the first eight hex digits of the name of the WAL file
/// being written, the only place a primary reports it to any user.
pub(crate) const TOKEN_SQL: &str = "SELECT pg_current_wal_insert_lsn()::text || '@' || \
     ('x' || substr(pg_walfile_name(pg_current_wal_insert_lsn()), 1, 8))::bit(32)::int8::text";

/// Whether a standby that replayed up to `replayed` has everything before
/// `wanted`. `pg_current_wal_insert_lsn()` at a page boundary points past
/// the new page's header, while replay stops at the end of the last record,
/// the page's start: no record lies between the two, so that counts as
/// reached (else an idle primary would leave such a token unreachable).
pub(crate) fn reached(replayed: PgLsn, wanted: PgLsn, wal_block: u64) -> bool {
    let (r, w) = (replayed.as_u64(), wanted.as_u64());
    r >= w || (r % wal_block.max(1) == 0 && w - r <= MAX_PAGE_HEADER)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_page_header_is_not_a_gap() {
        let at = |v| PgLsn::new(v);
        assert!(reached(at(100), at(100), 8192));
        assert!(reached(at(101), at(100), 8192));
        assert!(!reached(at(99), at(100), 8192));
        assert!(reached(at(8192), at(8192 + 24), 8192));
        assert!(reached(at(16384), at(16384 + 40), 8192));
        assert!(!reached(at(16384), at(16384 + 41), 8192));
        assert!(!reached(at(8000), at(8024), 8192));
    }
}
