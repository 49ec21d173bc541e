//! Just enough X.509 (DER) reading for what webpki does not answer: the
//! certificate's signature algorithm (for `tls-server-end-point` channel
//! binding) and, for libpq's Common Name fallback, the subject CN and which
//! kinds of subjectAltName entries exist. The certificate has already been
//! parsed and verified by rustls/webpki when this runs; malformed input here
//! gives `None`, never a panic.

/// One DER element: its tag and contents, and the rest of the input.
fn element(input: &[u8]) -> Option<(u8, &[u8], &[u8])> {
    let (&tag, rest) = input.split_first()?;
    let (&first, rest) = rest.split_first()?;
    let (len, rest) = if first < 0x80 {
        (usize::from(first), rest)
    } else {
        let count = usize::from(first & 0x7f);
        if count == 0 || count > 4 || rest.len() < count {
            return None;
        }
        let len = rest[..count]
            .iter()
            .fold(0usize, |acc, b| (acc << 8) | usize::from(*b));
        (len, &rest[count..])
    };
    if rest.len() < len {
        return None;
    }
    Some((tag, &rest[..len], &rest[len..]))
}

/// The elements of a constructed value, in order.
fn children(mut contents: &[u8]) -> impl Iterator<Item = (u8, &[u8])> {
    std::iter::from_fn(move || {
        let (tag, value, rest) = element(contents)?;
        contents = rest;
        Some((tag, value))
    })
}

const SEQUENCE: u8 = 0x30;
const SET: u8 = 0x31;
const OID: u8 = 0x06;

/// The hash a `tls-server-end-point` binding uses (RFC 5929 section 4.1).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum EndPointHash {
    Sha224,
    Sha256,
    Sha384,
    Sha512,
}

/// What RFC 5929 says to hash the certificate with: the hash of its
/// signature algorithm, MD5 and SHA-1 upgraded to SHA-256. `Ok(None)` for
/// algorithms without a hash of their own (Ed25519, Ed448) or unknown ones:
/// then no binding can be computed (PostgreSQL's server refuses them too).
pub(crate) fn end_point_hash(cert: &[u8]) -> Option<EndPointHash> {
    let (_, certificate, _) = element(cert)?;
    let mut parts = children(certificate);
    let _tbs = parts.next()?;
    let (tag, algorithm) = parts.next()?;
    if tag != SEQUENCE {
        return None;
    }
    let mut alg = children(algorithm);
    let (tag, oid) = alg.next()?;
    if tag != OID {
        return None;
    }
    use EndPointHash::*;
    Some(match oid {
        // md5WithRSAEncryption, sha1WithRSAEncryption: upgraded.
        [0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 1, 1, 4] => Sha256,
        [0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 1, 1, 5] => Sha256,
        [0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 1, 1, 11] => Sha256,
        [0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 1, 1, 12] => Sha384,
        [0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 1, 1, 13] => Sha512,
        [0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 1, 1, 14] => Sha224,
        // RSASSA-PSS: the hash is in the parameters.
        [0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 1, 1, 10] => pss_hash(alg.next())?,
        // ecdsa-with-SHA1 (upgraded), -SHA224, -SHA256, -SHA384, -SHA512.
        [0x2a, 0x86, 0x48, 0xce, 0x3d, 4, 1] => Sha256,
        [0x2a, 0x86, 0x48, 0xce, 0x3d, 4, 3, 1] => Sha224,
        [0x2a, 0x86, 0x48, 0xce, 0x3d, 4, 3, 2] => Sha256,
        [0x2a, 0x86, 0x48, 0xce, 0x3d, 4, 3, 3] => Sha384,
        [0x2a, 0x86, 0x48, 0xce, 0x3d, 4, 3, 4] => Sha512,
        // dsa-with-sha1 (upgraded), dsa-with-sha224, dsa-with-sha256.
        [0x2a, 0x86, 0x48, 0xce, 0x38, 4, 3] => Sha256,
        [0x60, 0x86, 0x48, 1, 0x65, 3, 4, 3, 1] => Sha224,
        [0x60, 0x86, 0x48, 1, 0x65, 3, 4, 3, 2] => Sha256,
        // Ed25519, Ed448 and anything unknown: no defined hash.
        _ => return None,
    })
}

