//! The `magicstack` workload: the queries of MagicStack's benchmark suite
//! for asyncpg (github.com/MagicStack/pgbench, `queries/*.json`, read at
//! f415bd5 "Dependency upgrades", 2023-06-22), one variant per query, each
//! run by 10 connections with one worker on each (MagicStack's default
//! `--concurrency-levels 10`). One operation is one run of the json's
//! query: a fetch of all its rows, one COPY of 10,000 rows, one batch of
//! 1,000 INSERTs.
//!
//! The query text, arguments, setup and teardown below are the json files'
//! own (`1-pg_type.json` .. `7-oneplusone.json`). Three of them use a table
//! `_test` with different columns, so each query's tables live in a schema
//! of their own ([`MagicQuery::schema`]) that every connection puts first
//! on its `search_path`; the setup runs once per process and query
//! ([`ensure_setup`]), the schema dropped first. The teardown is kept for
//! reference only: the tables stay until the next run's setup (a throwaway
//! cluster goes away with them).
//!
//! pgpipe and tokio-postgres run in process (prepared statements, binary
//! results, their binary COPY writers, pgpipe's batch against
//! tokio-postgres's pipelined executes); asyncpg and pgx run as child
//! programs (`crate::drivers::external`) that print an [`ExternalReport`].

use std::collections::HashSet;
use std::fmt;
use std::sync::Mutex;

use serde::Deserialize;

use crate::error::BenchError;
use crate::workload::names;

/// Connections (one worker each) of every `magicstack` variant.
pub const CONCURRENCY: usize = 10;

/// Rows per COPY of `copyfrom` (`5-copyfrom.json`'s `count`).
pub const COPY_ROWS: usize = 10_000;

/// INSERTs per batch of `batch` (`6-batch.json`'s `count`).
pub const BATCH_ROWS: usize = 1_000;

/// Rows of `generate_series` (`2-generate_series.json`'s argument).
pub const SERIES_ROWS: i32 = 1000;

/// The row `copyfrom` and `batch` write (their json's `row`); `e float` is
/// float8.
pub type MagicRow = (i32, i32, i32, &'static str, f64, i32, &'static str);

/// The row of `5-copyfrom.json` and `6-batch.json`.
pub const ROW: MagicRow = (10, 11, 10, "TESTTESTTEST", 10.333, 12341234, "123412341234");

/// The columns `copyfrom` names.
pub const COPY_COLUMNS: [&str; 7] = ["a", "b", "c", "d", "e", "f", "g"];

/// The table `copyfrom` and `batch` write.
pub const COPY_TABLE: &str = "_test";

/// One of MagicStack's queries (a variant of the workload).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum MagicQuery {
    /// `1-pg_type.json`: the 12-column `pg_type` query, `($1, $2) = (-1, true)`.
    PgType,
    /// `2-generate_series.json`: 1,000 int4 rows.
    GenerateSeries,
    /// `3-large_object.json`: 100 bytea values of 1,000 bytes.
    LargeObject,
    /// `4-arrays.json`: 100 rows of an int4[] of 100 values.
    Arrays,
    /// `5-copyfrom.json`: COPY of 10,000 rows of 7 columns.
    Copyfrom,
    /// `6-batch.json`: 1,000 INSERTs of the same 7 columns.
    Batch,
    /// `7-oneplusone.json`: `SELECT 1+1`.
    OnePlusOne,
}

impl MagicQuery {
    /// Every query, in the json files' order.
    pub const ALL: [MagicQuery; 7] = [
        MagicQuery::PgType,
        MagicQuery::GenerateSeries,
        MagicQuery::LargeObject,
        MagicQuery::Arrays,
        MagicQuery::Copyfrom,
        MagicQuery::Batch,
        MagicQuery::OnePlusOne,
    ];

