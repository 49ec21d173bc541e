//! `require_auth` (libpq 16): which authentication methods the client lets
//! the server use. Parsed here; enforced during the handshake, before any
//! password leaves the client.

use std::fmt;

use super::ConfigError;

/// An authentication method a server can ask for, as `require_auth` names
/// it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum AuthMethod {
    /// `password`: the cleartext password exchange.
    Password,
    /// `md5`: the MD5 password hash exchange.
    Md5,
    /// `gss`: Kerberos / GSSAPI.
    Gss,
    /// `sspi`: Windows SSPI.
    Sspi,
    /// `scram-sha-256`: SCRAM, with or without channel binding.
    ScramSha256,
    /// `none`: the server lets the client in without asking anything
    /// (`trust`, `peer`, `cert` when no password follows).
    None,
}

impl AuthMethod {
    const ALL: [AuthMethod; 6] = [
        AuthMethod::Password,
        AuthMethod::Md5,
        AuthMethod::Gss,
        AuthMethod::Sspi,
        AuthMethod::ScramSha256,
        AuthMethod::None,
    ];

    /// The keyword `require_auth` uses.
    pub fn as_str(&self) -> &'static str {
        match self {
            AuthMethod::Password => "password",
            AuthMethod::Md5 => "md5",
            AuthMethod::Gss => "gss",
            AuthMethod::Sspi => "sspi",
            AuthMethod::ScramSha256 => "scram-sha-256",
            AuthMethod::None => "none",
        }
    }

    fn bit(self) -> u8 {
        1 << (self as u8)
    }
}

impl fmt::Display for AuthMethod {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The parsed `require_auth` setting: the set of methods the server may
/// use. The default allows every method.
///
/// ```
/// use pgpipe::config::{AuthMethod, RequireAuth};
/// let only_scram: RequireAuth = "scram-sha-256".parse().unwrap();
/// assert!(only_scram.allows(AuthMethod::ScramSha256));
/// assert!(!only_scram.allows(AuthMethod::None));
/// let no_cleartext: RequireAuth = "!password,!md5".parse().unwrap();
/// assert!(no_cleartext.allows(AuthMethod::None));
/// assert!(!no_cleartext.allows(AuthMethod::Md5));
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct RequireAuth {
    allowed: u8,
    /// Written with `!`: kept so messages show the setting as written.
    negated: bool,
}

impl Default for RequireAuth {
    fn default() -> RequireAuth {
        RequireAuth::any()
    }
}

impl RequireAuth {
    /// Every method allowed (no `require_auth`).
    pub fn any() -> RequireAuth {
        RequireAuth {
            allowed: AuthMethod::ALL.iter().fold(0, |acc, m| acc | m.bit()),
            negated: false,
        }
    }

    /// Whether the server may use `method`.
    pub fn allows(&self, method: AuthMethod) -> bool {
        self.allowed & method.bit() != 0
    }

    /// Whether this is the default (every method allowed).
    pub fn is_any(&self) -> bool {
        *self == RequireAuth::any()
    }

    /// The setting as written, e.g. `scram-sha-256` or `!password,!md5`.
    pub fn describe(&self) -> String {
        let methods: Vec<&str> = AuthMethod::ALL
            .iter()
            .filter(|m| self.allows(**m) != self.negated)
            .map(|m| m.as_str())
            .collect();
        if self.negated {
            methods
                .iter()
                .map(|m| format!("!{m}"))
                .collect::<Vec<_>>()
                .join(",")
        } else {
            methods.join(",")
        }
    }
}

impl fmt::Debug for RequireAuth {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "RequireAuth({:?})", self.describe())
    }
}

impl std::str::FromStr for RequireAuth {
    type Err = ConfigError;

    /// Parses libpq's syntax: a comma list of methods, either all plain
    /// (only these are allowed) or all negated with `!` (all but these).
    /// Mixing both, repeating a method or an unknown name is an error.
    fn from_str(value: &str) -> Result<RequireAuth, ConfigError> {
        let err = |msg: String| ConfigError::new(value, msg);
        let mut listed = 0u8;
        let mut negated = None;
        for item in value.split(',') {
            let item = item.trim();
            let (neg, name) = match item.strip_prefix('!') {
                Some(rest) => (true, rest),
                None => (false, item),
            };
            let method = AuthMethod::ALL
                .into_iter()
                .find(|m| m.as_str() == name)
                .ok_or_else(|| {
                    err(format!(
                        "invalid require_auth method \"{name}\": expected password, md5, gss, \
                         sspi, scram-sha-256 or none, optionally negated with !"
                    ))
                })?;
            match negated {
                Some(n) if n != neg => {
                    return Err(err(format!(
                        "require_auth method \"{item}\" cannot be mixed with {} methods",
                        if n { "negative" } else { "non-negative" }
                    )))
                }
                _ => negated = Some(neg),
            }
            if listed & method.bit() != 0 {
                return Err(err(format!(
                    "require_auth method \"{method}\" is specified more than once"
                )));
            }
            listed |= method.bit();
        }
        let all = RequireAuth::any().allowed;
        let negated = negated.unwrap_or(false);
        let allowed = if negated { all & !listed } else { listed };
        if allowed == 0 {
            return Err(err(
                "require_auth allows no authentication method at all".into()
            ));
        }
        Ok(RequireAuth { allowed, negated })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_and_negations() {
        let r: RequireAuth = "md5, password".parse().unwrap();
        assert!(r.allows(AuthMethod::Md5) && r.allows(AuthMethod::Password));
        assert!(!r.allows(AuthMethod::None) && !r.allows(AuthMethod::ScramSha256));
        assert_eq!(r.describe(), "password,md5");
        let r: RequireAuth = "!none".parse().unwrap();
        assert!(!r.allows(AuthMethod::None) && r.allows(AuthMethod::Md5));
        assert_eq!(r.describe(), "!none");
        let r: RequireAuth = "none".parse().unwrap();
        assert!(r.allows(AuthMethod::None) && !r.allows(AuthMethod::Md5));
        assert!(RequireAuth::any().is_any());
    }

    #[test]
    fn bad_lists() {
        for (text, why) in [
            ("md5,!password", "cannot be mixed"),
            ("md5,md5", "more than once"),
            ("kerberos", "invalid require_auth method \"kerberos\""),
            ("", "invalid require_auth method \"\""),
            (
                "!password,!md5,!gss,!sspi,!scram-sha-256,!none",
                "no authentication method",
            ),
        ] {
            let e = text.parse::<RequireAuth>().unwrap_err().to_string();
            assert!(e.contains(why), "{text}: {e}");
        }
    }
}
