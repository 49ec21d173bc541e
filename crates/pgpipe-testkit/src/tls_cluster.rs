//! Clusters for TLS tests: one with `ssl=on` (certificates from a
//! [`TestPki`] made at run time) and one with `ssl=off`, both with the same
//! TLS-specific roles, so each client setting can be tried against either.

use std::sync::OnceLock;

use crate::cluster::Cluster;
use crate::error::TestkitError;
use crate::pki::{TestPki, CERT_USER};
use crate::roles::{quote_ident, quote_literal, AuthRole};
use crate::server::{Server, ServerSetup};
use crate::url;

/// A login role of a [`TlsCluster`] whose pg_hba.conf line depends on
/// encryption.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum TlsRole {
    /// `hostssl ... scram-sha-256`: reachable only over TLS.
    SslOnly,
    /// `hostnossl ... scram-sha-256`: reachable only without TLS.
    NoSslOnly,
    /// `hostssl ... cert`: logs in with a client certificate whose CN is
    /// its name ([`CERT_USER`]), no password.
    Cert,
}

impl TlsRole {
    /// Every role.
    pub const ALL: [TlsRole; 3] = [TlsRole::SslOnly, TlsRole::NoSslOnly, TlsRole::Cert];

    /// The role's name.
    pub fn user(&self) -> &'static str {
        match self {
            TlsRole::SslOnly => "pgpipe_ssl_only",
            TlsRole::NoSslOnly => "pgpipe_nossl_only",
            TlsRole::Cert => CERT_USER,
        }
    }

    /// The role's password (empty for [`TlsRole::Cert`]).
    pub fn password(&self) -> &'static str {
        match self {
            TlsRole::SslOnly => "tls only pw",
            TlsRole::NoSslOnly => "plain only pw",
            TlsRole::Cert => "",
        }
    }

    fn hba_line(&self) -> String {
        let (kind, method) = match self {
            TlsRole::SslOnly => ("hostssl", "scram-sha-256"),
            TlsRole::NoSslOnly => ("hostnossl", "scram-sha-256"),
            TlsRole::Cert => ("hostssl", "cert"),
        };
        format!(
            "{kind} all {user} 127.0.0.1/32 {method}\n{kind} all {user} ::1/128 {method}\n",
            user = self.user()
        )
    }
}

/// A throwaway cluster for TLS tests: [`TlsCluster::with_tls`] has
/// `ssl=on` with the [`TestPki`] server certificate (SAN `localhost`,
/// `127.0.0.1`) and trusts its client CA; [`TlsCluster::without_tls`] has
/// `ssl=off`. Both have the [`TlsRole`] roles and the usual [`AuthRole`]
/// ones (plain `host` lines: reachable either way).
pub struct TlsCluster {
    cluster: Cluster,
    tls: bool,
}

static WITH_TLS: OnceLock<Result<TlsCluster, TestkitError>> = OnceLock::new();
static WITHOUT_TLS: OnceLock<Result<TlsCluster, TestkitError>> = OnceLock::new();
static PKI: OnceLock<Result<TestPki, TestkitError>> = OnceLock::new();

/// The PKI of this test process (made on first use; its directory is
/// removed when the process exits normally).
pub fn test_pki() -> Result<&'static TestPki, TestkitError> {
    register_at_exit();
    PKI.get_or_init(TestPki::generate)
        .as_ref()
        .map_err(Clone::clone)
}

extern "C" fn stop_tls_clusters_at_exit() {
    let _ = std::panic::catch_unwind(|| {
        for cell in [&WITH_TLS, &WITHOUT_TLS] {
            if let Some(Ok(cluster)) = cell.get() {
                cluster.cluster.shutdown_at_exit();
            }
        }
        // A static is never dropped: remove the PKI's directory here.
        if let Some(Ok(pki)) = PKI.get() {
            let _ = std::fs::remove_dir_all(pki.dir());
        }
    });
}

fn register_at_exit() {
    static ONCE: OnceLock<()> = OnceLock::new();
    // Registered once for the clusters and the PKI alike.
    ONCE.get_or_init(|| {
        // SAFETY: registering a plain extern "C" function.
        if unsafe { libc::atexit(stop_tls_clusters_at_exit) } != 0 {
            eprintln!("pgpipe-testkit: atexit registration failed; TLS cluster directories may be left behind");
        }
    });
}

