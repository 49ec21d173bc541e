//! What a test function may return: `()` or `Result<(), E: Debug>`.

use std::fmt::Debug;

/// The return types [`run_test`](crate::run_test) accepts from a test
/// body: `()`, and `Result<(), E>` with `E: Debug` (an `Err` fails the
/// test, printed with `{:?}` as the standard harness prints it).
pub trait TestOutcome {
    /// `Err` with the failure's text when the test failed.
    fn into_outcome(self) -> Result<(), String>;
}

impl TestOutcome for () {
    fn into_outcome(self) -> Result<(), String> {
        Ok(())
    }
}

impl<E: Debug> TestOutcome for Result<(), E> {
    fn into_outcome(self) -> Result<(), String> {
        self.map_err(|e| format!("{e:?}"))
    }
}