    /// The variant label, also the query name the external programs take.
    pub fn name(self) -> &'static str {
        match self {
            MagicQuery::PgType => "pg_type",
            MagicQuery::GenerateSeries => "generate_series",
            MagicQuery::LargeObject => "large_object",
            MagicQuery::Arrays => "arrays",
            MagicQuery::Copyfrom => "copyfrom",
            MagicQuery::Batch => "batch",
            MagicQuery::OnePlusOne => "oneplusone",
        }
    }

    /// Parses a name; the error lists the valid ones.
    pub fn parse(name: &str) -> Result<MagicQuery, String> {
        MagicQuery::ALL
            .into_iter()
            .find(|q| q.name() == name)
            .ok_or_else(|| {
                format!(
                    "unknown magicstack query {name:?}; valid: {}",
                    names(MagicQuery::ALL.iter().map(|q| q.name()))
                )
            })
    }

    /// The json's `query`, verbatim.
    pub fn sql(self) -> &'static str {
        match self {
            MagicQuery::PgType => {
                "select typname, typnamespace, typowner, typlen, typbyval, typcategory, \
                 typispreferred, typisdefined, typdelim, typrelid, typelem, typarray \
                 from pg_type where typtypmod = $1 and typisdefined = $2"
            }
            MagicQuery::GenerateSeries => "SELECT i FROM generate_series(1, $1) AS i",
            MagicQuery::LargeObject => "SELECT * FROM _bytes",
            MagicQuery::Arrays => "SELECT * FROM _test",
            MagicQuery::Copyfrom => "COPY _test(a, b, c, d, e, f, g) FROM STDIN",
            MagicQuery::Batch => {
                "INSERT INTO _test (a, b, c, d, e, f, g) VALUES ($1, $2, $3, $4, $5, $6, $7);"
            }
            MagicQuery::OnePlusOne => "SELECT 1+1",
        }
    }

    /// The json's `setup` (`None`: it has none), verbatim.
    pub fn setup(self) -> Option<&'static str> {
        const WIDE: &str =
            "CREATE TABLE _test(a int, b int, c int, d text, e float, f int, g text);";
        match self {
            MagicQuery::LargeObject => Some(
                "CREATE TABLE _bytes(b bytea); INSERT INTO _bytes(b) \
                 (SELECT repeat('a', 1000)::bytea FROM generate_series(1, 100));",
            ),
            MagicQuery::Arrays => Some(
                "CREATE TABLE _test(a int[]); INSERT INTO _test(a) \
                 (SELECT (SELECT array_agg(i) FROM generate_series(1, 100) as s(i)) \
                 FROM generate_series(1, 100));",
            ),
            MagicQuery::Copyfrom | MagicQuery::Batch => Some(WIDE),
            _ => None,
        }
    }

    /// The json's `teardown` (for reference: see the module docs).
    pub fn teardown(self) -> Option<&'static str> {
        match self {
            MagicQuery::LargeObject => Some("DROP TABLE _bytes;"),
            MagicQuery::Arrays | MagicQuery::Copyfrom | MagicQuery::Batch => {
                Some("DROP TABLE _test;")
            }
            _ => None,
        }
    }

    /// The schema that holds the query's tables (first on the
    /// `search_path` of every connection that runs it).
    pub fn schema(self) -> String {
        format!("magicstack_{}", self.name())
    }

    /// `SET search_path` for a connection that runs this query
    /// (`pg_catalog` is searched first regardless).
    pub fn search_path_sql(self) -> String {
        format!("SET search_path TO {}, public", self.schema())
    }

    /// Rows one operation reads or writes (`pg_type`: as many as the
    /// server has types, given here).
    pub fn rows_per_op(self, pg_type_rows: u64) -> u64 {
        match self {
            MagicQuery::PgType => pg_type_rows,
            MagicQuery::GenerateSeries => SERIES_ROWS as u64,
            MagicQuery::LargeObject | MagicQuery::Arrays => 100,
            MagicQuery::Copyfrom => COPY_ROWS as u64,
            MagicQuery::Batch => BATCH_ROWS as u64,
            MagicQuery::OnePlusOne => 1,
        }
    }
}

