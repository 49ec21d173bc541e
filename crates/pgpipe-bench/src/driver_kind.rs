//! The clients the tool measures, by their stable names. Which of them
//! runs which workload is the catalog's business (`crate::catalog`).

use std::fmt;

use crate::workload::names;

/// A client being measured.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DriverKind {
    /// This project.
    Pgpipe,
    /// This project with coalesced Sync (`coalesce_sync=on`): statements of
    /// concurrent tasks written together share one Sync.
    PgpipeCoalesced,
    /// tokio-postgres (prepared statements; its text path for `unprepared`).
    TokioPostgres,
    /// sqlx (PgConnection, default statement cache).
    Sqlx,
    /// The tool's own minimal client: the floor no client can beat.
    Raw,
    /// libpq's pgbench, through a generated script.
    Pgbench,
    /// deadpool-postgres over tokio-postgres (NoTls): `pool` workload only.
    DeadpoolPostgres,
    /// xitca-postgres (the client behind xitca-web): prepared statements,
    /// concurrent tasks pipelined on one client.
    XitcaPostgres,
    /// zero-postgres (sans-IO core): prepared statements, one statement in
    /// flight per connection; protocol 3.2 only (PostgreSQL 18+).
    ZeroPostgres,
    /// asyncpg (Python), a child program: `magicstack` only, when python3
    /// can import asyncpg.
    Asyncpg,
    /// pgx v5 (Go), a child program: `magicstack` only, when it is built
    /// or `go` can build it.
    Pgx,
}

impl DriverKind {
    /// Every driver, in table order.
    pub const ALL: [DriverKind; 11] = [
        DriverKind::Pgpipe,
        DriverKind::PgpipeCoalesced,
        DriverKind::TokioPostgres,
        DriverKind::Sqlx,
        DriverKind::Raw,
        DriverKind::Pgbench,
        DriverKind::DeadpoolPostgres,
        DriverKind::XitcaPostgres,
        DriverKind::ZeroPostgres,
        DriverKind::Asyncpg,
        DriverKind::Pgx,
    ];

    /// The stable name.
    pub fn name(self) -> &'static str {
        match self {
            DriverKind::Pgpipe => "pgpipe",
            DriverKind::PgpipeCoalesced => "pgpipe-coalesced",
            DriverKind::TokioPostgres => "tokio-postgres",
            DriverKind::Sqlx => "sqlx",
            DriverKind::Raw => "raw",
            DriverKind::Pgbench => "pgbench",
            DriverKind::DeadpoolPostgres => "deadpool-postgres",
            DriverKind::XitcaPostgres => "xitca-postgres",
            DriverKind::ZeroPostgres => "zero-postgres",
            DriverKind::Asyncpg => "asyncpg",
            DriverKind::Pgx => "pgx",
        }
    }

    /// True for the drivers run as child programs of another language
    /// (`crate::drivers::external`).
    pub fn is_external(self) -> bool {
        matches!(self, DriverKind::Asyncpg | DriverKind::Pgx)
    }

    /// Parses a stable name; the error lists the valid names.
    pub fn parse(name: &str) -> Result<DriverKind, String> {
        DriverKind::ALL
            .into_iter()
            .find(|d| d.name() == name)
            .ok_or_else(|| {
                format!(
                    "unknown driver {name:?}; valid drivers: {}",
                    names(DriverKind::ALL.iter().map(|d| d.name()))
                )
            })
    }
}

impl fmt::Display for DriverKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}
