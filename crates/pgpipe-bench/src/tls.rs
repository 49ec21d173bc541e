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

/// tokio-postgres's rustls connector for `--tls` (tokio-postgres-rustls
/// over a rustls (ring) configuration trusting the root certificate),
/// built once per process as its users do; `None` without `--tls`.
pub fn tokio_postgres_rustls(
) -> Result<Option<tokio_postgres_rustls::MakeRustlsConnect>, BenchError> {
    static CONNECTOR: OnceLock<Result<tokio_postgres_rustls::MakeRustlsConnect, String>> =
        OnceLock::new();
    let Some(root) = ROOT_CERT.get() else {
        return Ok(None);
    };
    CONNECTOR
        .get_or_init(|| rustls_connector(root))
        .clone()
        .map(Some)
        .map_err(BenchError::new)
}

fn rustls_connector(
    root: &std::path::Path,
) -> Result<tokio_postgres_rustls::MakeRustlsConnect, String> {
    use rustls_pki_types::pem::PemObject;
    let mut roots = rustls::RootCertStore::empty();
    for cert in rustls_pki_types::CertificateDer::pem_file_iter(root)
        .map_err(|e| format!("reading {}: {e}", root.display()))?
    {
        let cert = cert.map_err(|e| format!("reading {}: {e}", root.display()))?;
        roots
            .add(cert)
            .map_err(|e| format!("root certificate: {e}"))?;
    }
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| format!("rustls: {e}"))?
        .with_root_certificates(roots)
        .with_no_client_auth();
    Ok(tokio_postgres_rustls::MakeRustlsConnect::new(config))
}

/// The URL tokio-postgres gets: with `--tls`, `sslmode=require`
/// (tokio-postgres knows no verify-full; rustls verifies chain and name
/// anyway).
pub fn tokio_postgres_url(url: &str) -> String {
    if enabled() {
        let sep = if url.contains('?') { '&' } else { '?' };
        format!("{url}{sep}sslmode=require")
    } else {
        url.to_string()
    }
}

/// tokio-postgres: `NoTls`, or with `--tls` its rustls connector
/// ([`tokio_postgres_rustls`]) with `sslmode=require`. Spawns the
/// connection task.
pub async fn tokio_postgres_connect(url: &str) -> Result<tokio_postgres::Client, BenchError> {
    let Some(tls) = tokio_postgres_rustls()? else {
        let (client, conn) = tokio_postgres::connect(url, tokio_postgres::NoTls).await?;
        tokio::spawn(async move {
            let _ = conn.await;
        });
        return Ok(client);
    };
    let (client, conn) = tokio_postgres::connect(&tokio_postgres_url(url), tls).await?;
    tokio::spawn(async move {
        let _ = conn.await;
    });
    Ok(client)
}
