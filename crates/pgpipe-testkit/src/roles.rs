//! The login roles of a testkit cluster: one per authentication method, and
//! the pg_hba.conf / SQL that set them up.

/// The superuser of testkit clusters (trust over TCP and the Unix socket).
pub(crate) const SUPERUSER: &str = "pgpipe";

/// A login role whose pg_hba.conf line forces one authentication method.
///
/// Every role can connect to databases made by
/// [`Cluster::create_database`](crate::Cluster::create_database) and create
/// objects in their `public` schema. On an external server
/// (`PGPIPE_TEST_URL`) these roles do not exist: URLs fall back to that
/// server's credentials (see [`Cluster::is_external`](crate::Cluster::is_external)).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum AuthRole {
    /// `trust`: no password asked.
    Trust,
    /// `password`: the password is sent in clear text.
    Password,
    /// `md5`: the password is stored as an MD5 hash, so the server asks for MD5.
    Md5,
    /// `scram-sha-256`.
    Scram,
}

impl AuthRole {
    /// Every role, in declaration order.
    pub const ALL: [AuthRole; 4] = [
        AuthRole::Trust,
        AuthRole::Password,
        AuthRole::Md5,
        AuthRole::Scram,
    ];

    /// The role's name on the server.
    pub fn user(&self) -> &'static str {
        match self {
            AuthRole::Trust => "pgpipe_trust",
            AuthRole::Password => "pgpipe_password",
            AuthRole::Md5 => "pgpipe_md5",
            AuthRole::Scram => "pgpipe_scram",
        }
    }

    /// The role's password; empty for [`AuthRole::Trust`] (its URLs carry none).
    ///
    /// The passwords contain characters that must be percent-encoded in a
    /// URL (`@`, space, `!`, `/`, `:`, `#`, `%`), so URL handling is tested
    /// by every authenticated connect. All are ASCII, so SASLprep leaves them
    /// unchanged.
    pub fn password(&self) -> &'static str {
        match self {
            AuthRole::Trust => "",
            AuthRole::Password => "pw clear/text:#1",
            AuthRole::Md5 => "pw@md5 ok!",
            AuthRole::Scram => "pw%scram@2 ?&=",
        }
    }

    /// The pg_hba.conf method keyword.
    pub(crate) fn hba_method(&self) -> &'static str {
        match self {
            AuthRole::Trust => "trust",
            AuthRole::Password => "password",
            AuthRole::Md5 => "md5",
            AuthRole::Scram => "scram-sha-256",
        }
    }

    /// How the password is stored; decides what `md5` in pg_hba.conf does
    /// (an MD5-stored password gets the MD5 exchange, a SCRAM one gets SCRAM).
    fn password_encryption(&self) -> &'static str {
        match self {
            AuthRole::Md5 => "md5",
            _ => "scram-sha-256",
        }
    }
}

/// The whole pg_hba.conf: the superuser and every role, for Unix-socket and
/// TCP (IPv4 and IPv6) connections, and trusted replication connections
/// (only superusers and REPLICATION roles may replicate; the testkit's
/// standbys connect as the superuser). Anything else matches no line and is
/// refused.
pub(crate) fn hba_conf() -> String {
    let mut out =
        String::from("# Written by pgpipe-testkit: one role per authentication method.\n");
    let mut line = |user: &str, method: &str| {
        out.push_str(&format!("local all {user} {method}\n"));
        out.push_str(&format!("host all {user} 127.0.0.1/32 {method}\n"));
        out.push_str(&format!("host all {user} ::1/128 {method}\n"));
    };
    line(SUPERUSER, "trust");
    for role in AuthRole::ALL {
        line(role.user(), role.hba_method());
    }
    // For Cluster::start_standby (pg_basebackup and the walreceiver).
    out.push_str("local replication all trust\n");
    out.push_str("host replication all 127.0.0.1/32 trust\n");
    out.push_str("host replication all ::1/128 trust\n");
    out
}

/// SQL creating every role, each with its password stored the way its
/// method needs. One statement per string (SET must precede its CREATE).
pub(crate) fn create_roles_sql() -> Vec<String> {
    let mut out = Vec::new();
    for role in AuthRole::ALL {
        out.push(format!(
            "SET password_encryption = '{}'",
            role.password_encryption()
        ));
        let password = match role.password() {
            "" => String::new(),
            pw => format!(" PASSWORD {}", quote_literal(pw)),
        };
        out.push(format!(
            "CREATE ROLE {} LOGIN{password}",
            quote_ident(role.user())
        ));
    }
    out
}

/// `"name"` with embedded quotes doubled.
pub(crate) fn quote_ident(name: &str) -> String {
    format!("\"{}\"", name.replace('"', "\"\""))
}

/// `'text'` with embedded quotes doubled (standard_conforming_strings is on
/// by default since 9.1, so backslashes need nothing).
pub(crate) fn quote_literal(text: &str) -> String {
    format!("'{}'", text.replace('\'', "''"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hba_has_local_and_host_lines_per_role() {
        let hba = hba_conf();
        for role in AuthRole::ALL {
            for kind in ["local all", "host all"] {
                let want = format!("{kind} {} ", role.user());
                assert!(
                    hba.lines()
                        .any(|l| l.starts_with(&want) && l.ends_with(role.hba_method())),
                    "{hba}"
                );
            }
        }
        assert!(hba.contains("host all pgpipe 127.0.0.1/32 trust"));
        assert!(hba.lines().any(|l| l == "local replication all trust"));
        assert!(hba
            .lines()
            .any(|l| l == "host replication all 127.0.0.1/32 trust"));
    }

    #[test]
    fn some_password_needs_percent_encoding() {
        assert!(AuthRole::ALL
            .iter()
            .any(|r| crate::url::encode(r.password()) != r.password()));
    }

    #[test]
    fn quoting() {
        assert_eq!(quote_ident("a\"b"), "\"a\"\"b\"");
        assert_eq!(quote_literal("it's"), "'it''s'");
    }
}
