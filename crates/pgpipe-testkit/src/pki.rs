//! A throwaway public-key infrastructure for TLS tests, made at run time
//! with rcgen: nothing secret is checked in, nothing expires mid-run.

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use rcgen::{
    date_time_ymd, BasicConstraints, CertificateParams, CertificateRevocationListParams, DnType,
    IsCa, KeyIdMethod, KeyPair, RevocationReason, RevokedCertParams, SerialNumber,
    SignatureAlgorithm, PKCS_ECDSA_P256_SHA256, PKCS_ECDSA_P384_SHA384, PKCS_ED25519,
};
use rustls_pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};
use tempfile::TempDir;

use crate::error::TestkitError;

/// The user name the client certificates are issued to (their CN), which
/// the TLS cluster's `cert` role is called.
pub const CERT_USER: &str = "pgpipe_cert";

/// Which server certificate to present.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ServerCert {
    /// Signed by [`TestPki::root_cert`], SAN `localhost` and `127.0.0.1`
    /// (ECDSA P-256 with SHA-256).
    Good,
    /// Signed by the same CA, but for `wrong.invalid` only.
    WrongName,
    /// Signed by the same CA, no subjectAltName, CN `localhost`: valid for
    /// `localhost` only through libpq's Common Name fallback.
    CommonNameOnly,
    /// Signed by a CA the client does not trust, otherwise like `Good`.
    UntrustedCa,
    /// Signed with ECDSA P-384 / SHA-384 (by a second trusted CA), SAN as
    /// `Good`: channel binding must hash with SHA-384.
    Sha384,
    /// Self-signed Ed25519 for `localhost`: no hash for channel binding.
    Ed25519,
}

/// A certificate authority of the [`TestPki`] that can issue a certificate
/// revocation list ([`TestPki::write_crl`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum CrlIssuer {
    /// The trusted root CA that signed [`ServerCert::Good`],
    /// [`ServerCert::WrongName`] and [`ServerCert::CommonNameOnly`].
    Root,
    /// The CA that signed the client certificate ([`TestPki::client_cert`]).
    ClientCa,
    /// The CA the client does not trust ([`ServerCert::UntrustedCa`]): its
    /// CRL says nothing about certificates of the trusted root.
    Untrusted,
}

/// A serial number no certificate of the [`TestPki`] has, to revoke in a
/// CRL that must not affect any of them.
pub const UNUSED_SERIAL: u64 = 0x0999_0001;

/// A CA certificate together with its private key, kept so that CRLs can
/// be signed after the certificates were issued.
struct Authority {
    cert: rcgen::Certificate,
    key: KeyPair,
}

struct Issued {
    serial: u64,
    cert_pem: String,
    cert_der: CertificateDer<'static>,
    key_pem: String,
    key_der: Vec<u8>,
}

/// Certificates and keys for TLS tests, written to a temporary directory
/// (removed on drop) with the permissions PostgreSQL and libpq demand.
pub struct TestPki {
    dir: TempDir,
    root: Authority,
    client_ca: Authority,
    untrusted_ca: Authority,
    client_serial: u64,
    good: Issued,
    wrong_name: Issued,
    cn_only: Issued,
    untrusted: Issued,
    sha384: Issued,
    ed25519: Issued,
}

fn err(what: &str) -> impl FnOnce(rcgen::Error) -> TestkitError + '_ {
    move |e| TestkitError::new(format!("generating {what}: {e}"))
}

fn key(alg: &'static SignatureAlgorithm, what: &str) -> Result<KeyPair, TestkitError> {
    KeyPair::generate_for(alg).map_err(err(what))
}

/// Serial numbers are assigned in order (from a process-wide counter) so
/// that CRLs can name them; every certificate gets its own.
fn next_serial() -> u64 {
    use std::sync::atomic::{AtomicU64, Ordering};
    static NEXT: AtomicU64 = AtomicU64::new(0x1000);
    NEXT.fetch_add(1, Ordering::Relaxed)
}

fn ca(
    name: &str,
    alg: &'static SignatureAlgorithm,
) -> Result<(rcgen::Certificate, KeyPair), TestkitError> {
    let key = key(alg, name)?;
    let mut params = CertificateParams::new(Vec::<String>::new()).map_err(err(name))?;
    params.distinguished_name.push(DnType::CommonName, name);
    params.serial_number = Some(SerialNumber::from(next_serial()));
    params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    let cert = params.self_signed(&key).map_err(err(name))?;
    Ok((cert, key))
}

fn issue(
    cn: &str,
    sans: &[&str],
    alg: &'static SignatureAlgorithm,
    issuer: Option<(&rcgen::Certificate, &KeyPair)>,
) -> Result<Issued, TestkitError> {
    let key = key(alg, cn)?;
    let sans: Vec<String> = sans.iter().map(|s| s.to_string()).collect();
    let mut params = CertificateParams::new(sans).map_err(err(cn))?;
    params.distinguished_name = rcgen::DistinguishedName::new();
    params.distinguished_name.push(DnType::CommonName, cn);
    let serial = next_serial();
    params.serial_number = Some(SerialNumber::from(serial));
    let cert = match issuer {
        Some((ca, ca_key)) => params.signed_by(&key, ca, ca_key),
        None => params.self_signed(&key),
    }
    .map_err(err(cn))?;
    Ok(Issued {
        serial,
        cert_pem: cert.pem(),
        cert_der: cert.der().clone(),
        key_pem: key.serialize_pem(),
        key_der: key.serialize_der(),
    })
}

