//! The notes that say what a row of the newer workloads measured.

use crate::catalog::{DriverKind, PoolMode, Variant, Workload};
use crate::families::magicstack::MagicQuery;
use crate::shape::{CopyCase, OzoCase, Shape, TeCase};
use crate::variants::TE_TASKS;

/// The note of a measured row: what `driver` does in `variant`, or a
/// caveat (`None` when there is nothing to say).
pub fn note(workload: Workload, driver: DriverKind, variant: &Variant) -> Option<String> {
    if let Some(n) = shape_note(driver, variant) {
        return Some(n);
    }
    Some(match driver {
        _ if workload == Workload::Pool => pool_note(driver, variant),
        DriverKind::Sqlx if variant.tasks_per_conn > 1 => {
            "no pipelining: tasks take turns on the connection".into()
        }
        DriverKind::ZeroPostgres if variant.tasks_per_conn > 1 => {
            "Conn is &mut: tasks take turns through a mutex, one statement in flight".into()
        }
        DriverKind::XitcaPostgres if workload.is_rows() && variant.shape == Shape::Plain => {
            "no collect-all call: rows decoded from its lending iterator as they arrive".into()
        }
        DriverKind::Raw if workload == Workload::Unprepared => {
            "raw sends Parse+Bind+Execute+Sync every time (no statement cache)".into()
        }
        DriverKind::Pgbench if variant.tasks_per_conn > 1 => format!(
            "batches of {} in \\startpipeline, not a continuous pipeline; no latency",
            variant.tasks_per_conn
        ),
        DriverKind::Pgbench => "no latency percentiles".into(),
        _ => return None,
    })
}

/// What a `pool` row measured.
pub fn pool_note(driver: DriverKind, variant: &Variant) -> String {
    let tasks = variant.total_tasks();
    match (driver, variant.pool) {
        (DriverKind::Pgpipe, PoolMode::Dedicated) => format!(
            "{} Client(s) x {} tasks, query_one(sql) (statement cache)",
            variant.connections, variant.tasks_per_conn
        ),
        (_, PoolMode::Dedicated) => format!(
            "{} client(s) x {} tasks, prepared statement",
            variant.connections, variant.tasks_per_conn
        ),
        (
            DriverKind::Pgpipe | DriverKind::PgpipeCoalesced,
            PoolMode::Shared {
                max_size,
                shared,
                line_at,
            },
        ) => format!(
            "Pool max_size {max_size}, shared lane {}{}, {tasks} tasks: pool.query_one(sql)",
            shared.map_or("default (max_size/4)".to_string(), |n| n.to_string()),
            line_at.map_or(String::new(), |d| format!(
                " with its admission line at {d}"
            ))
        ),
        (DriverKind::Pgpipe, PoolMode::Checkout) => format!(
            "Pool max_size {}, {tasks} tasks: pool.get() then query_one(sql) per op",
            variant.connections
        ),
        (DriverKind::Pgpipe, PoolMode::Transaction) => format!(
            "Pool max_size {}, {tasks} tasks: pool.transaction(); UPDATE; SELECT; commit() \
             (BEGIN sent with the UPDATE)",
            variant.connections
        ),
        (_, PoolMode::Transaction) => format!(
            "pool max_size {}, {tasks} tasks: get(); transaction() (BEGIN); UPDATE; SELECT; \
             commit() per op, prepare_cached",
            variant.connections
        ),
        (_, _) => format!(
            "pool max_size {}, {tasks} tasks: get() + prepare_cached + query_one per op",
            variant.connections
        ),
    }
}

