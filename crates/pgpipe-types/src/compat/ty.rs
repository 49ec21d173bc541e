//! Type identities both ways: pgpipe's [`Type`](crate::Type) and
//! `postgres_types::Type`.

use postgres_types::{Field as PgField, Kind as PgKind, Type as PgType};

use crate::{Field, Kind, Type};

/// Catalog types nest (composites of arrays of composites...); PostgreSQL
/// refuses a type that contains itself, so a chain this deep is not a real
/// schema, and the mapping stops there instead of recursing without bound.
const MAX_DEPTH: usize = 32;

/// The `postgres_types::Type` for a pgpipe type: built-in types by OID (no
/// allocation); user-defined types (composites, enums, domains, ranges,
/// arrays of them, extension types) from the catalog description the client
/// looked up, with their name, schema and kind, so that `ToSql::accepts`
/// and `FromSql::accepts` written for tokio-postgres see what they would
/// see there.
///
/// ```
/// use pgpipe_types::compat::to_postgres_type;
/// use pgpipe_types::{Kind, Type};
///
/// assert_eq!(to_postgres_type(&Type::INT4_ARRAY), postgres_types::Type::INT4_ARRAY);
/// let mood = Type::new(16_390, "mood", "public", 16_389, Kind::Enum(vec!["sad".into(), "ok".into()]));
/// let pg = to_postgres_type(&mood);
/// assert_eq!((pg.name(), pg.schema(), pg.oid()), ("mood", "public", 16_390));
/// assert_eq!(pg.kind(), &postgres_types::Kind::Enum(vec!["sad".into(), "ok".into()]));
/// ```
pub fn to_postgres_type(ty: &Type) -> PgType {
    to_postgres_at(ty, 0)
}

fn to_postgres_at(ty: &Type, depth: usize) -> PgType {
    if let Some(builtin) = PgType::from_oid(ty.oid()) {
        return builtin;
    }
    let inner = |t: &Type| to_postgres_at(t, depth + 1);
    let kind = if depth >= MAX_DEPTH {
        PgKind::Simple
    } else {
        match ty.kind() {
            Kind::Array(e) => PgKind::Array(inner(e)),
            Kind::Range(s) => PgKind::Range(inner(s)),
            Kind::Multirange(r) => PgKind::Multirange(inner(r)),
            Kind::Domain(b) => PgKind::Domain(inner(b)),
            Kind::Enum(labels) => PgKind::Enum(labels.clone()),
            Kind::Composite(fields) => PgKind::Composite(
                fields
                    .iter()
                    .map(|f| PgField::new(f.name.clone(), inner(&f.type_)))
                    .collect(),
            ),
            Kind::Pseudo => PgKind::Pseudo,
            // Simple, and kinds added later: a base type by name.
            _ => PgKind::Simple,
        }
    };
    PgType::new(
        ty.name().unwrap_or_default().to_owned(),
        ty.oid(),
        kind,
        ty.schema().unwrap_or_default().to_owned(),
    )
}

/// The pgpipe type for a `postgres_types::Type`: built-in types by OID,
/// others with the name, schema and kind it carries (for `prepare_typed`
/// with types taken from tokio-postgres code). `postgres_types::Type` does not know a type's
/// array type, so the result's [`Type::array_type`] is `None` for
/// user-defined types.
///
/// ```
/// use pgpipe_types::compat::from_postgres_type;
/// use pgpipe_types::Type;
///
/// assert_eq!(from_postgres_type(&postgres_types::Type::TEXT), Type::TEXT);
/// let citext = postgres_types::Type::new("citext".into(), 16_500, postgres_types::Kind::Simple, "public".into());
/// let ty = from_postgres_type(&citext);
/// assert_eq!((ty.oid(), ty.name(), ty.schema()), (16_500, Some("citext"), Some("public")));
/// ```
pub fn from_postgres_type(ty: &PgType) -> Type {
    from_postgres_at(ty, 0)
}

