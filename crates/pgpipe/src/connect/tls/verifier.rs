//! The server certificate check: libpq's rules on top of webpki.

use std::sync::Arc;

use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::client::WebPkiServerVerifier;
use rustls::crypto::{verify_tls12_signature, verify_tls13_signature, CryptoProvider};
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{CertificateError, DigitallySignedStruct, SignatureScheme};

use crate::connect::x509;

/// libpq's verification on top of webpki: chain against the roots when
/// there are any, the host name only for verify-full, with the Common Name
/// fallback webpki does not do. Handshake signatures are always checked.
#[derive(Debug)]
pub(super) struct PgVerifier {
    pub(super) chain: Option<Arc<WebPkiServerVerifier>>,
    pub(super) check_host: Option<String>,
    pub(super) provider: Arc<CryptoProvider>,
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
