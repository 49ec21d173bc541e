//! TLS on rustls (ring provider): the client configuration for one
//! connection attempt, built from `sslrootcert`, `sslcert`, `sslkey`,
//! `sslcrl`, `sslcrldir` and their `~/.postgresql/` defaults, with libpq's verification
//! rules, and the handshake itself.
//!
//! | sslmode | chain checked | host name checked |
//! | --- | --- | --- |
//! | `allow`, `prefer`, `require` | only if a root certificate file exists (then `require` acts as `verify-ca`, as in libpq) | no |
//! | `verify-ca` | yes (a root certificate is required) | no |
//! | `verify-full` | yes | yes: subjectAltName DNS or IP entries; the subject CN only when no SAN of the host's kind exists |

use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use rustls::client::{VerifierBuilderError, WebPkiServerVerifier};
use rustls::crypto::CryptoProvider;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::ServerName;
use rustls::CertificateError;
use tokio::net::TcpStream;
use tokio_rustls::client::TlsStream;

use crate::config::{Environment, ProcessEnvironment, ResolvedConfig, SslMode};
use crate::connect::x509;

mod cache;
mod client_cert;
mod crl;
mod roots;
mod verifier;

use crate::error::ErrorKind;
use crate::Error;
use client_cert::load_client_cert;
use crl::{describe_crl_files, invalid_crl_error, load_crls};
use roots::load_roots;
use verifier::PgVerifier;

/// The ALPN protocol PostgreSQL 17 registered; required for direct SSL.
pub(crate) const ALPN_POSTGRESQL: &[u8] = b"postgresql";

/// Everything needed to run the handshake with one server.
pub(crate) struct TlsSetup {
    config: Arc<rustls::ClientConfig>,
    server_name: ServerName<'static>,
    /// For error messages: what was checked.
    mode: SslMode,
    root_source: Option<String>,
    /// Where the revocation lists came from, when any are checked.
    crl_source: Option<String>,
}

impl fmt::Debug for TlsSetup {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TlsSetup")
            .field("server_name", &self.server_name)
            .field("mode", &self.mode)
            .finish()
    }
}

fn provider() -> Arc<CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

fn tls_error(message: impl Into<String>) -> Error {
    Error::new(ErrorKind::Tls, message)
}

/// The files libpq looks at when none is configured: `~/.postgresql/<name>`.
fn default_file(env: &dyn Environment, name: &str) -> Option<PathBuf> {
    default_file_in(env.home_dir().as_deref(), name)
}

/// [`default_file`] for a home directory already looked up.
fn default_file_in(home: Option<&Path>, name: &str) -> Option<PathBuf> {
    home.map(|home| home.join(".postgresql").join(name))
}

impl TlsSetup {
    /// The setup for connecting to `host` (the name the user gave, which
    /// verify-full checks): built once per configuration and host and
    /// shared, read again when one of its files changed (see `cache`), so
    /// rotated files are picked up by the next connect.
    pub(crate) fn shared(config: &ResolvedConfig, host: &str) -> Result<Arc<TlsSetup>, Error> {
        cache::shared().get(config, host, &ProcessEnvironment)
    }

    /// Reads the certificate files and builds the rustls configuration.
    pub(crate) fn with_env(
        config: &ResolvedConfig,
        host: &str,
        env: &dyn Environment,
    ) -> Result<TlsSetup, Error> {
        let provider = provider();
        let mode = config.ssl_mode;
        let (roots, root_source) = load_roots(config, env)?;
        let verify_name = mode == SslMode::VerifyFull;
        let mut crl_source = None;
        let chain = match roots {
            Some(roots) => {
                let roots = Arc::new(roots);
                let crl_files = load_crls(config, env)?;
                let crls: Vec<_> = crl_files
                    .iter()
                    .flat_map(|file| file.crls.iter().cloned())
                    .collect();
                let mut builder =
                    WebPkiServerVerifier::builder_with_provider(roots.clone(), provider.clone());
                if !crls.is_empty() {
                    builder = builder.with_crls(crls);
                    crl_source = Some(describe_crl_files(&crl_files));
                }
                Some(builder.build().map_err(|e| match e {
                    VerifierBuilderError::InvalidCrl(_) => {
                        invalid_crl_error(&crl_files, &roots, &provider, e)
                    }
                    e => tls_error("setting up certificate verification").with_source(e),
                })?)
            }
            None => None,
        };
        let parsed_name = ServerName::try_from(host.to_owned()).ok();
        if verify_name && parsed_name.is_none() {
            return Err(tls_error(format!(
                "sslmode=verify-full: \"{host}\" is not a valid host name or IP address to \
                 check the server certificate against"
            )));
        }
        let verifier = PgVerifier {
            chain,
            check_host: verify_name.then(|| host.to_owned()),
            provider: provider.clone(),
        };
        let builder = rustls::ClientConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .map_err(|e| tls_error("setting up TLS").with_source(e))?
            .dangerous()
            .with_custom_certificate_verifier(Arc::new(verifier));
        let mut client = match load_client_cert(config, env)? {
            Some((certs, key)) => builder.with_client_auth_cert(certs, key).map_err(|e| {
                tls_error("the client certificate and key do not fit together").with_source(e)
            })?,
            None => builder.with_no_client_auth(),
        };
        client.alpn_protocols = vec![ALPN_POSTGRESQL.to_vec()];
        // libpq sends SNI for host names, never for IP addresses; a name
        // rustls cannot carry (say, with an underscore) gets none either.
        let server_name = match parsed_name {
            Some(name) => name,
            None => {
                client.enable_sni = false;
                ServerName::try_from("pgpipe.invalid").map_err(|e| tls_error(e.to_string()))?
            }
        };
        Ok(TlsSetup {
            config: Arc::new(client),
            server_name,
            mode,
            root_source,
            crl_source,
        })
    }

