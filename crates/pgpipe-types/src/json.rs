//! `json` and `jsonb`.
//!
//! The binary format of `json` is the JSON text; `jsonb`'s is a version byte
//! (1) followed by the JSON text. `&str` and `String` pass the text through
//! unparsed for both types (see `text.rs`; the version byte is added and
//! stripped here). With the `serde_json` feature, `serde_json::Value` and
//! [`Json<T>`](Json) for any `Serialize`/`Deserialize` type are parsed and
//! serialized.

use crate::{BoxError, Type};

/// The only `jsonb` binary format version PostgreSQL has defined.
pub(crate) const JSONB_VERSION: u8 = 1;

/// Whether `ty` is `jsonb` (or a domain over it), whose binary form starts
/// with a version byte.
#[inline]
pub(crate) fn is_jsonb(ty: &Type) -> bool {
    ty.is(&[Type::JSONB])
}

/// The JSON text of a binary `json` or `jsonb` value: for `jsonb`, the bytes
/// after the version byte, which must be 1.
#[inline]
pub(crate) fn json_text<'a>(ty: &Type, raw: &'a [u8]) -> Result<&'a [u8], BoxError> {
    if !is_jsonb(ty) {
        return Ok(raw);
    }
    match raw.split_first() {
        Some((&JSONB_VERSION, text)) => Ok(text),
        Some((v, _)) => {
            Err(format!("unsupported jsonb binary format version {v} (expected 1)").into())
        }
        None => Err("invalid binary jsonb value: empty (expected a version byte)".into()),
    }
}

#[cfg(feature = "serde_json")]
pub use self::serde::Json;

#[cfg(feature = "serde_json")]
mod serde {
    use std::ops::{Deref, DerefMut};

    use ::serde::{Deserialize, Serialize};
    use bytes::{BufMut, BytesMut};
    use pgpipe_proto::put::PutInline;
    use serde_json::Value;

    use super::{is_jsonb, json_text, JSONB_VERSION};
    use crate::{BoxError, Decode, Encode, IsNull, StaticType, Type, TypeRef};

    /// A value sent and read as `json` or `jsonb` through serde (feature
    /// `serde_json`).
    ///
    /// `Json<T>` encodes any `T: Serialize` and decodes any
    /// `T: Deserialize`, borrowing from the row where `T` borrows (such as
    /// `Json<&str>` for a JSON string without escapes, or a struct with
    /// `&'a str` fields). Parameters are declared as `jsonb` when the
    /// statement's types are not known (SQL text: parameter types come from
    /// the Rust values); a `json` parameter or column works as well. A value
    /// holding a NUL character (`"a\u0000b"`, which a `json` column can
    /// hold) cannot be `jsonb`: it is refused before sending when the
    /// parameter is `jsonb`, so send it to a `json` parameter through a
    /// prepared statement, whose parameter types are the server's.
    ///
    /// ```
    /// use pgpipe_types::{Decode, Encode, Json, Type};
    /// use bytes::BytesMut;
    /// use std::collections::BTreeMap;
    ///
    /// let mut doc = BTreeMap::new();
    /// doc.insert("size", 3);
    /// let mut buf = BytesMut::new();
    /// Json(&doc).encode(&Type::JSONB, &mut buf).unwrap();
    /// assert_eq!(&buf[..], b"\x01{\"size\":3}");
    /// let back = Json::<BTreeMap<String, i32>>::decode(&Type::JSONB, &buf).unwrap();
    /// assert_eq!(back.0["size"], 3);
    /// ```
    #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
    pub struct Json<T>(pub T);

    impl<T> Json<T> {
        /// The wrapped value.
        pub fn into_inner(self) -> T {
            self.0
        }
    }

    impl<T> Deref for Json<T> {
        type Target = T;
        fn deref(&self) -> &T {
            &self.0
        }
    }

    impl<T> DerefMut for Json<T> {
        fn deref_mut(&mut self) -> &mut T {
            &mut self.0
        }
    }

    impl<T> From<T> for Json<T> {
        fn from(v: T) -> Json<T> {
            Json(v)
        }
    }

    fn accepts(ty: &Type) -> bool {
        ty.is(&[Type::JSON, Type::JSONB])
    }

