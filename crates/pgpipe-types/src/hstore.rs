//! `hstore` (the extension type; its OID differs per database, so it is
//! declared by name and found through the client's type registry).
//!
//! Binary format: the pair count, then for each pair the key's length and
//! bytes and the value's length (-1 for NULL) and bytes, lengths as 32-bit
//! big-endian integers.

use pgpipe_proto::put::PutInline;
use std::collections::{BTreeMap, HashMap};
use std::hash::BuildHasher;

use bytes::BytesMut;

use crate::{BoxError, Decode, Encode, IsNull, StaticType, Type, TypeRef};

/// Whether `ty` is the `hstore` extension type (or a domain over it).
fn is_hstore(ty: &Type) -> bool {
    ty.base().is_named("hstore")
}

fn encode_pairs<'a, I>(len: usize, pairs: I, buf: &mut BytesMut) -> Result<IsNull, BoxError>
where
    I: Iterator<Item = (&'a str, Option<&'a str>)>,
{
    let count = |what: &str, n: usize| {
        i32::try_from(n).map_err(|_| -> BoxError {
            format!("hstore {what} of {n} is too large for PostgreSQL").into()
        })
    };
    buf.put_i32_inline(count("pair count", len)?);
    for (key, value) in pairs {
        buf.put_i32_inline(count("key length", key.len())?);
        buf.put_slice_inline(key.as_bytes());
        match value {
            Some(v) => {
                buf.put_i32_inline(count("value length", v.len())?);
                buf.put_slice_inline(v.as_bytes());
            }
            None => buf.put_i32_inline(-1),
        }
    }
    Ok(IsNull::No)
}

/// Reads the binary format, calling `insert` for each pair; every length is
/// checked against the bytes left.
fn decode_pairs<'a>(
    raw: &'a [u8],
    mut insert: impl FnMut(&'a str, Option<&'a str>) -> bool,
) -> Result<(), BoxError> {
    let mut rest = raw;
    let int = |rest: &mut &'a [u8], what: &str| -> Result<i32, BoxError> {
        let Some((n, tail)) = rest.split_first_chunk::<4>() else {
            return Err(format!("invalid binary hstore value: truncated {what}").into());
        };
        *rest = tail;
        Ok(i32::from_be_bytes(*n))
    };
    let text = |rest: &mut &'a [u8], len: i32, what: &str| -> Result<&'a str, BoxError> {
        let len = usize::try_from(len)
            .map_err(|_| format!("invalid binary hstore value: negative {what} length {len}"))?;
        if rest.len() < len {
            return Err(format!(
                "invalid binary hstore value: {what} length {len} but {} bytes left",
                rest.len()
            )
            .into());
        }
        let (bytes, tail) = rest.split_at(len);
        *rest = tail;
        std::str::from_utf8(bytes)
            .map_err(|e| format!("invalid UTF-8 in hstore {what}: {e}").into())
    };
    let count = int(&mut rest, "pair count")?;
    if count < 0 {
        return Err(format!("invalid binary hstore value: negative pair count {count}").into());
    }
    for _ in 0..count {
        let len = int(&mut rest, "key length")?;
        let key = text(&mut rest, len, "key")?;
        let len = int(&mut rest, "value length")?;
        let value = if len == -1 {
            None
        } else {
            Some(text(&mut rest, len, "value")?)
        };
        if !insert(key, value) {
            return Err(format!("invalid binary hstore value: duplicate key {key:?}").into());
        }
    }
    if !rest.is_empty() {
        return Err(format!(
            "invalid binary hstore value: {} bytes after the last pair",
            rest.len()
        )
        .into());
    }
    Ok(())
}

/// `hstore` as a map from keys to values that may be NULL. The type is
/// declared by name (`hstore`), so the extension must be installed in the
/// database (`CREATE EXTENSION hstore`).
///
/// ```
/// use pgpipe_types::{Decode, Encode, Kind, Type};
/// use bytes::BytesMut;
/// use std::collections::HashMap;
///
/// // As the client's type registry describes it.
/// let hstore = Type::new(16500, "hstore", "public", 16505, Kind::Simple);
/// let mut map = HashMap::new();
/// map.insert("a".to_string(), Some("1".to_string()));
/// map.insert("b".to_string(), None);
/// let mut buf = BytesMut::new();
/// map.encode(&hstore, &mut buf).unwrap();
/// assert_eq!(HashMap::<String, Option<String>>::decode(&hstore, &buf).unwrap(), map);
/// ```
impl<S: BuildHasher> Encode for HashMap<String, Option<String>, S> {
    fn type_ref(&self) -> TypeRef {
        TypeRef::Named("hstore")
    }
    fn accepts(&self, ty: &Type) -> bool {
        is_hstore(ty)
    }
    fn encode(&self, _: &Type, buf: &mut BytesMut) -> Result<IsNull, BoxError> {
        encode_pairs(
            self.len(),
            self.iter().map(|(k, v)| (k.as_str(), v.as_deref())),
            buf,
        )
    }
}

impl<S> StaticType for HashMap<String, Option<String>, S> {
    const TYPE: TypeRef = TypeRef::Named("hstore");
}

impl<'a, S: BuildHasher + Default> Decode<'a> for HashMap<String, Option<String>, S> {
    fn accepts(ty: &Type) -> bool {
        is_hstore(ty)
    }
    fn decode(_: &Type, raw: &'a [u8]) -> Result<Self, BoxError> {
        let mut map = HashMap::default();
        decode_pairs(raw, |k, v| {
            map.insert(k.to_owned(), v.map(str::to_owned)).is_none()
        })?;
        Ok(map)
    }
}

