//! The tables the workloads read, created idempotently: `CREATE TABLE IF
//! NOT EXISTS`, and refilled only when the row count is wrong.

use tokio_postgres::NoTls;

use crate::error::BenchError;

/// Rows of `bench_kv` (point-select keys are 1..=KV_ROWS).
pub const KV_ROWS: i32 = 10_000;
/// Rows of each `rows-*` table.
pub const ROWS: u64 = 50_000;
/// Timestamp columns of `bench_ts60`.
pub const TS_COLUMNS: usize = 60;

/// The point select: `v` is always `id * 3`.
pub const POINT_SQL: &str = "SELECT id, v FROM bench_kv WHERE id = $1";
/// rows-1col.
pub const ROWS1_SQL: &str = "SELECT id FROM bench_rows1";
/// rows-9col.
pub const ROWS9_SQL: &str = "SELECT id, a, b, c, d, e, f, g, h FROM bench_rows9";
/// rows-json: `doc` is a jsonb object whose text starts with `{"id": <id>,`.
pub const JSON_SQL: &str = "SELECT id, doc FROM bench_json";
/// Rows per `copy` operation.
pub const COPY_ROWS: u64 = 1_000_000;
/// Rows of TechEmpower's `world` table.
pub const WORLD_ROWS: i32 = 10_000;

/// TechEmpower's 12 fortunes (ids 1..=12, in order).
pub const FORTUNES: [&str; 12] = [
    "fortune: No such file or directory",
    "A computer scientist is someone who fixes things that aren't broken.",
    "After enough decimal places, nobody gives a damn.",
    "A bad random number generator: 1, 1, 1, 1, 1, 4.33e+67, 1, 1, 1",
    "A computer program does what you tell it to do, not what you want it to do.",
    "Emacs is a nice operating system, but I prefer UNIX. \u{2014} Tom Christaensen",
    "Any program that runs right is obsolete.",
    "A list is only as strong as its weakest link. \u{2014} Donald Knuth",
    "Feature: A bug with seniority.",
    "Computers make very fast, very accurate mistakes.",
    "<script>alert(\"This should not be displayed in a browser alert box.\");</script>",
    "\u{30d5}\u{30ec}\u{30fc}\u{30e0}\u{30ef}\u{30fc}\u{30af}\u{306e}\u{30d9}\u{30f3}\u{30c1}\u{30de}\u{30fc}\u{30af}",
];

fn fortune_values() -> String {
    FORTUNES
        .iter()
        .enumerate()
        .map(|(i, m)| format!("({}, '{}')", i + 1, m.replace('\'', "''")))
        .collect::<Vec<_>>()
        .join(", ")
}

/// rows-60ts: `t1, ..., t60`.
pub fn ts60_sql() -> String {
    let cols: Vec<String> = (1..=TS_COLUMNS).map(|k| format!("t{k}")).collect();
    format!("SELECT {} FROM bench_ts60", cols.join(", "))
}

struct Table {
    name: &'static str,
    create: String,
    fill: String,
    rows: u64,
}

