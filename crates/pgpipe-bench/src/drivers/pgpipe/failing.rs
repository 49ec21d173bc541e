//! The failing pipeline (`64-fail1%`) through pgpipe, with or without
//! coalesced Sync.

use crate::checks;
use crate::error::BenchError;
use crate::families::failing::{divisor, fails, unexpected, FAILING_SQL};

/// One connection running the variant.
#[derive(Debug)]
pub struct Failing {
    client: pgpipe::Client,
    stmt: pgpipe::Statement,
}

impl Failing {
    /// The connection's low-water counts so far (see
    /// [`crate::measure::LowWater`]).
    pub fn low_water(&self) -> Option<crate::measure::LowWater> {
        super::low_water_of(&self.client)
    }

    /// Connects (coalesced Sync on when `coalesced`) and prepares the
    /// statement.
    pub async fn connect(url: &str, coalesced: bool) -> Result<Failing, BenchError> {
        let mut url = crate::tls::url(url);
        if coalesced {
            url = crate::drivers::coalesced(&url);
        }
        let client = pgpipe::connect(&url).await?;
        let stmt = client.prepare(FAILING_SQL).await?;
        Ok(Failing { client, stmt })
    }

    /// One checked statement for `key`; returns rows read.
    pub async fn op(&self, key: i32) -> Result<u64, BenchError> {
        match self.client.query_one(&self.stmt, (key, divisor(key))).await {
            Ok(row) if !fails(key) => {
                checks::point(key, row.try_get(0)?, row.try_get(1)?)?;
                Ok(1)
            }
            Err(e) if fails(key) && e.code() == Some(&pgpipe::SqlState::DIVISION_BY_ZERO) => Ok(0),
            Ok(_) => Err(unexpected(key, "a row")),
            Err(e) => Err(unexpected(key, &e.to_string())),
        }
    }
}