    fn encode_json<T: Serialize + ?Sized>(
        value: &T,
        ty: &Type,
        buf: &mut BytesMut,
    ) -> Result<IsNull, BoxError> {
        let start = buf.len();
        if is_jsonb(ty) {
            buf.put_u8_inline(JSONB_VERSION);
        }
        serde_json::to_writer(buf.writer(), value)
            .map_err(|e| format!("cannot serialize the value as JSON: {e}"))?;
        if is_jsonb(ty) && has_escaped_nul(&buf[start + 1..]) {
            buf.truncate(start);
            return Err(JSONB_NUL.into());
        }
        Ok(IsNull::No)
    }

    /// Why a value with a NUL character is refused as `jsonb`.
    const JSONB_NUL: &str = "a JSON string holding \\u0000 cannot be sent as jsonb: PostgreSQL's jsonb cannot store the NUL character and refuses it (22P05). A json column or parameter can hold it: prepare the statement, so that the parameter's type is json (as SQL text, a serde_json value is declared jsonb)";

    /// Whether serialized JSON text holds the escape `\u0000` (a NUL in a
    /// string or a key). Outside strings serde_json writes no backslash,
    /// and inside one each escape is a backslash and the character after
    /// it, so `\\u0000` (a backslash, then `u0000`) is skipped.
    fn has_escaped_nul(text: &[u8]) -> bool {
        let mut i = 0;
        while let Some(p) = text[i..].iter().position(|&b| b == b'\\') {
            let at = i + p;
            if text.get(at + 1..at + 6) == Some(&b"u0000"[..]) {
                return true;
            }
            i = at + 2;
            if i >= text.len() {
                break;
            }
        }
        false
    }

    impl<T> StaticType for Json<T> {
        const TYPE: TypeRef = TypeRef::Oid(3802);
    }