/// `hstore` as an ordered map (see the `HashMap` implementation).
impl Encode for BTreeMap<String, Option<String>> {
    fn type_ref(&self) -> TypeRef {
        TypeRef::Named("hstore")
    }
    fn accepts(&self, ty: &Type) -> bool {
        is_hstore(ty)
    }
    fn encode(&self, _: &Type, buf: &mut BytesMut) -> Result<IsNull, BoxError> {
        encode_pairs(
            self.len(),
            self.iter().map(|(k, v)| (k.as_str(), v.as_deref())),
            buf,
        )
    }
}

impl StaticType for BTreeMap<String, Option<String>> {
    const TYPE: TypeRef = TypeRef::Named("hstore");
}

impl<'a> Decode<'a> for BTreeMap<String, Option<String>> {
    fn accepts(ty: &Type) -> bool {
        is_hstore(ty)
    }
    fn decode(_: &Type, raw: &'a [u8]) -> Result<Self, BoxError> {
        let mut map = BTreeMap::new();
        decode_pairs(raw, |k, v| {
            map.insert(k.to_owned(), v.map(str::to_owned)).is_none()
        })?;
        Ok(map)
    }
}

/// Borrowed keys and values, without copying them out of the row.
impl<'a> Decode<'a> for BTreeMap<&'a str, Option<&'a str>> {
    fn accepts(ty: &Type) -> bool {
        is_hstore(ty)
    }
    fn decode(_: &Type, raw: &'a [u8]) -> Result<Self, BoxError> {
        let mut map = BTreeMap::new();
        decode_pairs(raw, |k, v| map.insert(k, v).is_none())?;
        Ok(map)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Kind;

    fn hstore() -> Type {
        Type::new(16500, "hstore", "public", 16505, Kind::Simple)
    }

    fn raw(pairs: &[(&str, Option<&str>)]) -> Vec<u8> {
        let mut buf = BytesMut::new();
        encode_pairs(pairs.len(), pairs.iter().copied(), &mut buf).unwrap();
        buf.to_vec()
    }

    #[test]
    fn layout_and_round_trip() {
        let bytes = raw(&[("k", Some("vv")), ("n", None)]);
        assert_eq!(
            bytes,
            [
                0, 0, 0, 2, 0, 0, 0, 1, b'k', 0, 0, 0, 2, b'v', b'v', 0, 0, 0, 1, b'n', 0xff, 0xff,
                0xff, 0xff
            ]
        );
        let map = BTreeMap::<String, Option<String>>::decode(&hstore(), &bytes).unwrap();
        assert_eq!(map["k"].as_deref(), Some("vv"));
        assert_eq!(map["n"], None);
        let mut again = BytesMut::new();
        map.encode(&hstore(), &mut again).unwrap();
        assert_eq!(&again[..], &bytes[..]);
        let borrowed = BTreeMap::<&str, Option<&str>>::decode(&hstore(), &bytes).unwrap();
        assert_eq!(borrowed["k"], Some("vv"));
        assert_eq!(raw(&[]), [0, 0, 0, 0]);
    }

    #[test]
    fn accepted_by_name_only() {
        assert!(<HashMap<String, Option<String>> as Decode>::accepts(
            &hstore()
        ));
        assert!(!<HashMap<String, Option<String>> as Decode>::accepts(
            &Type::TEXT
        ));
        assert!(!<HashMap<String, Option<String>> as Decode>::accepts(
            &Type::from_oid(16500)
        ));
        let map: HashMap<String, Option<String>> = HashMap::new();
        assert_eq!(map.type_ref(), TypeRef::Named("hstore"));
        assert!(map.accepts(&hstore()));
        let domain = Type::new(16600, "tags", "public", 0, Kind::Domain(hstore()));
        assert!(map.accepts(&domain));
    }

    #[test]
    fn malformed_binary_is_an_error() {
        let dup = raw(&[("a", None), ("a", Some("x"))]);
        let mut trailing = raw(&[("a", None)]);
        trailing.push(0);
        for (bytes, want) in [
            (vec![0, 0, 0], "truncated pair count"),
            (vec![0xff, 0xff, 0xff, 0xff], "negative pair count -1"),
            (vec![0, 0, 0, 1], "truncated key length"),
            (
                vec![0, 0, 0, 1, 0, 0, 0, 5, b'a'],
                "key length 5 but 1 bytes left",
            ),
            (
                vec![0, 0, 0, 1, 0xff, 0xff, 0xff, 0xff],
                "negative key length -1",
            ),
            (vec![0, 0, 0, 1, 0, 0, 0, 1, b'a'], "truncated value length"),
            (
                vec![0, 0, 0, 1, 0, 0, 0, 1, b'a', 0xff, 0xff, 0xff, 0xfe],
                "negative value length -2",
            ),
            (
                vec![0, 0, 0, 1, 0, 0, 0, 1, 0xff, 0xff, 0xff, 0xff, 0xff],
                "invalid UTF-8 in hstore key",
            ),
            (dup, "duplicate key \"a\""),
            (trailing, "1 bytes after the last pair"),
        ] {
            let e = HashMap::<String, Option<String>>::decode(&hstore(), &bytes)
                .unwrap_err()
                .to_string();
            assert!(e.contains(want), "{e:?} vs {want:?}");
        }
    }
}
