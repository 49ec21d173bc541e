//! tokio-postgres: `BinaryCopyInWriter` and `BinaryCopyOutStream`.

use std::pin::pin;
use std::time::SystemTime;

use futures_util::StreamExt;
use tokio_postgres::binary_copy::{BinaryCopyInWriter, BinaryCopyOutStream};
use tokio_postgres::types::{ToSql, Type};
use tokio_postgres::{Client, NoTls};

use crate::driver_kind::DriverKind;
use crate::error::BenchError;
use crate::families::copy::{check_out, rows, target_sql, target_table, SOURCE_SQL, SOURCE_TABLE};
use crate::shape::CopyCase;

const TYPES: [Type; 4] = [Type::INT8, Type::TEXT, Type::FLOAT8, Type::TIMESTAMPTZ];

/// A tokio-postgres connection set up for one `copy` case.
#[derive(Debug)]
pub struct Conn {
    client: Client,
    case: CopyCase,
}

impl Conn {
    /// Connects (the connection future on its own task) and makes the tables.
    pub async fn connect(url: &str, case: CopyCase) -> Result<Conn, BenchError> {
        let (client, conn) = tokio_postgres::connect(url, NoTls).await?;
        tokio::spawn(async move {
            let _ = conn.await;
        });
        client.batch_execute(SOURCE_SQL).await?;
        Ok(Conn { client, case })
    }

    /// One COPY of 1M rows.
    pub async fn op(&self) -> Result<u64, BenchError> {
        match self.case {
            CopyCase::In => {
                let table = target_table(DriverKind::TokioPostgres);
                self.client
                    .batch_execute(&target_sql(DriverKind::TokioPostgres))
                    .await?;
                let sink = self
                    .client
                    .copy_in(&format!(
                        "COPY {table} (id, name, score, at) FROM STDIN (FORMAT binary)"
                    ))
                    .await?;
                let mut writer = pin!(BinaryCopyInWriter::new(sink, &TYPES));
                let data = rows();
                for (id, name, score, at) in data.iter() {
                    let values: [&(dyn ToSql + Sync); 4] = [id, name, score, at];
                    writer.as_mut().write(&values).await?;
                }
                Ok(writer.finish().await?)
            }
            CopyCase::Out => {
                let stream = self
                    .client
                    .copy_out(&format!(
                        "COPY (SELECT id, name, score, at FROM {SOURCE_TABLE}) TO STDOUT (FORMAT binary)"
                    ))
                    .await?;
                let mut rows = pin!(BinaryCopyOutStream::new(stream, &TYPES));
                let (mut n, mut sum) = (0u64, 0i64);
                while let Some(row) = rows.next().await {
                    let row = row?;
                    let id: i64 = row.try_get(0)?;
                    let name: String = row.try_get(1)?;
                    let _score: f64 = row.try_get(2)?;
                    let _at: SystemTime = row.try_get(3)?;
                    n += 1;
                    sum += id;
                    std::hint::black_box(name);
                }
                check_out(n, sum)
            }
        }
    }
}
