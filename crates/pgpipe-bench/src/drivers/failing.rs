//! The `pipeline` variant with failures (`64-fail1%`): the point select of
//! `pipeline`, except that one key in a hundred divides by zero. It is what
//! coalesced Sync is afraid of: a failing statement aborts the implicit
//! transaction of its group, so pgpipe-coalesced must hand the failure to
//! its caller alone and send every neighbour again. Each operation is
//! checked: a normal key must return its row, a failing key must return
//! SQLSTATE 22012 (division by zero); both count as one operation.

use crate::checks;
use crate::driver_kind::DriverKind;
use crate::error::BenchError;

/// The point select with a divisor: `$2` is 1, or 0 for a failing key.
pub const FAILING_SQL: &str = "SELECT id, v FROM bench_kv WHERE id = $1::int4 / $2::int4";

/// Whether `key`'s statement fails (1 % of the keys).
pub fn fails(key: i32) -> bool {
    key % 100 == 0
}

fn divisor(key: i32) -> i32 {
    if fails(key) {
        0
    } else {
        1
    }
}

fn unexpected(key: i32, what: &str) -> BenchError {
    BenchError::new(format!(
        "failing-pipeline: key {key} (fails: {}) got {what}",
        fails(key)
    ))
}

/// One connection of a driver running the variant.
#[derive(Debug)]
pub enum FailingSession {
    /// pgpipe, with or without coalesced Sync (from the URL).
    Pgpipe {
        /// The connection.
        client: pgpipe::Client,
        /// The statement, prepared.
        stmt: pgpipe::Statement,
    },
    /// tokio-postgres.
    TokioPostgres {
        /// The connection.
        client: tokio_postgres::Client,
        /// The statement, prepared.
        stmt: tokio_postgres::Statement,
    },
}

impl FailingSession {
    /// Connects `driver` and prepares the statement.
    pub async fn connect(driver: DriverKind, url: &str) -> Result<FailingSession, BenchError> {
        match driver {
            DriverKind::Pgpipe | DriverKind::PgpipeCoalesced => {
                let mut url = crate::tls::url(url);
                if driver == DriverKind::PgpipeCoalesced {
                    url = crate::drivers::pool::with_param(&url, "coalesce_sync", "on");
                }
                let client = pgpipe::connect(&url).await?;
                let stmt = client.prepare(FAILING_SQL).await?;
                Ok(FailingSession::Pgpipe { client, stmt })
            }
            DriverKind::TokioPostgres => {
                let client = crate::tls::tokio_postgres_connect(url).await?;
                let stmt = client.prepare(FAILING_SQL).await?;
                Ok(FailingSession::TokioPostgres { client, stmt })
            }
            other => Err(BenchError::new(format!(
                "{other} has no adapter for the failing pipeline"
            ))),
        }
    }

    /// One checked statement for `key`; returns rows read.
    pub async fn op(&self, key: i32) -> Result<u64, BenchError> {
        match self {
            FailingSession::Pgpipe { client, stmt } => {
                match client.query_one(stmt, (key, divisor(key))).await {
                    Ok(row) if !fails(key) => {
                        checks::point(key, row.try_get(0)?, row.try_get(1)?)?;
                        Ok(1)
                    }
                    Err(e)
                        if fails(key) && e.code() == Some(&pgpipe::SqlState::DIVISION_BY_ZERO) =>
                    {
                        Ok(0)
                    }
                    Ok(_) => Err(unexpected(key, "a row")),
                    Err(e) => Err(unexpected(key, &e.to_string())),
                }
            }
            FailingSession::TokioPostgres { client, stmt } => {
                match client.query_one(stmt, &[&key, &divisor(key)]).await {
                    Ok(row) if !fails(key) => {
                        checks::point(key, row.try_get(0)?, row.try_get(1)?)?;
                        Ok(1)
                    }
                    Err(e)
                        if fails(key)
                            && e.code()
                                == Some(&tokio_postgres::error::SqlState::DIVISION_BY_ZERO) =>
                    {
                        Ok(0)
                    }
                    Ok(_) => Err(unexpected(key, "a row")),
                    Err(e) => Err(unexpected(key, &e.to_string())),
                }
            }
        }
    }
}
