//! Connection URLs:
//! `postgres[ql]://[user[:password]@][host][:port][,host[:port]...][/dbname][?key=value&...]`.
//!
//! Differences from libpq, all of them accepting more: the last `@` before
//! the path ends the user info (so an unencoded `@` in a password works),
//! a query value may contain `=`, and empty query items (`&&`) are skipped.

use super::{assign, params, Config, ConfigError, Host, Secret, SslMode};

const SCHEMES: [&str; 2] = ["postgresql://", "postgres://"];

/// Returns what follows the scheme if `s` is a PostgreSQL URL. Schemes are
/// case-insensitive (RFC 3986).
pub(super) fn strip_scheme(s: &str) -> Option<&str> {
    SCHEMES.iter().find_map(|scheme| {
        let head = s.get(..scheme.len())?;
        head.eq_ignore_ascii_case(scheme)
            .then(|| &s[scheme.len()..])
    })
}

/// A PostgreSQL URL (after trimming white space) cut at its query: what
/// precedes the `?` and the query; `None` for anything else (a URL without
/// a query, a libpq `key=value` string). Its items are [`query_items`].
pub(crate) fn split_query(s: &str) -> Option<(&str, &str)> {
    let trimmed = s.trim_matches(|c: char| c.is_ascii_whitespace());
    strip_scheme(trimmed)?;
    // The query starts at the first '?' (percent-encoding keeps any other
    // '?' out of the parts before it).
    let i = trimmed.find('?')?;
    Some((&trimmed[..i], &trimmed[i + 1..]))
}

/// The non-empty `&`-separated items of a URL query, as written (not
/// percent-decoded).
pub(crate) fn query_items(query: &str) -> impl Iterator<Item = &str> {
    query.split('&').filter(|item| !item.is_empty())
}

/// Catches URLs that are not `postgres://` ones before the `key=value`
/// parser gives a confusing answer (or echoes a password in it).
pub(super) fn reject_non_postgres_url(s: &str) -> Result<(), ConfigError> {
    let first = s
        .trim_start()
        .split(|c: char| c.is_ascii_whitespace() || c == '=')
        .next()
        .unwrap_or("");
    if let Some(end) = first.find("://") {
        let scheme = &first[..end];
        let plausible = !scheme.is_empty()
            && scheme
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"+-.".contains(&b));
        if plausible {
            return Err(ConfigError::new(
                scheme,
                format!(
                    "unsupported URL scheme \"{scheme}\": expected postgres:// or postgresql://"
                ),
            ));
        }
    }
    if first.contains([':', '/', '@', '?']) {
        return Err(ConfigError::new(
            "scheme",
            "invalid connection string: it looks like a URL but lacks the postgres:// or \
             postgresql:// scheme (key=value strings need \"=\" after each name)",
        ));
    }
    Ok(())
}

/// Parses a URL; `rest` is `url` without its scheme.
pub(super) fn parse(url: &str, rest: &str) -> Result<Config, ConfigError> {
    let shown = redact(url, rest);
    let mut config = Config::new();

    let (hier, query) = match rest.find('?') {
        Some(i) => (&rest[..i], Some(&rest[i + 1..])),
        None => (rest, None),
    };
    let (authority, path) = match hier.find('/') {
        Some(i) => (&hier[..i], Some(&hier[i + 1..])),
        None => (hier, None),
    };
    let (userinfo, hostlist) = match authority.rfind('@') {
        Some(i) => (Some(&authority[..i]), &authority[i + 1..]),
        None => (None, authority),
    };

    if let Some(userinfo) = userinfo {
        let (user, password) = match userinfo.find(':') {
            Some(i) => (&userinfo[..i], Some(&userinfo[i + 1..])),
            None => (userinfo, None),
        };
        let user = decode_text(user, "user")?;
        if !user.is_empty() {
            config.user = Some(user);
        }
        if let Some(password) = password {
            let password = decode(password, "password")?;
            if !password.is_empty() {
                config.password = Some(Secret::new(password));
            }
        }
    }

    if !hostlist.is_empty() {
        parse_hostlist(&mut config, hostlist, &shown)?;
    }

    if let Some(path) = path {
        let dbname = decode_text(path, "dbname")?;
        if !dbname.is_empty() {
            config.dbname = Some(dbname);
        }
    }

    if let Some(query) = query {
        for item in query_items(query) {
            apply_query_item(&mut config, item)?;
        }
    }
    Ok(config)
}

