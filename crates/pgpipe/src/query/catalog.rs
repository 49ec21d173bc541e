//! Looking up user-defined types in the server catalog: composites (with
//! their fields), enums (with their labels), domains, ranges, multiranges and
//! arrays of any of them. Each type is looked up once per connection and kept
//! in its [`TypeRegistry`](crate::types::TypeRegistry).

use std::collections::HashMap;
use std::sync::Arc;

use pgpipe_types::{Field, Kind, Oid, Params, Type, TypeRef};

use super::ConnRef;
use super::{read_response, send_query, StatementRef};
use super::{Column, Row};
use crate::error::ErrorKind;
use crate::Error;

/// Composite types nest; a chain deeper than this is not a real schema.
const MAX_DEPTH: usize = 32;

const TYPES_SQL: &str = "SELECT t.oid, n.nspname::text, t.typname::text, t.typtype, \
     t.typcategory, t.typelem, t.typbasetype, t.typrelid, t.typarray, \
     COALESCE(r.rngsubtype, 0::oid), {multirange} \
     FROM pg_catalog.pg_type t \
     JOIN pg_catalog.pg_namespace n ON n.oid = t.typnamespace \
     LEFT JOIN pg_catalog.pg_range r ON r.rngtypid = t.oid \
     {multirange_join} \
     WHERE t.oid = ANY($1::text::oid[])";

const FIELDS_SQL: &str = "SELECT a.attrelid, a.attname::text, a.atttypid \
     FROM pg_catalog.pg_attribute a \
     WHERE a.attrelid = ANY($1::text::oid[]) AND a.attnum > 0 AND NOT a.attisdropped \
     ORDER BY a.attrelid, a.attnum";

const LABELS_SQL: &str = "SELECT e.enumtypid, e.enumlabel::text FROM pg_catalog.pg_enum e \
     WHERE e.enumtypid = ANY($1::text::oid[]) ORDER BY e.enumtypid, e.enumsortorder";

/// One `pg_type` row.
struct RawType {
    schema: String,
    name: String,
    typtype: u8,
    category: u8,
    elem: Oid,
    base: Oid,
    relid: Oid,
    array: Oid,
    range_subtype: Oid,
    multirange_of: Oid,
}

impl RawType {
    /// The OIDs this type's description refers to.
    fn dependencies(&self, fields: &[(String, Oid)]) -> Vec<Oid> {
        let mut deps = vec![self.base, self.range_subtype, self.multirange_of];
        if self.is_array() {
            deps.push(self.elem);
        }
        deps.extend(fields.iter().map(|(_, oid)| *oid));
        deps.retain(|&oid| oid != 0);
        deps
    }

    fn is_array(&self) -> bool {
        self.typtype == b'b' && self.category == b'A' && self.elem != 0
    }
}

/// The looked-up types of a parameter list: OIDs for Parse, described
/// types for the encoders.
pub(crate) struct ParamTypes {
    oids: Vec<Oid>,
    types: Vec<Type>,
}

/// Parameters whose named types were looked up.
pub(crate) struct Resolved<'p, P: ?Sized> {
    pub(crate) params: &'p P,
    pub(crate) types: &'p ParamTypes,
}

impl<P: Params + ?Sized> Params for Resolved<'_, P> {
    fn len(&self) -> usize {
        self.params.len()
    }
    fn with_type_oids<R>(&self, f: impl FnOnce(&[Oid]) -> R) -> R {
        f(&self.types.oids)
    }
    fn has_named_types(&self) -> bool {
        false
    }
    fn needs_server_types(&self) -> bool {
        self.params.needs_server_types()
    }
    fn type_refs(&self) -> Vec<TypeRef> {
        self.types
            .oids
            .iter()
            .map(|&oid| TypeRef::Oid(oid))
            .collect()
    }
    fn check_types(&self, types: &[Type]) -> Result<(), (usize, &'static str)> {
        self.params.check_types(types)
    }
    fn encode(
        &self,
        types: Option<&[Type]>,
        writer: &mut pgpipe_proto::frontend::ParamWriter<'_>,
    ) -> Result<(), pgpipe_proto::EncodeError> {
        self.params
            .encode(Some(types.unwrap_or(&self.types.types)), writer)
    }
}