/// What `driver` does in `variant`, for the ozo, techempower, stream and
/// replay rows (`None` for the others).
pub fn shape_note(driver: DriverKind, variant: &Variant) -> Option<String> {
    use DriverKind as D;
    let n = variant.connections;
    Some(match (variant.shape, driver) {
        (Shape::Ozo(OzoCase::Basic), D::Pgpipe) => {
            "connect + query(\"SELECT 1\") + close per request".into()
        }
        (Shape::Ozo(OzoCase::Basic), _) => {
            "connect + query(\"SELECT 1\") (prepare + execute) + drop per request".into()
        }
        (Shape::Ozo(OzoCase::Reuse), D::Pgpipe) => {
            "one Client, query(\"SELECT 1\") (statement cache)".into()
        }
        (Shape::Ozo(OzoCase::Reuse), _) => "one client, prepared statement".into(),
        (Shape::Ozo(case), D::Pgpipe) => format!(
            "Pool max_size {}, shared lane {n}, {n} task(s): pool.query(..){}",
            n + 1,
            parsed(case)
        ),
        (Shape::Ozo(case), _) => format!(
            "pool max_size {}, {n} task(s): get() + prepare_cached + query{}",
            n + 1,
            parsed(case)
        ),
        (Shape::Te(TeCase::Fortunes), D::Raw) => format!(
            "{TE_TASKS} operations in flight on one connection; pre-encoded Bind/Execute/Sync, 12 rows counted"
        ),
        (Shape::Te(_), D::Raw) => format!(
            "{TE_TASKS} operations in flight on one connection; 20 pre-encoded Bind/Execute/Sync each, ids checked"
        ),
        (Shape::Te(case), D::Sqlx) => format!(
            "{TE_TASKS} tasks take turns on one connection; {} one statement at a time",
            te(case)
        ),
        (Shape::Te(case), _) => {
            format!("{TE_TASKS} tasks on one connection; {} pipelined", te(case))
        }
        (Shape::Stream { rows }, _) => {
            format!("{rows} rows in a child process; ops/s are rows/s; connect included")
        }
        (Shape::Copy(CopyCase::In), D::Pgpipe) => "copy_in_rows: typed tuples, binary, TRUNCATE included".into(),
        (Shape::Copy(CopyCase::In), D::TokioPostgres) => "BinaryCopyInWriter: &[&dyn ToSql] per row, binary, TRUNCATE included".into(),
        (Shape::Copy(CopyCase::In), D::Sqlx) => "copy_in_raw: rows formatted as COPY text by the adapter, 64 KiB sends, TRUNCATE included".into(),
        (Shape::Copy(CopyCase::In), D::Raw) => "floor: rows pre-encoded once as binary CopyData, one write per COPY, TRUNCATE included".into(),
        (Shape::Copy(CopyCase::Out), D::Raw) => "floor: binary COPY OUT read in 256 KiB reads and skipped, no decoding".into(),
        (Shape::Copy(CopyCase::Out), D::Pgpipe) => "copy_out_rows: every value decoded into (i64, String, f64, SystemTime)".into(),
        (Shape::Copy(CopyCase::Out), D::TokioPostgres) => "BinaryCopyOutStream: every value decoded (try_get)".into(),
        (Shape::Copy(CopyCase::Out), D::Sqlx) => "copy_out_raw: bytes only, rows counted (sqlx has no COPY decoder)".into(),
        (Shape::Magic(q), _) => magicstack_note(q, driver)?,
        (Shape::Replay, _) => "answered by the in-tool replay server (captured response)".into(),
        (Shape::Shards, D::Pgpipe) => format!(
            "Cluster, hash map over 100 shards, a Pool per host (max_size {}, shared lane {}), the \
             probes on the shared connections; {} tasks: shard(key), replica(Any).query_one / primary().execute",
            crate::drivers::pgpipe::shards::MAX_SIZE,
            crate::drivers::pgpipe::shards::SHARED,
            variant.total_tasks()
        ),
        (Shape::Shards, _) => format!(
            "a pool per shard and host (max_size {}), shard = FNV-1a(key) % 100; {} tasks: get() + \
             prepare_cached + query_one / execute",
            crate::drivers::tokio_postgres::shards::MAX_SIZE,
            variant.total_tasks()
        ),
        (Shape::Streamed, D::Raw) => "the same as 50k: raw always decodes as it reads".into(),
        (Shape::Streamed, D::Pgpipe) => "query_stream + next_batch: rows read in place, each decoded as it arrives".into(),
        (Shape::Streamed, D::TokioPostgres) => "query_raw: each row decoded as it arrives".into(),
        (Shape::Streamed, D::Sqlx) => "fetch: each row decoded as it arrives".into(),
        _ => return None,
    })
}

fn parsed(case: OzoCase) -> &'static str {
    match case {
        OzoCase::Parsed => ", rows into Vec<(i32,)>",
        OzoCase::ComplexParsed => ", rows into Vec<PgType> (12 typed columns)",
        _ => ", rows counted",
    }
}

fn te(case: TeCase) -> &'static str {
    match case {
        TeCase::Fortunes => "12 rows into structs + 1, sorted;",
        TeCase::Queries => "20 point selects per op,",
        TeCase::Updates => "20 selects then 20 updates per op,",
    }
}

/// What `driver` does in a `magicstack` variant.
fn magicstack_note(query: MagicQuery, driver: DriverKind) -> Option<String> {
    use DriverKind as D;
    let how = match (query, driver) {
        (MagicQuery::Copyfrom, D::Pgpipe) => "copy_in_rows (typed, binary)",
        (MagicQuery::Copyfrom, D::TokioPostgres) => "BinaryCopyInWriter (binary)",
        (MagicQuery::Copyfrom, D::Asyncpg) => "copy_records_to_table (binary)",
        (MagicQuery::Copyfrom, D::Pgx) => "CopyFrom (binary)",
        (MagicQuery::Batch, D::Pgpipe) => "batch().run_atomic(): 1000 INSERTs, one Sync",
        (MagicQuery::Batch, D::TokioPostgres) => {
            "no batch API: 1000 execute futures pipelined, a Sync each"
        }
        (MagicQuery::Batch, D::Asyncpg) => "executemany (pipelined)",
        (MagicQuery::Batch, D::Pgx) => "SendBatch: 1000 INSERTs, one Sync",
        (_, D::Pgpipe | D::TokioPostgres) => "prepared, binary, every value decoded",
        (_, D::Asyncpg) => "prepared statement's fetch (binary Records)",
        (_, D::Pgx) => "Query (statement cache, binary), values scanned",
        _ => return None,
    };
    Some(if driver.is_external() {
        format!("child program, 10 connections: {how}; client CPU is its own over the loop; server CPU includes its connects")
    } else {
        format!("10 connections x 1 task: {how}")
    })
}
