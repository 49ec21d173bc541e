//! The checks of a resolved configuration: combinations libpq refuses, and
//! values the startup message cannot carry.

use super::{ChannelBinding, Config, ConfigError, ProtocolVersion, SslMode, SslNegotiation};

/// Startup parameters that have their own settings; setting them through
/// [`Config::param`] would send them twice.
const RESERVED_PARAMS: &[&str] = &[
    "user",
    "database",
    "options",
    "application_name",
    "client_encoding",
    "replication",
];

/// Settings that are each valid but cannot work together.
pub(super) fn combination(
    ssl_mode: SslMode,
    channel_binding: ChannelBinding,
    ssl_negotiation: SslNegotiation,
    min_protocol_version: ProtocolVersion,
    max_protocol_version: ProtocolVersion,
) -> Result<(), ConfigError> {
    if channel_binding == ChannelBinding::Require && ssl_mode == SslMode::Disable {
        return Err(ConfigError::new(
            "channel_binding",
            "channel_binding=require needs TLS, but sslmode=disable forbids it",
        ));
    }
    if min_protocol_version.minor() > max_protocol_version.minor() {
        return Err(ConfigError::new(
            "min_protocol_version",
            format!(
                "min_protocol_version {min_protocol_version} is greater than \
                 max_protocol_version {max_protocol_version}"
            ),
        ));
    }
    if ssl_negotiation == SslNegotiation::Direct
        && matches!(
            ssl_mode,
            SslMode::Disable | SslMode::Allow | SslMode::Prefer
        )
    {
        return Err(ConfigError::new(
            "sslnegotiation",
            format!(
                "weak sslmode \"{ssl_mode}\" may not be used with sslnegotiation=direct \
                 (use \"require\", \"verify-ca\", or \"verify-full\")"
            ),
        ));
    }
    Ok(())
}

/// Rejects limits that would make every connection fail.
pub(super) fn limits(config: &Config) -> Result<(), ConfigError> {
    if config.max_message_size == 0 {
        return Err(ConfigError::new(
            "max_message_size",
            "max_message_size must be positive",
        ));
    }
    if config.scram_max_iterations == 0 {
        return Err(ConfigError::new(
            "scram_max_iterations",
            "scram_max_iterations must be positive",
        ));
    }
    Ok(())
}

/// Startup-message strings are NUL-terminated, so a NUL inside would cut
/// the value short or shift every later field.
pub(super) fn text(value: &str, what: &str) -> Result<(), ConfigError> {
    if value.contains('\0') {
        return Err(ConfigError::new(
            what,
            format!("{what} contains a NUL byte, which the protocol cannot carry"),
        ));
    }
    Ok(())
}

pub(super) fn params(params: &[(String, String)]) -> Result<(), ConfigError> {
    for (name, value) in params {
        if name.is_empty() {
            return Err(ConfigError::new("", "startup parameter name is empty"));
        }
        if RESERVED_PARAMS.contains(&name.as_str()) || name.starts_with("_pq_.") {
            return Err(ConfigError::new(
                name.as_str(),
                format!(
                    "startup parameter \"{name}\" cannot be set with param(): \
                     pgpipe sends it from its own setting"
                ),
            ));
        }
        text(name, "startup parameter name")?;
        text(value, &format!("startup parameter \"{name}\""))?;
    }
    Ok(())
}
