//! Workload families: what each family runs and how its answers are
//! checked (SQL, row types, expected values), shared by every driver that
//! runs it. A driver's adapter for a family lives in the driver's own
//! folder (`crate::drivers::<driver>::<family>`); which driver runs which
//! family is the catalog's (`crate::catalog`) business.

pub mod batch;
pub mod copy;
pub mod failing;
pub mod magicstack;
pub mod ozo;
pub mod pool;
pub mod shards;
pub mod stream;
pub mod techempower;
