//! PostgreSQL enum types. The binary format of an enum value is its label's
//! UTF-8 text; these helpers add the checks `#[derive(PgEnum)]`'s code
//! needs: the type's name and labels, and unknown labels as errors that
//! name them. They are reached through the hidden `__private` module.
//!
//! ```
//! use bytes::BytesMut;
//! use pgpipe_types::__private::{decode_enum_label, encode_enum_label, enum_accepts};
//! use pgpipe_types::{Kind, Type};
//!
//! let mood = Type::new(70010, "mood", "public", 70009,
//!     Kind::Enum(vec!["sad".into(), "ok".into(), "happy".into()]));
//! assert!(enum_accepts(&mood, "mood", &["happy", "sad"]));
//! assert!(!enum_accepts(&mood, "mood", &["happy", "ecstatic"]));
//! assert!(!enum_accepts(&mood, "feeling", &["happy"]));
//!
//! let mut buf = BytesMut::new();
//! encode_enum_label(&mood, "ok", "Mood", &mut buf).unwrap();
//! assert_eq!(decode_enum_label(&mood, &buf).unwrap(), "ok");
//! assert!(encode_enum_label(&mood, "meh", "Mood", &mut buf).is_err());
//! ```

use bytes::BytesMut;
use pgpipe_proto::put::PutInline;

use crate::{BoxError, IsNull, Kind, Type};

/// The labels of `ty` (domains looked through) when it is an enum type the
/// client has described.
pub fn enum_labels(ty: &Type) -> Option<&[String]> {
    match ty.base().kind() {
        Kind::Enum(labels) => Some(labels),
        _ => None,
    }
}

/// Whether `ty` (or the domain's base) is the enum type called `name`
/// (`"mood"` or `"schema.mood"`, see [`Type::is_named`]) and has every one
/// of `labels`, so that every value of the Rust enum can be sent and read.
/// A type known only by its OID is not accepted.
pub fn enum_accepts(ty: &Type, name: &str, labels: &[&str]) -> bool {
    let base = ty.base();
    match enum_labels(base) {
        Some(have) => base.is_named(name) && labels.iter().all(|l| have.iter().any(|h| h == l)),
        None => false,
    }
}

/// The labels of `labels` that enum type `ty` lacks (all of them when `ty`
/// is not a described enum): for error messages that say what to fix.
pub fn missing_enum_labels<'l>(ty: &Type, labels: &[&'l str]) -> Vec<&'l str> {
    let have = enum_labels(ty).unwrap_or(&[]);
    labels
        .iter()
        .copied()
        .filter(|l| !have.iter().any(|h| h == l))
        .collect()
}

/// Writes the value with label `label` of Rust enum `rust_type` for a
/// parameter of type `ty`. When `ty` is a described enum, a label it does not
/// have is an error here, before anything reaches the server.
pub fn encode_enum_label(
    ty: &Type,
    label: &str,
    rust_type: &'static str,
    buf: &mut BytesMut,
) -> Result<IsNull, BoxError> {
    if let Some(have) = enum_labels(ty) {
        if !have.iter().any(|h| h == label) {
            return Err(format!(
                "enum type {ty} has no label {label:?} (a value of Rust type {rust_type}); its labels are {have:?}"
            )
            .into());
        }
    }
    buf.put_slice_inline(label.as_bytes());
    Ok(IsNull::No)
}

/// Reads an enum value's label (borrowed from `raw`).
pub fn decode_enum_label<'a>(ty: &Type, raw: &'a [u8]) -> Result<&'a str, BoxError> {
    std::str::from_utf8(raw).map_err(|e| format!("invalid UTF-8 in {ty} value: {e}").into())
}

/// The error for a label that no variant of Rust enum `rust_type` has.
pub fn unknown_enum_label(ty: &Type, label: &str, rust_type: &'static str) -> BoxError {
    format!("{ty} value {label:?} has no variant in Rust enum {rust_type}").into()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mood() -> Type {
        Type::new(
            70010,
            "mood",
            "app",
            70009,
            Kind::Enum(vec!["sad".into(), "ok".into(), "happy".into()]),
        )
    }

    #[test]
    fn accepts_checks_name_and_every_label() {
        let ty = mood();
        assert!(enum_accepts(&ty, "mood", &["sad", "ok", "happy"]));
        assert!(enum_accepts(&ty, "app.mood", &["sad"]));
        assert!(!enum_accepts(&ty, "public.mood", &["sad"]));
        assert!(!enum_accepts(&ty, "mood", &["sad", "Happy"]));
        assert!(!enum_accepts(&Type::from_oid(70010), "mood", &["sad"]));
        assert!(!enum_accepts(&Type::TEXT, "text", &[]));
        let dom = Type::new(70011, "mood_d", "app", 0, Kind::Domain(ty.clone()));
        assert!(enum_accepts(&dom, "mood", &["ok"]));
        assert_eq!(
            missing_enum_labels(&ty, &["sad", "meh", "Happy"]),
            ["meh", "Happy"]
        );
        assert_eq!(missing_enum_labels(&Type::TEXT, &["sad"]), ["sad"]);
    }

    #[test]
    fn labels_both_ways() {
        let ty = mood();
        let mut buf = BytesMut::new();
        assert_eq!(
            encode_enum_label(&ty, "happy", "Mood", &mut buf).unwrap(),
            IsNull::No
        );
        assert_eq!(&buf[..], b"happy");
        let err = encode_enum_label(&ty, "meh", "Mood", &mut buf)
            .unwrap_err()
            .to_string();
        assert_eq!(
            err,
            "enum type app.mood has no label \"meh\" (a value of Rust type Mood); its labels are [\"sad\", \"ok\", \"happy\"]"
        );
        assert_eq!(decode_enum_label(&ty, b"ok").unwrap(), "ok");
        assert!(decode_enum_label(&ty, &[0xff]).is_err());
        assert_eq!(
            unknown_enum_label(&ty, "meh", "Mood").to_string(),
            "app.mood value \"meh\" has no variant in Rust enum Mood"
        );
    }
}
