//! PostgreSQL type identities.

use std::fmt;

use crate::Oid;

/// A PostgreSQL type, identified by its OID.
///
/// Built-in types are known statically; user-defined types (composites,
/// enums, domains) will be resolved from the server catalog.
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct Type {
    oid: Oid,
}

macro_rules! builtin_types {
    ($($(#[$doc:meta])* $name:ident = $oid:literal, $pg:literal;)*) => {
        impl Type {
            $($(#[$doc])* pub const $name: Type = Type { oid: $oid };)*

            /// The type's SQL name when it is a built-in type pgpipe knows.
            pub fn name(&self) -> Option<&'static str> {
                match self.oid {
                    $($oid => Some($pg),)*
                    _ => None,
                }
            }
        }
    };
}

builtin_types! {
    /// `bool`
    BOOL = 16, "bool";
    /// `bytea`
    BYTEA = 17, "bytea";
    /// `"char"`, the one-byte internal type
    CHAR = 18, "char";
    /// `name`
    NAME = 19, "name";
    /// `int8` / `bigint`
    INT8 = 20, "int8";
    /// `int2` / `smallint`
    INT2 = 21, "int2";
    /// `int4` / `integer`
    INT4 = 23, "int4";
    /// `text`
    TEXT = 25, "text";
    /// `oid`
    OID = 26, "oid";
    /// `json`
    JSON = 114, "json";
    /// `xml`
    XML = 142, "xml";
    /// `float4` / `real`
    FLOAT4 = 700, "float4";
    /// `float8` / `double precision`
    FLOAT8 = 701, "float8";
    /// `unknown`, the type of an untyped literal
    UNKNOWN = 705, "unknown";
    /// `money`
    MONEY = 790, "money";
    /// `bpchar` / `char(n)`
    BPCHAR = 1042, "bpchar";
    /// `varchar`
    VARCHAR = 1043, "varchar";
    /// `date`
    DATE = 1082, "date";
    /// `time`
    TIME = 1083, "time";
    /// `timestamp`
    TIMESTAMP = 1114, "timestamp";
    /// `timestamptz`
    TIMESTAMPTZ = 1184, "timestamptz";
    /// `interval`
    INTERVAL = 1186, "interval";
    /// `numeric`
    NUMERIC = 1700, "numeric";
    /// `uuid`
    UUID = 2950, "uuid";
    /// `jsonb`
    JSONB = 3802, "jsonb";
    /// `bool[]`
    BOOL_ARRAY = 1000, "bool[]";
    /// `int2[]`
    INT2_ARRAY = 1005, "int2[]";
    /// `int4[]`
    INT4_ARRAY = 1007, "int4[]";
    /// `text[]`
    TEXT_ARRAY = 1009, "text[]";
    /// `int8[]`
    INT8_ARRAY = 1016, "int8[]";
    /// `float8[]`
    FLOAT8_ARRAY = 1022, "float8[]";
    /// `void`, the result type of functions returning nothing
    VOID = 2278, "void";
    /// `record`, an anonymous row type
    RECORD = 2249, "record";
}

impl Type {
    /// The type with this OID (known or not).
    pub const fn from_oid(oid: Oid) -> Type {
        Type { oid }
    }

    /// The type's OID.
    pub const fn oid(&self) -> Oid {
        self.oid
    }
}

impl fmt::Display for Type {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.name() {
            Some(name) => f.write_str(name),
            None => write!(f, "type with OID {}", self.oid),
        }
    }
}

impl fmt::Debug for Type {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.name() {
            Some(name) => write!(f, "Type({name})"),
            None => write!(f, "Type(oid {})", self.oid),
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
    }
}
