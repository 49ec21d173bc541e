//! Typed binary COPY against a real server: 1M rows of every kind of
//! column (int8, text, numeric, timestamptz, jsonb, bytea, an enum, the
//! `mail.attach[]` composite array, NULLs) in and back out unchanged; type
//! mismatches caught before any data is sent; a bad row in the middle
//! stopping the writer; the upsert helper.

mod common;

use chrono::{DateTime, TimeZone, Utc};
use common::{bounded, connect, database};
use pgpipe::{Composite, Encode, ErrorKind, FromRow, OnConflict, PgEnum, ToRow};
use rust_decimal::Decimal;
use serde_json::{json, Value};

const SCHEMA: &str = "
    CREATE SCHEMA mail;
    CREATE TYPE mail.attach AS (filename text, type text, size bigint);
    CREATE TYPE mood AS ENUM ('sad', 'ok', 'very_happy');
    CREATE TABLE mail.message (
        id int8 PRIMARY KEY, subject text, score numeric, sent timestamptz,
        meta jsonb, body bytea, mood mood, attachments mail.attach[]
    );
";

#[derive(Composite, Debug, Clone, PartialEq)]
#[pg(name = "mail.attach")]
struct Attach {
    filename: String,
    r#type: String,
    size: i64,
}

#[derive(PgEnum, Debug, Clone, Copy, PartialEq)]
#[pg(name = "mood", rename_all = "snake_case")]
enum Mood {
    Sad,
    Ok,
    VeryHappy,
}

type Message = (
    i64,
    Option<String>,
    Option<Decimal>,
    Option<DateTime<Utc>>,
    Option<Value>,
    Option<Vec<u8>>,
    Option<Mood>,
    Option<Vec<Attach>>,
);

#[derive(FromRow, Debug, PartialEq)]
struct MessageRow {
    id: i64,
    subject: Option<String>,
    mood: Option<Mood>,
    attachments: Option<Vec<Attach>>,
}

const COLUMNS: &[&str] = &[
    "id",
    "subject",
    "score",
    "sent",
    "meta",
    "body",
    "mood",
    "attachments",
];

/// The same row as a `#[derive(ToRow, FromRow)]` struct: its field names
/// (one renamed) are the COPY's column list.
#[derive(ToRow, FromRow, Debug, PartialEq)]
struct Mail {
    id: i64,
    subject: Option<String>,
    score: Option<Decimal>,
    sent: Option<DateTime<Utc>>,
    meta: Option<Value>,
    body: Option<Vec<u8>>,
    mood: Option<Mood>,
    #[pg(rename = "attachments")]
    files: Option<Vec<Attach>>,
}

fn mail(i: i64) -> Mail {
    let (id, subject, score, sent, meta, body, mood, files) = message(i);
    Mail {
        id,
        subject,
        score,
        sent,
        meta,
        body,
        mood,
        files,
    }
}

/// Row `i`, the same each time it is asked for (so nothing has to be held
/// to compare 1M rows); every column is NULL in some rows.
fn message(i: i64) -> Message {
    let some = |k: i64| i % k != 0;
    (
        i,
        some(7).then(|| format!("subject {i} ✉")),
        some(5).then(|| Decimal::new(i * 1000 + 7, 3)),
        some(11).then(|| Utc.timestamp_opt(1_700_000_000 + i, 0).unwrap()),
        some(13).then(|| json!({"i": i, "tags": ["a", "b"]})),
        some(3).then(|| (i as u32).to_be_bytes().to_vec()),
        some(2).then_some(match i % 3 {
            0 => Mood::Sad,
            1 => Mood::Ok,
            _ => Mood::VeryHappy,
        }),
        some(4).then(|| {
            (0..(i % 3))
                .map(|k| Attach {
                    filename: format!("f{i}-{k}.pdf"),
                    r#type: "application/pdf".into(),
                    size: i * k,
                })
                .collect()
        }),
    )
}

/// 1M rows of all eight columns: about 80 s in and out together in a
/// debug build on the shared 2-core machine (27 s of it client CPU), hence
/// its own 300 s bound (text and CSV have their own 1M-row tests in
/// copy.rs).
const N: i64 = 1_000_000;

