//! The invariant checker of the failover tests (Jepsen's rule: an I/O
//! error or a timeout during a commit is an unknown outcome, never a
//! failure).
//!
//! Writers insert unique ids and record each outcome as ok / failed /
//! unknown; afterwards the surviving primary's ids are checked: every ok id
//! is there, no failed id is, nothing else is, and the unknown ones are
//! counted (either way is allowed).

use std::collections::HashSet;

use pgpipe::{Error, ErrorKind, Pool};

/// What one write's caller knows about it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// COMMIT answered: it is durable.
    Ok,
    /// Nothing was committed: it failed before COMMIT was sent, or the
    /// server refused the COMMIT.
    Failed,
    /// COMMIT was sent and its answer lost: it may or may not have
    /// committed.
    Unknown,
}

/// The outcome of a failed COMMIT: unknown when the answer was lost (the
/// connection went, a timeout, the server shutting down mid-commit),
/// failed when the server refused it.
pub fn commit_error(e: &Error) -> Outcome {
    if e.is_outcome_unknown()
        || matches!(
            e.kind(),
            ErrorKind::Io | ErrorKind::Closed | ErrorKind::Timeout
        )
        || e.code()
            .is_some_and(|c| c.code().starts_with("57") || c.code().starts_with("08"))
    {
        Outcome::Unknown
    } else {
        Outcome::Failed
    }
}

/// One write through `pool`: BEGIN; INSERT; COMMIT on a checked-out
/// connection. Anything that fails before COMMIT is sent leaves nothing
/// behind (the transaction never committed).
pub async fn write(pool: &Pool, id: i64) -> Outcome {
    let Ok(tx) = pool.transaction().await else {
        return Outcome::Failed;
    };
    if tx
        .execute("INSERT INTO ids VALUES ($1)", (id,))
        .await
        .is_err()
    {
        return Outcome::Failed;
    }
    match tx.commit().await {
        Ok(()) => Outcome::Ok,
        Err(e) => commit_error(&e),
    }
}

/// Every write's outcome, by id.
#[derive(Debug, Default)]
pub struct Outcomes {
    pub ok: Vec<i64>,
    pub failed: Vec<i64>,
    pub unknown: Vec<i64>,
}

impl Outcomes {
    pub fn record(&mut self, id: i64, outcome: Outcome) {
        match outcome {
            Outcome::Ok => self.ok.push(id),
            Outcome::Failed => self.failed.push(id),
            Outcome::Unknown => self.unknown.push(id),
        }
    }

    /// Checks the ids `present` on the surviving primary against the
    /// outcomes.
    pub fn check(&self, present: &HashSet<i64>) -> Verdict {
        let known: HashSet<i64> = self.ok.iter().chain(&self.unknown).copied().collect();
        Verdict {
            lost: self
                .ok
                .iter()
                .filter(|id| !present.contains(id))
                .copied()
                .collect(),
            ghosts: self
                .failed
                .iter()
                .filter(|id| present.contains(id))
                .copied()
                .collect(),
            strangers: present
                .iter()
                .filter(|id| !known.contains(id))
                .copied()
                .collect(),
            unknown_committed: self
                .unknown
                .iter()
                .filter(|id| present.contains(id))
                .count(),
        }
    }
}

/// What [`Outcomes::check`] found.
#[derive(Debug)]
pub struct Verdict {
    /// Acknowledged writes missing on the primary.
    pub lost: Vec<i64>,
    /// Failed writes present on the primary.
    pub ghosts: Vec<i64>,
    /// Ids present that no writer reported as ok or unknown.
    pub strangers: Vec<i64>,
    /// Unknown outcomes that did commit.
    pub unknown_committed: usize,
}

impl Verdict {
    /// Panics with the offending ids when an invariant is broken.
    pub fn assert_holds(&self) {
        assert!(
            self.lost.is_empty(),
            "acknowledged writes lost: {:?}",
            self.lost
        );
        assert!(
            self.ghosts.is_empty(),
            "failed writes present: {:?}",
            self.ghosts
        );
        assert!(
            self.strangers.is_empty(),
            "rows no writer wrote (or reported failed): {:?}",
            self.strangers
        );
    }
}