fn parse_hostlist(config: &mut Config, hostlist: &str, shown: &str) -> Result<(), ConfigError> {
    let mut hosts = Vec::new();
    let mut ports = Vec::new();
    for spec in hostlist.split(',') {
        let (host, port) = split_host_port(spec, shown)?;
        hosts.push(host);
        ports.push(port);
    }
    // An all-empty list (`postgres://:5433/db`) leaves the hosts unset so
    // that PGHOST still applies; an empty item among others is the default
    // host, as in libpq. Ports likewise.
    if hosts.iter().any(|h| !matches!(h, HostSpec::Empty)) {
        config.hosts = hosts
            .into_iter()
            .map(|h| match h {
                HostSpec::Empty => Host::from_entry(""),
                HostSpec::Ipv6(addr) => Host::Tcp(addr),
                HostSpec::Name(name) => Host::from_entry(&name),
            })
            .collect();
    }
    if ports.iter().any(|p| !p.is_empty()) {
        config.ports = ports
            .iter()
            .map(|port| {
                params::parse_port(port).map_err(|_| {
                    ConfigError::new(
                        port.as_str(),
                        format!("invalid port \"{port}\" in \"{shown}\""),
                    )
                })
            })
            .collect::<Result<_, _>>()?;
    }
    Ok(())
}

enum HostSpec {
    Empty,
    Ipv6(String),
    Name(String),
}

/// Splits one `host[:port]` item, decoding both halves. A missing port is
/// returned as "".
fn split_host_port(spec: &str, shown: &str) -> Result<(HostSpec, String), ConfigError> {
    if let Some(bracketed) = spec.strip_prefix('[') {
        let Some(close) = bracketed.find(']') else {
            return Err(ConfigError::new(
                spec,
                format!("unterminated \"[\" in host \"{spec}\" of \"{shown}\""),
            ));
        };
        let addr = &bracketed[..close];
        if addr.is_empty() {
            return Err(ConfigError::new(
                spec,
                format!("empty IPv6 address \"[]\" in \"{shown}\""),
            ));
        }
        let after = &bracketed[close + 1..];
        let port = if after.is_empty() {
            ""
        } else if let Some(port) = after.strip_prefix(':') {
            port
        } else {
            return Err(ConfigError::new(
                after,
                format!("unexpected \"{after}\" after \"]\" in host \"{spec}\" of \"{shown}\""),
            ));
        };
        let addr = decode_text(addr, "host")?;
        return Ok((HostSpec::Ipv6(addr), decode_text(port, "port")?));
    }
    let (host, port) = match spec.find(':') {
        Some(i) => (&spec[..i], &spec[i + 1..]),
        None => (spec, ""),
    };
    let host = decode_text(host, "host")?;
    let host = if host.is_empty() {
        HostSpec::Empty
    } else {
        HostSpec::Name(host)
    };
    Ok((host, decode_text(port, "port")?))
}

