//! `RowStream::next_batch`: rows read in place, mixed with `next`, under
//! a slow consumer, through errors and early drops.

mod common;

use std::time::Duration;

use common::{bounded, connect, database};
use pgpipe::{ErrorKind, Row, SqlState};
use pgpipe_testkit::AuthRole;

const MIXED_SQL: &str = "SELECT g, CASE WHEN g % 7 = 0 THEN NULL ELSE 'row ' || g END, \
                         g::float8 / 2 FROM generate_series(1, $1::int4) g";

#[tokio::test]
async fn batches_read_every_row_with_values_and_nulls() {
    bounded(async {
        let db = database("batch_values");
        let client = connect(&db).await;
        const N: i32 = 100_000;
        let mut rows = client.query_stream(MIXED_SQL, (N,)).await.unwrap();
        let (mut count, mut batches, mut nulls) = (0i32, 0u32, 0u32);
        while let Some(batch) = rows.next_batch().await {
            let batch = batch.unwrap();
            assert_eq!(batch.columns().len(), 3);
            batches += 1;
            let mut in_batch = 0;
            for row in batch {
                count += 1;
                in_batch += 1;
                let g: i32 = row.get(0);
                assert_eq!(g, count, "rows arrive in order");
                let text: Option<&str> = row.get(1);
                match text {
                    None => {
                        assert_eq!(g % 7, 0);
                        nulls += 1;
                    }
                    Some(t) => assert_eq!(t, format!("row {g}")),
                }
                // By name, and reading backwards, as on Row.
                let half: f64 = row.get("?column?");
                assert_eq!(half, f64::from(g) / 2.0);
                assert_eq!(row.get::<i32, _>("g"), g);
            }
            assert!(in_batch > 0, "a batch holds at least one row");
        }
        assert_eq!(count, N);
        assert_eq!(nulls, (N / 7) as u32);
        assert!(
            batches > 1 && batches < N as u32 / 10,
            "{batches} batches: rows are read many per wake-up"
        );
        assert_eq!(rows.rows_affected(), Some(N as u64));
        assert!(rows.next_batch().await.is_none(), "stays ended");
        // The connection serves the next query.
        let one: i32 = client.query_one("SELECT 1", ()).await.unwrap().get(0);
        assert_eq!(one, 1);
    })
    .await
}

#[tokio::test]
async fn batches_and_next_mix_without_losing_or_repeating_a_row() {
    bounded(async {
        let db = database("batch_mixed");
        let client = connect(&db).await;
        const N: i32 = 20_000;
        let mut rows = client.query_stream(MIXED_SQL, (N,)).await.unwrap();
        let mut seen = Vec::with_capacity(N as usize);
        let mut kept: Vec<Row> = Vec::new();
        let mut turn = 0u32;
        loop {
            turn += 1;
            if turn % 2 == 0 {
                // One owned row from `next`.
                match rows.next().await {
                    Some(row) => seen.push(row.unwrap().get::<i32, _>(0)),
                    None => break,
                }
            } else {
                // A few rows of a batch; the rest must come next.
                let Some(batch) = rows.next_batch().await else {
                    break;
                };
                for row in batch.unwrap().take(3) {
                    seen.push(row.get(0));
                    if kept.len() < 5 {
                        kept.push(row.to_row());
                    }
                }
            }
        }
        let want: Vec<i32> = (1..=N).collect();
        assert_eq!(seen, want);
        // Owned rows taken from borrowed ones outlive the stream.
        drop(rows);
        let firsts: Vec<i32> = kept.iter().map(|r| r.get(0)).collect();
        assert_eq!(firsts, vec![1, 2, 3, 5, 6]);
        assert_eq!(kept[0].get::<Option<&str>, _>(1), Some("row 1"));
    })
    .await
}

#[tokio::test]
async fn a_server_error_part_way_ends_the_batches_with_it() {
    bounded(async {
        let db = database("batch_error");
        let client = connect(&db).await;
        let mut rows = client
            .query_stream(
                "SELECT 1000 / (30000 - g) FROM generate_series(1, 50000) g",
                (),
            )
            .await
            .unwrap();
        let mut count = 0;
        let mut failure = None;
        while let Some(batch) = rows.next_batch().await {
            match batch {
                Ok(batch) => count += batch.count(),
                Err(e) => failure = Some(e),
            }
        }
        let e = failure.expect("the division by zero reaches the reader");
        assert_eq!(e.code(), Some(&SqlState::DIVISION_BY_ZERO), "{e}");
        assert!(count < 30000, "{count} rows before the error");
        let one: i32 = client.query_one("SELECT 1", ()).await.unwrap().get(0);
        assert_eq!(one, 1);
    })
    .await
}

