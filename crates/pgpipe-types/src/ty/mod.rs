//! PostgreSQL type identities: built-in types known statically, user-defined
//! types (composites, enums, domains, their arrays and ranges) described by
//! the server catalog.

use std::fmt;
use std::sync::Arc;

use crate::Oid;

/// A PostgreSQL type.
///
/// Built-in types are constants (`Type::INT4`, `Type::TEXT_ARRAY`, ...) and
/// cost nothing to create or clone. User-defined types carry their catalog
/// description ([`Type::new`], built by the client's type registry), shared
/// behind an `Arc`. Two types are equal when their OIDs are.
///
/// ```
/// use pgpipe_types::{Kind, Type};
///
/// assert_eq!(Type::from_oid(23), Type::INT4);
/// assert_eq!(Type::INT4_ARRAY.to_string(), "int4[]");
/// assert_eq!(Type::INT4_ARRAY.kind(), &Kind::Array(Type::INT4));
/// assert_eq!(Type::INT4.array_type(), Some(Type::INT4_ARRAY));
/// ```
#[derive(Clone)]
pub struct Type {
    oid: Oid,
    custom: Option<Arc<Custom>>,
}

struct Custom {
    name: String,
    schema: String,
    kind: Kind,
    array_oid: Oid,
}

/// What kind of type a [`Type`] is.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Kind {
    /// A base type (`int4`, `text`, an extension's `citext` or `hstore`).
    Simple,
    /// An array of the element type.
    Array(Type),
    /// A range over the subtype.
    Range(Type),
    /// A multirange over the given range type (PostgreSQL 14+).
    Multirange(Type),
    /// A composite (row) type with its fields in order.
    Composite(Vec<Field>),
    /// An enum with its labels in sort order.
    Enum(Vec<String>),
    /// A domain over the base type.
    Domain(Type),
    /// A pseudo-type (`record`, `void`, `unknown`, ...).
    Pseudo,
}

/// A field of a composite type.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Field {
    /// The field (attribute) name.
    pub name: String,
    /// The field's type.
    pub type_: Type,
}

/// A built-in type's static description.
struct Builtin {
    name: &'static str,
    kind: Kind,
}

static SIMPLE: Kind = Kind::Simple;