    impl<T: Serialize> Encode for Json<T> {
        fn type_ref(&self) -> TypeRef {
            TypeRef::Oid(3802)
        }
        fn accepts(&self, ty: &Type) -> bool {
            accepts(ty)
        }
        #[inline]
        fn accepts_all_values(&self, ty: &Type) -> bool {
            // Which values fit depends on the type alone.
            self.accepts(ty)
        }
        fn encode(&self, ty: &Type, buf: &mut BytesMut) -> Result<IsNull, BoxError> {
            encode_json(&self.0, ty, buf)
        }
        fn rust_type(&self) -> &'static str {
            std::any::type_name::<Self>()
        }
    }

    impl<'a, T: Deserialize<'a>> Decode<'a> for Json<T> {
        fn accepts(ty: &Type) -> bool {
            accepts(ty)
        }
        fn decode(ty: &Type, raw: &'a [u8]) -> Result<Self, BoxError> {
            let text = json_text(ty, raw)?;
            serde_json::from_slice(text).map(Json).map_err(|e| {
                format!(
                    "cannot read {ty} value as {}: {e}",
                    std::any::type_name::<T>()
                )
                .into()
            })
        }
    }

    impl StaticType for Value {
        const TYPE: TypeRef = TypeRef::Oid(3802);
    }

    impl Encode for Value {
        fn type_ref(&self) -> TypeRef {
            TypeRef::Oid(3802)
        }
        fn accepts(&self, ty: &Type) -> bool {
            accepts(ty)
        }
        #[inline]
        fn accepts_all_values(&self, ty: &Type) -> bool {
            // Which values fit depends on the type alone.
            self.accepts(ty)
        }
        fn encode(&self, ty: &Type, buf: &mut BytesMut) -> Result<IsNull, BoxError> {
            encode_json(self, ty, buf)
        }
    }

    impl<'a> Decode<'a> for Value {
        fn accepts(ty: &Type) -> bool {
            accepts(ty)
        }
        fn decode(ty: &Type, raw: &'a [u8]) -> Result<Self, BoxError> {
            Json::<Value>::decode(ty, raw).map(Json::into_inner)
        }
    }

    #[cfg(test)]
    mod tests {
        use super::*;
        use serde_json::json;

        #[test]
        fn nul_is_json_only() {
            let v = json!({"k\u{0}": "a\u{0}b"});
            assert_eq!(encoded(&v, &Type::JSON), br#"{"k\u0000":"a\u0000b"}"#);
            let mut buf = BytesMut::from(&b"before"[..]);
            let err = v.encode(&Type::JSONB, &mut buf).unwrap_err();
            assert!(err.to_string().contains("cannot be sent as jsonb"), "{err}");
            assert_eq!(&buf[..], b"before", "nothing left of the refused value");
            assert!(Json("\u{0}").encode(&Type::JSONB, &mut buf).is_err());
            // A backslash followed by u0000 is not a NUL.
            let fine = json!(["\\u0000", "\\", "x\\\\"]);
            assert_eq!(
                &encoded(&fine, &Type::JSONB)[1..],
                br#"["\\u0000","\\","x\\\\"]"#
            );
            assert!(!has_escaped_nul(br"\"));
            assert!(!has_escaped_nul(b"\\"));
            assert!(has_escaped_nul(br#""\\\u0000""#));
        }

        fn encoded<T: Encode>(v: &T, ty: &Type) -> Vec<u8> {
            let mut buf = BytesMut::new();
            v.encode(ty, &mut buf).unwrap();
            buf.to_vec()
        }

        #[test]
        fn value_round_trips_as_json_and_jsonb() {
            let v = json!({"a": [1, 2.5, null, true], "é": "\u{1F600}"});
            let as_json = encoded(&v, &Type::JSON);
            assert_eq!(as_json[0], b'{');
            let as_jsonb = encoded(&v, &Type::JSONB);
            assert_eq!(as_jsonb[0], 1);
            assert_eq!(&as_jsonb[1..], &as_json[..]);
            assert_eq!(Value::decode(&Type::JSON, &as_json).unwrap(), v);
            assert_eq!(Value::decode(&Type::JSONB, &as_jsonb).unwrap(), v);
            assert_eq!(v.type_ref(), TypeRef::Oid(3802));
        }

        #[test]
        fn json_wrapper_borrows_and_reports_errors() {
            #[derive(Deserialize, Serialize, PartialEq, Debug)]
            struct Attach<'a> {
                filename: &'a str,
                size: i64,
            }
            let raw = b"\x01{\"filename\":\"a.txt\",\"size\":3}";
            let a = Json::<Attach>::decode(&Type::JSONB, raw).unwrap();
            assert_eq!(a.filename, "a.txt");
            assert_eq!(a.filename.as_ptr(), raw[14..].as_ptr());
            assert_eq!(encoded(&Json(&*a), &Type::JSONB), raw);
            let err = Json::<Attach>::decode(&Type::JSON, b"{\"filename\":1}").unwrap_err();
            assert!(
                err.to_string().contains("cannot read json value as"),
                "{err}"
            );
        }

        #[test]
        fn jsonb_version_is_checked() {
            let err = Value::decode(&Type::JSONB, b"\x02{}").unwrap_err();
            assert_eq!(
                err.to_string(),
                "unsupported jsonb binary format version 2 (expected 1)"
            );
            assert!(Value::decode(&Type::JSONB, b"").is_err());
            assert!(Value::decode(&Type::JSON, b"").is_err());
        }

        #[test]
        fn only_json_types() {
            assert!(<Value as Decode>::accepts(&Type::JSON));
            assert!(<Json<i32> as Decode>::accepts(&Type::JSONB));
            assert!(!<Value as Decode>::accepts(&Type::TEXT));
            assert!(!Json(1).accepts(&Type::TEXT));
        }
    }
}

#[cfg(test)]
mod tests {
    use bytes::BytesMut;

    use crate::{Decode, Encode, Type};

    #[test]
    fn strings_pass_jsonb_through_with_the_version_byte() {
        let mut buf = BytesMut::new();
        "{\"a\": 1}".encode(&Type::JSONB, &mut buf).unwrap();
        assert_eq!(&buf[..], b"\x01{\"a\": 1}");
        let s = <&str>::decode(&Type::JSONB, &buf).unwrap();
        assert_eq!(s, "{\"a\": 1}");
        assert_eq!(s.as_ptr(), buf[1..].as_ptr());
        assert_eq!(String::decode(&Type::JSONB, &buf).unwrap(), s);

        let mut buf = BytesMut::new();
        String::from("[1]").encode(&Type::JSON, &mut buf).unwrap();
        assert_eq!(&buf[..], b"[1]");
        assert_eq!(<&str>::decode(&Type::JSON, &buf).unwrap(), "[1]");

        assert!(<&str as Decode>::accepts(&Type::JSONB));
        assert!("x".accepts(&Type::JSONB));
        let err = <&str>::decode(&Type::JSONB, b"\x07[]").unwrap_err();
        assert!(err.to_string().contains("version 7"), "{err}");
        assert!(String::decode(&Type::JSONB, b"").is_err());
    }
}
