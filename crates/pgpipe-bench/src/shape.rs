//! What one operation of a variant does, beyond "the workload's query":
//! the cases of the `ozo` and `techempower` tables, the row count of
//! `stream`, and whether a `rows-*` variant talks to the replay server.

/// One row of the ozo talk's table.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum OzoCase {
    /// A new connection per request (`SELECT 1`), closed after it.
    Basic,
    /// One connection reused for every request (`SELECT 1`).
    Reuse,
    /// A pool; the result's rows are only counted (`SELECT 1`).
    Pool,
    /// A pool; the result decoded into typed rows (`Vec<(i32,)>`).
    Parsed,
    /// The `pg_type` query through a pool, rows only counted.
    ComplexRaw,
    /// The `pg_type` query through a pool, every column decoded into a struct.
    ComplexParsed,
}

/// One of the TechEmpower shapes (without HTTP).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TeCase {
    /// 12 fortunes read into structs, one added, sorted by message.
    Fortunes,
    /// 20 random `world` rows by id.
    Queries,
    /// 20 random `world` rows read, then updated with new random numbers.
    Updates,
}

/// The direction of a `copy` variant.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CopyCase {
    /// COPY FROM STDIN of 1M typed rows.
    In,
    /// COPY TO STDOUT of 1M rows, every value decoded.
    Out,
}

/// Where a variant departs from the plain "run the workload's query".
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Shape {
    /// The workload's own operation against the real server.
    Plain,
    /// An `ozo` row.
    Ozo(OzoCase),
    /// A `techempower` shape.
    Te(TeCase),
    /// `stream`: this many rows, each driver in a child process.
    Stream {
        /// Rows streamed per measurement.
        rows: u64,
    },
    /// A `copy` direction.
    Copy(CopyCase),
    /// `pipeline`'s point select with one key in a hundred failing
    /// (division by zero): the cost of failures under coalesced Sync.
    Failing,
    /// `batch`: this many point selects per batch (one operation call).
    Batch {
        /// Selects per batch.
        size: usize,
    },
    /// A `rows-*` workload answered by the in-tool replay server.
    Replay,
    /// A `rows-*` workload read through each driver's row stream, every row
    /// decoded as it arrives (the plain variant collects all rows first).
    Streamed,
    /// `shards`: the mix on the fleet of throwaway servers.
    Shards,
    /// `magicstack`: one of MagicStack's benchmark queries.
    Magic(crate::families::magicstack::MagicQuery),
}

/// Requests (and so round trips, unless pipelined) per TechEmpower
/// Multiple queries / Updates operation.
pub const TE_N: usize = 20;
