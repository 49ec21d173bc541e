//! Tests that fail on purpose, run by `driver::failing_tests_keep_their_databases`.
//! Ignored, and failing only when `PGPIPE_SAMPLE_FAIL=1` (so `cargo test
//! -- --ignored` elsewhere stays green): each writes a note first, so the
//! driver can check that the kept database holds what the test saw.

use pgpipe::Pool;
use pgpipe_testkit_sample::add_note;

/// Set by the driver in the child process it runs these tests in.
pub(crate) const FAIL_VAR: &str = "PGPIPE_SAMPLE_FAIL";

fn asked_to_fail() -> bool {
    std::env::var(FAIL_VAR).as_deref() == Ok("1")
}

#[pgpipe_testkit::test(migrations = "migrations")]
#[ignore = "fails on purpose; run by driver::failing_tests_keep_their_databases"]
async fn panics(pool: Pool) {
    add_note(&pool, "panics", "written before the failure")
        .await
        .unwrap();
    assert!(!asked_to_fail(), "failing on purpose");
}

#[pgpipe_testkit::test(migrations = "migrations")]
#[ignore = "fails on purpose; run by driver::failing_tests_keep_their_databases"]
async fn returns_err(pool: Pool) -> Result<(), pgpipe::Error> {
    add_note(&pool, "returns_err", "written before the failure").await?;
    if asked_to_fail() {
        // A real error from the server, as a failing query would return.
        pool.execute("SELECT 1 / 0", ()).await?;
    }
    Ok(())
}
