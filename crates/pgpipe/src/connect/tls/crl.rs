//! Certificate revocation lists: `sslcrl`, `sslcrldir`, or `~/.postgresql/root.crl`.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use rustls::client::{VerifierBuilderError, WebPkiServerVerifier};
use rustls::crypto::CryptoProvider;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::CertificateRevocationListDer;
use rustls::RootCertStore;

use crate::config::{Environment, ResolvedConfig};
use crate::Error;

use super::{default_file, read_pem, tls_error};

/// The revocation lists of one file.
pub(super) struct CrlFile {
    pub(super) path: PathBuf,
    pub(super) crls: Vec<CertificateRevocationListDer<'static>>,
}

/// The certificate revocation lists, as libpq finds them: the `sslcrl` file
/// and the files of the `sslcrldir` directory; when neither is set,
/// `~/.postgresql/root.crl` if it exists. Unlike libpq, which silently
/// ignores a revocation list it cannot load, a configured file or directory
/// that is missing or unreadable, or a file that holds no valid list, is an
/// error: otherwise a typo would quietly switch revocation checking off.
pub(super) fn load_crls(
    config: &ResolvedConfig,
    env: &dyn Environment,
) -> Result<Vec<CrlFile>, Error> {
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

pub(super) fn describe_crl_files(files: &[CrlFile]) -> String {
    let names: Vec<String> = files
        .iter()
        .map(|f| format!("\"{}\"", f.path.display()))
        .collect();
    names.join(", ")
}

/// The verifier refused the revocation lists as a whole: find the file
/// that holds the bad one, so the error can name it.
pub(super) fn invalid_crl_error(
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

#[cfg(all(test, unix))]
mod tests {
    use super::*;

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
}
