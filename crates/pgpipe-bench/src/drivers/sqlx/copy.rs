//! sqlx: raw COPY only (`copy_in_raw`, `copy_out_raw`). On the way in the
//! adapter formats each row as COPY text itself (what a sqlx user has to
//! do), sending 64 KiB at a time; on the way out it only counts the rows
//! (sqlx has no decoder for COPY data).

use std::fmt::Write;
use std::time::UNIX_EPOCH;

use futures_util::TryStreamExt;
use pgpipe_proto::copy_binary::BinaryDecoder;
use sqlx::postgres::PgConnection;
use sqlx::Connection;
use tokio::sync::Mutex;

use crate::driver_kind::DriverKind;
use crate::error::BenchError;
use crate::families::copy::{check_out, rows, target_sql, target_table, SOURCE_SQL, SOURCE_TABLE};
use crate::shape::CopyCase;

/// A sqlx connection set up for one `copy` case.
#[derive(Debug)]
pub struct Conn {
    conn: Mutex<PgConnection>,
    case: CopyCase,
}

impl Conn {
    /// Connects and makes the tables.
    pub async fn connect(url: &str, case: CopyCase) -> Result<Conn, BenchError> {
        let mut conn = PgConnection::connect(url).await?;
        sqlx::raw_sql(SOURCE_SQL).execute(&mut conn).await?;
        Ok(Conn {
            conn: Mutex::new(conn),
            case,
        })
    }

    /// One COPY of 1M rows.
    pub async fn op(&self) -> Result<u64, BenchError> {
        let mut conn = self.conn.lock().await;
        match self.case {
            CopyCase::In => {
                let table = target_table(DriverKind::Sqlx);
                for sql in target_sql(DriverKind::Sqlx).split("; ") {
                    sqlx::query(sql).execute(&mut *conn).await?;
                }
                let mut copy = conn
                    .copy_in_raw(&format!("COPY {table} (id, name, score, at) FROM STDIN"))
                    .await?;
                let mut buf = String::with_capacity(80 * 1024);
                for (id, name, score, at) in rows().iter() {
                    // Text names need no escaping here ("name N").
                    let since = at
                        .duration_since(UNIX_EPOCH)
                        .map_err(|e| BenchError::new(e.to_string()))?;
                    let secs = since.as_secs() as i64;
                    let (y, m, d) = civil_from_days(secs.div_euclid(86_400));
                    let t = secs.rem_euclid(86_400);
                    let _ = writeln!(
                        buf,
                        "{id}\t{name}\t{score:?}\t{y:04}-{m:02}-{d:02} {:02}:{:02}:{:02}.{:06}+00",
                        t / 3600,
                        t / 60 % 60,
                        t % 60,
                        since.subsec_micros()
                    );
                    if buf.len() >= 64 * 1024 {
                        copy.send(buf.as_bytes()).await?;
                        buf.clear();
                    }
                }
                copy.send(buf.as_bytes()).await?;
                Ok(copy.finish().await?)
            }
            CopyCase::Out => {
                let mut stream = conn
                    .copy_out_raw(&format!(
                        "COPY (SELECT id, name, score, at FROM {SOURCE_TABLE}) TO STDOUT (FORMAT binary)"
                    ))
                    .await?;
                // Only framed into tuples (to count them), not decoded.
                let mut decoder = BinaryDecoder::new();
                let mut n = 0u64;
                while let Some(chunk) = stream.try_next().await? {
                    decoder
                        .feed(chunk, |_| {
                            n += 1;
                            Ok::<(), ()>(())
                        })
                        .map_err(|e| BenchError::new(e.to_string()))?
                        .ok();
                }
                check_out(n, 0)
            }
        }
    }
}

/// (year, month, day) of a day count since 1970-01-01 (H. Hinnant's
/// algorithm), for formatting timestamps as COPY text.
fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (yoe + era * 400 + i64::from(m <= 2), m, d)
}

#[cfg(test)]
mod tests {
    #[test]
    fn civil_dates() {
        assert_eq!(super::civil_from_days(0), (1970, 1, 1));
        assert_eq!(super::civil_from_days(20_454), (2026, 1, 1));
        assert_eq!(super::civil_from_days(11_016), (2000, 2, 29));
    }
}
