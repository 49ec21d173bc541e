//! MD5 password authentication.

/// The PasswordMessage payload for MD5 authentication:
/// `"md5" + hex(md5(hex(md5(password + user)) + salt))`.
pub fn password_hash(user: &[u8], password: &[u8], salt: [u8; 4]) -> String {
    let _ = (user, password, salt);
    todo!()
}