fn from_postgres_at(ty: &PgType, depth: usize) -> Type {
    let builtin = Type::from_oid(ty.oid());
    if builtin.is_known() {
        return builtin;
    }
    let inner = |t: &PgType| from_postgres_at(t, depth + 1);
    let kind = if depth >= MAX_DEPTH {
        Kind::Simple
    } else {
        match ty.kind() {
            PgKind::Array(e) => Kind::Array(inner(e)),
            PgKind::Range(s) => Kind::Range(inner(s)),
            PgKind::Multirange(r) => Kind::Multirange(inner(r)),
            PgKind::Domain(b) => Kind::Domain(inner(b)),
            PgKind::Enum(labels) => Kind::Enum(labels.clone()),
            PgKind::Composite(fields) => Kind::Composite(
                fields
                    .iter()
                    .map(|f| Field {
                        name: f.name().to_owned(),
                        type_: inner(f.type_()),
                    })
                    .collect(),
            ),
            PgKind::Pseudo => Kind::Pseudo,
            _ => Kind::Simple,
        }
    };
    Type::new(ty.oid(), ty.name(), ty.schema(), 0, kind)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builtins_map_by_oid_both_ways() {
        for ty in [
            Type::BOOL,
            Type::INT8,
            Type::TEXT,
            Type::TEXT_ARRAY,
            Type::JSONB,
            Type::TIMESTAMPTZ,
            Type::NUMERIC,
            Type::INT4RANGE,
        ] {
            let pg = to_postgres_type(&ty);
            assert_eq!(pg.oid(), ty.oid(), "{ty}");
            assert_eq!(from_postgres_type(&pg), ty);
        }
        assert_eq!(
            to_postgres_type(&Type::INT4_ARRAY).kind(),
            &PgKind::Array(PgType::INT4)
        );
    }

    #[test]
    fn user_defined_types_keep_name_schema_and_kind() {
        let mood = Type::new(70_001, "mood", "app", 70_002, Kind::Enum(vec!["a".into()]));
        let moods = Type::new(70_002, "_mood", "app", 0, Kind::Array(mood.clone()));
        let pair = Type::new(
            70_003,
            "pair",
            "app",
            0,
            Kind::Composite(vec![
                Field {
                    name: "m".into(),
                    type_: mood.clone(),
                },
                Field {
                    name: "n".into(),
                    type_: Type::INT4,
                },
            ]),
        );
        let label = Type::new(70_004, "label", "app", 0, Kind::Domain(Type::TEXT));
        let pg = to_postgres_type(&moods);
        let PgKind::Array(elem) = pg.kind() else {
            panic!("{pg:?}")
        };
        assert_eq!(
            (elem.name(), elem.schema(), elem.oid()),
            ("mood", "app", 70_001)
        );
        let pg = to_postgres_type(&pair);
        let PgKind::Composite(fields) = pg.kind() else {
            panic!("{pg:?}")
        };
        assert_eq!(fields[0].name(), "m");
        assert_eq!(fields[0].type_().kind(), &PgKind::Enum(vec!["a".into()]));
        assert_eq!(fields[1].type_(), &PgType::INT4);
        assert_eq!(
            to_postgres_type(&label).kind(),
            &PgKind::Domain(PgType::TEXT)
        );
        // And back: the same description.
        for ty in [&mood, &moods, &pair, &label] {
            let back = from_postgres_type(&to_postgres_type(ty));
            assert_eq!(back.oid(), ty.oid());
            assert_eq!(back.kind(), ty.kind());
            assert_eq!(back.to_string(), ty.to_string());
        }
    }

    #[test]
    fn an_undescribed_oid_is_a_nameless_simple_type() {
        let pg = to_postgres_type(&Type::from_oid(99_999));
        assert_eq!(
            (pg.oid(), pg.name(), pg.kind()),
            (99_999, "", &PgKind::Simple)
        );
    }
}
