//! pgpipe's example service: the key-value HTTP API of the wrk2 load-test
//! report, TechEmpower's endpoints and a mail inbox (the ozo case), served
//! by axum on a pgpipe [`Pool`](pgpipe::Pool) or, for side-by-side runs, on
//! tokio-postgres with deadpool-postgres.
//!
//! The router is generic over [`db::Db`], a small trait with one
//! implementation per driver, so both services run exactly the same HTTP
//! code and differ only in how they talk to PostgreSQL.
//!
//! ```no_run
//! # async fn f() -> Result<(), Box<dyn std::error::Error>> {
//! use pgpipe_service::{db::PgpipeDb, router, shutdown};
//!
//! let db = PgpipeDb::connect("postgres://app@localhost/app", 16).await?;
//! let app = router::router(db.clone(), router::Limits::default());
//! let listener = tokio::net::TcpListener::bind("127.0.0.1:8080").await?;
//! shutdown::serve(listener, app, shutdown::signal(), db).await?;
//! # Ok(()) }
//! ```

#![warn(missing_docs)]
#![warn(missing_debug_implementations)]
#![warn(unreachable_pub)]

pub mod cli;
pub mod db;
pub mod errors;
pub mod kv;
pub mod mail;
pub mod profile;
pub mod router;
pub mod schema;
pub mod shutdown;
pub mod techempower;
