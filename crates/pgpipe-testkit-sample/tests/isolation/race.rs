//! A test the driver runs in several processes at once against a
//! migrations folder no process has seen: `driver::processes_racing_for_a_new_template_build_it_once`.

use pgpipe_testkit::TestSpec;

/// The folder the driver made; the crate's own migrations without it.
pub(crate) const DIR_VAR: &str = "PGPIPE_SAMPLE_RACE_DIR";

#[test]
#[ignore = "run by driver::processes_racing_for_a_new_template_build_it_once"]
fn copies_the_template_of_a_new_folder() {
    let dir = std::env::var(DIR_VAR)
        .unwrap_or_else(|_| concat!(env!("CARGO_MANIFEST_DIR"), "/migrations").to_string());
    let db = TestSpec::new("race")
        .migrations(dir)
        .create_database()
        .unwrap();
    let server = pgpipe_testkit::test_server().unwrap();
    // Every migration of the folder is in the copy.
    let tables = server
        .query(
            db.name(),
            "SELECT count(*) FROM pg_tables WHERE schemaname = 'public'",
        )
        .unwrap();
    assert_ne!(tables[0][0].as_deref(), Some("0"));
}
