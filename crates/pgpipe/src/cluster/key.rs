//! [`ShardKey`]: what a shard map maps to a shard (a user id, a tenant
//! name), and the stable hash of it.

use std::fmt;

/// The key a [`ShardMap`](crate::cluster::ShardMap) maps to a shard: an
/// integer (user ids) or bytes (names, UUIDs as bytes). Built with `From`
/// from `i64`, `i32`, `u32`, `&str`, `String`, `&[u8]` and `Vec<u8>`.
///
/// ```
/// use pgpipe::cluster::ShardKey;
///
/// assert_eq!(ShardKey::from(7i32), ShardKey::from(7i64));
/// assert_eq!(ShardKey::from("alice"), ShardKey::from(b"alice".as_slice()));
/// assert_eq!(ShardKey::from(42i64).as_int(), Some(42));
/// ```
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct ShardKey(Repr);

#[derive(Clone, PartialEq, Eq, Hash)]
enum Repr {
    Int(i64),
    Bytes(Box<[u8]>),
}

impl ShardKey {
    /// The key as an integer, if it is one.
    ///
    /// ```
    /// # use pgpipe::cluster::ShardKey;
    /// assert_eq!(ShardKey::from("x").as_int(), None);
    /// ```
    pub fn as_int(&self) -> Option<i64> {
        match self.0 {
            Repr::Int(v) => Some(v),
            Repr::Bytes(_) => None,
        }
    }

    /// The key as bytes, if it is text or bytes.
    ///
    /// ```
    /// # use pgpipe::cluster::ShardKey;
    /// assert_eq!(ShardKey::from("x").as_bytes(), Some(&b"x"[..]));
    /// assert_eq!(ShardKey::from(1i64).as_bytes(), None);
    /// ```
    pub fn as_bytes(&self) -> Option<&[u8]> {
        match &self.0 {
            Repr::Int(_) => None,
            Repr::Bytes(b) => Some(b),
        }
    }

    /// The stable hash that [`ShardMap::hash`](crate::cluster::ShardMap::hash)
    /// takes modulo the shard count: 64-bit FNV-1a over the key's bytes, an
    /// integer taken as its 8 bytes in big-endian order. It never changes
    /// between pgpipe versions, platforms or runs (a map from keys to shards
    /// must not), and other languages compute it in a few lines.
    ///
    /// ```
    /// # use pgpipe::cluster::ShardKey;
    /// // FNV-1a's published test vectors.
    /// assert_eq!(ShardKey::from("").stable_hash(), 0xcbf29ce484222325);
    /// assert_eq!(ShardKey::from("a").stable_hash(), 0xaf63dc4c8601ec8c);
    /// assert_eq!(ShardKey::from(1i64).stable_hash(),
    ///            ShardKey::from(&[0u8, 0, 0, 0, 0, 0, 0, 1][..]).stable_hash());
    /// ```
    pub fn stable_hash(&self) -> u64 {
        match &self.0 {
            Repr::Int(v) => fnv1a(&v.to_be_bytes()),
            Repr::Bytes(b) => fnv1a(b),
        }
    }
}

fn fnv1a(bytes: &[u8]) -> u64 {
    const OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
    const PRIME: u64 = 0x0100_0000_01b3;
    bytes
        .iter()
        .fold(OFFSET, |h, b| (h ^ u64::from(*b)).wrapping_mul(PRIME))
}

/// Integers as themselves; bytes as text when they are UTF-8, shortened
/// (keys end up in error messages).
impl fmt::Debug for ShardKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

impl fmt::Display for ShardKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.0 {
            Repr::Int(v) => write!(f, "{v}"),
            Repr::Bytes(b) => {
                let shown = &b[..b.len().min(64)];
                let more = if b.len() > 64 { "..." } else { "" };
                match std::str::from_utf8(shown) {
                    Ok(s) => write!(f, "{s:?}{more}"),
                    Err(_) => write!(f, "{shown:02x?}{more}"),
                }
            }
        }
    }
}

impl From<i64> for ShardKey {
    fn from(v: i64) -> ShardKey {
        ShardKey(Repr::Int(v))
    }
}

impl From<i32> for ShardKey {
    fn from(v: i32) -> ShardKey {
        ShardKey(Repr::Int(v.into()))
    }
}

impl From<u32> for ShardKey {
    fn from(v: u32) -> ShardKey {
        ShardKey(Repr::Int(v.into()))
    }
}

impl From<&str> for ShardKey {
    fn from(v: &str) -> ShardKey {
        ShardKey(Repr::Bytes(v.as_bytes().into()))
    }
}

impl From<String> for ShardKey {
    fn from(v: String) -> ShardKey {
        ShardKey(Repr::Bytes(v.into_bytes().into_boxed_slice()))
    }
}

impl From<&String> for ShardKey {
    fn from(v: &String) -> ShardKey {
        ShardKey::from(v.as_str())
    }
}

impl From<&[u8]> for ShardKey {
    fn from(v: &[u8]) -> ShardKey {
        ShardKey(Repr::Bytes(v.into()))
    }
}

impl From<Vec<u8>> for ShardKey {
    fn from(v: Vec<u8>) -> ShardKey {
        ShardKey(Repr::Bytes(v.into_boxed_slice()))
    }
}

impl From<&ShardKey> for ShardKey {
    fn from(v: &ShardKey) -> ShardKey {
        v.clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_hash_is_fnv1a_and_never_changes() {
        // Published FNV-1a 64 vectors, and pinned values for integers: a
        // change here moves every key to another shard.
        assert_eq!(ShardKey::from("foobar").stable_hash(), 0x85944171f73967e8);
        assert_eq!(ShardKey::from(0i64).stable_hash(), 0xa8c7f832281a39c5);
        assert_eq!(ShardKey::from(42i64).stable_hash() % 16, 7);
    }

    #[test]
    fn keys_show_shortly_in_messages() {
        assert_eq!(ShardKey::from(-3i64).to_string(), "-3");
        assert_eq!(ShardKey::from("ab").to_string(), "\"ab\"");
        assert!(ShardKey::from("x".repeat(1000)).to_string().len() < 80);
        assert_eq!(ShardKey::from(&[0xffu8][..]).to_string(), "[ff]");
    }
}
