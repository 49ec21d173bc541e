//! Misuse the borrow checker can see is a compile error: a `Client` used
//! while its own transaction is open (a task that would wait for itself),
//! and connection-wide calls on a `Transaction`. The expected messages are
//! the checked-in `.stderr` files; regenerate them with
//! `TRYBUILD=overwrite cargo test -p pgpipe --test ui` after a deliberate
//! change, and read the diff.

#[test]
fn misuse_is_a_compile_error() {
    let t = trybuild::TestCases::new();
    t.compile_fail("tests/ui/*.rs");
}
