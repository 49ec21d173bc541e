//! The workloads the tool knows, by their stable names, and the variants
//! (connections, tasks, shape) each is measured in.

use std::fmt;

use crate::shape::Shape;

/// A benchmark workload. Names are stable: results are keyed by them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Workload {
    /// One point select in flight, one connection.
    Latency,
    /// Prepared point selects on one connection from many tasks.
    Pipeline,
    /// The same, sent as SQL text with parameters each time.
    Unprepared,
    /// 50k rows of one int4 column.
    Rows1Col,
    /// 50k rows of nine mixed columns.
    Rows9Col,
    /// 50k rows of 60 timestamptz columns.
    Rows60Ts,
    /// Point selects from many tasks through a pool vs dedicated connections.
    Pool,
    /// 50k rows with a jsonb column read as text.
    RowsJson,
    /// The ozo talk's table.
    Ozo,
    /// TechEmpower's Fortunes, Multiple queries and Updates, without HTTP.
    Techempower,
    /// 10M rows streamed; peak RSS per driver.
    Stream,
    /// 1M rows with binary COPY in and out.
    Copy,
    /// Explicit batches of point selects under one Sync.
    Batch,
    /// 100 shards over a few servers: pgpipe's `Cluster` against a
    /// deadpool-postgres pool per shard and host.
    Shards,
    /// MagicStack's asyncpg benchmark queries (pg_type, generate_series,
    /// large_object, arrays, copyfrom, batch, oneplusone) against asyncpg
    /// and pgx, run as child programs.
    Magicstack,
}

impl Workload {
    /// Every implemented workload, in suite order.
    pub const ALL: [Workload; 15] = [
        Workload::Latency,
        Workload::Pipeline,
        Workload::Unprepared,
        Workload::Rows1Col,
        Workload::Rows9Col,
        Workload::RowsJson,
        Workload::Rows60Ts,
        Workload::Pool,
        Workload::Ozo,
        Workload::Techempower,
        Workload::Stream,
        Workload::Copy,
        Workload::Batch,
        Workload::Shards,
        Workload::Magicstack,
    ];

    /// The workloads of the quick suite (no `--workloads`, not `--full`):
    /// all but `pool`, which adds about a minute.
    pub const QUICK: [Workload; 10] = [
        Workload::Latency,
        Workload::Pipeline,
        Workload::Unprepared,
        Workload::Rows1Col,
        Workload::Rows9Col,
        Workload::RowsJson,
        Workload::Rows60Ts,
        Workload::Ozo,
        Workload::Techempower,
        Workload::Stream,
    ];

