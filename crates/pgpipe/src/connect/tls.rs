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

use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::client::{VerifierBuilderError, WebPkiServerVerifier};
use rustls::crypto::{verify_tls12_signature, verify_tls13_signature, CryptoProvider};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{
    CertificateDer, CertificateRevocationListDer, PrivateKeyDer, ServerName, UnixTime,
};
use rustls::{CertificateError, DigitallySignedStruct, RootCertStore, SignatureScheme};
use tokio::net::TcpStream;
use tokio_rustls::client::TlsStream;

use crate::config::{Environment, ProcessEnvironment, ResolvedConfig, SslMode};
use crate::connect::x509;
use crate::error::ErrorKind;
use crate::Error;

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
    env.home_dir()
        .map(|home| home.join(".postgresql").join(name))
}

impl TlsSetup {
    /// Reads the certificate files and builds the rustls configuration for
    /// connecting to `host` (the name the user gave, which verify-full
    /// checks). Called per connection attempt, so rotated files are picked up.
    pub(crate) fn new(config: &ResolvedConfig, host: &str) -> Result<TlsSetup, Error> {
        TlsSetup::with_env(config, host, &ProcessEnvironment)
    }

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

/// The trust anchors, and a description of where they came from; `None`
/// when no root certificate is configured or present (no verification,
/// allowed only below verify-ca).
fn load_roots(
    config: &ResolvedConfig,
    env: &dyn Environment,
) -> Result<(Option<RootCertStore>, Option<String>), Error> {
    let verify = matches!(config.ssl_mode, SslMode::VerifyCa | SslMode::VerifyFull);
    let configured = config.ssl_root_cert.clone();
    if configured
        .as_deref()
        .is_some_and(|p| p.as_os_str() == "system")
    {
        let found = rustls_native_certs::load_native_certs();
        let mut store = RootCertStore::empty();
        let (added, _ignored) = store.add_parsable_certificates(found.certs);
        if added == 0 {
            return Err(tls_error(format!(
                "sslrootcert=system: no trusted root certificate found in the system store{}",
                found
                    .errors
                    .first()
                    .map(|e| format!(" ({e})"))
                    .unwrap_or_default()
            )));
        }
        return Ok((Some(store), Some("the system's trusted roots".into())));
    }
    let path = configured.or_else(|| default_file(env, "root.crt"));
    let Some(path) = path.filter(|p| p.exists()) else {
        if verify {
            let shown = config
                .ssl_root_cert
                .clone()
                .or_else(|| default_file(env, "root.crt"))
                .map(|p| p.display().to_string())
                .unwrap_or_else(|| "~/.postgresql/root.crt".into());
            return Err(tls_error(format!(
                "root certificate file \"{shown}\" does not exist; either provide the file, \
                 use the system's trusted roots with sslrootcert=system, or change sslmode \
                 to disable server certificate verification (sslmode={})",
                config.ssl_mode
            )));
        }
        tracing::debug!("no root certificate file: the server certificate is not verified");
        return Ok((None, None));
    };
    let certs = read_pem(&path, "root certificate", CertificateDer::pem_slice_iter)?;
    let mut store = RootCertStore::empty();
    for cert in certs {
        store.add(cert).map_err(|e| {
            tls_error(format!(
                "root certificate file \"{}\" holds a certificate that cannot be used",
                path.display()
            ))
            .with_source(e)
        })?;
    }
    if store.is_empty() {
        return Err(tls_error(format!(
            "root certificate file \"{}\" holds no certificate",
            path.display()
        )));
    }
    Ok((Some(store), Some(format!("\"{}\"", path.display()))))
}

/// The revocation lists of one file.
struct CrlFile {
    path: PathBuf,
    crls: Vec<CertificateRevocationListDer<'static>>,
}

/// The certificate revocation lists, as libpq finds them: the `sslcrl` file
/// and the files of the `sslcrldir` directory; when neither is set,
/// `~/.postgresql/root.crl` if it exists. Unlike libpq, which silently
/// ignores a revocation list it cannot load, a configured file or directory
/// that is missing or unreadable, or a file that holds no valid list, is an
/// error: otherwise a typo would quietly switch revocation checking off.
fn load_crls(config: &ResolvedConfig, env: &dyn Environment) -> Result<Vec<CrlFile>, Error> {
    let mut files = Vec::new();
    if config.ssl_crl.is_none() && config.ssl_crl_dir.is_none() {
        if let Some(path) = default_file(env, "root.crl").filter(|p| p.exists()) {
            files.push(read_crl_file(&path, "certificate revocation list")?);
        }
        return Ok(files);
    }
    if let Some(path) = &config.ssl_crl {
        files.push(read_crl_file(path, "certificate revocation list (sslcrl)")?);
    }
    if let Some(dir) = &config.ssl_crl_dir {
        let mut paths = Vec::new();
        let entries = std::fs::read_dir(dir).map_err(|e| {
            tls_error(format!(
                "could not read certificate revocation list directory (sslcrldir) \"{}\"",
                dir.display()
            ))
            .with_source(e)
        })?;
        for entry in entries {
            let path = entry
                .map_err(|e| {
                    tls_error(format!(
                        "could not read certificate revocation list directory (sslcrldir) \"{}\"",
                        dir.display()
                    ))
                    .with_source(e)
                })?
                .path();
            if is_hashed_crl_name(&path) && path.is_file() {
                paths.push(path);
            }
        }
        if paths.is_empty() {
            return Err(tls_error(format!(
                "certificate revocation list directory (sslcrldir) \"{}\" holds no revocation \
                 list file: they are named <hash>.r<n>, as `openssl rehash` names them",
                dir.display()
            )));
        }
        paths.sort();
        for path in paths {
            files.push(read_crl_file(
                &path,
                "certificate revocation list (sslcrldir)",
            )?);
        }
    }
    Ok(files)
}

/// OpenSSL's hashed directory layout names CRLs `<8 hex digits>.r<n>`;
/// other files there (certificates are `<hash>.<n>`) are not CRLs.
fn is_hashed_crl_name(path: &Path) -> bool {
    let Some(name) = path.file_name().and_then(|n| n.to_str()) else {
        return false;
    };
    match name.rsplit_once(".r") {
        Some((stem, n)) => {
            !stem.is_empty() && !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit())
        }
        None => false,
    }
}

