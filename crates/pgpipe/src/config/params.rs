//! How each connection parameter's value is parsed: the parsers the table
//! in `fields.rs` names, shared by both string forms and the environment
//! (setting a parameter by key is `assign.rs`).

use std::net::IpAddr;
use std::path::PathBuf;
use std::str::FromStr;
use std::time::Duration;

use super::{ConfigError, Host, Secret, DEFAULT_PORT};

// ---- the parsers the table names: (key, text) -> the field's value

pub(super) fn hosts(_key: &str, value: &str) -> Result<Vec<Host>, ConfigError> {
    Ok(parse_hosts(value))
}

pub(super) fn hostaddrs(_key: &str, value: &str) -> Result<Vec<Option<IpAddr>>, ConfigError> {
    parse_hostaddrs(value)
}

pub(super) fn ports(_key: &str, value: &str) -> Result<Vec<u16>, ConfigError> {
    parse_ports(value)
}

pub(super) fn text(_key: &str, value: &str) -> Result<Option<String>, ConfigError> {
    Ok(Some(value.to_owned()))
}

pub(super) fn path(_key: &str, value: &str) -> Result<Option<PathBuf>, ConfigError> {
    Ok(Some(PathBuf::from(value)))
}

pub(super) fn secret_bytes(
    _key: &str,
    value: &str,
) -> Result<Option<Secret<Vec<u8>>>, ConfigError> {
    Ok(Some(Secret::new(value.as_bytes().to_vec())))
}

pub(super) fn secret_text(_key: &str, value: &str) -> Result<Option<Secret<String>>, ConfigError> {
    Ok(Some(Secret::new(value.to_owned())))
}

pub(super) fn keyword<T: FromStr<Err = ConfigError>>(
    _key: &str,
    value: &str,
) -> Result<T, ConfigError> {
    value.parse()
}

pub(super) fn some_keyword<T: FromStr<Err = ConfigError>>(
    key: &str,
    value: &str,
) -> Result<Option<T>, ConfigError> {
    keyword(key, value).map(Some)
}

pub(super) fn seconds(key: &str, value: &str) -> Result<Option<Duration>, ConfigError> {
    parse_seconds(key, value).map(Some)
}

pub(super) fn millis(key: &str, value: &str) -> Result<Option<Duration>, ConfigError> {
    parse_millis(key, value).map(Some)
}

pub(super) fn on_off(key: &str, value: &str) -> Result<bool, ConfigError> {
    match value.trim() {
        "1" | "on" | "true" | "yes" => Ok(true),
        "0" | "off" | "false" | "no" => Ok(false),
        _ => Err(invalid_number(key, value, "on or off")),
    }
}

pub(super) fn nonzero_u32(key: &str, value: &str) -> Result<u32, ConfigError> {
    let n = nonzero_size(key, value)?;
    u32::try_from(n).map_err(|_| invalid_number(key, value, "at most 4294967295"))
}

/// Whether the value of `key` is a secret that error messages must never
/// echo, not even in part.
///
/// The keys of the table's [`Secret`] rows; a unit test checks the list
/// against what `Debug` hides, so a new secret row cannot be missed here.
pub(super) fn is_secret(key: &str) -> bool {
    const SECRET_KEYS: [&str; 2] = ["password", "sslpassword"];
    SECRET_KEYS.contains(&key)
}

/// Parses a comma-separated host list (`host=a,b`, `PGHOST`).
pub(super) fn parse_hosts(value: &str) -> Vec<Host> {
    value.split(',').map(Host::from_entry).collect()
}

/// Parses a comma-separated list of numeric addresses; an empty item means
/// "resolve the host name at this position instead".
pub(super) fn parse_hostaddrs(value: &str) -> Result<Vec<Option<IpAddr>>, ConfigError> {
    value
        .split(',')
        .map(|item| {
            let item = item.trim();
            if item.is_empty() {
                return Ok(None);
            }
            item.parse::<IpAddr>().map(Some).map_err(|_| {
                ConfigError::new(
                    item,
                    format!("invalid hostaddr \"{item}\": expected a numeric IPv4 or IPv6 address"),
                )
            })
        })
        .collect()
}

/// Parses a comma-separated port list; an empty item means the default port,
/// as in libpq.
pub(super) fn parse_ports(value: &str) -> Result<Vec<u16>, ConfigError> {
    value.split(',').map(parse_port).collect()
}

/// Parses one port, rejecting 0 (which would mean "any port" to the OS).
pub(super) fn parse_port(item: &str) -> Result<u16, ConfigError> {
    let trimmed = item.trim();
    if trimmed.is_empty() {
        return Ok(DEFAULT_PORT);
    }
    match trimmed.parse::<u16>() {
        Ok(port) if port != 0 && trimmed.bytes().all(|b| b.is_ascii_digit()) => Ok(port),
        _ => Err(ConfigError::new(
            item,
            format!("invalid port \"{item}\": expected a number from 1 to 65535"),
        )),
    }
}

fn invalid_number(key: &str, value: &str, expected: &str) -> ConfigError {
    ConfigError::new(
        value,
        format!("invalid value \"{value}\" for \"{key}\": expected {expected}"),
    )
}