impl ConnRef {
    /// What [`Client::register_type`](crate::Client::register_type) runs.
    pub(crate) async fn register_type(&self, name: &str) -> Result<Type, Error> {
        if let Some(ty) = self.shared().types.by_name(name) {
            return Ok(ty);
        }
        let rows = self
            .catalog_query("SELECT to_regtype($1)::oid", name.to_owned())
            .await?;
        let oid: Option<Oid> = match rows.first() {
            Some(row) => row.try_get(0)?,
            None => None,
        };
        let oid = oid.ok_or_else(|| {
            Error::new(
                ErrorKind::Decode,
                format!("type {name:?} does not exist on the server (looked up with to_regtype)"),
            )
        })?;
        self.describe_types(&[oid]).await?;
        let ty = self.shared().types.get(oid);
        if let Some(array) = ty.array_type() {
            self.describe_types(&[array.oid()]).await?;
        }
        self.shared().types.insert_name(name, oid);
        Ok(ty)
    }

    /// What [`Client::clear_type_cache`](crate::Client::clear_type_cache) runs.
    pub(crate) fn clear_type_cache(&self) {
        self.shared().types.clear();
    }

    /// The described type of a reference, looking names up as needed.
    pub(crate) async fn resolve_type_ref(&self, type_ref: TypeRef) -> Result<Type, Error> {
        match type_ref {
            TypeRef::Oid(oid) => {
                if !self.shared().types.knows(oid) && oid != 0 {
                    self.describe_types(&[oid]).await?;
                }
                Ok(self.shared().types.get(oid))
            }
            TypeRef::Named(name) => self.register_type(name).await,
            TypeRef::ArrayOf(name) => {
                let elem = self.register_type(name).await?;
                let array = elem.array_type().ok_or_else(|| {
                    Error::new(ErrorKind::Encode, format!("type {elem} has no array type"))
                })?;
                Ok(self.shared().types.get(array.oid()))
            }
        }
    }

    /// Looks up the named types of a parameter list.
    pub(crate) async fn resolve_params<P: Params + ?Sized>(
        &self,
        params: &P,
    ) -> Result<ParamTypes, Error> {
        let refs = params.type_refs();
        let mut types = Vec::with_capacity(refs.len());
        for (i, r) in refs.into_iter().enumerate() {
            let ty = self
                .resolve_type_ref(r)
                .await
                .map_err(|e| e.context(format!("parameter ${}", i + 1)))?;
            types.push(ty);
        }
        Ok(ParamTypes {
            oids: types.iter().map(Type::oid).collect(),
            types,
        })
    }

    /// The columns with every user-defined type described, or `None` when
    /// they were all known already.
    pub(crate) async fn resolve_columns(
        &self,
        columns: &[Column],
    ) -> Result<Option<Arc<[Column]>>, Error> {
        // The hot path: every column built-in or already described when the
        // RowDescription arrived.
        if columns.iter().all(|c| c.type_().is_known()) {
            return Ok(None);
        }
        let registry = &self.shared().types;
        let unknown: Vec<Oid> = columns
            .iter()
            .map(|c| c.type_().oid())
            .filter(|&oid| !registry.knows(oid))
            .collect();
        if !unknown.is_empty() {
            self.describe_types(&unknown).await?;
        }
        Ok(Some(
            columns
                .iter()
                .map(|c| c.with_type(registry.get(c.type_().oid())))
                .collect(),
        ))
    }

