//! tokio-postgres in the TechEmpower shapes: statements prepared once; the
//! 20 selects (and then the 20 updates) of an operation are polled together
//! (`try_join_all`), which tokio-postgres pipelines on its connection.

use futures_util::future::try_join_all;
use tokio_postgres::{Client, NoTls, Statement};

use crate::error::BenchError;
use crate::families::techempower::{
    check_updated, check_worlds, finish_fortunes, randoms, Fortune, World,
};
use crate::families::techempower::{FORTUNE_SQL, UPDATE_SQL, WORLD_SQL};
use crate::shape::TeCase;

/// tokio-postgres set up for one shape.
#[derive(Debug)]
pub struct Conn {
    client: Client,
    case: TeCase,
    fortune: Statement,
    world: Statement,
    update: Statement,
}

impl Conn {
    /// Connects (the connection future on its own task) and prepares.
    pub async fn connect(url: &str, case: TeCase) -> Result<Conn, BenchError> {
        let (client, conn) = tokio_postgres::connect(url, NoTls).await?;
        tokio::spawn(async move {
            let _ = conn.await;
        });
        let fortune = client.prepare(FORTUNE_SQL).await?;
        let world = client.prepare(WORLD_SQL).await?;
        let update = client.prepare(UPDATE_SQL).await?;
        Ok(Conn {
            client,
            case,
            fortune,
            world,
            update,
        })
    }

    async fn worlds(&self, ids: &[i32]) -> Result<Vec<World>, BenchError> {
        let rows = try_join_all(
            ids.iter()
                .map(|id| async move { self.client.query_one(&self.world, &[id]).await }),
        )
        .await?;
        let worlds = rows
            .iter()
            .map(|r| {
                Ok(World {
                    id: r.try_get(0)?,
                    randomnumber: r.try_get(1)?,
                })
            })
            .collect::<Result<Vec<_>, tokio_postgres::Error>>()?;
        check_worlds(ids, &worlds)?;
        Ok(worlds)
    }

    /// One checked operation; returns rows read.
    pub async fn op(&self, key: i32) -> Result<u64, BenchError> {
        let (ids, numbers) = randoms(key);
        match self.case {
            TeCase::Fortunes => {
                let rows = self.client.query(&self.fortune, &[]).await?;
                let fortunes = rows
                    .iter()
                    .map(|r| {
                        Ok(Fortune {
                            id: r.try_get(0)?,
                            message: r.try_get(1)?,
                        })
                    })
                    .collect::<Result<Vec<_>, tokio_postgres::Error>>()?;
                finish_fortunes(fortunes)
            }
            TeCase::Queries => Ok(self.worlds(&ids).await?.len() as u64),
            TeCase::Updates => {
                let mut worlds = self.worlds(&ids).await?;
                for (w, &n) in worlds.iter_mut().zip(&numbers) {
                    w.randomnumber = n;
                }
                let counts = try_join_all(worlds.iter().map(|w| async move {
                    self.client
                        .execute(&self.update, &[&w.randomnumber, &w.id])
                        .await
                }))
                .await?;
                check_updated(&counts)?;
                Ok(worlds.len() as u64)
            }
        }
    }
}
