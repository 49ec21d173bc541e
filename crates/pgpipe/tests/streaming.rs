//! Streaming results: bounded memory under a slow consumer, early drops,
//! errors part-way.

mod common;

use std::time::Duration;

use common::{bounded, connect, database};
use pgpipe_testkit::AuthRole;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_slow_consumer_keeps_buffered_bytes_under_the_bound() {
    bounded(async {
        let db = database("stream_bound");
        let (client, mut connection) = pgpipe::connect_with_driver(&db.url(AuthRole::Trust))
            .await
            .unwrap();
        const LIMIT: usize = 256 * 1024;
        connection.max_buffered(LIMIT);
        tokio::spawn(connection);

        const N: i64 = 2_000_000;
        let mut rows = client
            .query_stream("SELECT g::int8 FROM generate_series(1, $1::int8) g", (N,))
            .await
            .unwrap();
        let (mut count, mut sum) = (0i64, 0i64);
        while let Some(row) = rows.next().await {
            let v: i64 = row.unwrap().get(0);
            count += 1;
            sum += v;
            if count % 50_000 == 0 {
                // Deliberately slow: the server is far ahead by now.
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
        }
        assert_eq!(count, N);
        assert_eq!(sum, N * (N + 1) / 2);
        assert_eq!(rows.rows_affected(), Some(N as u64));
        // 2M rows are ~38 MB on the wire; what was held unread at any time
        // stays within the bound plus one socket read (64 KiB) of slack.
        let peak = client.stats().peak_buffered_bytes;
        assert!(peak <= LIMIT + 128 * 1024, "peak buffered {peak} bytes");
        assert!(peak > 0);
    })
    .await
}

/// The bound above allows one socket read of slack. A read used to take
/// all the spare capacity of the read buffer, which grows past 64 KiB (a
/// large message reserves room for itself; `bytes` doubles allocations):
/// then a paused response could jump far past its bound in one read. After a
/// 1 MB row has grown the buffer, every read must still be at most 64 KiB.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_read_takes_more_than_one_chunk_after_a_large_row() {
    bounded(async {
        let db = database("stream_read_size");
        let (client, mut connection) = pgpipe::connect_with_driver(&db.url(AuthRole::Trust))
            .await
            .unwrap();
        const LIMIT: usize = 256 * 1024;
        connection.max_buffered(LIMIT);
        tokio::spawn(connection);

        const N: i64 = 400_000;
        let mut rows = client
            .query_stream(
                "SELECT CASE WHEN g = 1 THEN repeat('x', 1000000) ELSE g::text END \
                 FROM generate_series(1, $1::int8) g",
                (N,),
            )
            .await
            .unwrap();
        let mut count = 0i64;
        while let Some(row) = rows.next().await {
            let v: &str = row.as_ref().unwrap().get(0);
            count += 1;
            if count == 1 {
                assert_eq!(v.len(), 1_000_000);
            } else {
                assert_eq!(v, count.to_string());
            }
            if count % 20_000 == 0 {
                // Slow: the server (and the kernel's socket buffer) get ahead.
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
        }
        assert_eq!(count, N);
        let stats = client.stats();
        assert!(stats.socket_reads > 0 && stats.socket_writes > 0);
        assert!(
            stats.largest_read_bytes <= 64 * 1024,
            "one read took {} bytes",
            stats.largest_read_bytes
        );
    })
    .await
}

#[tokio::test]
async fn a_stream_dropped_half_read_leaves_the_connection_correct() {
    bounded(async {
        let db = database("stream_drop");
        let client = connect(&db).await;
        for k in [0usize, 1, 10, 1000] {
            {
                let mut rows = client
                    .query_stream(
                        "SELECT g, repeat('y', 200) FROM generate_series(1, 20000) g",
                        (),
                    )
                    .await
                    .unwrap();
                for _ in 0..k {
                    rows.next().await.unwrap().unwrap();
                }
            }
            let v: i32 = client
                .query_one("SELECT $1::int4", (k as i32,))
                .await
                .unwrap()
                .get(0);
            assert_eq!(v, k as i32, "after dropping a stream at row {k}");
        }
    })
    .await
}

#[tokio::test]
async fn an_error_part_way_ends_the_stream_with_that_error() {
    bounded(async {
        let db = database("stream_error");
        let client = connect(&db).await;
        let mut rows = client
            .query_stream("SELECT 10 / (5 - g) FROM generate_series(1, 10) g", ())
            .await
            .unwrap();
        let mut ok = 0;
        let err = loop {
            match rows.next().await {
                Some(Ok(_)) => ok += 1,
                Some(Err(e)) => break e,
                None => panic!("the stream ended without the division error"),
            }
        };
        assert!(ok <= 4);
        assert_eq!(err.code().map(|c| c.code()), Some("22012"));
        assert!(rows.next().await.is_none());
        assert_eq!(
            client
                .query_one("SELECT 1::int4", ())
                .await
                .unwrap()
                .get::<i32, _>(0),
            1
        );
    })
    .await
}

/// Rows already in hand are taken without a round through the response
/// reader each (`RowStream::next`'s buffered path): across many chunks,
/// every row still comes once and in order, through `next` and through
/// the `Stream` trait alike, and the stream ends with the row count.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rows_in_hand_arrive_once_and_in_order() {
    use futures_util::StreamExt;
    bounded(async {
        let db = database("stream_in_order");
        let client = connect(&db).await;
        const N: i64 = 300_000;
        let sql = "SELECT g::int8, 'row ' || g FROM generate_series(1, $1::int8) g";
        let mut rows = client.query_stream(sql, (N,)).await.unwrap();
        let mut want = 0i64;
        while let Some(row) = rows.next().await {
            let row = row.unwrap();
            want += 1;
            assert_eq!(row.get::<i64, _>(0), want);
            assert_eq!(row.get::<&str, _>(1), format!("row {want}"));
        }
        assert_eq!(want, N);
        assert_eq!(rows.rows_affected(), Some(N as u64));

        let rows = client.query_stream(sql, (N,)).await.unwrap();
        let seen: Vec<i64> = rows.map(|r| r.unwrap().get::<i64, _>(0)).collect().await;
        assert_eq!(seen.len(), N as usize);
        assert!(seen.iter().zip(1..).all(|(&v, i)| v == i), "out of order");
    })
    .await
}

