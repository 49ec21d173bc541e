//! `--tls`: every driver connects over TLS, verifying the server against
//! the testkit's run-time CA (the same work for each: chain and name
//! checks, no session resumption across connections).

use std::path::PathBuf;
use std::sync::{Arc, OnceLock};

use crate::driver_kind::DriverKind;
use crate::error::BenchError;

static ROOT_CERT: OnceLock<PathBuf> = OnceLock::new();

/// Turns TLS on for every later connection, trusting `root_cert`.
pub fn enable(root_cert: PathBuf) {
    let _ = ROOT_CERT.set(root_cert);
}

/// Whether `--tls` is on.
pub fn enabled() -> bool {
    ROOT_CERT.get().is_some()
}

/// Whether a driver can be measured over TLS.
pub fn supports(driver: DriverKind) -> bool {
    matches!(
        driver,
        DriverKind::Pgpipe | DriverKind::TokioPostgres | DriverKind::Sqlx
    )
}

/// The URL pgpipe and sqlx get: with `--tls`, `sslmode=verify-full` and
/// the root certificate (both parse libpq's parameters).
pub fn url(url: &str) -> String {
    match ROOT_CERT.get() {
        Some(root) => {
            let sep = if url.contains('?') { '&' } else { '?' };
            format!(
                "{url}{sep}sslmode=verify-full&sslrootcert={}",
                root.display()
            )
        }
        None => url.to_string(),
    }
}

/// tokio-postgres: `NoTls`, or with `--tls` tokio-postgres-rustls over a
/// rustls (ring) configuration trusting the root certificate, with
/// `sslmode=require` (tokio-postgres knows no verify-full; rustls verifies
/// chain and name anyway). Spawns the connection task.
pub async fn tokio_postgres_connect(url: &str) -> Result<tokio_postgres::Client, BenchError> {
    let Some(root) = ROOT_CERT.get() else {
        let (client, conn) = tokio_postgres::connect(url, tokio_postgres::NoTls).await?;
        tokio::spawn(async move {
            let _ = conn.await;
        });
        return Ok(client);
    };
    use rustls_pki_types::pem::PemObject;
    let mut roots = rustls::RootCertStore::empty();
    for cert in rustls_pki_types::CertificateDer::pem_file_iter(root)
        .map_err(|e| BenchError::new(format!("reading {}: {e}", root.display())))?
    {
        let cert = cert.map_err(|e| BenchError::new(format!("reading {}: {e}", root.display())))?;
        roots
            .add(cert)
            .map_err(|e| BenchError::new(format!("root certificate: {e}")))?;
    }
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| BenchError::new(format!("rustls: {e}")))?
        .with_root_certificates(roots)
        .with_no_client_auth();
    let tls = tokio_postgres_rustls::MakeRustlsConnect::new(config);
    let sep = if url.contains('?') { '&' } else { '?' };
    let (client, conn) =
        tokio_postgres::connect(&format!("{url}{sep}sslmode=require"), tls).await?;
    tokio::spawn(async move {
        let _ = conn.await;
    });
    Ok(client)
}
