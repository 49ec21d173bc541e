//! pgpipe-bench: pgpipe measured against its peers (tokio-postgres, sqlx,
//! pgbench) and a `raw` protocol floor. See `docs/benchmarks.md`.

#![warn(missing_docs)]
#![warn(missing_debug_implementations)]
#![warn(unreachable_pub)]

pub mod alloc;
pub mod app;
pub mod catalog;
pub mod checks;
pub mod child;
pub mod cli;
pub mod driver_kind;
pub mod drivers;
pub mod error;
pub mod families;
pub mod fixtures;
pub mod fleet;
pub mod histogram;
pub mod http;
pub mod install;
pub mod machine;
pub mod measure;
pub mod notes;
pub mod observe;
pub mod output;
pub mod pin;
pub mod replay;
pub mod results;
pub mod runner;
pub mod server_cpu;
pub mod shape;
pub mod suite;
pub mod syscalls;
pub mod tls;
pub mod variants;
pub mod workload;