macro_rules! builtin_types {
    ($($(#[$doc:meta])* $const:ident = $oid:literal, $pg:literal, $kind:expr, $array:literal;)*) => {
        impl Type {
            $($(#[$doc])* pub const $const: Type = Type { oid: $oid, custom: None };)*
        }

        /// The built-in type with this OID.
        pub(super) fn builtin(oid: Oid) -> Option<&'static Builtin> {
            match oid {
                $($oid => {
                    static B: Builtin = Builtin { name: $pg, kind: $kind };
                    Some(&B)
                })*
                _ => None,
            }
        }

        /// The array type whose element is the built-in type `oid`, 0 if none.
        pub(crate) const fn builtin_array_of(oid: Oid) -> Oid {
            match oid {
                $($oid => $array,)*
                _ => 0,
            }
        }
    };
}

mod builtin;

use builtin::builtin;
pub(crate) use builtin::builtin_array_of;

impl Type {
    /// The type with this OID. A built-in OID gives the built-in type; any
    /// other gives a type known only by its OID (see [`Type::new`]).
    pub const fn from_oid(oid: Oid) -> Type {
        Type { oid, custom: None }
    }

    /// A user-defined type as described by the server catalog. The client's
    /// type registry builds these; code that decodes values only reads them.
    ///
    /// ```
    /// use pgpipe_types::{Field, Kind, Type};
    ///
    /// let attach = Type::new(16390, "attach", "mail", 16389, Kind::Composite(vec![
    ///     Field { name: "filename".into(), type_: Type::TEXT },
    ///     Field { name: "size".into(), type_: Type::INT8 },
    /// ]));
    /// assert_eq!(attach.to_string(), "mail.attach");
    /// assert_eq!(attach.array_type(), Some(Type::from_oid(16389)));
    /// ```
    pub fn new(
        oid: Oid,
        name: impl Into<String>,
        schema: impl Into<String>,
        array_oid: Oid,
        kind: Kind,
    ) -> Type {
        Type {
            oid,
            custom: Some(Arc::new(Custom {
                name: name.into(),
                schema: schema.into(),
                kind,
                array_oid,
            })),
        }
    }

    /// The type's OID.
    pub const fn oid(&self) -> Oid {
        self.oid
    }

    /// The type's name without schema (`int4`, `int4[]`, `attach`), or
    /// `None` for a type known only by its OID.
    pub fn name(&self) -> Option<&str> {
        match &self.custom {
            Some(c) => Some(&c.name),
            None => builtin(self.oid).map(|b| b.name),
        }
    }

    /// The schema the type lives in (`pg_catalog` for built-in types).
    pub fn schema(&self) -> Option<&str> {
        match &self.custom {
            Some(c) => Some(&c.schema),
            None => builtin(self.oid).map(|_| "pg_catalog"),
        }
    }

    /// What kind of type this is. A type known only by its OID reads as
    /// [`Kind::Simple`].
    pub fn kind(&self) -> &Kind {
        match &self.custom {
            Some(c) => &c.kind,
            None => builtin(self.oid).map_or(&SIMPLE, |b| &b.kind),
        }
    }

    /// Whether this is a built-in type or a described user-defined one, as
    /// opposed to a bare OID the client has not looked up.
    pub fn is_known(&self) -> bool {
        self.custom.is_some() || builtin(self.oid).is_some()
    }

    /// The array type of this type, when there is one.
    pub fn array_type(&self) -> Option<Type> {
        let oid = match &self.custom {
            Some(c) => c.array_oid,
            None => builtin_array_of(self.oid),
        };
        (oid != 0).then(|| Type::from_oid(oid))
    }

    /// This type with domains looked through: a domain's base type
    /// (recursively), any other type itself. Values of a domain are sent and
    /// read in the base type's format.
    #[inline]
    pub fn base(&self) -> &Type {
        if self.custom.is_none() {
            // Built-in types and bare OIDs are never domains: the hot path.
            return self;
        }
        let mut ty = self;
        while let Kind::Domain(base) = ty.kind() {
            ty = base;
        }
        ty
    }

    /// The element type, for an array type.
    pub fn element(&self) -> Option<&Type> {
        match self.base().kind() {
            Kind::Array(elem) => Some(elem),
            _ => None,
        }
    }

    /// Whether this type has the given name, `"name"` or `"schema.name"`
    /// (quotes not handled: names are compared as stored in the catalog).
    pub fn is_named(&self, name: &str) -> bool {
        match name.split_once('.') {
            Some((schema, name)) => self.schema() == Some(schema) && self.name() == Some(name),
            None => self.name() == Some(name),
        }
    }

    /// Whether the type came from the catalog (a user-defined or extension
    /// type), rather than being a built-in known by OID alone.
    pub(crate) fn is_described(&self) -> bool {
        self.custom.is_some()
    }

    /// Whether the server has no binary output for values of this type
    /// (its `pg_type.typsend` is 0: `aclitem`, `gtsvector`), or it is an
    /// array of such a type. Result columns of these types are asked for
    /// in text format, and read as `String` or `&str`.
    ///
    /// ```
    /// use pgpipe_types::Type;
    ///
    /// assert!(Type::ACLITEM.text_output_only());
    /// assert!(Type::ACLITEM_ARRAY.text_output_only());
    /// assert!(!Type::TEXT.text_output_only());
    /// ```
    #[inline]
    pub fn text_output_only(&self) -> bool {
        // Built-in OIDs only: every built-in type but these has a send
        // function on PostgreSQL 13 to 18 (a test checks each server).
        fn no_send(t: &Type) -> bool {
            matches!(t.base().oid, 1033 | 3642)
        }
        no_send(self) || self.element().is_some_and(no_send)
    }

    /// Whether this type (or the domain's base) is one of the OIDs given.
    #[inline]
    pub fn is(&self, types: &[Type]) -> bool {
        let base = self.base();
        types.iter().any(|t| t.oid == base.oid)
    }
}

impl PartialEq for Type {
    fn eq(&self, other: &Type) -> bool {
        self.oid == other.oid
    }
}

impl Eq for Type {}

impl std::hash::Hash for Type {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.oid.hash(state);
    }
}

impl fmt::Display for Type {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.custom {
            Some(c) => match &c.kind {
                Kind::Array(elem) => write!(f, "{elem}[]"),
                _ if c.schema == "public" || c.schema == "pg_catalog" => f.write_str(&c.name),
                _ => write!(f, "{}.{}", c.schema, c.name),
            },
            None => match builtin(self.oid) {
                Some(b) => f.write_str(b.name),
                None => write!(f, "type with OID {}", self.oid),
            },
        }
    }
}

impl fmt::Debug for Type {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.is_known() {
            write!(f, "Type({self})")
        } else {
            write!(f, "Type(oid {})", self.oid)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_display() {
        assert_eq!(Type::INT4.name(), Some("int4"));
        assert_eq!(Type::from_oid(23), Type::INT4);
        assert_eq!(Type::from_oid(99999).name(), None);
        assert_eq!(Type::from_oid(99999).to_string(), "type with OID 99999");
        assert_eq!(format!("{:?}", Type::TEXT), "Type(text)");
        assert_eq!(Type::TSTZRANGE.kind(), &Kind::Range(Type::TIMESTAMPTZ));
        assert_eq!(
            Type::INT8MULTIRANGE.kind(),
            &Kind::Multirange(Type::INT8RANGE)
        );
        assert_eq!(Type::RECORD.kind(), &Kind::Pseudo);
    }

    #[test]
    fn arrays_map_both_ways() {
        assert_eq!(Type::TEXT.array_type(), Some(Type::TEXT_ARRAY));
        assert_eq!(Type::TEXT_ARRAY.element(), Some(&Type::TEXT));
        assert_eq!(Type::TEXT.element(), None);
        assert_eq!(builtin_array_of(Type::UUID.oid()), Type::UUID_ARRAY.oid());
        assert_eq!(builtin_array_of(Type::VOID.oid()), 0);
        assert_eq!(Type::VOID.array_type(), None);
    }

    #[test]
    fn user_defined_types_describe_themselves() {
        let mood = Type::new(
            20001,
            "mood",
            "public",
            20000,
            Kind::Enum(vec!["sad".into(), "ok".into()]),
        );
        assert_eq!(mood.to_string(), "mood");
        assert!(mood.is_known());
        let moods = Type::new(20000, "_mood", "public", 0, Kind::Array(mood.clone()));
        assert_eq!(moods.to_string(), "mood[]");
        assert_eq!(moods.element(), Some(&mood));
        let positive = Type::new(20002, "positive", "public", 0, Kind::Domain(Type::INT4));
        assert_eq!(positive.base(), &Type::INT4);
        assert!(positive.is(&[Type::INT2, Type::INT4]));
    }
}