#[tokio::test]
async fn empty_results_and_statements_without_rows_end_at_once() {
    bounded(async {
        let db = database("batch_empty");
        let client = connect(&db).await;
        let mut rows = client
            .query_stream("SELECT g FROM generate_series(1, 10) g WHERE g < 0", ())
            .await
            .unwrap();
        assert!(rows.next_batch().await.is_none());
        assert_eq!(rows.rows_affected(), Some(0));
        client
            .batch_execute("CREATE TABLE t (id int4)")
            .await
            .unwrap();
        let mut rows = client
            .query_stream("INSERT INTO t SELECT generate_series(1, 5)", ())
            .await
            .unwrap();
        assert!(rows.next_batch().await.is_none());
        assert_eq!(rows.rows_affected(), Some(5));
        // A server error before any row.
        let mut rows = client.query_stream("SELECT 1 / 0", ()).await.unwrap();
        let e = rows.next_batch().await.unwrap().unwrap_err();
        assert_eq!(e.code(), Some(&SqlState::DIVISION_BY_ZERO), "{e}");
        assert!(rows.next_batch().await.is_none());
    })
    .await
}

#[tokio::test]
async fn a_wrong_type_is_an_error_naming_the_column() {
    bounded(async {
        let db = database("batch_types");
        let client = connect(&db).await;
        let mut rows = client
            .query_stream("SELECT 1::int4 AS id, 'x'::text AS name", ())
            .await
            .unwrap();
        let batch = rows.next_batch().await.unwrap().unwrap();
        let row = batch.into_iter().next().unwrap();
        let e = row.try_get::<bool, _>("id").unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Decode);
        assert!(e.to_string().contains("\"id\""), "{e}");
        let e = row.try_get::<i32, _>("missing").unwrap_err();
        assert_eq!(e.kind(), ErrorKind::ColumnNotFound);
        assert_eq!(row.try_get::<&str, _>(1).unwrap(), "x");
        assert!(format!("{row:?}").contains("name"));
    })
    .await
}

/// Dropping a stream in the middle of a batch leaves the connection in
/// step: the rest of the result is discarded, the next query is answered.
#[tokio::test]
async fn dropping_the_stream_mid_batch_keeps_the_connection_usable() {
    bounded(async {
        let db = database("batch_drop");
        let client = connect(&db).await;
        for k in [1usize, 10, 5000] {
            let mut rows = client.query_stream(MIXED_SQL, (200_000,)).await.unwrap();
            let mut read = 0;
            while read < k {
                let Some(batch) = rows.next_batch().await else {
                    break;
                };
                for row in batch.unwrap().take(k - read) {
                    assert_eq!(row.get::<i32, _>(0) as usize, read + 1);
                    read += 1;
                }
            }
            assert_eq!(read, k);
            drop(rows);
            let v: i64 = client
                .query_one("SELECT $1::int8 * 2", (21i64,))
                .await
                .unwrap()
                .get(0);
            assert_eq!(v, 42, "after dropping at row {k}");
        }
    })
    .await
}

/// Reading in place keeps the same bound on unread bytes as `next`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_slow_batch_reader_keeps_buffered_bytes_under_the_bound() {
    bounded(async {
        let db = database("batch_bound");
        let (client, mut connection) = pgpipe::connect_with_driver(&db.url(AuthRole::Trust))
            .await
            .unwrap();
        const LIMIT: usize = 256 * 1024;
        connection.max_buffered(LIMIT);
        tokio::spawn(connection);
        const N: i64 = 1_000_000;
        let mut rows = client
            .query_stream("SELECT g::int8 FROM generate_series(1, $1::int8) g", (N,))
            .await
            .unwrap();
        let (mut count, mut sum, mut batches) = (0i64, 0i64, 0u64);
        while let Some(batch) = rows.next_batch().await {
            for row in batch.unwrap() {
                count += 1;
                sum += row.get::<i64, _>(0);
            }
            batches += 1;
            if batches % 20 == 0 {
                // Deliberately slow: the server is far ahead by now.
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
        }
        assert_eq!(count, N);
        assert_eq!(sum, N * (N + 1) / 2);
        let peak = client.stats().peak_buffered_bytes;
        assert!(peak <= LIMIT + 128 * 1024, "peak buffered {peak} bytes");
        assert!(peak > 0);
    })
    .await
}