    /// Runs the TLS handshake on `tcp`. With `require_alpn` (direct SSL)
    /// the server must have selected ALPN `postgresql`.
    pub(crate) async fn handshake(
        &self,
        tcp: TcpStream,
        require_alpn: bool,
    ) -> Result<TlsStream<TcpStream>, Error> {
        let connector = tokio_rustls::TlsConnector::from(self.config.clone());
        let stream = connector
            .connect(self.server_name.clone(), tcp)
            .await
            .map_err(|e| self.handshake_error(e))?;
        if require_alpn && stream.get_ref().1.alpn_protocol() != Some(ALPN_POSTGRESQL) {
            return Err(tls_error(
                "direct SSL: the server did not select ALPN protocol \"postgresql\" \
                 (it may not be PostgreSQL 17 or later, or something else answers)",
            ));
        }
        Ok(stream)
    }

    /// Names the check that failed rather than rustls' variant names.
    fn handshake_error(&self, e: std::io::Error) -> Error {
        let rustls_error = e
            .get_ref()
            .and_then(|inner| inner.downcast_ref::<rustls::Error>())
            .cloned();
        let roots = self.root_source.as_deref().unwrap_or("no root certificate");
        let crls = self
            .crl_source
            .as_deref()
            .unwrap_or("no certificate revocation list");
        let mode = self.mode;
        let message = match &rustls_error {
            Some(rustls::Error::InvalidCertificate(cert)) => {
                match cert {
                    CertificateError::UnknownIssuer => format!(
                        "server certificate verification failed (sslmode={mode}): it is not \
                     signed by a trusted CA (trusted: {roots})"
                    ),
                    CertificateError::NotValidForName
                    | CertificateError::NotValidForNameContext { .. } => format!(
                        "server certificate verification failed (sslmode={mode}): the certificate \
                     does not match the host name ({cert:?})"
                    ),
                    CertificateError::Expired | CertificateError::ExpiredContext { .. } => {
                        format!("server certificate verification failed (sslmode={mode}): it has expired")
                    }
                    CertificateError::Revoked => format!(
                        "server certificate verification failed (sslmode={mode}): the certificate \
                     is revoked (listed in {crls})"
                    ),
                    CertificateError::UnknownRevocationStatus => format!(
                        "server certificate verification failed (sslmode={mode}): no certificate \
                     revocation list from its issuer in {crls}; once revocation lists are \
                     given, every certificate of the chain must be covered by one, as in libpq"
                    ),
                    CertificateError::ExpiredRevocationList
                    | CertificateError::ExpiredRevocationListContext { .. } => format!(
                        "server certificate verification failed (sslmode={mode}): the certificate \
                     revocation list has expired ({crls})"
                    ),
                    other => format!(
                        "server certificate verification failed (sslmode={mode}): {other:?}"
                    ),
                }
            }
            Some(other) => format!("TLS handshake failed: {other}"),
            None => format!("TLS handshake failed: {e}"),
        };
        tls_error(message).with_source(e)
    }
}

/// The channel-binding data of an established TLS connection: the
/// `tls-server-end-point` hash of the server certificate, or `None` when
/// its signature algorithm defines no hash (Ed25519, Ed448).
pub(crate) fn server_end_point(stream: &TlsStream<TcpStream>) -> Option<Vec<u8>> {
    let cert = stream.get_ref().1.peer_certificates()?.first()?;
    end_point_of(cert.as_ref())
}

/// [`server_end_point`] for a DER certificate.
pub(crate) fn end_point_of(der: &[u8]) -> Option<Vec<u8>> {
    use sha2::Digest;
    Some(match x509::end_point_hash(der)? {
        x509::EndPointHash::Sha224 => sha2::Sha224::digest(der).to_vec(),
        x509::EndPointHash::Sha256 => sha2::Sha256::digest(der).to_vec(),
        x509::EndPointHash::Sha384 => sha2::Sha384::digest(der).to_vec(),
        x509::EndPointHash::Sha512 => sha2::Sha512::digest(der).to_vec(),
    })
}

fn read_pem<T: PemObject>(
    path: &Path,
    what: &str,
    parse: impl for<'a> Fn(&'a [u8]) -> rustls::pki_types::pem::SliceIter<'a, T>,
) -> Result<Vec<T>, Error> {
    let pem = std::fs::read(path).map_err(|e| {
        tls_error(format!("could not read {what} file \"{}\"", path.display())).with_source(e)
    })?;
    parse(&pem).collect::<Result<Vec<T>, _>>().map_err(|e| {
        tls_error(format!(
            "{what} file \"{}\" is not valid PEM",
            path.display()
        ))
        .with_source(e)
    })
}
