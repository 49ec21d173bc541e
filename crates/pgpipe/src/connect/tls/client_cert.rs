//! The client certificate and its key (`sslcert`, `sslkey`), with libpq's key file checks.

use std::path::Path;

use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};

use crate::config::{Environment, ResolvedConfig};
use crate::Error;

use super::{default_file, read_pem, tls_error};

pub(super) type ClientCert = (Vec<CertificateDer<'static>>, PrivateKeyDer<'static>);

/// The client certificate and key, as libpq finds them: `sslcert` (default
/// `~/.postgresql/postgresql.crt`; absent means no client certificate) and
/// `sslkey` (default `~/.postgresql/postgresql.key`, required once there is
/// a certificate, and refused if others can read it).
pub(super) fn load_client_cert(
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
