//! [`Db`] on tokio-postgres with a deadpool-postgres pool, written the way
//! TechEmpower's axum entry is: a connection per request from the pool,
//! `prepare_cached` statements, and the statements of one request issued
//! together on that connection (tokio-postgres pipelines them).

use bytes::Bytes;
use deadpool_postgres::{Manager, ManagerConfig, Pool, RecyclingMethod};
use futures_util::future::try_join_all;
use postgres_types::FromSql;
use tokio_postgres::NoTls;

use super::{Attach, Db, Fortune, Message, World};
use super::{FORTUNE_SQL, HEALTH_SQL, INBOX_SQL, KV_DELETE_SQL, KV_GET_SQL, KV_PUT_SQL};
use super::{UPDATE_SQL, WORLD_SQL};
use crate::errors::StoreError;

/// `mail.attach` as tokio-postgres decodes it (postgres-types' derive
/// matches the type by its unqualified name).
#[derive(FromSql)]
#[postgres(name = "attach")]
struct PgAttach {
    filename: String,
    #[postgres(name = "type")]
    kind: String,
    size: i64,
}

/// The service's database on tokio-postgres + deadpool-postgres.
#[derive(Clone, Debug)]
pub struct TokioPostgresDb {
    pool: Pool,
}

impl TokioPostgresDb {
    /// A pool of at most `pool_size` connections to `url`; one connection
    /// is opened now so that a wrong URL fails at start-up.
    pub async fn connect(url: &str, pool_size: usize) -> Result<TokioPostgresDb, StoreError> {
        let config: tokio_postgres::Config = url.parse().map_err(StoreError::unavailable)?;
        let manager = Manager::from_config(
            config,
            NoTls,
            ManagerConfig {
                recycling_method: RecyclingMethod::Fast,
            },
        );
        let pool = Pool::builder(manager)
            .max_size(pool_size.max(1))
            .build()
            .map_err(StoreError::unavailable)?;
        drop(pool.get().await?);
        Ok(TokioPostgresDb { pool })
    }
}

impl Db for TokioPostgresDb {
    fn name(&self) -> &'static str {
        "tokio-postgres"
    }

    async fn kv_get(&self, key: &str) -> Result<Option<Bytes>, StoreError> {
        let client = self.pool.get().await?;
        let st = client.prepare_cached(KV_GET_SQL).await?;
        let row = client.query_opt(&st, &[&key]).await?;
        Ok(match row {
            Some(r) => Some(Bytes::copy_from_slice(r.try_get::<_, &[u8]>(0)?)),
            None => None,
        })
    }

    async fn kv_put(&self, key: &str, value: Bytes) -> Result<(), StoreError> {
        let client = self.pool.get().await?;
        let st = client.prepare_cached(KV_PUT_SQL).await?;
        client.execute(&st, &[&key, &&value[..]]).await?;
        Ok(())
    }

    async fn kv_delete(&self, key: &str) -> Result<(), StoreError> {
        let client = self.pool.get().await?;
        let st = client.prepare_cached(KV_DELETE_SQL).await?;
        client.execute(&st, &[&key]).await?;
        Ok(())
    }

    async fn worlds(&self, ids: &[i32]) -> Result<Vec<World>, StoreError> {
        let client = self.pool.get().await?;
        let st = client.prepare_cached(WORLD_SQL).await?;
        let rows = try_join_all(ids.iter().map(|id| {
            let (client, st) = (&client, &st);
            async move { client.query_one(st, &[id]).await }
        }))
        .await?;
        rows.iter()
            .map(|r| {
                Ok(World {
                    id: r.try_get(0)?,
                    randomnumber: r.try_get(1)?,
                })
            })
            .collect()
    }

    async fn update_worlds(&self, worlds: &[World]) -> Result<(), StoreError> {
        let ids: Vec<i32> = worlds.iter().map(|w| w.id).collect();
        let numbers: Vec<i32> = worlds.iter().map(|w| w.randomnumber).collect();
        let client = self.pool.get().await?;
        let st = client.prepare_cached(UPDATE_SQL).await?;
        client.execute(&st, &[&ids, &numbers]).await?;
        Ok(())
    }

    async fn fortunes(&self) -> Result<Vec<Fortune>, StoreError> {
        let client = self.pool.get().await?;
        let st = client.prepare_cached(FORTUNE_SQL).await?;
        let rows = client.query(&st, &[]).await?;
        rows.iter()
            .map(|r| {
                Ok(Fortune {
                    id: r.try_get(0)?,
                    message: r.try_get(1)?,
                })
            })
            .collect()
    }

    async fn inbox(&self, uid: i64) -> Result<Vec<Message>, StoreError> {
        let client = self.pool.get().await?;
        let st = client.prepare_cached(INBOX_SQL).await?;
        let rows = client.query(&st, &[&uid]).await?;
        rows.iter()
            .map(|r| {
                let attachments: Vec<PgAttach> = r.try_get(2)?;
                Ok(Message {
                    id: r.try_get(0)?,
                    subject: r.try_get(1)?,
                    attachments: attachments
                        .into_iter()
                        .map(|a| Attach {
                            filename: a.filename,
                            kind: a.kind,
                            size: a.size,
                        })
                        .collect(),
                })
            })
            .collect()
    }

    async fn ping(&self) -> Result<(), StoreError> {
        let client = self.pool.get().await?;
        client.query_one(HEALTH_SQL, &[]).await?;
        Ok(())
    }

    fn close(&self) {
        self.pool.close();
    }
}
