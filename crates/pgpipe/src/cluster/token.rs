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
/// A token also names the primary's timeline when it was taken (the
/// number a failover raises): a standby still replaying an older timeline
/// may report a position past the token's on WAL the new primary never
/// had, and is not eligible (see
/// [`Consistency::ReadYourWrites`](crate::cluster::Consistency::ReadYourWrites)).
///
/// Tokens are ordered by position; [`merge`](Self::merge) keeps the later
/// position and the later timeline of two (what a session that wrote
/// twice needs). The text form is PostgreSQL's own `pg_lsn` form followed
/// by `@` and the timeline, short enough for a cookie or a queue message,
/// and parses back; a bare position (the form before timelines) parses
/// too, as a token that names no timeline:
///
/// ```
/// use pgpipe::cluster::WriteToken;
///
/// let a: WriteToken = "16/B374D848@2".parse().unwrap();
/// let b: WriteToken = "16/B3750000@2".parse().unwrap();
/// assert!(a < b);
/// assert_eq!(a.merge(b), b);
/// assert_eq!(b.to_string(), "16/B3750000@2");
/// assert_eq!(b.timeline(), Some(2));
/// assert_eq!("16/B3750000".parse::<WriteToken>().unwrap().timeline(), None);
/// assert!("16/".parse::<WriteToken>().is_err());
/// assert!("0/0".parse::<WriteToken>().is_err());
/// assert!("16/B3750000@".parse::<WriteToken>().is_err());
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct WriteToken {
    lsn: PgLsn,
    timeline: Option<u32>,
}

impl WriteToken {
    /// The token for a WAL position, as `pg_current_wal_insert_lsn()`
    /// reports it after a commit; `None` for `0/0`, which is no position.
    /// It names no timeline: a standby on any timeline that has replayed
    /// the position is eligible.
    pub fn from_lsn(lsn: PgLsn) -> Option<WriteToken> {
        (!lsn.is_invalid()).then_some(WriteToken {
            lsn,
            timeline: None,
        })
    }

    /// The token for a WAL position on the given timeline of the primary.
    pub fn from_lsn_on_timeline(lsn: PgLsn, timeline: u32) -> Option<WriteToken> {
        WriteToken::from_lsn(lsn).map(|t| WriteToken {
            timeline: Some(timeline),
            ..t
        })
    }

    /// The WAL position.
    pub fn lsn(self) -> PgLsn {
        self.lsn
    }

    /// The primary's timeline when the token was taken, if known.
    pub fn timeline(self) -> Option<u32> {
        self.timeline
    }

    /// The later position and the later timeline of two tokens of one
    /// shard: a replica that satisfies the result satisfies both.
    pub fn merge(self, other: WriteToken) -> WriteToken {
        WriteToken {
            lsn: self.lsn.max(other.lsn),
            timeline: self.timeline.max(other.timeline),
        }
    }
}

impl fmt::Display for WriteToken {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.lsn, f)?;
        match self.timeline {
            Some(t) => write!(f, "@{t}"),
            None => Ok(()),
        }
    }
}

impl From<WriteToken> for PgLsn {
    fn from(token: WriteToken) -> PgLsn {
        token.lsn
    }
}

/// A string that is not a [`WriteToken`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TokenParseError {
    input: String,
    reason: &'static str,
}

impl fmt::Display for TokenParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "invalid write token {:?}: {} (a token looks like 16/B374D848@2)",
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
        let (position, timeline) = match s.split_once('@') {
            Some((position, timeline)) => (position, Some(timeline)),
            None => (s, None),
        };
        let lsn: PgLsn = position.parse().map_err(|_| TokenParseError {
            input: input.clone(),
            reason: "expected two groups of 1 to 8 hex digits separated by '/'",
        })?;
        let timeline = match timeline {
            None => None,
            Some(t) => Some(
                Some(t)
                    .filter(|t| !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit()))
                    .and_then(|t| t.parse::<u32>().ok())
                    .filter(|&t| t > 0)
                    .ok_or_else(|| TokenParseError {
                        input: input.clone(),
                        reason: "expected a timeline (a positive decimal number) after '@'",
                    })?,
            ),
        };
        let token = WriteToken::from_lsn(lsn).ok_or(TokenParseError {
            input,
            reason: "0/0 is no WAL position",
        })?;
        Ok(WriteToken { timeline, ..token })
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
            for tli in [1, 7, u32::MAX] {
                let t = WriteToken::from_lsn_on_timeline(PgLsn::new(pos), tli).unwrap();
                assert_eq!(t.to_string().parse::<WriteToken>().unwrap(), t);
                assert_eq!(t.timeline(), Some(tli));
            }
        }
        // Merging keeps the later position and the later timeline, also
        // when they come from different tokens.
        let old: WriteToken = "5/0@1".parse().unwrap();
        let new: WriteToken = "4/0@2".parse().unwrap();
        assert_eq!(old.merge(new).to_string(), "5/0@2");
        let bare: WriteToken = "6/0".parse().unwrap();
        assert_eq!(bare.merge(new).to_string(), "6/0@2");
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
            "1/0@",
            "1/0@0",
            "1/0@-1",
            "1/0@+1",
            "1/0@x",
            "1/0@1@2",
            "1/0@4294967296",
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
