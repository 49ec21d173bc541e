//! The type system: encode/decode traits, parameter lists and type
//! identities (re-exported from `pgpipe-types`), plus each connection's
//! registry of the types it has looked up in the server catalog (the look-ups
//! themselves run queries, so they live in `query/catalog.rs`).

pub use pgpipe_types::*;

pub(crate) mod column;
mod registry;

pub(crate) use registry::TypeRegistry;
