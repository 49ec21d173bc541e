//! The error type of the configuration module.

use std::fmt;

/// A connection string, a setting or an environment variable that could not
/// be used.
///
/// [`part`](ConfigError::part) names the offending piece (a key, a value, a
/// URL fragment or an environment variable) so that callers can point at it;
/// the [`Display`](fmt::Display) form is a complete sentence that already
/// contains it. Passwords never appear in either: errors about them name the
/// parameter, not its value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigError {
    part: String,
    message: String,
}

impl From<ConfigError> for crate::Error {
    /// An error of kind [`Config`](crate::ErrorKind::Config) whose source is
    /// the `ConfigError`, so `?` works on configuration in functions that
    /// return `pgpipe::Error`.
    fn from(e: ConfigError) -> crate::Error {
        crate::Error::new(crate::ErrorKind::Config, "invalid configuration").with_source(e)
    }
}

/// Something a connection's settings can come from: a [`Config`](super::Config)
/// or a connection URL or keyword/value string (parsed with
/// [`Config::parse`](super::Config::parse)).
pub trait IntoConfig {
    /// The settings, or why the string does not parse.
    fn into_config(self) -> Result<super::Config, ConfigError>;
}

impl IntoConfig for super::Config {
    fn into_config(self) -> Result<super::Config, ConfigError> {
        Ok(self)
    }
}

impl IntoConfig for &super::Config {
    fn into_config(self) -> Result<super::Config, ConfigError> {
        Ok(self.clone())
    }
}

impl IntoConfig for &str {
    fn into_config(self) -> Result<super::Config, ConfigError> {
        super::Config::parse(self)
    }
}

impl IntoConfig for String {
    fn into_config(self) -> Result<super::Config, ConfigError> {
        super::Config::parse(&self)
    }
}

impl IntoConfig for &String {
    fn into_config(self) -> Result<super::Config, ConfigError> {
        super::Config::parse(self)
    }
}

impl ConfigError {
    pub(crate) fn new(part: impl Into<String>, message: impl Into<String>) -> ConfigError {
        ConfigError {
            part: part.into(),
            message: message.into(),
        }
    }

    /// The offending part of the input: a parameter name, a value, a URL
    /// fragment or an environment variable name.
    pub fn part(&self) -> &str {
        &self.part
    }

    /// The full human-readable description (the same text as `Display`).
    pub fn message(&self) -> &str {
        &self.message
    }

    /// Re-labels an error raised while parsing the value of an environment
    /// variable, so the user learns which variable to fix.
    pub(crate) fn in_env_var(self, var: &str) -> ConfigError {
        ConfigError {
            part: var.to_owned(),
            message: format!("environment variable {var}: {}", self.message),
        }
    }
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for ConfigError {}