    /// Describes the given OIDs and everything they refer to (element,
    /// field, base and range types) into the registry.
    pub(crate) async fn describe_types(&self, oids: &[Oid]) -> Result<(), Error> {
        let registry = &self.shared().types;
        let mut raw: HashMap<Oid, RawType> = HashMap::new();
        let mut fields: HashMap<Oid, Vec<(String, Oid)>> = HashMap::new();
        let mut labels: HashMap<Oid, Vec<String>> = HashMap::new();
        let mut pending: Vec<Oid> = oids
            .iter()
            .copied()
            .filter(|&o| !registry.knows(o))
            .collect();
        pending.sort_unstable();
        pending.dedup();
        let mut rounds = 0;
        while !pending.is_empty() {
            rounds += 1;
            if rounds > MAX_DEPTH {
                return Err(Error::new(
                    ErrorKind::Decode,
                    format!("user-defined types nest deeper than {MAX_DEPTH} levels"),
                ));
            }
            let found = self.fetch_types(&pending).await?;
            for oid in &pending {
                if !found.contains_key(oid) {
                    return Err(Error::new(
                        ErrorKind::Decode,
                        format!("type with OID {oid} does not exist in the server catalog"),
                    ));
                }
            }
            let composites: Vec<Oid> = found
                .values()
                .filter(|t| t.typtype == b'c')
                .map(|t| t.relid)
                .collect();
            let enums: Vec<Oid> = found
                .iter()
                .filter(|(_, t)| t.typtype == b'e')
                .map(|(&oid, _)| oid)
                .collect();
            let by_relid = self.fetch_fields(&composites).await?;
            for (&oid, t) in &found {
                if t.typtype == b'c' {
                    fields.insert(oid, by_relid.get(&t.relid).cloned().unwrap_or_default());
                }
            }
            labels.extend(self.fetch_labels(&enums).await?);
            let mut next = Vec::new();
            for (&oid, t) in &found {
                let own_fields = fields.get(&oid).map(Vec::as_slice).unwrap_or(&[]);
                for dep in t.dependencies(own_fields) {
                    if !registry.knows(dep) && !raw.contains_key(&dep) && !found.contains_key(&dep)
                    {
                        next.push(dep);
                    }
                }
            }
            raw.extend(found);
            next.sort_unstable();
            next.dedup();
            pending = next;
        }
        let mut built = HashMap::new();
        for &oid in raw.keys() {
            let ty = build(oid, &raw, &fields, &labels, registry, &mut built, 0)?;
            registry.insert(ty);
        }
        Ok(())
    }

    async fn fetch_types(&self, oids: &[Oid]) -> Result<HashMap<Oid, RawType>, Error> {
        let multiranges = self.server_version_num() >= 140000;
        let sql = TYPES_SQL
            .replace(
                "{multirange}",
                if multiranges {
                    "COALESCE(m.rngtypid, 0::oid)"
                } else {
                    "0::oid"
                },
            )
            .replace(
                "{multirange_join}",
                if multiranges {
                    "LEFT JOIN pg_catalog.pg_range m ON m.rngmultitypid = t.oid"
                } else {
                    ""
                },
            );
        let rows = self.catalog_query(&sql, oid_list(oids)).await?;
        let mut out = HashMap::with_capacity(rows.len());
        for row in rows {
            out.insert(
                row.try_get::<Oid, _>(0)?,
                RawType {
                    schema: row.try_get(1)?,
                    name: row.try_get(2)?,
                    typtype: row.try_get::<i8, _>(3)? as u8,
                    category: row.try_get::<i8, _>(4)? as u8,
                    elem: row.try_get(5)?,
                    base: row.try_get(6)?,
                    relid: row.try_get(7)?,
                    array: row.try_get(8)?,
                    range_subtype: row.try_get(9)?,
                    multirange_of: row.try_get(10)?,
                },
            );
        }
        Ok(out)
    }

    async fn fetch_fields(
        &self,
        relids: &[Oid],
    ) -> Result<HashMap<Oid, Vec<(String, Oid)>>, Error> {
        let mut out: HashMap<Oid, Vec<(String, Oid)>> = HashMap::new();
        if relids.is_empty() {
            return Ok(out);
        }
        for row in self.catalog_query(FIELDS_SQL, oid_list(relids)).await? {
            out.entry(row.try_get(0)?)
                .or_default()
                .push((row.try_get(1)?, row.try_get(2)?));
        }
        Ok(out)
    }

