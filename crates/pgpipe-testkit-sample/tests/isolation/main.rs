//! The sample's tests: each gets a fresh database from
//! `#[pgpipe_testkit::test]`.
//!
//! * `writes`: 50 tests writing to their own databases in parallel;
//! * `features`: fixtures, migrations, and each argument type;
//! * `failing`: tests that fail on purpose (ignored; run by the driver);
//! * `race`: a test the driver runs in several processes at once (ignored);
//! * `driver`: this binary run again the way cargo-nextest runs it (one
//!   process per test), twice over, and with a failing test.

mod driver;
mod failing;
mod features;
mod race;
mod writes;
