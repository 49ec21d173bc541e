//! pgpipe in the TechEmpower shapes: statements prepared once; the 20
//! selects (and then the 20 updates) of an operation are issued
//! concurrently on the one `Client`, so they are pipelined.

use futures_util::future::try_join_all;
use pgpipe::{Client, Statement};

use crate::error::BenchError;
use crate::families::techempower::{
    check_updated, check_worlds, finish_fortunes, randoms, Fortune, World,
};
use crate::families::techempower::{FORTUNE_SQL, UPDATE_SQL, WORLD_SQL};
use crate::shape::TeCase;

/// pgpipe set up for one shape.
#[derive(Debug)]
pub struct Conn {
    client: Client,
    case: TeCase,
    fortune: Statement,
    world: Statement,
    update: Statement,
}

impl Conn {
    /// The connection's low-water counts so far.
    pub fn low_water(&self) -> Option<crate::measure::LowWater> {
        super::low_water_of(&self.client)
    }

    /// Connects and prepares.
    pub async fn connect(url: &str, case: TeCase) -> Result<Conn, BenchError> {
        let client = pgpipe::connect(url).await?;
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
                .map(|&id| self.client.query_one(&self.world, (id,))),
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
            .collect::<Result<Vec<_>, pgpipe::Error>>()?;
        check_worlds(ids, &worlds)?;
        Ok(worlds)
    }

    /// One checked operation; returns rows read.
    pub async fn op(&self, key: i32) -> Result<u64, BenchError> {
        let (ids, numbers) = randoms(key);
        match self.case {
            TeCase::Fortunes => {
                let rows = self.client.query(&self.fortune, ()).await?;
                let fortunes = rows
                    .iter()
                    .map(|r| {
                        Ok(Fortune {
                            id: r.try_get(0)?,
                            message: r.try_get(1)?,
                        })
                    })
                    .collect::<Result<Vec<_>, pgpipe::Error>>()?;
                finish_fortunes(fortunes)
            }
            TeCase::Queries => Ok(self.worlds(&ids).await?.len() as u64),
            TeCase::Updates => {
                let mut worlds = self.worlds(&ids).await?;
                for (w, &n) in worlds.iter_mut().zip(&numbers) {
                    w.randomnumber = n;
                }
                let counts = try_join_all(
                    worlds
                        .iter()
                        .map(|w| self.client.execute(&self.update, (w.randomnumber, w.id))),
                )
                .await?;
                check_updated(&counts)?;
                Ok(worlds.len() as u64)
            }
        }
    }
}
