//! The per-connection type registry (the OID map): user-defined types
//! described by the server catalog, by OID and by the names Rust types
//! declare. Filled by the catalog look-ups of `query/catalog.rs`; read without a
//! round trip once filled.

use std::collections::HashMap;
use std::sync::Mutex;

use pgpipe_types::{Oid, Type};

/// OIDs of user-defined types differ between databases and even between
/// runs of the same migration, so the map lives with the connection.
#[derive(Default)]
pub(crate) struct TypeRegistry {
    inner: Mutex<Maps>,
}

#[derive(Default)]
struct Maps {
    by_oid: HashMap<Oid, Type>,
    by_name: HashMap<String, Oid>,
}

impl TypeRegistry {
    fn maps(&self) -> std::sync::MutexGuard<'_, Maps> {
        // The maps hold plain data and are always left consistent.
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The type for a column or parameter OID: built-in, described, or a
    /// bare OID when the registry has not seen it yet.
    pub(crate) fn get(&self, oid: Oid) -> Type {
        let ty = Type::from_oid(oid);
        if ty.is_known() {
            return ty;
        }
        self.maps().by_oid.get(&oid).cloned().unwrap_or(ty)
    }

    /// Whether the type for `oid` is built in or already described.
    pub(crate) fn knows(&self, oid: Oid) -> bool {
        Type::from_oid(oid).is_known() || self.maps().by_oid.contains_key(&oid)
    }

    pub(crate) fn by_name(&self, name: &str) -> Option<Type> {
        let maps = self.maps();
        let oid = maps.by_name.get(name)?;
        maps.by_oid.get(oid).cloned()
    }

    pub(crate) fn insert(&self, ty: Type) {
        self.maps().by_oid.insert(ty.oid(), ty);
    }

    pub(crate) fn insert_name(&self, name: &str, oid: Oid) {
        self.maps().by_name.insert(name.to_owned(), oid);
    }

    /// Forgets every description: the server said a type we relied on is
    /// gone (dropped and recreated types get new OIDs).
    pub(crate) fn clear(&self) {
        let mut maps = self.maps();
        maps.by_oid.clear();
        maps.by_name.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pgpipe_types::Kind;

    #[test]
    fn builtins_need_no_entry_and_user_types_do() {
        let reg = TypeRegistry::default();
        assert_eq!(reg.get(23), Type::INT4);
        assert!(reg.knows(23));
        assert!(!reg.knows(70000));
        assert!(!reg.get(70000).is_known());
        reg.insert(Type::new(70000, "mood", "public", 0, Kind::Enum(vec![])));
        reg.insert_name("mood", 70000);
        assert!(reg.get(70000).is_known());
        assert_eq!(reg.by_name("mood").map(|t| t.oid()), Some(70000));
        reg.clear();
        assert!(!reg.knows(70000));
        assert!(reg.by_name("mood").is_none());
    }
}
