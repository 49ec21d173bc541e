//! Misuse of the derives is a compile error that says what to fix. The
//! expected messages are the checked-in `.stderr` files; regenerate them
//! with `TRYBUILD=overwrite cargo test -p pgpipe-derive --test ui` after a
//! deliberate change, and read the diff.

#[test]
fn misuse_is_a_compile_error() {
    let t = trybuild::TestCases::new();
    t.compile_fail("tests/ui/*.rs");
}