fn read_crl_file(path: &Path, what: &str) -> Result<CrlFile, Error> {
    let crls = read_pem(path, what, CertificateRevocationListDer::pem_slice_iter)?;
    if crls.is_empty() {
        return Err(tls_error(format!(
            "{what} file \"{}\" holds no PEM revocation list (-----BEGIN X509 CRL-----)",
            path.display()
        )));
    }
    Ok(CrlFile {
        path: path.to_path_buf(),
        crls,
    })
}

fn describe_crl_files(files: &[CrlFile]) -> String {
    let names: Vec<String> = files
        .iter()
        .map(|f| format!("\"{}\"", f.path.display()))
        .collect();
    names.join(", ")
}

/// The verifier refused the revocation lists as a whole: find the file
/// that holds the bad one, so the error can name it.
fn invalid_crl_error(
    files: &[CrlFile],
    roots: &Arc<RootCertStore>,
    provider: &Arc<CryptoProvider>,
    whole: VerifierBuilderError,
) -> Error {
    let culprit = files.iter().find(|file| {
        WebPkiServerVerifier::builder_with_provider(roots.clone(), provider.clone())
            .with_crls(file.crls.clone())
            .build()
            .is_err()
    });
    let shown = match culprit {
        Some(file) => format!("\"{}\"", file.path.display()),
        None => describe_crl_files(files),
    };
    tls_error(format!(
        "certificate revocation list file {shown} holds a revocation list that cannot be parsed"
    ))
    .with_source(whole)
}

type ClientCert = (Vec<CertificateDer<'static>>, PrivateKeyDer<'static>);

