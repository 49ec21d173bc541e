//! Setting one connection parameter by its key: the table's setters, the
//! keys accepted for libpq compatibility and only checked, and a clear
//! error for the keys pgpipe knows but does not implement. URL query
//! parameters and `key=value` pairs both end up here.

use super::{fields, params, Config, ConfigError};

/// libpq parameters that pgpipe recognizes but does not implement. Naming
/// them separately turns a puzzling "unknown parameter" into a clear answer.
const UNSUPPORTED: &[&str] = &[
    "service",
    "servicefile",
    "replication",
    "requiressl",
    "krbsrvname",
    "gsslib",
    "gssdelegation",
    "requirepeer",
    "sslcompression",
    "sslsni",
    "sslcertmode",
    "ssl_min_protocol_version",
    "ssl_max_protocol_version",
];

/// Sets one connection parameter from its textual value.
///
/// An empty value unsets the parameter, so that the environment or the
/// default applies (libpq mostly behaves the same way, by treating empty
/// values as absent later on).
pub(super) fn assign(config: &mut Config, key: &str, value: &str) -> Result<(), ConfigError> {
    // Accepted for libpq compatibility, checked, and not stored.
    let checked_only = match key {
        "client_encoding" => {
            Some(params::check_client_encoding as fn(&str) -> Result<(), ConfigError>)
        }
        "gssencmode" => Some(check_gssencmode as fn(&str) -> Result<(), ConfigError>),
        _ => None,
    };
    if let Some(check) = checked_only {
        return if value.is_empty() {
            Ok(())
        } else {
            check(value)
        };
    }
    let known = if value.is_empty() {
        fields::unset_by_key(config, key)
    } else {
        fields::set_by_key(config, key, value)?
    };
    if known {
        Ok(())
    } else {
        Err(unknown(key))
    }
}

fn unknown(key: &str) -> ConfigError {
    if UNSUPPORTED.contains(&key) {
        ConfigError::new(
            key,
            format!("connection parameter \"{key}\" is not supported by pgpipe"),
        )
    } else {
        ConfigError::new(key, format!("unknown connection parameter \"{key}\""))
    }
}

/// pgpipe has no GSSAPI support: "disable" and "prefer" (which falls back
/// to no encryption) are harmless, "require" could never be met.
fn check_gssencmode(value: &str) -> Result<(), ConfigError> {
    match value {
        "disable" | "prefer" => Ok(()),
        "require" => Err(ConfigError::new(
            value,
            "gssencmode=require is not supported: pgpipe has no GSSAPI encryption",
        )),
        _ => Err(ConfigError::new(
            value,
            format!(
                "invalid value \"{value}\" for \"gssencmode\": expected one of disable, prefer, require"
            ),
        )),
    }
}
