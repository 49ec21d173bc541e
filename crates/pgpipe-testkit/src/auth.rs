//! MD5 and SCRAM-SHA-256 arithmetic, shared by the setup client (which logs
//! in to external servers) and the fake server's SCRAM helpers.
//!
//! Deliberately independent of pgpipe-proto: the testkit checks the client's
//! implementation, so it must not reuse it.

use std::collections::hash_map::RandomState;
use std::hash::{BuildHasher, Hasher};

use base64::engine::general_purpose::STANDARD as B64;
use base64::Engine as _;
use hmac::{Hmac, Mac};
use md5::{Digest as _, Md5};
use sha2::Sha256;

/// The answer to AuthenticationMD5Password: `"md5" + hex(md5(hex(md5(password + user)) + salt))`.
pub(crate) fn md5_password(user: &str, password: &str, salt: [u8; 4]) -> String {
    let inner = hex(&Md5::digest(
        [password.as_bytes(), user.as_bytes()].concat(),
    ));
    let outer = hex(&Md5::digest([inner.as_bytes(), &salt[..]].concat()));
    format!("md5{outer}")
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

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

/// The client side of one SCRAM-SHA-256 exchange (no channel binding).
pub(crate) struct ScramClient {
    password: String,
    client_first_bare: String,
    auth_message: String,
    salted: [u8; 32],
}

impl ScramClient {
    /// Starts an exchange; `client_first()` is what goes in SASLInitialResponse.
    pub(crate) fn new(password: &str) -> ScramClient {
        ScramClient {
            password: password.to_string(),
            client_first_bare: format!("n=,r={}", nonce()),
            auth_message: String::new(),
            salted: [0; 32],
        }
    }

    pub(crate) fn client_first(&self) -> String {
        format!("n,,{}", self.client_first_bare)
    }

    /// Consumes server-first, returns client-final.
    pub(crate) fn client_final(&mut self, server_first: &[u8]) -> Result<String, String> {
        let server_first = std::str::from_utf8(server_first)
            .map_err(|_| "server-first is not UTF-8".to_string())?;
        let nonce = attribute(server_first, 'r').ok_or("server-first has no nonce")?;
        let own = attribute(&self.client_first_bare, 'r').unwrap_or_default();
        if !nonce.starts_with(own) {
            return Err("server nonce does not extend ours".into());
        }
        let salt = attribute(server_first, 's')
            .and_then(unb64)
            .ok_or("server-first has no valid salt")?;
        let iterations: u32 = attribute(server_first, 'i')
            .and_then(|i| i.parse().ok())
            .filter(|i| (1..=10_000_000).contains(i))
            .ok_or("server-first has no sane iteration count")?;
        self.salted = salted_password(&self.password, &salt, iterations);
        let without_proof = format!("c=biws,r={nonce}");
        self.auth_message = format!("{},{server_first},{without_proof}", self.client_first_bare);
        let client_key = hmac(&self.salted, b"Client Key");
        let stored_key: [u8; 32] = Sha256::digest(client_key).into();
        let signature = hmac(&stored_key, self.auth_message.as_bytes());
        let proof: Vec<u8> = client_key
            .iter()
            .zip(signature.iter())
            .map(|(a, b)| a ^ b)
            .collect();
        Ok(format!("{without_proof},p={}", b64(&proof)))
    }

    /// Checks server-final's signature.
    pub(crate) fn verify_server_final(&self, server_final: &[u8]) -> Result<(), String> {
        let text = std::str::from_utf8(server_final)
            .map_err(|_| "server-final is not UTF-8".to_string())?;
        if let Some(e) = attribute(text, 'e') {
            return Err(format!("server reported SCRAM error: {e}"));
        }
        let got = attribute(text, 'v').ok_or("server-final has no signature")?;
        if got != server_signature(&self.salted, &self.auth_message) {
            return Err("server signature does not match".into());
        }
        Ok(())
    }
}

/// base64(HMAC(HMAC(salted, "Server Key"), auth_message)).
pub(crate) fn server_signature(salted: &[u8; 32], auth_message: &str) -> String {
    b64(&hmac(&hmac(salted, b"Server Key"), auth_message.as_bytes()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn md5_matches_postgres() {
        // pg_authid stores 'md5' || md5(password || user): the well-known
        // value for user postgres, password postgres.
        assert_eq!(
            hex(&Md5::digest(b"postgrespostgres")),
            "3175bce1d3201d16594cebf9d7eb3f9d"
        );
        let answer = md5_password("postgres", "postgres", *b"abcd");
        let outer = hex(&Md5::digest(b"3175bce1d3201d16594cebf9d7eb3f9dabcd"));
        assert_eq!(answer, format!("md5{outer}"));
        assert_eq!(answer.len(), 35);
    }

    #[test]
    fn scram_rfc7677_vector() {
        // RFC 7677 section 3, user "user", password "pencil".
        let mut client = ScramClient {
            password: "pencil".into(),
            client_first_bare: "n=user,r=rOprNGfwEbeRWgbNEkqO".into(),
            auth_message: String::new(),
            salted: [0; 32],
        };
        let server_first = b"r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096";
        let fin = client.client_final(server_first).unwrap();
        assert_eq!(
            fin,
            "c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ="
        );
        client
            .verify_server_final(b"v=6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4=")
            .unwrap();
        assert!(client.verify_server_final(b"v=AAAA").is_err());
    }

    #[test]
    fn nonces_differ_and_have_no_commas() {
        let (a, b) = (nonce(), nonce());
        assert_ne!(a, b);
        assert!(!a.contains(','));
        assert_eq!(a.len(), 24);
    }
}