    async fn fetch_labels(&self, enums: &[Oid]) -> Result<HashMap<Oid, Vec<String>>, Error> {
        let mut out: HashMap<Oid, Vec<String>> = HashMap::new();
        if enums.is_empty() {
            return Ok(out);
        }
        for row in self.catalog_query(LABELS_SQL, oid_list(enums)).await? {
            out.entry(row.try_get(0)?)
                .or_default()
                .push(row.try_get(1)?);
        }
        Ok(out)
    }

    /// Runs a catalog query on the unnamed statement, outside the statement
    /// cache and without looking up types (its columns are built-in), so a
    /// lookup can never recurse into another.
    async fn catalog_query(&self, sql: &str, param: String) -> Result<Vec<Row>, Error> {
        let shared = self.shared();
        let permit = shared.permit().await?;
        let (mut responses, plan) = send_query(
            shared,
            self.session(),
            permit,
            StatementRef::Sql(sql),
            &(param,),
        )?;
        let mut rows = Vec::new();
        let outcome = read_response(shared, &mut responses, plan.columns(), |r| rows.push(r)).await;
        outcome
            .result
            .map_err(|e| e.context("looking up user-defined types in the server catalog"))?;
        Ok(rows)
    }

    fn server_version_num(&self) -> u32 {
        self.shared()
            .parameter("server_version")
            .and_then(|v| {
                let mut parts = v.split(|c: char| !c.is_ascii_digit());
                let major: u32 = parts.next()?.parse().ok()?;
                let minor: u32 = parts.next().and_then(|m| m.parse().ok()).unwrap_or(0);
                Some(if major >= 10 {
                    major * 10000 + minor
                } else {
                    major * 10000 + minor * 100
                })
            })
            .unwrap_or(0)
    }
}

/// An `oid[]` literal for `$1::text::oid[]`.
fn oid_list(oids: &[Oid]) -> String {
    let items: Vec<String> = oids.iter().map(Oid::to_string).collect();
    format!("{{{}}}", items.join(","))
}

/// Builds the described type for `oid` from the catalog rows, depth first.
fn build(
    oid: Oid,
    raw: &HashMap<Oid, RawType>,
    fields: &HashMap<Oid, Vec<(String, Oid)>>,
    labels: &HashMap<Oid, Vec<String>>,
    registry: &crate::types::TypeRegistry,
    built: &mut HashMap<Oid, Type>,
    depth: usize,
) -> Result<Type, Error> {
    if let Some(ty) = built.get(&oid) {
        return Ok(ty.clone());
    }
    let Some(t) = raw.get(&oid) else {
        return Ok(registry.get(oid));
    };
    if depth > MAX_DEPTH {
        return Err(Error::new(
            ErrorKind::Decode,
            format!(
                "type {}.{} nests deeper than {MAX_DEPTH} levels",
                t.schema, t.name
            ),
        ));
    }
    let mut sub = |o: Oid| build(o, raw, fields, labels, registry, built, depth + 1);
    let kind = match t.typtype {
        b'c' => {
            let mut list = Vec::new();
            for (name, field_oid) in fields.get(&oid).map(Vec::as_slice).unwrap_or(&[]) {
                list.push(Field {
                    name: name.clone(),
                    type_: sub(*field_oid)?,
                });
            }
            Kind::Composite(list)
        }
        b'e' => Kind::Enum(labels.get(&oid).cloned().unwrap_or_default()),
        b'd' => Kind::Domain(sub(t.base)?),
        b'r' => Kind::Range(sub(t.range_subtype)?),
        b'm' => Kind::Multirange(sub(t.multirange_of)?),
        b'p' => Kind::Pseudo,
        _ if t.is_array() => Kind::Array(sub(t.elem)?),
        _ => Kind::Simple,
    };
    let ty = Type::new(oid, t.name.clone(), t.schema.clone(), t.array, kind);
    built.insert(oid, ty.clone());
    Ok(ty)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn oid_lists_are_array_literals() {
        assert_eq!(oid_list(&[]), "{}");
        assert_eq!(oid_list(&[16390, 16391]), "{16390,16391}");
    }
}
