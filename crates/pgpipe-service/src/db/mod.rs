//! The database behind the service: one small trait, [`Db`], and one
//! implementation per driver ([`PgpipeDb`], [`TokioPostgresDb`]). The
//! HTTP code is generic over it, so both services answer with the same
//! code and differ only in the driver.

mod pgpipe_db;
mod tokio_postgres_db;

use std::future::Future;

use bytes::Bytes;
use serde::Serialize;

pub use pgpipe_db::{database_is_local, shared_lane_width, PgpipeDb, SHARED_LINE_AT};
pub use tokio_postgres_db::TokioPostgresDb;

use crate::errors::StoreError;

/// The key-value table.
pub const KV_GET_SQL: &str = "SELECT v FROM kv WHERE k = $1";
/// Idempotent PUT: an upsert.
pub const KV_PUT_SQL: &str =
    "INSERT INTO kv (k, v) VALUES ($1, $2) ON CONFLICT (k) DO UPDATE SET v = EXCLUDED.v";
/// DELETE (deleting an absent key is not an error).
pub const KV_DELETE_SQL: &str = "DELETE FROM kv WHERE k = $1";
/// One TechEmpower world row.
pub const WORLD_SQL: &str = "SELECT id, randomnumber FROM world WHERE id = $1";
/// TechEmpower's fortunes.
pub const FORTUNE_SQL: &str = "SELECT id, message FROM fortune";
/// Every world update of a request in one statement (TechEmpower allows
/// batched updates); ids and numbers arrive as two `int4[]` parameters,
/// so the statement text is the same for any count and is prepared once.
pub const UPDATE_SQL: &str = "UPDATE world SET randomnumber = v.r \
     FROM unnest($1::int4[], $2::int4[]) AS v(id, r) WHERE world.id = v.id";
/// A user's inbox, newest first.
pub const INBOX_SQL: &str = "SELECT id, subject, attachments FROM mail.message \
     WHERE owner = $1 AND folder = 'inbox' ORDER BY id DESC LIMIT 50";
/// The health probe.
pub const HEALTH_SQL: &str = "SELECT 1";

/// A `world` row, serialized as TechEmpower wants it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, pgpipe::FromRow)]
pub struct World {
    /// 1..=10,000.
    pub id: i32,
    /// 1..=10,000.
    #[serde(rename = "randomNumber")]
    pub randomnumber: i32,
}

/// A fortune.
#[derive(Debug, Clone, PartialEq, Eq, pgpipe::FromRow)]
pub struct Fortune {
    /// The id (0 for the one added at request time).
    pub id: i32,
    /// The message, unescaped.
    pub message: String,
}

/// One attachment: the `mail.attach` composite
/// (`filename text, type text, size bigint`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, pgpipe::Composite)]
#[pg(name = "mail.attach")]
pub struct Attach {
    /// The file name.
    pub filename: String,
    /// The MIME type.
    #[pg(rename = "type")]
    #[serde(rename = "type")]
    pub kind: String,
    /// Size in bytes.
    pub size: i64,
}

/// A message of an inbox with its `mail.attach[]` attachments.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, pgpipe::FromRow)]
pub struct Message {
    /// Message id.
    pub id: i64,
    /// Subject.
    pub subject: String,
    /// Attachments, in order.
    pub attachments: Vec<Attach>,
}

/// What the service asks of its database. Implementations run every
/// statement with its own Sync (TechEmpower's rule); the statements of one
/// request may be pipelined.
pub trait Db: Clone + Send + Sync + 'static {
    /// The driver's name, for logs and `/health`.
    fn name(&self) -> &'static str;
    /// The value stored under `key`.
    fn kv_get(&self, key: &str) -> impl Future<Output = Result<Option<Bytes>, StoreError>> + Send;
    /// Stores `value` under `key` (insert or replace).
    fn kv_put(
        &self,
        key: &str,
        value: Bytes,
    ) -> impl Future<Output = Result<(), StoreError>> + Send;
    /// Removes `key` (absent keys are fine).
    fn kv_delete(&self, key: &str) -> impl Future<Output = Result<(), StoreError>> + Send;
    /// The world rows of `ids`, in order, one statement each.
    fn worlds(&self, ids: &[i32]) -> impl Future<Output = Result<Vec<World>, StoreError>> + Send;
    /// Stores `worlds`' random numbers (ids are distinct).
    fn update_worlds(
        &self,
        worlds: &[World],
    ) -> impl Future<Output = Result<(), StoreError>> + Send;
    /// All fortunes, in table order.
    fn fortunes(&self) -> impl Future<Output = Result<Vec<Fortune>, StoreError>> + Send;
    /// The newest inbox messages of user `uid`.
    fn inbox(&self, uid: i64) -> impl Future<Output = Result<Vec<Message>, StoreError>> + Send;
    /// One round trip to the server.
    fn ping(&self) -> impl Future<Output = Result<(), StoreError>> + Send;
    /// Closes the pool: no new statements; open connections close.
    fn close(&self);
}
