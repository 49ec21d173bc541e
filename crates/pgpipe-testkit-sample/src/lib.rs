//! A sample application crate for `#[pgpipe_testkit::test]`: a notes
//! service whose schema is in `migrations/` (refinery's `V<n>__name.sql`)
//! and whose tests (`tests/isolation/`) each get a fresh database.
//!
//! The tests are also pgpipe's check of the attribute: 50 tests writing
//! to their own databases in parallel, fixtures, migrations, a failing
//! test that keeps its database, and the same test binary run once per
//! test in parallel processes, the way cargo-nextest runs it.
//! `examples/overhead.rs` measures the startup and per-test cost.

#![warn(missing_docs)]

use pgpipe::{Error, GenericClient};

/// Adds a note by `author`; returns its id.
pub async fn add_note(db: &impl GenericClient, author: &str, body: &str) -> Result<i64, Error> {
    let row = db
        .query_one(
            "INSERT INTO notes (author, body) VALUES ($1, $2) RETURNING id",
            (author, body),
        )
        .await?;
    Ok(row.get(0))
}

/// The bodies of `author`'s notes, oldest first.
pub async fn notes_by(db: &impl GenericClient, author: &str) -> Result<Vec<String>, Error> {
    let rows = db
        .query(
            "SELECT body FROM notes WHERE author = $1 ORDER BY id",
            (author,),
        )
        .await?;
    Ok(rows.iter().map(|r| r.get(0)).collect())
}

/// Every author with a note, and how many, by author.
pub async fn authors(db: &impl GenericClient) -> Result<Vec<(String, i64)>, Error> {
    let rows = db
        .query(
            "SELECT author, count(*) FROM notes GROUP BY author ORDER BY author",
            (),
        )
        .await?;
    Ok(rows.iter().map(|r| (r.get(0), r.get(1))).collect())
}