/// The client certificate and key, as libpq finds them: `sslcert` (default
/// `~/.postgresql/postgresql.crt`; absent means no client certificate) and
/// `sslkey` (default `~/.postgresql/postgresql.key`, required once there is
/// a certificate, and refused if others can read it).
fn load_client_cert(
    config: &ResolvedConfig,
    env: &dyn Environment,
) -> Result<Option<ClientCert>, Error> {
    let cert_path = config
        .ssl_cert
        .clone()
        .or_else(|| default_file(env, "postgresql.crt"));
    let Some(cert_path) = cert_path.filter(|p| p.exists()) else {
        return Ok(None);
    };
    let certs = read_pem(
        &cert_path,
        "client certificate",
        CertificateDer::pem_slice_iter,
    )?;
    if certs.is_empty() {
        return Err(tls_error(format!(
            "client certificate file \"{}\" holds no certificate",
            cert_path.display()
        )));
    }
    let key_path = config
        .ssl_key
        .clone()
        .or_else(|| default_file(env, "postgresql.key"))
        .filter(|p| p.exists())
        .ok_or_else(|| {
            tls_error(format!(
                "certificate present, but not private key file \"{}\"",
                config
                    .ssl_key
                    .clone()
                    .or_else(|| default_file(env, "postgresql.key"))
                    .unwrap_or_default()
                    .display()
            ))
        })?;
    check_key_permissions(&key_path)?;
    let pem = std::fs::read(&key_path).map_err(|e| {
        tls_error(format!(
            "could not read private key file \"{}\"",
            key_path.display()
        ))
        .with_source(e)
    })?;
    if is_encrypted_key(&pem) {
        return Err(tls_error(format!(
            "private key file \"{}\" is encrypted: pgpipe cannot decrypt keys \
             (sslpassword is not supported); store the key unencrypted with mode 0600",
            key_path.display()
        )));
    }
    let key = PrivateKeyDer::from_pem_slice(&pem).map_err(|e| {
        tls_error(format!(
            "private key file \"{}\" holds no usable PEM private key (PKCS#8, PKCS#1 or SEC1)",
            key_path.display()
        ))
        .with_source(e)
    })?;
    Ok(Some((certs, key)))
}

/// Encrypted PKCS#8 (`ENCRYPTED PRIVATE KEY`) or an OpenSSL traditional
/// encrypted key (`Proc-Type: 4,ENCRYPTED`).
fn is_encrypted_key(pem: &[u8]) -> bool {
    let contains = |needle: &[u8]| pem.windows(needle.len()).any(|w| w == needle);
    contains(b"-----BEGIN ENCRYPTED PRIVATE KEY-----") || contains(b"Proc-Type: 4,ENCRYPTED")
}

/// libpq's rule: a key owned by the current user may not be accessible by
/// group or others (0600 or less); one owned by root may be group-readable
/// (0640 or less), for system-managed keys.
#[cfg(unix)]
pub(crate) fn check_key_permissions(path: &Path) -> Result<(), Error> {
    use std::os::unix::fs::MetadataExt;
    let meta = std::fs::metadata(path).map_err(|e| {
        tls_error(format!(
            "could not access private key file \"{}\"",
            path.display()
        ))
        .with_source(e)
    })?;
    if !meta.is_file() {
        return Err(tls_error(format!(
            "private key file \"{}\" is not a regular file",
            path.display()
        )));
    }
    // SAFETY: geteuid has no preconditions and cannot fail.
    let euid = unsafe { libc::geteuid() };
    let mode = meta.mode();
    let too_open =
        (meta.uid() == euid && mode & 0o077 != 0) || (meta.uid() == 0 && mode & 0o037 != 0);
    if too_open {
        return Err(tls_error(format!(
            "private key file \"{}\" has group or world access; file must have permissions \
             u=rw (0600) or less if owned by the current user, or permissions u=rw,g=r (0640) \
             or less if owned by root",
            path.display()
        )));
    }
    Ok(())
}

