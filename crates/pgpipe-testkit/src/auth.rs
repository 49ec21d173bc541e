//! SCRAM-SHA-256 arithmetic for the server side: the fake server's SCRAM
//! helpers ([`crate::scram`]).
//!
//! The client side (the setup client's login) uses pgpipe-proto's SCRAM and
//! MD5; these server-side helpers stay independent of it, so the fake server
//! checks pgpipe-proto's proofs with separately written code.

use std::collections::hash_map::RandomState;
use std::hash::{BuildHasher, Hasher};

use base64::engine::general_purpose::STANDARD as B64;
use base64::Engine as _;
use hmac::{Hmac, Mac};
use sha2::Sha256;

/// A fresh nonce: 18 bytes, base64 (24 printable characters, no comma).
///
/// `RandomState` is seeded from the OS and every instance hashes
/// differently, which is all a test nonce needs, without a `rand` dependency.
pub(crate) fn nonce() -> String {
    let mut bytes = Vec::with_capacity(24);
    while bytes.len() < 18 {
        let mut h = RandomState::new().build_hasher();
        h.write_usize(bytes.len());
        bytes.extend_from_slice(&h.finish().to_le_bytes());
    }
    bytes.truncate(18);
    B64.encode(bytes)
}

pub(crate) fn b64(bytes: &[u8]) -> String {
    B64.encode(bytes)
}

pub(crate) fn unb64(text: &str) -> Option<Vec<u8>> {
    B64.decode(text).ok()
}

pub(crate) fn hmac(key: &[u8], data: &[u8]) -> [u8; 32] {
    // HMAC accepts keys of any length, so this cannot fail.
    let mut mac = <Hmac<Sha256> as Mac>::new_from_slice(key).expect("HMAC takes any key length");
    mac.update(data);
    mac.finalize().into_bytes().into()
}

/// Hi() of RFC 5802: PBKDF2-HMAC-SHA-256 with one 32-byte block.
pub(crate) fn salted_password(password: &str, salt: &[u8], iterations: u32) -> [u8; 32] {
    let mut u = hmac(password.as_bytes(), &[salt, &1u32.to_be_bytes()].concat());
    let mut out = u;
    for _ in 1..iterations {
        u = hmac(password.as_bytes(), &u);
        for (o, x) in out.iter_mut().zip(u.iter()) {
            *o ^= x;
        }
    }
    out
}

/// `name=value` attributes of a SCRAM message.
pub(crate) fn attribute(message: &str, name: char) -> Option<&str> {
    message.split(',').find_map(|part| {
        let mut chars = part.chars();
        (chars.next() == Some(name) && chars.next() == Some('=')).then(|| &part[2..])
    })
}

/// base64(HMAC(HMAC(salted, "Server Key"), auth_message)).
pub(crate) fn server_signature(salted: &[u8; 32], auth_message: &str) -> String {
    b64(&hmac(&hmac(salted, b"Server Key"), auth_message.as_bytes()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nonces_differ_and_have_no_commas() {
        let (a, b) = (nonce(), nonce());
        assert_ne!(a, b);
        assert!(!a.contains(','));
        assert_eq!(a.len(), 24);
    }
}
