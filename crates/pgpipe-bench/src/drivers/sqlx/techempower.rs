//! sqlx in the TechEmpower shapes: one `PgConnection` (statement cache);
//! sqlx cannot pipeline, so the 20 statements of an operation run one
//! after another, and concurrent tasks take turns on the connection.

use sqlx::postgres::PgConnection;
use sqlx::{Connection, Row};
use tokio::sync::Mutex;

use crate::error::BenchError;
use crate::families::techempower::{
    check_updated, check_worlds, finish_fortunes, randoms, Fortune, World,
};
use crate::families::techempower::{FORTUNE_SQL, UPDATE_SQL, WORLD_SQL};
use crate::shape::TeCase;

/// sqlx set up for one shape.
#[derive(Debug)]
pub struct Conn {
    conn: Mutex<PgConnection>,
    case: TeCase,
}

async fn worlds(conn: &mut PgConnection, ids: &[i32]) -> Result<Vec<World>, BenchError> {
    let mut worlds = Vec::with_capacity(ids.len());
    for &id in ids {
        let r = sqlx::query(WORLD_SQL)
            .bind(id)
            .fetch_one(&mut *conn)
            .await?;
        worlds.push(World {
            id: r.try_get(0)?,
            randomnumber: r.try_get(1)?,
        });
    }
    check_worlds(ids, &worlds)?;
    Ok(worlds)
}

impl Conn {
    /// Connects; statements are prepared (and cached) on first use.
    pub async fn connect(url: &str, case: TeCase) -> Result<Conn, BenchError> {
        Ok(Conn {
            conn: Mutex::new(PgConnection::connect(url).await?),
            case,
        })
    }

    /// One checked operation; returns rows read.
    pub async fn op(&self, key: i32) -> Result<u64, BenchError> {
        let (ids, numbers) = randoms(key);
        let mut conn = self.conn.lock().await;
        match self.case {
            TeCase::Fortunes => {
                let rows = sqlx::query(FORTUNE_SQL).fetch_all(&mut *conn).await?;
                let fortunes = rows
                    .iter()
                    .map(|r| {
                        Ok(Fortune {
                            id: r.try_get(0)?,
                            message: r.try_get(1)?,
                        })
                    })
                    .collect::<Result<Vec<_>, sqlx::Error>>()?;
                finish_fortunes(fortunes)
            }
            TeCase::Queries => Ok(worlds(&mut conn, &ids).await?.len() as u64),
            TeCase::Updates => {
                let mut ws = worlds(&mut conn, &ids).await?;
                let mut counts = Vec::with_capacity(ws.len());
                for (w, &n) in ws.iter_mut().zip(&numbers) {
                    w.randomnumber = n;
                    let done = sqlx::query(UPDATE_SQL)
                        .bind(w.randomnumber)
                        .bind(w.id)
                        .execute(&mut *conn)
                        .await?;
                    counts.push(done.rows_affected());
                }
                check_updated(&counts)?;
                Ok(ws.len() as u64)
            }
        }
    }
}
