//! [`WriteToken`]: a WAL position at or after a write's commit, to read
//! one's own writes on a replica.

use std::fmt;
use std::str::FromStr;

use pgpipe_types::PgLsn;

/// A position in a shard's write-ahead log at or after the commit of a
/// write: a replica whose replay position has reached it has replayed the
/// write. Taken by [`Route::execute_with_token`](crate::cluster::Route::execute_with_token)
/// or [`commit_with_token`](crate::cluster::commit_with_token) in the same
/// round trip as the write, and read back with
/// [`Consistency::ReadYourWrites`](crate::cluster::Consistency::ReadYourWrites).
///
/// A token belongs to the shard it was taken on: WAL positions of two
/// shards say nothing about each other. Keep one per shard (a user's home
/// shard, say).
///
/// Tokens are ordered by position; [`merge`](Self::merge) keeps the later
/// of two (what a session that wrote twice needs). The text form is
/// PostgreSQL's own `pg_lsn` form, short enough for a cookie or a queue
/// message, and parses back:
///
/// ```
/// use pgpipe::cluster::WriteToken;
///
/// let a: WriteToken = "16/B374D848".parse().unwrap();
/// let b: WriteToken = "16/B3750000".parse().unwrap();
/// assert!(a < b);
/// assert_eq!(a.merge(b), b);
/// assert_eq!(b.to_string(), "16/B3750000");
/// assert!("16/".parse::<WriteToken>().is_err());
/// assert!("0/0".parse::<WriteToken>().is_err());
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct WriteToken(PgLsn);

impl WriteToken {
    /// The token for a WAL position, as `pg_current_wal_insert_lsn()`
    /// returned it after a commit. `None` for `0/0`, which is no position.
    ///
    /// ```
    /// use pgpipe::cluster::WriteToken;
    /// use pgpipe::types::PgLsn;
    ///
    /// let t = WriteToken::from_lsn(PgLsn::new(0x16_B374_D848)).unwrap();
    /// assert_eq!(t.lsn(), PgLsn::new(0x16_B374_D848));
    /// assert_eq!(WriteToken::from_lsn(PgLsn::INVALID), None);
    /// ```
    pub fn from_lsn(lsn: PgLsn) -> Option<WriteToken> {
        (!lsn.is_invalid()).then_some(WriteToken(lsn))
    }

    /// The WAL position a replica must have replayed.
    ///
    /// ```
    /// # let t: pgpipe::cluster::WriteToken = "1/0".parse().unwrap();
    /// assert_eq!(t.lsn().as_u64(), 1 << 32);
    /// ```
    pub fn lsn(self) -> PgLsn {
        self.0
    }

    /// The later of two tokens: a reader that must see both writes needs
    /// the later position.
    ///
    /// ```
    /// # use pgpipe::cluster::WriteToken;
    /// let a: WriteToken = "0/10".parse().unwrap();
    /// let b: WriteToken = "0/20".parse().unwrap();
    /// assert_eq!(a.merge(b), b);
    /// assert_eq!(b.merge(a), b);
    /// ```
    pub fn merge(self, other: WriteToken) -> WriteToken {
        self.max(other)
    }
}

impl fmt::Display for WriteToken {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.0, f)
    }
}

impl From<WriteToken> for PgLsn {
    fn from(token: WriteToken) -> PgLsn {
        token.0
    }
}

/// Text that is not a [`WriteToken`].
///
/// ```
/// let err = "yesterday".parse::<pgpipe::cluster::WriteToken>().unwrap_err();
/// assert!(err.to_string().contains("\"yesterday\""));
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TokenParseError {
    input: String,
    reason: &'static str,
}

impl fmt::Display for TokenParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "invalid write token {:?}: {} (a token is a WAL position such as 16/B374D848)",
            self.input, self.reason
        )
    }
}

impl std::error::Error for TokenParseError {}

impl FromStr for WriteToken {
    type Err = TokenParseError;

    /// PostgreSQL's `pg_lsn` text form; `0/0` is refused (no write ends
    /// there).
    fn from_str(s: &str) -> Result<WriteToken, TokenParseError> {
        // Cookies and queues hand strings over unchecked: keep the error's
        // copy of a hostile input short.
        let input: String = s.chars().take(40).collect();
        let lsn: PgLsn = s.parse().map_err(|_| TokenParseError {
            input: input.clone(),
            reason: "expected two groups of 1 to 8 hex digits separated by '/'",
        })?;
        WriteToken::from_lsn(lsn).ok_or(TokenParseError {
            input,
            reason: "0/0 is no WAL position",
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_round_trips_and_order_follows_the_position() {
        for pos in [1u64, 0xFF, 1 << 32, 0x16_B374_D848, u64::MAX] {
            let t = WriteToken::from_lsn(PgLsn::new(pos)).unwrap();
            assert_eq!(t.to_string().parse::<WriteToken>().unwrap(), t);
        }
        let a: WriteToken = "0/FFFFFFFF".parse().unwrap();
        let b: WriteToken = "1/0".parse().unwrap();
        assert!(a < b);
        assert_eq!(a.merge(b), b);
        assert_eq!(b.lsn(), PgLsn::new(1 << 32));
    }

    #[test]
    fn bad_strings_are_clear_errors() {
        for bad in [
            "",
            "16",
            "16/",
            "/1",
            "g/1",
            "1/2/3",
            " 1/2",
            "123456789/0",
            "-1/0",
        ] {
            let err = bad.parse::<WriteToken>().unwrap_err();
            assert!(err.to_string().contains("invalid write token"), "{err}");
        }
        let long = "x".repeat(10_000);
        assert!(long.parse::<WriteToken>().unwrap_err().to_string().len() < 200);
        assert!("0/0"
            .parse::<WriteToken>()
            .unwrap_err()
            .to_string()
            .contains("no WAL position"));
    }
}