/// RSASSA-PSS-params: `[0] hashAlgorithm` defaults to SHA-1 (upgraded).
fn pss_hash(params: Option<(u8, &[u8])>) -> Option<EndPointHash> {
    let Some((SEQUENCE, params)) = params else {
        return Some(EndPointHash::Sha256);
    };
    let Some((0xa0, hash)) = children(params).next() else {
        return Some(EndPointHash::Sha256);
    };
    let (_, alg, _) = element(hash)?;
    let (_, oid) = children(alg).next()?;
    Some(match oid {
        [0x60, 0x86, 0x48, 1, 0x65, 3, 4, 2, 1] => EndPointHash::Sha256,
        [0x60, 0x86, 0x48, 1, 0x65, 3, 4, 2, 2] => EndPointHash::Sha384,
        [0x60, 0x86, 0x48, 1, 0x65, 3, 4, 2, 3] => EndPointHash::Sha512,
        [0x60, 0x86, 0x48, 1, 0x65, 3, 4, 2, 4] => EndPointHash::Sha224,
        [0x2b, 0x0e, 3, 2, 0x1a] => EndPointHash::Sha256,
        _ => return None,
    })
}

/// The names a certificate carries, as far as host name checks go.
#[derive(Debug, Default, PartialEq, Eq)]
pub(crate) struct Names {
    /// subjectAltName has at least one dNSName entry.
    pub(crate) has_dns_san: bool,
    /// subjectAltName has at least one iPAddress entry.
    pub(crate) has_ip_san: bool,
    /// The subject's commonName values (printable ones only).
    pub(crate) common_names: Vec<String>,
}

/// Reads the subject CN and the kinds of SAN entries; `None` if the
/// certificate cannot be walked.
pub(crate) fn names(cert: &[u8]) -> Option<Names> {
    let (_, certificate, _) = element(cert)?;
    let (tag, tbs) = children(certificate).next()?;
    if tag != SEQUENCE {
        return None;
    }
    let mut fields = children(tbs).peekable();
    // version [0] is optional.
    if fields.peek().map(|(t, _)| *t) == Some(0xa0) {
        fields.next();
    }
    let _serial = fields.next()?;
    let _signature = fields.next()?;
    let _issuer = fields.next()?;
    let _validity = fields.next()?;
    let (tag, subject) = fields.next()?;
    if tag != SEQUENCE {
        return None;
    }
    let mut out = Names::default();
    for (tag, rdn) in children(subject) {
        if tag != SET {
            continue;
        }
        for (_, attribute) in children(rdn) {
            let mut parts = children(attribute);
            if let (Some((OID, [0x55, 4, 3])), Some((_, value))) = (parts.next(), parts.next()) {
                if let Ok(cn) = std::str::from_utf8(value) {
                    out.common_names.push(cn.to_owned());
                }
            }
        }
    }
    let _spki = fields.next()?;
    for (tag, value) in fields {
        // extensions [3] EXPLICIT SEQUENCE OF Extension
        if tag != 0xa3 {
            continue;
        }
        let (_, extensions, _) = element(value)?;
        for (_, extension) in children(extensions) {
            let mut parts = children(extension);
            let Some((OID, [0x55, 0x1d, 0x11])) = parts.next() else {
                continue;
            };
            // critical BOOLEAN is optional; the value is the OCTET STRING.
            let octets = parts.find(|(t, _)| *t == 0x04)?.1;
            let (_, general_names, _) = element(octets)?;
            for (tag, _) in children(general_names) {
                match tag {
                    0x82 => out.has_dns_san = true,
                    0x87 => out.has_ip_san = true,
                    _ => {}
                }
            }
        }
    }
    Some(out)
}

