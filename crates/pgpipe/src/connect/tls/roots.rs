//! The trust anchors: `sslrootcert`, its `~/.postgresql/root.crt` default, or the system store.

use rustls::pki_types::pem::PemObject;
use rustls::pki_types::CertificateDer;
use rustls::RootCertStore;

use crate::config::{Environment, ResolvedConfig, SslMode};
use crate::Error;

use super::{default_file, read_pem, tls_error};

/// The trust anchors, and a description of where they came from; `None`
/// when no root certificate is configured or present (no verification,
/// allowed only below verify-ca).
pub(super) fn load_roots(
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
