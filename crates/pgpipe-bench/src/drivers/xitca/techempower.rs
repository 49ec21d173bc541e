//! xitca-postgres in the TechEmpower shapes, the way xitca-web's own
//! TechEmpower entry uses it: statements prepared once; a query is sent
//! when it is bound (`bind(..).query(&client)` encodes and writes at the
//! call), so the 20 selects (and then the 20 updates) of an operation are
//! all sent before the first answer is read, pipelined on the one
//! connection.

use xitca_postgres::iter::AsyncLendingIterator;
use xitca_postgres::statement::Statement;
use xitca_postgres::types::Type;
use xitca_postgres::{Client, Execute};

use super::{connect, prepare};
use crate::error::BenchError;
use crate::families::techempower::{
    check_updated, check_worlds, finish_fortunes, randoms, Fortune, World,
};
use crate::families::techempower::{FORTUNE_SQL, UPDATE_SQL, WORLD_SQL};
use crate::shape::TeCase;

/// xitca-postgres set up for one shape.
pub struct Conn {
    client: Client,
    case: TeCase,
    fortune: Statement,
    world: Statement,
    update: Statement,
}

impl std::fmt::Debug for Conn {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("xitca::techempower::Conn")
            .field("case", &self.case)
            .finish_non_exhaustive()
    }
}

impl Conn {
    /// Connects (the driver future on its own task) and prepares.
    pub async fn connect(url: &str, case: TeCase) -> Result<Conn, BenchError> {
        let client = connect(url).await?;
        let fortune = prepare(&client, FORTUNE_SQL, &[]).await?;
        let world = prepare(&client, WORLD_SQL, &[Type::INT4]).await?;
        let update = prepare(&client, UPDATE_SQL, &[Type::INT4, Type::INT4]).await?;
        Ok(Conn {
            client,
            case,
            fortune,
            world,
            update,
        })
    }

    async fn worlds(&self, ids: &[i32]) -> Result<Vec<World>, BenchError> {
        // Every select is written before any answer is read.
        let sent: Vec<_> = ids
            .iter()
            .map(|&id| self.world.bind([id]).query(&self.client))
            .collect();
        let mut worlds = Vec::with_capacity(ids.len());
        for (id, rows) in ids.iter().zip(sent) {
            let mut rows = rows.await?;
            let row = rows
                .try_next()
                .await?
                .ok_or_else(|| BenchError::new(format!("no world row for id {id}")))?;
            worlds.push(World {
                id: row.try_get(0)?,
                randomnumber: row.try_get(1)?,
            });
        }
        check_worlds(ids, &worlds)?;
        Ok(worlds)
    }

    /// One checked operation; returns rows read.
    pub async fn op(&self, key: i32) -> Result<u64, BenchError> {
        let (ids, numbers) = randoms(key);
        match self.case {
            TeCase::Fortunes => {
                let mut fortunes = Vec::with_capacity(16);
                let mut rows = self.fortune.bind_none().query(&self.client).await?;
                while let Some(row) = rows.try_next().await? {
                    fortunes.push(Fortune {
                        id: row.try_get(0)?,
                        message: row.try_get(1)?,
                    });
                }
                finish_fortunes(fortunes)
            }
            TeCase::Queries => Ok(self.worlds(&ids).await?.len() as u64),
            TeCase::Updates => {
                let mut worlds = self.worlds(&ids).await?;
                for (w, &n) in worlds.iter_mut().zip(&numbers) {
                    w.randomnumber = n;
                }
                let sent: Vec<_> = worlds
                    .iter()
                    .map(|w| {
                        self.update
                            .bind([w.randomnumber, w.id])
                            .execute(&self.client)
                    })
                    .collect();
                let mut counts = Vec::with_capacity(sent.len());
                for done in sent {
                    counts.push(done.await?);
                }
                check_updated(&counts)?;
                Ok(worlds.len() as u64)
            }
        }
    }
}