/// Parses a non-negative integer; surrounding whitespace is allowed, as in
/// libpq.
fn parse_unsigned(key: &str, value: &str) -> Result<u64, ConfigError> {
    let trimmed = value.trim();
    if trimmed.is_empty() || !trimmed.bytes().all(|b| b.is_ascii_digit()) {
        return Err(invalid_number(key, value, "a non-negative integer"));
    }
    trimmed
        .parse::<u64>()
        .map_err(|_| invalid_number(key, value, "a smaller integer"))
}

/// A duration whose bare number is in seconds (`connect_timeout=2`), as
/// libpq documents; with a unit (`250ms`, `2s`, `5min`) the unit wins.
pub(super) fn parse_seconds(key: &str, value: &str) -> Result<Duration, ConfigError> {
    parse_duration(key, value, Duration::from_secs(1))
}

/// A duration whose bare number is in milliseconds (`query_timeout=250`).
pub(super) fn parse_millis(key: &str, value: &str) -> Result<Duration, ConfigError> {
    parse_duration(key, value, Duration::from_millis(1))
}

/// Parses a non-negative duration: a bare integer counts `bare_unit`s (the
/// parameter's documented unit, kept for libpq compatibility); an integer
/// followed by a unit, PostgreSQL's spellings `us`, `ms`, `s`, `min`, `h`,
/// `d`, says what it means, so `pool_acquire_timeout=2s` cannot be misread
/// as 2 ms.
pub(crate) fn parse_duration(
    key: &str,
    value: &str,
    bare_unit: Duration,
) -> Result<Duration, ConfigError> {
    let trimmed = value.trim();
    let digits_end = trimmed
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(trimmed.len());
    let (number, unit) = trimmed.split_at(digits_end);
    let expected = "a non-negative integer, optionally with a unit (us, ms, s, min, h, d), \
                    such as 250ms, 2s or 5min";
    if number.is_empty() {
        return Err(invalid_number(key, value, expected));
    }
    let n: u64 = number
        .parse()
        .map_err(|_| invalid_number(key, value, "a smaller number"))?;
    let unit = match unit.trim() {
        "" => bare_unit,
        "us" => Duration::from_micros(1),
        "ms" => Duration::from_millis(1),
        "s" => Duration::from_secs(1),
        "min" => Duration::from_secs(60),
        "h" => Duration::from_secs(3600),
        "d" => Duration::from_secs(86_400),
        _ => return Err(invalid_number(key, value, expected)),
    };
    u32::try_from(n)
        .ok()
        .and_then(|n| unit.checked_mul(n))
        .ok_or_else(|| invalid_number(key, value, "a shorter duration"))
}

/// Linux's limits for `TCP_KEEPINTVL` (seconds) and `TCP_KEEPCNT`: larger
/// values would fail only at connect time, as an opaque EINVAL.
const MAX_KEEPALIVE_INTERVAL_SECS: u64 = 32_767;
const MAX_KEEPALIVE_COUNT: u64 = 127;

/// `keepalives_interval`: seconds (libpq's unit), whole seconds only since
/// the socket option counts seconds.
pub(super) fn keepalive_interval(key: &str, value: &str) -> Result<Option<Duration>, ConfigError> {
    let interval = parse_seconds(key, value)?;
    if interval.subsec_nanos() != 0 {
        return Err(invalid_number(key, value, "whole seconds"));
    }
    if interval.as_secs() > MAX_KEEPALIVE_INTERVAL_SECS {
        return Err(invalid_number(
            key,
            value,
            "at most 32767 seconds (the system's limit)",
        ));
    }
    Ok(Some(interval))
}

pub(super) fn keepalive_count(key: &str, value: &str) -> Result<Option<u32>, ConfigError> {
    let count = parse_unsigned(key, value)?;
    if count > MAX_KEEPALIVE_COUNT {
        return Err(invalid_number(
            key,
            value,
            "at most 127 (the system's limit)",
        ));
    }
    Ok(Some(count as u32))
}

pub(super) fn size(key: &str, value: &str) -> Result<usize, ConfigError> {
    let n = parse_unsigned(key, value)?;
    usize::try_from(n).map_err(|_| invalid_number(key, value, "a smaller integer"))
}

pub(super) fn nonzero_size(key: &str, value: &str) -> Result<usize, ConfigError> {
    match size(key, value)? {
        0 => Err(invalid_number(key, value, "a positive integer")),
        n => Ok(n),
    }
}

pub(super) fn bool01(key: &str, value: &str) -> Result<bool, ConfigError> {
    match value.trim() {
        "1" => Ok(true),
        "0" => Ok(false),
        _ => Err(invalid_number(key, value, "0 or 1")),
    }
}

/// pgpipe decodes every text value as UTF-8, so any other client encoding
/// would corrupt data; accept only the server's spellings of UTF-8.
pub(super) fn check_client_encoding(value: &str) -> Result<(), ConfigError> {
    // The server ignores case and punctuation in encoding names.
    let normalized: String = value
        .chars()
        .filter(char::is_ascii_alphanumeric)
        .map(|c| c.to_ascii_lowercase())
        .collect();
    if normalized == "utf8" || normalized == "unicode" {
        Ok(())
    } else {
        Err(ConfigError::new(
            value,
            format!(
                "unsupported client_encoding \"{value}\": pgpipe always uses UTF8 \
                 (the server converts from the database encoding)"
            ),
        ))
    }
}