#[tokio::test]
async fn a_million_typed_rows_in_and_out_unchanged() {
    let db = database("copy_binary_1m");
    tokio::time::timeout(std::time::Duration::from_secs(300), async {
        let client = connect(&db).await;
        client.batch_execute(SCHEMA).await.unwrap();
        // In through the derived struct: no column list, the fields name
        // the columns.
        let mut copy = client
            .copy_in_rows::<Mail>("mail.message", &[])
            .await
            .unwrap();
        let described: Vec<&str> = copy.columns().iter().map(|c| c.name()).collect();
        assert_eq!(described, COLUMNS);
        for i in 0..N {
            copy.write(&mail(i)).await.unwrap();
        }
        assert_eq!(copy.rows_written(), N as u64);
        assert_eq!(copy.finish().await.unwrap(), N as u64);

        // Out into the same struct (by name), and as tuples (by position).
        let mut rows = client
            .copy_out_rows::<Mail>(
                "SELECT attachments, mood, body, meta, sent, score, subject, id \
                 FROM mail.message ORDER BY id",
            )
            .await
            .unwrap();
        let mut i = 0;
        while let Some(row) = rows.next().await {
            let row = row.unwrap();
            assert_eq!(row, mail(i), "row {i}");
            i += 1;
        }
        assert_eq!(i, N);
        assert_eq!(rows.rows(), Some(N as u64));
        let tuples = client
            .copy_out_rows::<Message>(
                "SELECT id, subject, score, sent, meta, body, mood, attachments \
                 FROM mail.message WHERE id < 1000 ORDER BY id",
            )
            .await
            .unwrap()
            .collect()
            .await
            .unwrap();
        assert_eq!(tuples.len(), 1000);
        for (i, row) in tuples.into_iter().enumerate() {
            assert_eq!(row, message(i as i64), "row {i}");
        }

        // Into a FromRow struct, columns matched by name.
        let some = client
            .copy_out_rows::<MessageRow>(
                "SELECT attachments, mood, subject, id FROM mail.message WHERE id < 8 ORDER BY id",
            )
            .await
            .unwrap()
            .collect()
            .await
            .unwrap();
        assert_eq!(some.len(), 8);
        for (i, row) in some.iter().enumerate() {
            let m = message(i as i64);
            assert_eq!(
                (row.id, &row.subject, row.mood, &row.attachments),
                (m.0, &m.1, m.6, &m.7)
            );
        }
    })
    .await
    .expect("the 1M-row binary COPY exceeded its time bound");
}

#[tokio::test]
async fn a_type_that_does_not_fit_fails_before_any_data_is_sent() {
    let db = database("copy_binary_types");
    bounded(async {
        let client = connect(&db).await;
        client
            .batch_execute("CREATE TABLE n (small int4, name text)")
            .await
            .unwrap();
        // i64 into int4.
        let mut copy = client
            .copy_in_rows::<(i64, &str)>("n", &["small", "name"])
            .await
            .unwrap();
        let e = copy.write(&(1, "x")).await.unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Encode);
        let msg = e.to_string();
        assert!(
            msg.contains("row 1") && msg.contains("\"small\"") && msg.contains("int4"),
            "{msg}"
        );
        assert_eq!(copy.bytes_sent(), 0);
        drop(copy);
        // The same through a derived struct: its field, not a position.
        #[derive(ToRow)]
        struct Wide<'a> {
            small: i64,
            name: &'a str,
        }
        let mut copy = client.copy_in_rows::<Wide>("n", &[]).await.unwrap();
        let e = copy
            .write(&Wide {
                small: 1,
                name: "x",
            })
            .await
            .unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Encode);
        let msg = e.to_string();
        assert!(
            msg.contains("row 1") && msg.contains("\"small\"") && msg.contains("int4"),
            "{msg}"
        );
        assert_eq!(copy.bytes_sent(), 0);
        drop(copy);
        // A field without a column: refused when the writer is made.
        #[derive(ToRow)]
        #[allow(dead_code)] // never built: refused before any row
        struct Stray {
            small: i32,
            #[pg(rename = "nope")]
            name: String,
        }
        let e = client.copy_in_rows::<Stray>("n", &[]).await.unwrap_err();
        assert_eq!(e.code().map(|c| c.code()), Some("42703"), "{e}");
        assert!(e.to_string().contains("nope"), "{e}");
        // A missing column: refused when the writer is made.
        let e = client
            .copy_in_rows::<(i32, &str)>("n", &["small", "nope"])
            .await
            .unwrap_err();
        assert_eq!(e.code().map(|c| c.code()), Some("42703"), "{e}");
        // A row with the wrong number of values.
        let mut copy = client
            .copy_in_rows::<[i32]>("n", &["small", "name"])
            .await
            .unwrap();
        let e = copy.write(&[1, 2, 3][..]).await.unwrap_err();
        assert_eq!(e.kind(), ErrorKind::ColumnCount, "{e}");
        copy.abort("test").await.unwrap();
        // A column name cannot inject SQL.
        let e = client
            .copy_in_rows::<(i32,)>("n", &["small\"); DROP TABLE n; --"])
            .await
            .unwrap_err();
        assert_eq!(e.code().map(|c| c.code()), Some("42703"), "{e}");
        let count: i64 = client
            .query_one("SELECT count(*) FROM n", ())
            .await
            .unwrap()
            .get(0);
        assert_eq!(count, 0);
        // A row that fits goes in.
        let mut copy = client
            .copy_in_rows::<(i32, Option<&str>)>("n", &["small", "name"])
            .await
            .unwrap();
        copy.write(&(1, None)).await.unwrap();
        assert_eq!(copy.finish().await.unwrap(), 1);
        // Rows whose types alone decide are checked once; rows that may
        // change type from one to the next (a `dyn Encode` slot) are
        // checked every time: the 1001st row, an i64, is refused.
        let mut copy = client
            .copy_in_rows::<(Box<dyn Encode + Send + Sync>, String)>("n", &["small", "name"])
            .await
            .unwrap();
        for i in 0..1000i32 {
            copy.write(&(Box::new(i), format!("r{i}"))).await.unwrap();
        }
        let e = copy
            .write(&(Box::new(7i64), "late".into()))
            .await
            .unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Encode);
        assert!(e.to_string().contains("row 1001"), "{e}");
        // The writer stays usable after the refused row.
        copy.write(&(Box::new(1000i32), "last".into()))
            .await
            .unwrap();
        assert_eq!(copy.finish().await.unwrap(), 1001);
    })
    .await;
}