impl fmt::Display for MagicQuery {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The SQL that (re)makes the query's schema and runs its setup there.
pub fn setup_sql(query: MagicQuery) -> String {
    let schema = query.schema();
    let mut sql = format!(
        "DROP SCHEMA IF EXISTS {schema} CASCADE; CREATE SCHEMA {schema}; {};",
        query.search_path_sql()
    );
    if let Some(setup) = query.setup() {
        sql.push(' ');
        sql.push_str(setup);
    }
    sql
}

/// Runs the query's setup against `url` once per process (the first
/// connection of the first driver to run it); later calls do nothing.
pub async fn ensure_setup(url: &str, query: MagicQuery) -> Result<(), BenchError> {
    static DONE: Mutex<Option<HashSet<(String, MagicQuery)>>> = Mutex::new(None);
    let key = (url.to_string(), query);
    let done = |d: &Mutex<Option<HashSet<_>>>| {
        d.lock()
            .map(|g| g.as_ref().is_some_and(|s| s.contains(&key)))
            .unwrap_or(false)
    };
    if done(&DONE) {
        return Ok(());
    }
    // Serialized: two drivers connecting at once must not both drop the
    // schema.
    static SETUP: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());
    let _guard = SETUP.lock().await;
    if done(&DONE) {
        return Ok(());
    }
    let client = crate::fixtures::setup_client(url).await?;
    client.batch_execute(&setup_sql(query)).await?;
    if let Ok(mut g) = DONE.lock() {
        g.get_or_insert_with(HashSet::new).insert(key);
    }
    Ok(())
}

/// Checks the rows of `generate_series` (1..=1000).
pub fn check_series(values: impl IntoIterator<Item = i32>) -> Result<u64, BenchError> {
    let (mut n, mut sum) = (0u64, 0i64);
    for v in values {
        n += 1;
        sum += i64::from(v);
    }
    let want = i64::from(SERIES_ROWS) * (i64::from(SERIES_ROWS) + 1) / 2;
    if n != SERIES_ROWS as u64 || sum != want {
        return Err(BenchError::new(format!(
            "generate_series: {n} rows, sum {sum}"
        )));
    }
    Ok(n)
}

/// Checks one `large_object` value (1,000 bytes of `a`).
pub fn check_bytes(b: &[u8]) -> Result<(), BenchError> {
    if b.len() != 1000 || b.iter().any(|&c| c != b'a') {
        return Err(BenchError::new(format!(
            "large_object: a value of {} bytes",
            b.len()
        )));
    }
    Ok(())
}

/// Checks one `arrays` value (1..=100).
pub fn check_array(a: &[i32]) -> Result<(), BenchError> {
    if a.len() != 100 || a.iter().zip(1..).any(|(&v, i)| v != i) {
        return Err(BenchError::new(format!(
            "arrays: an array of {} values, first {:?}",
            a.len(),
            a.first()
        )));
    }
    Ok(())
}

/// Checks one decoded `pg_type` row (the query asks for defined types;
/// their delimiter is `,` or `;`). The row count itself is not fixed:
/// every table made adds types.
pub fn check_pg_type(t: &crate::families::ozo::PgType) -> Result<(), BenchError> {
    if t.typname.is_empty()
        || !t.typisdefined
        || !(t.typdelim == b',' as i8 || t.typdelim == b';' as i8)
    {
        return Err(BenchError::new(format!("pg_type: implausible row {t:?}")));
    }
    Ok(())
}

/// Checks that a query returned rows at all (`pg_type`).
pub fn check_some(query: MagicQuery, got: u64) -> Result<u64, BenchError> {
    if got == 0 {
        return Err(BenchError::new(format!("{query}: no rows")));
    }
    Ok(got)
}

/// Checks a row count: `got` must be `want`.
pub fn check_count(query: MagicQuery, got: u64, want: u64) -> Result<u64, BenchError> {
    if got != want {
        return Err(BenchError::new(format!(
            "{query}: {got} rows, expected {want}"
        )));
    }
    Ok(got)
}