impl TestPki {
    /// Makes every CA, certificate and key, and writes them out.
    pub fn generate() -> Result<TestPki, TestkitError> {
        let (root, root_key) = ca("pgpipe test root CA", &PKCS_ECDSA_P256_SHA256)?;
        let (root384, root384_key) = ca("pgpipe test root CA (P-384)", &PKCS_ECDSA_P384_SHA384)?;
        let (other, other_key) = ca("pgpipe untrusted CA", &PKCS_ECDSA_P256_SHA256)?;
        let (client_ca, client_ca_key) = ca("pgpipe test client CA", &PKCS_ECDSA_P256_SHA256)?;
        let server_sans = ["localhost", "127.0.0.1"];
        let p256 = &PKCS_ECDSA_P256_SHA256;
        let good = issue(
            "pgpipe test server",
            &server_sans,
            p256,
            Some((&root, &root_key)),
        )?;
        let wrong_name = issue(
            "wrong.invalid",
            &["wrong.invalid"],
            p256,
            Some((&root, &root_key)),
        )?;
        let cn_only = issue("localhost", &[], p256, Some((&root, &root_key)))?;
        let untrusted = issue(
            "pgpipe test server",
            &server_sans,
            p256,
            Some((&other, &other_key)),
        )?;
        let sha384 = issue(
            "pgpipe test server",
            &server_sans,
            p256,
            Some((&root384, &root384_key)),
        )?;
        let ed25519 = issue("localhost", &["localhost"], &PKCS_ED25519, None)?;
        let client = issue(CERT_USER, &[], p256, Some((&client_ca, &client_ca_key)))?;
        let client_other_ca = issue(CERT_USER, &[], p256, Some((&other, &other_key)))?;

        let dir = tempfile::Builder::new()
            .prefix("pgpipe-testkit-pki-")
            .tempdir()
            .map_err(|e| TestkitError::io("creating the PKI directory", e))?;
        let write = |name: &str, contents: &str, mode: u32| -> Result<(), TestkitError> {
            let path = dir.path().join(name);
            fs::write(&path, contents)
                .map_err(|e| TestkitError::io(format!("writing {}", path.display()), e))?;
            fs::set_permissions(&path, fs::Permissions::from_mode(mode))
                .map_err(|e| TestkitError::io(format!("chmod of {}", path.display()), e))
        };
        write(
            "root.crt",
            &format!("{}{}{}", root.pem(), root384.pem(), ed25519.cert_pem),
            0o644,
        )?;
        write("untrusted-root.crt", &other.pem(), 0o644)?;
        write("client-ca.crt", &client_ca.pem(), 0o644)?;
        write("client.crt", &client.cert_pem, 0o644)?;
        write("client.key", &client.key_pem, 0o600)?;
        write("client-open.key", &client.key_pem, 0o644)?;
        write("client-other-ca.crt", &client_other_ca.cert_pem, 0o644)?;
        write("client-other-ca.key", &client_other_ca.key_pem, 0o600)?;
        write("server.crt", &good.cert_pem, 0o644)?;
        write("server.key", &good.key_pem, 0o600)?;
        let client_serial = client.serial;
        Ok(TestPki {
            dir,
            root: Authority {
                cert: root,
                key: root_key,
            },
            client_ca: Authority {
                cert: client_ca,
                key: client_ca_key,
            },
            untrusted_ca: Authority {
                cert: other,
                key: other_key,
            },
            client_serial,
            good,
            wrong_name,
            cn_only,
            untrusted,
            sha384,
            ed25519,
        })
    }

    /// The directory holding the files.
    pub fn dir(&self) -> &Path {
        self.dir.path()
    }

    /// The trusted roots (`sslrootcert`): the test root CA, the P-384 test
    /// root and the self-signed Ed25519 server certificate.
    pub fn root_cert(&self) -> PathBuf {
        self.dir.path().join("root.crt")
    }

    /// A CA that signed nothing the servers present.
    pub fn untrusted_root_cert(&self) -> PathBuf {
        self.dir.path().join("untrusted-root.crt")
    }

    /// The CA the TLS cluster trusts for client certificates (`ssl_ca_file`).
    pub fn client_ca_cert(&self) -> PathBuf {
        self.dir.path().join("client-ca.crt")
    }

    /// The client certificate for [`CERT_USER`] and its key (mode 0600).
    pub fn client_cert(&self) -> (PathBuf, PathBuf) {
        (
            self.dir.path().join("client.crt"),
            self.dir.path().join("client.key"),
        )
    }

    /// The same key with mode 0644, which libpq's permission check refuses.
    pub fn client_key_world_readable(&self) -> PathBuf {
        self.dir.path().join("client-open.key")
    }