/// libpq's name match: case-insensitive, and a leading `*.` in the
/// certificate's name matches exactly one label (never a dot).
pub(crate) fn name_matches(pattern: &str, host: &str) -> bool {
    if pattern.eq_ignore_ascii_case(host) {
        return true;
    }
    match pattern.strip_prefix("*.") {
        Some(suffix) => match host.split_once('.') {
            Some((first, rest)) => !first.is_empty() && rest.eq_ignore_ascii_case(suffix),
            None => false,
        },
        None => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn garbage_is_none_not_a_panic() {
        for input in [
            &b""[..],
            b"\x30",
            b"\x30\x84\xff\xff\xff\xff",
            b"\x30\x03\x30\x01",
        ] {
            assert_eq!(end_point_hash(input), None);
            assert_eq!(names(input), None);
        }
    }

    fn cert(
        sans: &[&str],
        cn: &str,
        alg: &'static rcgen::SignatureAlgorithm,
        issuer_alg: Option<&'static rcgen::SignatureAlgorithm>,
    ) -> Vec<u8> {
        let key = rcgen::KeyPair::generate_for(alg).unwrap();
        let mut params =
            rcgen::CertificateParams::new(sans.iter().map(|s| s.to_string()).collect::<Vec<_>>())
                .unwrap();
        params.distinguished_name = rcgen::DistinguishedName::new();
        params
            .distinguished_name
            .push(rcgen::DnType::CommonName, cn);
        let cert = match issuer_alg {
            None => params.self_signed(&key).unwrap(),
            Some(ialg) => {
                let ikey = rcgen::KeyPair::generate_for(ialg).unwrap();
                let mut ip = rcgen::CertificateParams::new(Vec::<String>::new()).unwrap();
                ip.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
                let issuer = ip.self_signed(&ikey).unwrap();
                params.signed_by(&key, &issuer, &ikey).unwrap()
            }
        };
        cert.der().to_vec()
    }

    #[test]
    fn end_point_hash_follows_the_signature_algorithm() {
        let p256 = &rcgen::PKCS_ECDSA_P256_SHA256;
        let p384 = &rcgen::PKCS_ECDSA_P384_SHA384;
        assert_eq!(
            end_point_hash(&cert(&["a"], "a", p256, None)),
            Some(EndPointHash::Sha256)
        );
        // The issuer's key decides the signature: P-384 signs with SHA-384.
        assert_eq!(
            end_point_hash(&cert(&["a"], "a", p256, Some(p384))),
            Some(EndPointHash::Sha384)
        );
        assert_eq!(
            end_point_hash(&cert(&["a"], "a", &rcgen::PKCS_ED25519, None)),
            None
        );
    }

    #[test]
    fn names_reports_san_kinds_and_common_names() {
        let p256 = &rcgen::PKCS_ECDSA_P256_SHA256;
        let n = names(&cert(&["localhost", "127.0.0.1"], "server", p256, None)).unwrap();
        assert!(n.has_dns_san && n.has_ip_san);
        assert_eq!(n.common_names, ["server"]);
        let n = names(&cert(&[], "localhost", p256, None)).unwrap();
        assert!(!n.has_dns_san && !n.has_ip_san);
        assert_eq!(n.common_names, ["localhost"]);
        let n = names(&cert(&["10.0.0.1"], "x", p256, None)).unwrap();
        assert!(!n.has_dns_san && n.has_ip_san);
    }

    #[test]
    fn wildcards_match_one_label() {
        assert!(name_matches("*.example.com", "db.example.com"));
        assert!(!name_matches("*.example.com", "a.db.example.com"));
        assert!(!name_matches("*.example.com", "example.com"));
        assert!(name_matches("LocalHost", "localhost"));
        assert!(!name_matches("localhost", "localhost2"));
    }
}
