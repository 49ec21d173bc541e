//! The password a connect offers: the configured one, or the password
//! file's entry, looked up only when the server asks (see
//! `config::PasswordFile`).

use std::borrow::Cow;

use crate::config::{PasswordFile, ResolvedConfig};

/// The password for one target, found on demand.
pub(crate) struct Password<'a> {
    resolved: &'a ResolvedConfig,
    file: &'a PasswordFile,
    index: usize,
}

impl<'a> Password<'a> {
    /// The password for `resolved.targets[index]`.
    pub(crate) fn new(
        resolved: &'a ResolvedConfig,
        file: &'a PasswordFile,
        index: usize,
    ) -> Password<'a> {
        Password {
            resolved,
            file,
            index,
        }
    }

    /// The configured password, else the password file's entry (read
    /// now), else none.
    pub(crate) fn get(&self) -> Option<Cow<'a, [u8]>> {
        match &self.resolved.targets.get(self.index)?.password {
            Some(password) => Some(Cow::Borrowed(password.expose())),
            None => self
                .file
                .password(self.resolved, self.index)
                .map(Cow::Owned),
        }
    }
}