impl TlsCluster {
    /// The `ssl=on` cluster shared by this test process, started on first use.
    pub fn with_tls() -> Result<&'static TlsCluster, TestkitError> {
        register_at_exit();
        WITH_TLS
            .get_or_init(|| TlsCluster::start(true))
            .as_ref()
            .map_err(Clone::clone)
    }

    /// The `ssl=off` cluster shared by this test process, started on first use.
    pub fn without_tls() -> Result<&'static TlsCluster, TestkitError> {
        register_at_exit();
        WITHOUT_TLS
            .get_or_init(|| TlsCluster::start(false))
            .as_ref()
            .map_err(Clone::clone)
    }

    /// Starts a private one (stopped and deleted on drop), of the version
    /// `PGPIPE_PG_VERSION` names (see [`Cluster::start`]).
    pub fn start(tls: bool) -> Result<TlsCluster, TestkitError> {
        let server = Server::create_custom(&TlsCluster::setup(tls)?)?;
        Ok(TlsCluster {
            cluster: Cluster::from_server(server),
            tls,
        })
    }

    /// Like [`TlsCluster::start`] with PostgreSQL `major`, whatever the
    /// environment says (see [`Cluster::start_version`]).
    pub fn start_version(tls: bool, major: u32) -> Result<TlsCluster, TestkitError> {
        let server = Server::create_version(major, &TlsCluster::setup(tls)?)?;
        Ok(TlsCluster {
            cluster: Cluster::from_server(server),
            tls,
        })
    }

    /// The roles, pg_hba.conf lines, files and settings of either kind.
    fn setup(tls: bool) -> Result<ServerSetup, TestkitError> {
        let mut setup = ServerSetup::default();
        for role in TlsRole::ALL {
            setup.hba_lines.push_str(&role.hba_line());
            let password = match role.password() {
                "" => String::new(),
                pw => format!(" PASSWORD {}", quote_literal(pw)),
            };
            setup
                .sql
                .push("SET password_encryption = 'scram-sha-256'".into());
            setup.sql.push(format!(
                "CREATE ROLE {} LOGIN{password}",
                quote_ident(role.user())
            ));
        }
        if tls {
            let pki = test_pki()?;
            let read = |path: std::path::PathBuf| {
                std::fs::read_to_string(&path)
                    .map_err(|e| TestkitError::io(format!("reading {}", path.display()), e))
            };
            let (cert, key) = pki.server_cert_files();
            setup.files = vec![
                ("server.crt".into(), read(cert)?, 0o644),
                ("server.key".into(), read(key)?, 0o600),
                ("client-ca.crt".into(), read(pki.client_ca_cert())?, 0o644),
            ];
            setup.settings = vec![
                ("ssl".into(), "on".into()),
                ("ssl_cert_file".into(), "{root}/server.crt".into()),
                ("ssl_key_file".into(), "{root}/server.key".into()),
                ("ssl_ca_file".into(), "{root}/client-ca.crt".into()),
            ];
        } else {
            setup.settings = vec![("ssl".into(), "off".into())];
        }
        Ok(setup)
    }

    /// Whether this is the `ssl=on` one.
    pub fn has_tls(&self) -> bool {
        self.tls
    }

    /// The cluster itself, for callers that manage its lifetime (a
    /// private one is stopped when the returned value is dropped).
    pub fn into_cluster(self) -> Cluster {
        self.cluster
    }

    /// The underlying cluster (URLs of the usual roles, setup SQL).
    pub fn cluster(&self) -> &Cluster {
        &self.cluster
    }

    /// `postgres://<role>:<password>@<host>:<port>/postgres?<query>`:
    /// `host` is `127.0.0.1` or `localhost` (both in the server
    /// certificate), `query` the client settings under test.
    pub fn url(&self, role: TlsRole, host: &str, query: &str) -> String {
        url::build(
            role.user(),
            Some(role.password()),
            host,
            self.cluster.port(),
            "postgres",
            Some(query),
        )
    }

    /// Like [`TlsCluster::url`] for one of the usual [`AuthRole`]s.
    pub fn auth_url(&self, role: AuthRole, host: &str, query: &str) -> String {
        url::build(
            role.user(),
            Some(role.password()),
            host,
            self.cluster.port(),
            "postgres",
            Some(query),
        )
    }
}

impl std::fmt::Debug for TlsCluster {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TlsCluster")
            .field("port", &self.cluster.port())
            .field("tls", &self.tls)
            .finish()
    }
}
