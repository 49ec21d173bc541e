//! The type system: encode/decode traits, parameter lists and type
//! identities (re-exported from `pgpipe-types`), plus each connection's
//! registry of the types it has looked up in the server catalog.

pub use pgpipe_types::*;

mod catalog;
pub(crate) mod column;
mod registry;

pub(crate) use catalog::{ParamTypes, Resolved};
pub(crate) use registry::TypeRegistry;
