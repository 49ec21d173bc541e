//! zero-postgres in the TechEmpower shapes, with the pipeline its docs
//! show: statements prepared once; the 20 selects (and then the 20
//! updates) of an operation queued with `exec`, one `sync`, then claimed in
//! order. Its `Conn` takes `&mut self`, so tasks sharing the connection take
//! turns through a mutex (one operation in flight per connection).

use tokio::sync::Mutex;
use zero_postgres::handler::DropHandler;
use zero_postgres::tokio::Conn as ZConn;
use zero_postgres::PreparedStatement;

use super::connect;
use crate::error::BenchError;
use crate::families::techempower::{
    check_updated, check_worlds, finish_fortunes, randoms, Fortune, World,
};
use crate::families::techempower::{FORTUNE_SQL, UPDATE_SQL, WORLD_SQL};
use crate::shape::TeCase;

/// zero-postgres set up for one shape.
pub struct Conn {
    conn: Mutex<ZConn>,
    case: TeCase,
    fortune: PreparedStatement,
    world: PreparedStatement,
    update: PreparedStatement,
}

impl std::fmt::Debug for Conn {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("zero::techempower::Conn")
            .field("case", &self.case)
            .finish_non_exhaustive()
    }
}

impl Conn {
    /// Connects and prepares.
    pub async fn connect(url: &str, case: TeCase) -> Result<Conn, BenchError> {
        let mut conn = connect(url).await?;
        let fortune = conn.prepare(FORTUNE_SQL).await?;
        let world = conn.prepare(WORLD_SQL).await?;
        let update = conn.prepare(UPDATE_SQL).await?;
        Ok(Conn {
            conn: Mutex::new(conn),
            case,
            fortune,
            world,
            update,
        })
    }

    /// The world rows of `ids`, in one pipeline.
    async fn worlds(&self, conn: &mut ZConn, ids: &[i32]) -> Result<Vec<World>, BenchError> {
        let world = &self.world;
        let rows: Vec<Option<(i32, i32)>> = conn
            .pipeline(async |p| {
                let mut tickets = Vec::with_capacity(ids.len());
                for &id in ids {
                    tickets.push(p.exec(world, (id,))?);
                }
                p.sync().await?;
                let mut rows = Vec::with_capacity(tickets.len());
                for t in tickets {
                    rows.push(p.claim_one(t).await?);
                }
                Ok(rows)
            })
            .await?;
        let mut worlds = Vec::with_capacity(ids.len());
        for (id, row) in ids.iter().zip(rows) {
            let (id, randomnumber) =
                row.ok_or_else(|| BenchError::new(format!("no world row for id {id}")))?;
            worlds.push(World { id, randomnumber });
        }
        check_worlds(ids, &worlds)?;
        Ok(worlds)
    }

    /// One checked operation; returns rows read.
    pub async fn op(&self, key: i32) -> Result<u64, BenchError> {
        let (ids, numbers) = randoms(key);
        let mut conn = self.conn.lock().await;
        match self.case {
            TeCase::Fortunes => {
                let rows: Vec<(i32, String)> = conn.exec_collect(&self.fortune, ()).await?;
                let fortunes = rows
                    .into_iter()
                    .map(|(id, message)| Fortune { id, message })
                    .collect();
                finish_fortunes(fortunes)
            }
            TeCase::Queries => Ok(self.worlds(&mut conn, &ids).await?.len() as u64),
            TeCase::Updates => {
                let mut worlds = self.worlds(&mut conn, &ids).await?;
                for (w, &n) in worlds.iter_mut().zip(&numbers) {
                    w.randomnumber = n;
                }
                let update = &self.update;
                let worlds_ref = &worlds;
                let counts: Vec<u64> = conn
                    .pipeline(async |p| {
                        let mut tickets = Vec::with_capacity(worlds_ref.len());
                        for w in worlds_ref {
                            tickets.push(p.exec(update, (w.randomnumber, w.id))?);
                        }
                        p.sync().await?;
                        let mut counts = Vec::with_capacity(tickets.len());
                        for t in tickets {
                            let mut done = DropHandler::new();
                            p.claim(t, &mut done).await?;
                            counts.push(done.rows_affected().unwrap_or(0));
                        }
                        Ok(counts)
                    })
                    .await?;
                check_updated(&counts)?;
                Ok(worlds.len() as u64)
            }
        }
    }
}