#[tokio::test]
async fn a_bad_row_in_a_million_stops_the_writer_with_the_servers_error() {
    let db = database("copy_binary_bad");
    bounded(async {
        let client = connect(&db).await;
        client
            .batch_execute("CREATE TABLE b (id int8 CHECK (id <> 500), name text)")
            .await
            .unwrap();
        let mut copy = client.copy_in_rows::<(i64, &str)>("b", &[]).await.unwrap();
        let mut error = None;
        for i in 1..=1_000_000i64 {
            if let Err(e) = copy.write(&(i, "name")).await {
                error = Some(e);
                break;
            }
        }
        let e = error.expect("the bad row was not noticed while writing");
        let written = copy.rows_written();
        // ~20 bytes a row: the write-ahead (256 KiB) plus socket buffers
        // hold some tens of thousands of rows at most.
        assert!(written < 300_000, "wrote {written} rows before noticing");
        let db_error = e.as_db_error().expect("the server's error");
        assert_eq!(db_error.code().code(), "23514");
        assert!(
            db_error.where_().unwrap_or("").contains("line 500"),
            "{e:?}"
        );
        assert!(copy.finish().await.is_err());
        let count: i64 = client
            .query_one("SELECT count(*) FROM b", ())
            .await
            .unwrap()
            .get(0);
        assert_eq!(count, 0);
    })
    .await;
}

#[tokio::test]
async fn upsert_counts_inserts_and_updates() {
    let db = database("copy_upsert");
    bounded(async {
        let client = connect(&db).await;
        client
            .batch_execute(
                "CREATE TABLE u (id int8 PRIMARY KEY, name text, n int4); \
                 INSERT INTO u SELECT g, 'old', 0 FROM generate_series(0, 99998, 2) g",
            )
            .await
            .unwrap();
        // 100k rows: the even ids (50k) exist, the odd ones are new.
        let rows: Vec<(i64, String, i32)> = (0..100_000)
            .map(|i| (i, format!("new {i}"), i as i32))
            .collect();
        let counts = client
            .upsert_rows::<(i64, String, i32), _>(
                "u",
                &["id", "name", "n"],
                &["id"],
                OnConflict::Update,
                &rows,
            )
            .await
            .unwrap();
        assert_eq!(
            (counts.inserted, counts.updated, counts.skipped),
            (50_000, 50_000, 0)
        );
        let wrong: i64 = client
            .query_one(
                "SELECT count(*) FROM u WHERE name <> 'new ' || id OR n <> id",
                (),
            )
            .await
            .unwrap()
            .get(0);
        assert_eq!(wrong, 0);
        // DO NOTHING: 100k existing + 100k new.
        let more: Vec<(i64, &str, i32)> = (50_000..150_000).map(|i| (i, "newer", -1)).collect();
        let counts = client
            .upsert_rows::<(i64, &str, i32), _>(
                "u",
                &["id", "name", "n"],
                &["id"],
                OnConflict::Nothing,
                &more,
            )
            .await
            .unwrap();
        assert_eq!(
            (counts.inserted, counts.updated, counts.skipped),
            (50_000, 0, 50_000)
        );
        let total: i64 = client
            .query_one("SELECT count(*) FROM u", ())
            .await
            .unwrap()
            .get(0);
        assert_eq!(total, 150_000);
        let kept: String = client
            .query_one("SELECT name FROM u WHERE id = 60000", ())
            .await
            .unwrap()
            .get(0);
        assert_eq!(kept, "new 60000");
        // A failing upsert leaves nothing behind (one transaction).
        let dup = vec![(1i64, "a", 1i32), (1, "b", 2)];
        assert!(client
            .upsert_rows::<(i64, &str, i32), _>(
                "u",
                &["id", "name", "n"],
                &["id"],
                OnConflict::Update,
                &dup
            )
            .await
            .is_err());
        let one: String = client
            .query_one("SELECT name FROM u WHERE id = 1", ())
            .await
            .unwrap()
            .get(0);
        assert_eq!(one, "new 1");
        assert_eq!(client.transaction_status(), pgpipe::TransactionStatus::Idle);
    })
    .await;
}