    /// A client certificate for [`CERT_USER`] signed by an untrusted CA.
    pub fn client_cert_other_ca(&self) -> (PathBuf, PathBuf) {
        (
            self.dir.path().join("client-other-ca.crt"),
            self.dir.path().join("client-other-ca.key"),
        )
    }

    /// The good server certificate and key files (PEM).
    pub fn server_cert_files(&self) -> (PathBuf, PathBuf) {
        (
            self.dir.path().join("server.crt"),
            self.dir.path().join("server.key"),
        )
    }

    /// The serial number of a server certificate (what a CRL lists).
    pub fn server_serial(&self, which: ServerCert) -> u64 {
        self.issued(which).serial
    }

    /// The serial number of the client certificate ([`TestPki::client_cert`]).
    pub fn client_serial(&self) -> u64 {
        self.client_serial
    }

    /// Signs a certificate revocation list with `issuer`'s key that revokes
    /// the certificates with the `revoked` serial numbers (none: an empty
    /// but valid CRL), writes it as PEM to `name` in [`TestPki::dir`] and
    /// returns its path. It is current from 2000 until 4000, so it never
    /// counts as expired.
    ///
    /// ```no_run
    /// # use pgpipe_testkit::{test_pki, CrlIssuer, ServerCert};
    /// let pki = test_pki().unwrap();
    /// let serial = pki.server_serial(ServerCert::Good);
    /// let crl = pki.write_crl("server-revoked.crl", CrlIssuer::Root, &[serial]).unwrap();
    /// ```
    pub fn write_crl(
        &self,
        name: &str,
        issuer: CrlIssuer,
        revoked: &[u64],
    ) -> Result<PathBuf, TestkitError> {
        let pem = self.crl_pem(issuer, revoked)?;
        let path = self.dir.path().join(name);
        fs::write(&path, pem)
            .map_err(|e| TestkitError::io(format!("writing {}", path.display()), e))?;
        Ok(path)
    }

    /// The PEM of a CRL as [`TestPki::write_crl`] makes it, for callers
    /// that place it themselves (say, in a hashed CRL directory).
    pub fn crl_pem(&self, issuer: CrlIssuer, revoked: &[u64]) -> Result<String, TestkitError> {
        let authority = match issuer {
            CrlIssuer::Root => &self.root,
            CrlIssuer::ClientCa => &self.client_ca,
            CrlIssuer::Untrusted => &self.untrusted_ca,
        };
        let params = CertificateRevocationListParams {
            this_update: date_time_ymd(2000, 1, 1),
            next_update: date_time_ymd(4000, 1, 1),
            crl_number: SerialNumber::from(next_serial()),
            issuing_distribution_point: None,
            revoked_certs: revoked
                .iter()
                .map(|&serial| RevokedCertParams {
                    serial_number: SerialNumber::from(serial),
                    revocation_time: date_time_ymd(2001, 1, 1),
                    reason_code: Some(RevocationReason::KeyCompromise),
                    invalidity_date: None,
                })
                .collect(),
            key_identifier_method: KeyIdMethod::Sha256,
        };
        params
            .signed_by(&authority.cert, &authority.key)
            .and_then(|crl| crl.pem())
            .map_err(err("a certificate revocation list"))
    }

    /// The PEM of a server certificate and its key.
    pub fn server_pem(&self, which: ServerCert) -> (&str, &str) {
        let issued = self.issued(which);
        (&issued.cert_pem, &issued.key_pem)
    }

    /// The DER of a server certificate (what channel binding hashes).
    pub fn server_cert_der(&self, which: ServerCert) -> &[u8] {
        self.issued(which).cert_der.as_ref()
    }

    fn issued(&self, which: ServerCert) -> &Issued {
        match which {
            ServerCert::Good => &self.good,
            ServerCert::WrongName => &self.wrong_name,
            ServerCert::CommonNameOnly => &self.cn_only,
            ServerCert::UntrustedCa => &self.untrusted,
            ServerCert::Sha384 => &self.sha384,
            ServerCert::Ed25519 => &self.ed25519,
        }
    }

    /// A rustls server configuration presenting `which`, with ALPN
    /// `postgresql` offered if `alpn`, for the fake server's
    /// [`Step::StartTls`](crate::Step::StartTls).
    pub fn server_config(
        &self,
        which: ServerCert,
        alpn: bool,
    ) -> Result<Arc<rustls::ServerConfig>, TestkitError> {
        let issued = self.issued(which);
        let key = PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(issued.key_der.clone()));
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let mut config = rustls::ServerConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .map_err(|e| TestkitError::new(format!("TLS server config: {e}")))?
            .with_no_client_auth()
            .with_single_cert(vec![issued.cert_der.clone()], key)
            .map_err(|e| TestkitError::new(format!("TLS server config: {e}")))?;
        if alpn {
            config.alpn_protocols = vec![b"postgresql".to_vec()];
        }
        Ok(Arc::new(config))
    }
}

impl std::fmt::Debug for TestPki {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TestPki")
            .field("dir", &self.dir.path())
            .finish()
    }
}
