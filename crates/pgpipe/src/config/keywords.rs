//! The keyword-valued settings (`sslmode`, `target_session_attrs`, ...):
//! each an enum whose accepted spellings are written once.

use std::fmt;
use std::str::FromStr;

use super::ConfigError;

/// Generates a keyword enum together with its `Default`, `as_str`,
/// `Display` and `FromStr`, so that the accepted spellings live in one place.
macro_rules! keyword_enum {
    (
        $(#[$meta:meta])*
        pub enum $name:ident for $param:literal {
            $( $(#[$vmeta:meta])* $variant:ident = $kw:literal, )+
        }
        default = $default:ident;
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum $name {
            $( $(#[$vmeta])* $variant, )+
        }

        impl Default for $name {
            fn default() -> $name {
                $name::$default
            }
        }

        impl $name {
            /// The keyword that selects this value in a connection string.
            pub fn as_str(self) -> &'static str {
                match self {
                    $( $name::$variant => $kw, )+
                }
            }
        }

        impl super::table::Blank for $name {
            fn is_blank(&self) -> bool {
                false
            }
        }

        impl super::table::Unset for $name {
            fn is_unset(&self) -> bool {
                false
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(self.as_str())
            }
        }

        impl FromStr for $name {
            type Err = ConfigError;

            /// Parses the connection-string keyword (case-sensitive, as in
            /// libpq).
            fn from_str(s: &str) -> Result<$name, ConfigError> {
                match s {
                    $( $kw => Ok($name::$variant), )+
                    _ => Err(ConfigError::new(
                        s,
                        format!(
                            "invalid value \"{}\" for \"{}\": expected one of {}",
                            s,
                            $param,
                            [$($kw),+].join(", "),
                        ),
                    )),
                }
            }
        }
    };
}

keyword_enum! {
    /// Whether and how to use TLS (`sslmode`).
    pub enum SslMode for "sslmode" {
        /// Never use TLS.
        Disable = "disable",
        /// Try without TLS first; use TLS if the server insists.
        Allow = "allow",
        /// Try TLS first; fall back to plain text if the server refuses.
        ///
        /// Unlike libpq, a host (name and port) that answered "no TLS" is
        /// remembered for 60 seconds per process, and connects to it in that
        /// time go plain without asking again (one round trip less per
        /// connect to a server without TLS). A server whose TLS is turned on
        /// meanwhile gets plain connections from `prefer` until then; use
        /// `require` or stricter where TLS matters: they always ask, and
        /// never connect plain.
        Prefer = "prefer",
        /// Require TLS, without verifying the server certificate.
        Require = "require",
        /// Require TLS and a server certificate signed by a trusted CA.
        VerifyCa = "verify-ca",
        /// Like `VerifyCa`, and the certificate must name the host.
        VerifyFull = "verify-full",
    }
    default = Prefer;
}

keyword_enum! {
    /// Which kind of server a connection must reach
    /// (`target_session_attrs`); hosts that do not qualify are skipped.
    pub enum TargetSessionAttrs for "target_session_attrs" {
        /// Any server will do.
        Any = "any",
        /// The session must accept writes by default.
        ReadWrite = "read-write",
        /// The session must be read-only by default.
        ReadOnly = "read-only",
        /// The server must not be in hot standby.
        Primary = "primary",
        /// The server must be in hot standby.
        Standby = "standby",
        /// Prefer a standby; take any server if none is found.
        PreferStandby = "prefer-standby",
    }
    default = Any;
}

keyword_enum! {
    /// The order in which hosts are tried (`load_balance_hosts`).
    pub enum LoadBalanceHosts for "load_balance_hosts" {
        /// In the order given.
        Disable = "disable",
        /// In a random order, to spread clients over the hosts.
        Random = "random",
    }
    default = Disable;
}

keyword_enum! {
    /// How statements given as SQL text are sent (`query_mode`, pgpipe's own).
    ///
    /// Every mode costs one round trip per query; they differ in what the
    /// server keeps and so in where they are safe:
    ///
    /// | mode | per query | server state | behind pgbouncer (transaction pooling) |
    /// | --- | --- | --- | --- |
    /// | `cached` | Bind + Execute after the first time (no re-parse, no re-plan) | one named statement per distinct SQL text and parameter types, at most `statement_cache_capacity` (LRU; evicted ones closed) | no: the next transaction may land on a backend without the statement |
    /// | `unnamed` | Parse + Bind + Describe + Execute every time | none | yes |
    /// | `simple` | parameters inlined as text | none | yes (not implemented yet: connecting with it is refused) |
    ///
    /// In `cached` mode a statement whose result type changed after DDL
    /// (SQLSTATE 0A000) or that vanished after `DISCARD ALL` (26000) is
    /// dropped from the cache and retried once, outside transaction blocks
    /// only: inside one the transaction is already aborted, so the error is
    /// returned.
    pub enum QueryMode for "query_mode" {
        /// Named prepared statements, kept in a per-connection cache.
        Cached = "cached",
        /// The unnamed prepared statement, re-parsed on every execution.
        /// Works behind transaction-pooling proxies.
        Unnamed = "unnamed",
        /// The simple query protocol, with parameters inlined as text (not
        /// supported yet).
        Simple = "simple",
    }
    default = Cached;
}

keyword_enum! {
    /// Whether SCRAM channel binding is used (`channel_binding`).
    pub enum ChannelBinding for "channel_binding" {
        /// Never use channel binding.
        Disable = "disable",
        /// Use channel binding when TLS and the server support it.
        Prefer = "prefer",
        /// Fail unless channel binding is used.
        Require = "require",
    }
    default = Prefer;
}

keyword_enum! {
    /// A frontend/backend protocol version (`min_protocol_version`,
    /// `max_protocol_version`, as libpq 18 names them).
    ///
    /// 3.2 (PostgreSQL 18) brings variable-length cancel keys. Asking an
    /// older server for it is harmless: it answers NegotiateProtocolVersion
    /// and the session runs at 3.0, unless `min_protocol_version` forbids.
    pub enum ProtocolVersion for "protocol_version" {
        /// Protocol 3.0, every server since PostgreSQL 7.4.
        V3_0 = "3.0",
        /// Protocol 3.2, PostgreSQL 18 and later.
        V3_2 = "3.2",
        /// The newest version pgpipe speaks (3.2).
        Latest = "latest",
    }
    default = V3_0;
}

impl ProtocolVersion {
    /// The minor version number (`Latest` is 2).
    pub fn minor(&self) -> u16 {
        match self {
            ProtocolVersion::V3_0 => 0,
            ProtocolVersion::V3_2 | ProtocolVersion::Latest => 2,
        }
    }
}

keyword_enum! {
    /// How TLS is negotiated (`sslnegotiation`).
    pub enum SslNegotiation for "sslnegotiation" {
        /// Ask with an `SSLRequest` first, as every server version allows.
        Postgres = "postgres",
        /// Start the TLS handshake straight away (PostgreSQL 17 and later).
        Direct = "direct",
    }
    default = Postgres;
}