    /// The stable name.
    pub fn name(self) -> &'static str {
        match self {
            Workload::Latency => "latency",
            Workload::Pipeline => "pipeline",
            Workload::Unprepared => "unprepared",
            Workload::Rows1Col => "rows-1col",
            Workload::Rows9Col => "rows-9col",
            Workload::Rows60Ts => "rows-60ts",
            Workload::Pool => "pool",
            Workload::RowsJson => "rows-json",
            Workload::Ozo => "ozo",
            Workload::Techempower => "techempower",
            Workload::Stream => "stream",
            Workload::Copy => "copy",
            Workload::Batch => "batch",
            Workload::Shards => "shards",
            Workload::Magicstack => "magicstack",
        }
    }

    /// One line on what it measures.
    pub fn description(self) -> &'static str {
        match self {
            Workload::Latency => "one prepared point select in flight, one connection: p50/p99",
            Workload::Pipeline => "prepared point selects on ONE connection from N concurrent tasks (+ 2conn: 2 connections x 64 tasks)",
            Workload::Unprepared => "the same point selects sent as SQL text with parameters each call",
            Workload::Rows1Col => "read 50k rows of one int4 column, every value decoded",
            Workload::Rows9Col => "read 50k rows of 9 mixed columns, every value decoded",
            Workload::Rows60Ts => "read 50k rows x 60 timestamptz columns, every value decoded",
            Workload::Pool => "point selects through a pool vs dedicated connections: 64 tasks (dedicated, pool1), 256 tasks over 8 connections (dedicated, shared, checkout)",
            Workload::RowsJson => "read 50k rows of (int4, jsonb), the jsonb read as text and checked",
            Workload::Ozo => "the ozo talk's table: connect per request, reuse connection, pool, parsed result, the pg_type query raw/parsed over 1..64 connections",
            Workload::Techempower => "TechEmpower Fortunes, Multiple queries (N=20), Updates (N=20), 16 tasks on one connection, no HTTP",
            Workload::Stream => "stream 10M rows (1M in the quick suite), each driver in a child process: rows/s and peak RSS",
            Workload::Copy => "COPY 1M rows of (int8, text, float8, timestamptz) in (typed binary writer) and out (every value decoded), one COPY per operation",
            Workload::Shards => "100 shards (25 databases on each of 4 throwaway servers, a streaming standby for 2 of them): random keys, 80 % reads on the shard's replica where it has one, 20 % UPDATEs on its primary; pgpipe's Cluster vs a deadpool-postgres pool per shard and host: ops/s, p99, server connections, client heap",
            Workload::Magicstack => "MagicStack's asyncpg benchmark queries (github.com/MagicStack/pgbench queries/*.json), one variant each, 10 connections x 1 worker: pgpipe and tokio-postgres in process, asyncpg and pgx as child programs when installed (scripts/ensure-bench-peers.sh)",
            Workload::Batch => "explicit batches of N point selects on one connection (pgpipe: batch().run_atomic(), one Sync; tokio-postgres: N pipelined query_one; pgbench: \\startpipeline N): selects/s",
        }
    }

    /// True for the workloads made of point selects (many ops per second).
    pub fn is_point(self) -> bool {
        matches!(
            self,
            Workload::Latency | Workload::Pipeline | Workload::Unprepared | Workload::Pool
        )
    }

    /// True for the `rows-*` table reads (they get a replay variant).
    pub fn is_rows(self) -> bool {
        matches!(
            self,
            Workload::Rows1Col | Workload::Rows9Col | Workload::RowsJson | Workload::Rows60Ts
        )
    }

    /// Rows each operation reads, when fixed by the workload (the
    /// results count what the adapters actually return).
    pub fn rows_per_op(self) -> u64 {
        if self.is_rows() {
            crate::fixtures::ROWS
        } else if self == Workload::Copy {
            crate::fixtures::COPY_ROWS
        } else {
            1
        }
    }

    /// Parses a stable name; the error lists the valid names.
    pub fn parse(name: &str) -> Result<Workload, String> {
        Workload::ALL
            .into_iter()
            .find(|w| w.name() == name)
            .ok_or_else(|| {
                format!(
                    "unknown workload {name:?}; valid workloads: {}",
                    names(Workload::ALL.iter().map(|w| w.name()))
                )
            })
    }
}

impl fmt::Display for Workload {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

pub(crate) fn names<'a>(it: impl Iterator<Item = &'a str>) -> String {
    it.collect::<Vec<_>>().join(", ")
}

/// One configuration of a workload: how many connections, how many
/// concurrent tasks on each.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Variant {
    /// The label in results ("64", "2conn", "50k").
    pub label: String,
    /// Connections opened.
    pub connections: usize,
    /// Concurrent tasks (requests in flight) per connection; with a pool,
    /// the tasks are `connections * tasks_per_conn` over the pool.
    pub tasks_per_conn: usize,
    /// How the tasks reach the connections (`pool` workload; the others
    /// use `Dedicated`).
    pub pool: PoolMode,
    /// What one operation does beyond the workload's plain query.
    pub shape: Shape,
}

/// How the tasks of a `pool` variant reach the server.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PoolMode {
    /// No pool: `connections` clients, `tasks_per_conn` tasks share each.
    Dedicated,
    /// pgpipe: a `Pool` of `max_size` (`shared` connections in its shared
    /// lane, or its default) and `pool.query_one(..)` per operation.
    /// deadpool-postgres: a pool of `connections`, checkout per operation.
    Shared {
        /// pgpipe's `pool_max_size`.
        max_size: usize,
        /// pgpipe's `pool_shared_connections` (`None`: its default).
        shared: Option<usize>,
        /// pgpipe's `pool_shared_line_at` (`None`: its default, no line).
        line_at: Option<usize>,
    },
    /// pgpipe: a `Pool` of `connections`, `pool.get().await?.query_one(..)`
    /// per operation. deadpool-postgres: the same as `Shared`.
    Checkout,
    /// A transaction per operation on a pool of `connections`: BEGIN;
    /// UPDATE of the row; the point select; COMMIT. pgpipe:
    /// `pool.transaction()` (BEGIN travels with the UPDATE);
    /// deadpool-postgres: `get()` then tokio-postgres's `transaction()`.
    Transaction,
}

impl Variant {
    /// Every task of the variant.
    pub fn total_tasks(&self) -> usize {
        self.connections.max(1) * self.tasks_per_conn.max(1)
    }
}

impl Variant {
    /// One connection, `tasks` tasks, labelled by the task count.
    pub fn single(tasks: usize) -> Variant {
        Variant {
            label: tasks.to_string(),
            connections: 1,
            tasks_per_conn: tasks,
            pool: PoolMode::Dedicated,
            shape: Shape::Plain,
        }
    }
}
