//! The description of one result column, with its type resolved through
//! the connection's type registry.

use pgpipe_proto::backend::Field;
use pgpipe_types::{Oid, Type};

use crate::types::TypeRegistry;

/// Metadata of one result column.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Column {
    pub(crate) name: String,
    pub(crate) type_: Type,
    pub(crate) table_oid: Option<Oid>,
    pub(crate) column_id: Option<i16>,
    pub(crate) type_modifier: i32,
}

impl Column {
    /// A column as described; user-defined types come from the registry
    /// when it knows them.
    pub(crate) fn from_field(field: &Field<'_>, types: &TypeRegistry) -> Column {
        Column {
            name: field.name.to_owned(),
            type_: types.get(field.type_oid),
            table_oid: (field.table_oid != 0).then_some(field.table_oid),
            column_id: (field.column_id != 0).then_some(field.column_id),
            type_modifier: field.type_modifier,
        }
    }

    /// The same column with its type described.
    pub(crate) fn with_type(&self, type_: Type) -> Column {
        Column {
            type_,
            ..self.clone()
        }
    }

    /// The column's name (or alias).
    pub fn name(&self) -> &str {
        &self.name
    }
    /// The column's PostgreSQL type.
    pub fn type_(&self) -> &Type {
        &self.type_
    }
    /// OID of the table the column comes from, if it comes from one.
    pub fn table_oid(&self) -> Option<Oid> {
        self.table_oid
    }
    /// Attribute number of the column in that table.
    pub fn column_id(&self) -> Option<i16> {
        self.column_id
    }
    /// The type modifier (e.g. the length of a `varchar(n)`), -1 if none.
    pub fn type_modifier(&self) -> i32 {
        self.type_modifier
    }
}