/// An error after many rows, with rows still in hand before it: every row
/// before the error arrives, then the error, then the end; the connection
/// serves the next query.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_error_after_many_rows_in_hand_comes_after_every_row_before_it() {
    bounded(async {
        let db = database("stream_late_error");
        let client = connect(&db).await;
        const FAIL_AT: i32 = 150_000;
        let mut rows = client
            .query_stream(
                "SELECT 10 / (g - $1::int4) FROM generate_series(1, $1::int4 + 50000) g",
                (FAIL_AT,),
            )
            .await
            .unwrap();
        let mut ok = 0;
        let err = loop {
            match rows.next().await {
                Some(Ok(row)) => {
                    ok += 1;
                    assert_eq!(row.get::<i32, _>(0), 10 / (ok - FAIL_AT));
                }
                Some(Err(e)) => break e,
                None => panic!("the stream ended without the division error"),
            }
        };
        assert_eq!(ok, FAIL_AT - 1, "every row before the failing one");
        assert_eq!(err.code().map(|c| c.code()), Some("22012"));
        assert!(rows.next().await.is_none());
        let v: i32 = client.query_one("SELECT 7::int4", ()).await.unwrap().get(0);
        assert_eq!(v, 7);
    })
    .await
}

/// Rows from `next` share the chunk they arrived in: kept past later
/// chunks, past the stream's end and past the stream itself, they still
/// read their own values; `next` and `next_batch` mixed hand out every
/// row once, in order.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rows_kept_from_next_outlive_their_chunk_and_the_stream() {
    bounded(async {
        let db = database("stream_kept_rows");
        let client = connect(&db).await;
        const N: i64 = 200_000;
        let sql = "SELECT g::int8 AS n, 'row ' || g AS label FROM generate_series(1, $1::int8) g";
        let mut rows = client.query_stream(sql, (N,)).await.unwrap();
        let (mut kept, mut want) = (Vec::new(), 0i64);
        let mut by_batch = 0;
        loop {
            // Mostly `next`; now and then a few rows through a batch, read
            // in place from the same chunk.
            if want % 1_000 == 500 {
                let Some(batch) = rows.next_batch().await else {
                    break;
                };
                for row in batch.unwrap().take(3) {
                    want += 1;
                    by_batch += 1;
                    assert_eq!(row.get::<i64, _>("n"), want);
                }
                continue;
            }
            let Some(row) = rows.next().await else { break };
            let row = row.unwrap();
            want += 1;
            assert_eq!(row.get::<i64, _>(0), want);
            if want % 997 == 0 {
                kept.push((want, row.clone()));
                kept.push((want, row));
            }
        }
        assert_eq!(want, N, "every row once");
        assert!(by_batch > 0);
        assert_eq!(rows.rows_affected(), Some(N as u64));
        drop(rows);
        // Every 997th row, but for the few a batch read instead.
        assert!(kept.len() > 380, "{} rows kept", kept.len());
        for (n, row) in &kept {
            assert_eq!(row.get::<i64, _>("n"), *n);
            assert_eq!(row.get::<&str, _>("label"), format!("row {n}"));
            assert_eq!(row.len(), 2);
            assert_eq!(row.columns()[1].name(), "label");
        }
        let shown = format!("{:?}", kept[0].1);
        assert!(
            shown.contains("\"label\"") && shown.contains("bytes of"),
            "{shown}"
        );
    })
    .await
}