#[cfg(not(unix))]
pub(crate) fn check_key_permissions(_path: &Path) -> Result<(), Error> {
    Ok(())
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

/// libpq's verification on top of webpki: chain against the roots when
/// there are any, the host name only for verify-full, with the Common Name
/// fallback webpki does not do. Handshake signatures are always checked.
#[derive(Debug)]
struct PgVerifier {
    chain: Option<Arc<WebPkiServerVerifier>>,
    check_host: Option<String>,
    provider: Arc<CryptoProvider>,
}

impl ServerCertVerifier for PgVerifier {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp_response: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        let Some(chain) = &self.chain else {
            return Ok(ServerCertVerified::assertion());
        };
        // webpki checks the chain before the name, so a name error means
        // the chain itself was fine.
        match chain.verify_server_cert(end_entity, intermediates, server_name, ocsp_response, now) {
            Err(rustls::Error::InvalidCertificate(
                CertificateError::NotValidForName | CertificateError::NotValidForNameContext { .. },
            )) if self.name_ok_without_san(end_entity) => Ok(ServerCertVerified::assertion()),
            other => other,
        }
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        verify_tls12_signature(
            message,
            cert,
            dss,
            &self.provider.signature_verification_algorithms,
        )
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        verify_tls13_signature(
            message,
            cert,
            dss,
            &self.provider.signature_verification_algorithms,
        )
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.provider
            .signature_verification_algorithms
            .supported_schemes()
    }
}

impl PgVerifier {
    /// After webpki found no SAN matching: below verify-full the name does
    /// not matter; in verify-full, libpq (14+) still accepts a subject CN
    /// equal to the host when the certificate has no SAN of the host's
    /// kind (dNSName for names, iPAddress for addresses).
    fn name_ok_without_san(&self, cert: &CertificateDer<'_>) -> bool {
        let Some(host) = &self.check_host else {
            return true;
        };
        let Some(names) = x509::names(cert.as_ref()) else {
            return false;
        };
        match host.parse::<std::net::IpAddr>() {
            Ok(ip) => {
                !names.has_ip_san
                    && names
                        .common_names
                        .iter()
                        .any(|cn| cn.parse::<std::net::IpAddr>() == Ok(ip))
            }
            Err(_) => {
                !names.has_dns_san
                    && names
                        .common_names
                        .iter()
                        .any(|cn| x509::name_matches(cn, host))
            }
        }
    }
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn key_permissions_follow_libpq() {
        let dir = std::env::temp_dir().join(format!("pgpipe-key-perm-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let key = dir.join("client.key");
        std::fs::write(&key, "not really a key").unwrap();
        for (mode, ok) in [(0o600, true), (0o400, true), (0o640, false), (0o604, false)] {
            std::fs::set_permissions(&key, std::fs::Permissions::from_mode(mode)).unwrap();
            let result = check_key_permissions(&key);
            assert_eq!(result.is_ok(), ok, "mode {mode:o}: {result:?}");
            if let Err(e) = result {
                assert!(e.to_string().contains("group or world access"), "{e}");
            }
        }
        let e = check_key_permissions(&dir).unwrap_err();
        assert!(e.to_string().contains("not a regular file"), "{e}");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn only_hashed_crl_names_are_read_from_sslcrldir() {
        for (name, ok) in [
            ("5f3a9c21.r0", true),
            ("5f3a9c21.r12", true),
            ("5f3a9c21.0", false),
            ("5f3a9c21.r", false),
            (".r0", false),
            ("revoked.pem", false),
            ("5f3a9c21.rx", false),
        ] {
            assert_eq!(is_hashed_crl_name(Path::new(name)), ok, "{name}");
        }
    }

    #[test]
    fn encrypted_keys_are_recognized() {
        assert!(is_encrypted_key(
            b"-----BEGIN ENCRYPTED PRIVATE KEY-----\nMII"
        ));
        assert!(is_encrypted_key(
            b"-----BEGIN RSA PRIVATE KEY-----\nProc-Type: 4,ENCRYPTED\n"
        ));
        assert!(!is_encrypted_key(b"-----BEGIN PRIVATE KEY-----\nMII"));
    }
}