fn apply_query_item(config: &mut Config, item: &str) -> Result<(), ConfigError> {
    let Some((key, value)) = item.split_once('=') else {
        let key = String::from_utf8_lossy(&decode(item, "URL query parameter name")?).into_owned();
        return Err(ConfigError::new(
            key.as_str(),
            format!("missing \"=\" after URL query parameter \"{key}\""),
        ));
    };
    let key = decode_text(key, "URL query parameter name")?;
    let what = if params::is_secret(&key) {
        // Never quote any part of a secret value in an error.
        key.clone()
    } else {
        format!("the value of URL query parameter \"{key}\"")
    };
    let value = decode(value, &what)?;
    if key == "password" {
        // Passwords stay bytes: they need not be UTF-8.
        config.password = (!value.is_empty()).then(|| Secret::new(value));
        return Ok(());
    }
    let value = String::from_utf8(value)
        .map_err(|_| ConfigError::new(key.as_str(), format!("invalid UTF-8 in {what}")))?;
    if key == "ssl" {
        // JDBC spelling, translated as libpq does.
        return if value == "true" {
            config.ssl_mode = Some(SslMode::Require);
            Ok(())
        } else {
            Err(ConfigError::new(
                value.as_str(),
                format!(
                    "invalid value \"{value}\" for \"ssl\": only ssl=true (meaning sslmode=require) is accepted"
                ),
            ))
        };
    }
    assign::assign(config, &key, &value)
}

/// Percent-decodes one URL component into text.
fn decode_text(s: &str, what: &str) -> Result<String, ConfigError> {
    String::from_utf8(decode(s, what)?)
        .map_err(|_| ConfigError::new(what, format!("invalid UTF-8 in {what}")))
}

/// Percent-decodes one URL component. Unlike a lenient decoder, a malformed
/// escape is an error, because silently keeping `%zz` would connect with a
/// wrong user or password. `%00` is refused: the protocol cannot carry NUL
/// bytes in strings.
fn decode(s: &str, what: &str) -> Result<Vec<u8>, ConfigError> {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while let Some(&b) = bytes.get(i) {
        if b != b'%' {
            out.push(b);
            i += 1;
            continue;
        }
        let hex = |j: usize| {
            let digit = bytes.get(j).and_then(|&c| (c as char).to_digit(16))?;
            u8::try_from(digit).ok()
        };
        match (hex(i + 1), hex(i + 2)) {
            (Some(hi), Some(lo)) => {
                let byte = hi * 16 + lo;
                if byte == 0 {
                    return Err(ConfigError::new(
                        "%00",
                        format!("\"%00\" (a NUL byte) is not allowed in {what}"),
                    ));
                }
                out.push(byte);
                i += 3;
            }
            _ => {
                if params::is_secret(what) {
                    return Err(ConfigError::new(
                        what,
                        format!("invalid percent-encoding in {what}"),
                    ));
                }
                let end = (i + 3).min(bytes.len());
                let fragment = String::from_utf8_lossy(&bytes[i..end]).into_owned();
                return Err(ConfigError::new(
                    fragment.as_str(),
                    format!("invalid percent-encoding \"{fragment}\" in {what}"),
                ));
            }
        }
    }
    Ok(out)
}

/// The URL as it may appear in error messages: with the password masked.
fn redact(url: &str, rest: &str) -> String {
    let scheme = url
        .get(..url.len().saturating_sub(rest.len()))
        .unwrap_or("");
    let authority_end = rest.find(['/', '?']).unwrap_or(rest.len());
    let authority = &rest[..authority_end];
    let shown = match authority.rfind('@') {
        Some(at) => match authority[..at].find(':') {
            Some(colon) => format!("{scheme}{}:********{}", &authority[..colon], &rest[at..]),
            None => url.to_owned(),
        },
        None => url.to_owned(),
    };
    redact_query(&shown)
}

/// Hides the values of `password=` and `sslpassword=` query parameters.
fn redact_query(url: &str) -> String {
    let Some(q) = url.find('?') else {
        return url.to_owned();
    };
    let (head, query) = url.split_at(q + 1);
    let pairs: Vec<String> = query
        .split('&')
        .map(|pair| match pair.split_once('=') {
            Some((key, _)) if is_secret_key(key) => format!("{key}=********"),
            _ => pair.to_owned(),
        })
        .collect();
    format!("{head}{}", pairs.join("&"))
}

fn is_secret_key(key: &str) -> bool {
    params::is_secret(&percent_encoding::percent_decode_str(key).decode_utf8_lossy())
}