/// What an external program (asyncpg, pgx) prints on its last line of
/// standard output: one JSON object.
#[derive(Debug, Clone, Deserialize, PartialEq)]
pub struct ExternalReport {
    /// Operations (runs of the query) in the measured loop.
    pub ops: u64,
    /// Rows read or written by them.
    pub rows: u64,
    /// Wall time of the measured loop, seconds.
    pub elapsed_secs: f64,
    /// The program's own CPU time (user + system, getrusage) over the loop.
    pub cpu_secs: f64,
    /// The driver's version, when the program reports it.
    #[serde(default)]
    pub version: Option<String>,
    /// The event loop (asyncpg: `uvloop` or `asyncio`).
    #[serde(default)]
    pub r#loop: Option<String>,
}

/// Parses an external program's standard output: the last line that is a
/// JSON object.
pub fn parse_report(stdout: &str) -> Result<ExternalReport, BenchError> {
    let line = stdout
        .lines()
        .rev()
        .map(str::trim)
        .find(|l| l.starts_with('{'))
        .ok_or_else(|| BenchError::new("the program printed no result line"))?;
    let r: ExternalReport = serde_json::from_str(line)
        .map_err(|e| BenchError::new(format!("bad result line {line:?}: {e}")))?;
    if !(r.elapsed_secs.is_finite() && r.elapsed_secs > 0.0 && r.cpu_secs >= 0.0) {
        return Err(BenchError::new(format!("implausible result line {line:?}")));
    }
    Ok(r)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for q in MagicQuery::ALL {
            assert_eq!(MagicQuery::parse(q.name()), Ok(q));
            assert!(!q.sql().is_empty());
            // Every query with a teardown has a setup and vice versa.
            assert_eq!(q.setup().is_some(), q.teardown().is_some(), "{q}");
        }
        assert!(MagicQuery::parse("nope")
            .unwrap_err()
            .contains("oneplusone"));
    }

    #[test]
    fn setup_makes_the_schema_first() {
        let sql = setup_sql(MagicQuery::Arrays);
        assert!(sql.starts_with("DROP SCHEMA IF EXISTS magicstack_arrays CASCADE;"));
        assert!(sql.contains("SET search_path TO magicstack_arrays, public;"));
        assert!(sql.ends_with("FROM generate_series(1, 100));"));
        assert!(!setup_sql(MagicQuery::OnePlusOne).contains("CREATE TABLE"));
    }

    #[test]
    fn reports_are_parsed() {
        let out = "warming up\n{\"driver\": \"asyncpg\", \"query\": \"pg_type\", \"ops\": 120, \
                   \"rows\": 72000, \"elapsed_secs\": 2.001, \"cpu_secs\": 1.5, \
                   \"version\": \"0.30.0\", \"loop\": \"uvloop\"}\n";
        let r = parse_report(out).expect("report");
        assert_eq!((r.ops, r.rows), (120, 72000));
        assert_eq!(r.elapsed_secs, 2.001);
        assert_eq!(r.cpu_secs, 1.5);
        assert_eq!(r.version.as_deref(), Some("0.30.0"));
        assert_eq!(r.r#loop.as_deref(), Some("uvloop"));
        // pgx prints no version or loop.
        let pgx = r#"{"cpu_secs":0.9,"driver":"pgx","elapsed_secs":2.0,"ops":5,"query":"copyfrom","rows":50000}"#;
        assert_eq!(parse_report(pgx).expect("pgx").rows, 50000);
        assert!(parse_report("").is_err());
        assert!(parse_report("{\"ops\": 1}").is_err());
        assert!(parse_report(r#"{"ops":1,"rows":1,"elapsed_secs":0,"cpu_secs":0}"#).is_err());
    }

    #[test]
    fn checks_reject_wrong_answers() {
        assert_eq!(check_series(1..=1000).ok(), Some(1000));
        assert!(check_series(1..=999).is_err());
        assert!(check_bytes(&[b'a'; 1000]).is_ok());
        assert!(check_bytes(&[b'a'; 999]).is_err());
        let a: Vec<i32> = (1..=100).collect();
        assert!(check_array(&a).is_ok());
        assert!(check_array(&a[1..]).is_err());
        assert!(check_count(MagicQuery::Batch, 999, 1000).is_err());
    }
}
