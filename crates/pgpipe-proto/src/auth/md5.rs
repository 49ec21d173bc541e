//! MD5 password authentication (`AuthenticationMD5Password`).
//!
//! MD5 authentication is deprecated in PostgreSQL and is weak (the stored hash is
//! password-equivalent); it is implemented because older servers still ask for it.

use ::md5::{Digest, Md5};

/// The PasswordMessage payload for MD5 authentication:
/// `"md5" + hex(md5(hex(md5(password + user)) + salt))`, lowercase hex.
///
/// The password is used as raw bytes (no SASLprep): that is what the server
/// hashed when the password was set.
pub fn password_hash(user: &[u8], password: &[u8], salt: [u8; 4]) -> String {
    let mut inner = Md5::new();
    inner.update(password);
    inner.update(user);
    let inner_hex = hex(&inner.finalize());

    let mut outer = Md5::new();
    outer.update(inner_hex.as_bytes());
    outer.update(salt);
    let mut out = String::with_capacity(3 + 32);
    out.push_str("md5");
    out.push_str(&hex(&outer.finalize()));
    out
}

/// Lowercase hex, as the server compares the strings byte for byte.
fn hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut s = String::with_capacity(bytes.len() * 2);
    for &b in bytes {
        s.push(DIGITS[usize::from(b >> 4)] as char);
        s.push(DIGITS[usize::from(b & 0x0f)] as char);
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_value() {
        // Computed independently with Python:
        //   inner = hashlib.md5(b"postgres" + b"postgres").hexdigest().encode()
        //   "md5" + hashlib.md5(inner + bytes([1, 2, 3, 4])).hexdigest()
        assert_eq!(
            password_hash(b"postgres", b"postgres", [1, 2, 3, 4]),
            "md568be9ed08db75f318087ab337aaea044"
        );
    }

    #[test]
    fn shape() {
        let h = password_hash(b"u", b"", [0; 4]);
        assert_eq!(h.len(), 35);
        assert!(h.starts_with("md5"));
        assert!(h[3..]
            .bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b)));
    }

    #[test]
    fn hex_is_lowercase_and_padded() {
        assert_eq!(hex(&[0x00, 0x0f, 0xab, 0xff]), "000fabff");
    }
}
