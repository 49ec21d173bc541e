//! [`Secret`]: a value that debug output and logs must never show.

use std::fmt;

/// A secret setting (a password, a key passphrase) that can be stored,
/// compared and cloned but not printed.
///
/// Its `Debug` form is `Secret(***)` whatever it holds, so a configuration
/// can be logged with `{:?}` without leaking it; it has no `Display`. Read
/// the value with [`expose`](Secret::expose), which makes each place that
/// does so easy to find.
///
/// ```
/// use pgpipe::config::Secret;
///
/// let password = Secret::new(b"hunter2".to_vec());
/// assert_eq!(format!("{password:?}"), "Secret(***)");
/// assert_eq!(password.expose(), b"hunter2");
/// ```
#[derive(Clone, PartialEq, Eq, Default)]
pub struct Secret<T>(T);

impl<T> Secret<T> {
    /// Wraps a value.
    pub fn new(value: T) -> Secret<T> {
        Secret(value)
    }

    /// The value itself.
    pub fn expose(&self) -> &T {
        &self.0
    }

    /// Unwraps the value.
    pub fn into_inner(self) -> T {
        self.0
    }
}

impl<T> From<T> for Secret<T> {
    fn from(value: T) -> Secret<T> {
        Secret(value)
    }
}

impl<T> fmt::Debug for Secret<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Secret(***)")
    }
}