fn tables() -> Vec<Table> {
    let ts_cols: Vec<String> = (1..=TS_COLUMNS)
        .map(|k| format!("t{k} timestamptz NOT NULL"))
        .collect();
    let ts_vals: Vec<String> = (1..=TS_COLUMNS)
        .map(|k| {
            format!("timestamptz '2020-01-01 00:00:00+00' + (g * 60 + {k}) * interval '1 second'")
        })
        .collect();
    vec![
        Table {
            name: "bench_kv",
            create: "CREATE TABLE IF NOT EXISTS bench_kv (id int4 PRIMARY KEY, v int8 NOT NULL)"
                .into(),
            fill: format!(
                "INSERT INTO bench_kv SELECT g, g * 3 FROM generate_series(1, {KV_ROWS}) g"
            ),
            rows: KV_ROWS as u64,
        },
        Table {
            name: "bench_rows1",
            create: "CREATE TABLE IF NOT EXISTS bench_rows1 (id int4 NOT NULL)".into(),
            fill: format!("INSERT INTO bench_rows1 SELECT g FROM generate_series(1, {ROWS}) g"),
            rows: ROWS,
        },
        Table {
            name: "bench_rows9",
            create: "CREATE TABLE IF NOT EXISTS bench_rows9 (id int4 NOT NULL, a int8 NOT NULL, \
                     b text NOT NULL, c text NOT NULL, d float8 NOT NULL, e bool NOT NULL, \
                     f int2 NOT NULL, g bytea NOT NULL, h float4 NOT NULL)"
                .into(),
            fill: format!(
                "INSERT INTO bench_rows9 SELECT g, g::int8 * 1000, 'name-' || g, md5(g::text), \
                 g * 0.5, g % 2 = 0, (g % 1000)::int2, decode(md5(g::text), 'hex'), g::float4 / 3 \
                 FROM generate_series(1, {ROWS}) g"
            ),
            rows: ROWS,
        },
        Table {
            name: "bench_ts60",
            create: format!(
                "CREATE TABLE IF NOT EXISTS bench_ts60 ({})",
                ts_cols.join(", ")
            ),
            fill: format!(
                "INSERT INTO bench_ts60 SELECT {} FROM generate_series(1, {ROWS}) g",
                ts_vals.join(", ")
            ),
            rows: ROWS,
        },
        Table {
            name: "bench_json",
            create: "CREATE TABLE IF NOT EXISTS bench_json (id int4 NOT NULL, doc jsonb NOT NULL)"
                .into(),
            fill: format!(
                "INSERT INTO bench_json SELECT g, jsonb_build_object('id', g, 'name', 'name-' || g, \
                 'tags', jsonb_build_array('a', 'b', g % 7), 'active', g % 2 = 0, 'score', g * 0.25) \
                 FROM generate_series(1, {ROWS}) g"
            ),
            rows: ROWS,
        },
        Table {
            name: "world",
            create: "CREATE TABLE IF NOT EXISTS world (id int4 PRIMARY KEY, randomnumber int4 NOT NULL)"
                .into(),
            fill: format!(
                "INSERT INTO world SELECT g, 1 + floor(random() * {WORLD_ROWS})::int4 \
                 FROM generate_series(1, {WORLD_ROWS}) g"
            ),
            rows: WORLD_ROWS as u64,
        },
        Table {
            name: "fortune",
            create: "CREATE TABLE IF NOT EXISTS fortune (id int4 PRIMARY KEY, message text NOT NULL)"
                .into(),
            fill: format!("INSERT INTO fortune VALUES {}", fortune_values()),
            rows: FORTUNES.len() as u64,
        },
    ]
}

/// What [`ensure`] had to do.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct FixtureReport {
    /// Tables whose contents were (re)written because the count was wrong.
    pub filled: Vec<String>,
}

/// Connects with tokio-postgres (any driver would do; this one is a peer,
/// not the subject) and returns the client, its connection running.
pub async fn setup_client(url: &str) -> Result<tokio_postgres::Client, BenchError> {
    let (client, conn) = tokio_postgres::connect(url, NoTls).await?;
    tokio::spawn(async move {
        let _ = conn.await;
    });
    Ok(client)
}

/// The server's major version (`server_version_num / 10000`), or `None`
/// when it cannot be read (plain TCP, the tool's own connection).
pub async fn server_major(url: &str) -> Option<u32> {
    let client = setup_client(url).await.ok()?;
    let row = client
        .query_one("SHOW server_version_num", &[])
        .await
        .ok()?;
    let num: u32 = row.try_get::<_, &str>(0).ok()?.parse().ok()?;
    Some(num / 10_000)
}

/// Creates the fixture tables when missing and fills any whose row count is
/// wrong (truncate, insert, analyze). Running it twice changes nothing.
pub async fn ensure(url: &str) -> Result<FixtureReport, BenchError> {
    let client = setup_client(url).await?;
    let mut report = FixtureReport::default();
    for t in tables() {
        client.batch_execute(&t.create).await?;
        let row = client
            .query_one(&format!("SELECT count(*) FROM {}", t.name), &[])
            .await?;
        let count: i64 = row.get(0);
        if count as u64 != t.rows {
            client
                .batch_execute(&format!(
                    "BEGIN; TRUNCATE {0}; {1}; COMMIT; ANALYZE {0}",
                    t.name, t.fill
                ))
                .await?;
            report.filled.push(t.name.to_string());
        }
    }
    Ok(report)
}
