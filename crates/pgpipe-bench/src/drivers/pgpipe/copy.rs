//! pgpipe: typed binary COPY (`copy_in_rows`, `copy_out_rows`).

use std::time::SystemTime;

use pgpipe::Client;

use crate::driver_kind::DriverKind;
use crate::error::BenchError;
use crate::families::copy::{
    check_out, rows, target_sql, target_table, CopyRow, COLUMNS, SOURCE_SQL, SOURCE_TABLE,
};
use crate::shape::CopyCase;

/// A pgpipe connection set up for one `copy` case.
#[derive(Debug)]
pub struct Conn {
    client: Client,
    case: CopyCase,
}

impl Conn {
    /// The connection's low-water counts so far.
    pub fn low_water(&self) -> Option<crate::measure::LowWater> {
        super::low_water_of(&self.client)
    }

    /// Connects and makes the tables.
    pub async fn connect(url: &str, case: CopyCase) -> Result<Conn, BenchError> {
        let client = pgpipe::connect(url).await?;
        client.batch_execute(SOURCE_SQL).await?;
        Ok(Conn { client, case })
    }

    /// One COPY of 1M rows.
    pub async fn op(&self) -> Result<u64, BenchError> {
        match self.case {
            CopyCase::In => {
                self.client
                    .batch_execute(&target_sql(DriverKind::Pgpipe))
                    .await?;
                let data = rows();
                let mut copy = self
                    .client
                    .copy_in_rows::<CopyRow>(&target_table(DriverKind::Pgpipe), &COLUMNS)
                    .await?;
                for row in data.iter() {
                    copy.write(row).await?;
                }
                Ok(copy.finish().await?)
            }
            CopyCase::Out => {
                let mut out = self
                    .client
                    .copy_out_rows::<(i64, String, f64, SystemTime)>(&format!(
                        "SELECT id, name, score, at FROM {SOURCE_TABLE}"
                    ))
                    .await?;
                let (mut n, mut sum) = (0u64, 0i64);
                while let Some(row) = out.next().await {
                    let (id, name, _score, _at) = row?;
                    n += 1;
                    sum += id;
                    std::hint::black_box(name);
                }
                check_out(n, sum)
            }
        }
    }
}
