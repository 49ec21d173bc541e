//! COPY in text and CSV against a real server: round trips that give the
//! same bytes back, the writer's interfaces (send, AsyncRead, Sink), abort
//! and drop, errors noticed mid-COPY, the pipeline fenced while a COPY
//! runs, COPY OUT dropped half-read, notices mid-COPY, transactions and the
//! pool.

mod common;

use std::future::Future;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use bytes::Bytes;
use common::{bounded, connect, database};
use futures_util::SinkExt;
use pgpipe::{Client, ErrorKind, Pool};
use pgpipe_testkit::AuthRole;

/// Rows in the big text and CSV round trips (the 1M; typed
/// binary is in copy_binary.rs). Their data (~80 MB each way) is compared
/// byte for byte.
const BIG: usize = 1_000_000;

/// The bound of a 1M-row round trip: most of its time is the server's,
/// and a loaded 2-core CI machine right after a build is slow.
async fn bounded_big<F: std::future::Future>(f: F) -> F::Output {
    tokio::time::timeout(std::time::Duration::from_secs(300), f)
        .await
        .expect("the 1M-row COPY round trip exceeded its time bound")
}

async fn setup(client: &Client) {
    client
        .batch_execute(
            "CREATE TABLE t (id int8 PRIMARY KEY, name text, score numeric, at timestamptz, \
             doc jsonb, raw bytea)",
        )
        .await
        .unwrap();
}

async fn count(client: &Client) -> i64 {
    client
        .query_one("SELECT count(*) FROM t", ())
        .await
        .unwrap()
        .get(0)
}

/// Text-format rows exactly as the server prints them (so COPY OUT must
/// give the same bytes): escapes, NULLs, unicode.
fn text_rows(n: usize) -> Vec<u8> {
    let mut out = Vec::with_capacity(n * 80);
    for i in 0..n {
        let name = match i % 5 {
            0 => "\\N".to_owned(),
            1 => format!("tab\\there {i}"),
            2 => format!("naïve \"quoted\" {i}"),
            3 => format!("back\\\\slash\\nnewline {i}"),
            _ => format!("plain {i}"),
        };
        let score = if i % 7 == 0 {
            "\\N".to_owned()
        } else {
            format!("{}.{:02}", i, i % 100)
        };
        out.extend_from_slice(
            format!(
                "{i}\t{name}\t{score}\t2026-11-24 00:00:{:02}+00\t{{\"i\": {i}}}\t\\\\x{:08x}\n",
                i % 60,
                i
            )
            .as_bytes(),
        );
    }
    out
}

async fn copy_out_all(client: &impl pgpipe::GenericCopy, sql: &str) -> Vec<u8> {
    let mut out = client.copy_out(sql).await.unwrap();
    let mut data = Vec::new();
    while let Some(chunk) = out.next().await {
        data.extend_from_slice(&chunk.unwrap());
    }
    data
}

#[tokio::test]
async fn text_round_trip_gives_the_same_bytes() {
    let db = database("copy_text");
    bounded_big(async {
        let client = connect(&db).await;
        client.batch_execute("SET TimeZone = 'UTC'").await.unwrap();
        setup(&client).await;
        let data = text_rows(BIG);
        let mut copy = client.copy_in("COPY t FROM STDIN").await.unwrap();
        // Pieces that do not align with rows.
        for piece in data.chunks(10_007) {
            copy.send(piece).await.unwrap();
        }
        // All but a last partial CopyData message is on its way.
        assert!(data.len() as u64 - copy.bytes_sent() < 64 * 1024);
        assert_eq!(copy.finish().await.unwrap(), BIG as u64);
        assert_eq!(count(&client).await, BIG as i64);
        let back = copy_out_all(&client, "COPY (SELECT * FROM t ORDER BY id) TO STDOUT").await;
        assert!(back == data, "COPY OUT gave different bytes");
    })
    .await;
}

#[tokio::test]
async fn csv_with_header_and_delimiter_round_trips() {
    let db = database("copy_csv");
    bounded_big(async {
        let client = connect(&db).await;
        client.batch_execute("SET TimeZone = 'UTC'").await.unwrap();
        client
            .batch_execute("CREATE TABLE c (id int8, name text, note text)")
            .await
            .unwrap();
        let mut data = b"id;name;note\n".to_vec();
        for i in 0..BIG {
            let name = match i % 4 {
                0 => format!("\"semi;colon {i}\""),
                1 => format!("\"quote \"\"x\"\" {i}\""),
                2 => format!("\"multi\nline {i}\""),
                _ => format!("plain{i}"),
            };
            let note = if i % 3 == 0 {
                String::new()
            } else {
                format!("n{i}")
            };
            data.extend_from_slice(format!("{i};{name};{note}\n").as_bytes());
        }
        let options = "(FORMAT csv, HEADER true, DELIMITER ';')";
        let mut copy = client
            .copy_in(&format!("COPY c FROM STDIN {options}"))
            .await
            .unwrap();
        // Through the AsyncRead path.
        let sent = copy.copy_from(&data[..]).await.unwrap();
        assert_eq!(sent, data.len() as u64);
        assert_eq!(copy.finish().await.unwrap(), BIG as u64);
        // Empty unquoted fields are NULL in CSV.
        let nulls: i64 = client
            .query_one("SELECT count(*) FROM c WHERE note IS NULL", ())
            .await
            .unwrap()
            .get(0);
        assert_eq!(nulls, BIG.div_ceil(3) as i64);
        let back = copy_out_all(
            &client,
            &format!("COPY (SELECT * FROM c ORDER BY id) TO STDOUT {options}"),
        )
        .await;
        assert!(back == data, "CSV came back different");
        // And through the AsyncRead adapter of COPY OUT.
        let reader = client
            .copy_out(&format!(
                "COPY (SELECT * FROM c ORDER BY id) TO STDOUT {options}"
            ))
            .await
            .unwrap()
            .into_reader();
        let mut reader = reader;
        let mut again = Vec::new();
        tokio::io::AsyncReadExt::read_to_end(&mut reader, &mut again)
            .await
            .unwrap();
        assert!(again == data);
        assert_eq!(reader.rows(), Some(BIG as u64));
    })
    .await;
}

#[tokio::test]
async fn the_writer_is_a_sink() {
    let db = database("copy_sink");
    bounded(async {
        let client = connect(&db).await;
        setup(&client).await;
        let mut copy = client
            .copy_in("COPY t (id, name) FROM STDIN (FORMAT csv)")
            .await
            .unwrap();
        for i in 0..1000 {
            copy.send(Bytes::from(format!("{i},name {i}\n")))
                .await
                .unwrap();
        }
        SinkExt::<Bytes>::close(&mut copy).await.unwrap();
        assert_eq!(copy.rows(), Some(1000));
        drop(copy);
        assert_eq!(count(&client).await, 1000);
    })
    .await;
}

#[tokio::test]
async fn a_row_larger_than_a_copydata_message_is_split() {
    let db = database("copy_big_row");
    bounded(async {
        let client = connect(&db).await;
        setup(&client).await;
        let big = "x".repeat(3 * 1024 * 1024 + 17);
        let mut copy = client
            .copy_in("COPY t (id, name) FROM STDIN")
            .await
            .unwrap();
        copy.send(format!("1\t{big}\n")).await.unwrap();
        assert_eq!(copy.finish().await.unwrap(), 1);
        let len: i32 = client
            .query_one("SELECT length(name) FROM t WHERE id = 1", ())
            .await
            .unwrap()
            .get(0);
        assert_eq!(len as usize, big.len());
    })
    .await;
}

#[tokio::test]
async fn dropping_or_aborting_copies_nothing_and_the_connection_goes_on() {
    let db = database("copy_drop");
    bounded(async {
        let client = connect(&db).await;
        setup(&client).await;
        // Dropped after sending data (some of it already on the wire).
        let mut copy = client
            .copy_in("COPY t (id, name) FROM STDIN")
            .await
            .unwrap();
        let rows: String = (0..50_000).map(|i| format!("{i}\tn{i}\n")).collect();
        copy.send(rows.as_bytes()).await.unwrap();
        assert!(copy.bytes_sent() > 0);
        drop(copy);
        assert_eq!(count(&client).await, 0);
        // Aborted explicitly.
        let mut copy = client
            .copy_in("COPY t (id, name) FROM STDIN")
            .await
            .unwrap();
        copy.send(rows.as_bytes()).await.unwrap();
        copy.abort("changed my mind").await.unwrap();
        assert_eq!(count(&client).await, 0);
        // Dropped at every poll of copy_in itself.
        for polls in 0..6 {
            let _ =
                common::poll_then_drop(client.copy_in("COPY t (id, name) FROM STDIN"), polls).await;
            assert_eq!(
                count(&client).await,
                0,
                "after dropping copy_in at poll {polls}"
            );
        }
        // And a COPY still works after all that.
        let mut copy = client
            .copy_in("COPY t (id, name) FROM STDIN")
            .await
            .unwrap();
        copy.send("1\tone\n").await.unwrap();
        assert_eq!(copy.finish().await.unwrap(), 1);
        assert_eq!(client.transaction_status(), pgpipe::TransactionStatus::Idle);
    })
    .await;
}

#[tokio::test]
async fn a_bad_row_is_noticed_while_writing_with_the_servers_context() {
    let db = database("copy_bad_row");
    bounded(async {
        let client = connect(&db).await;
        setup(&client).await;
        let mut copy = client
            .copy_in("COPY t (id, name) FROM STDIN")
            .await
            .unwrap();
        let mut failed = None;
        let mut lines = 0usize;
        for i in 1..=1_000_000usize {
            let line = if i == 500 {
                "not-a-number\tx\n".to_owned()
            } else {
                format!("{i}\tn\n")
            };
            lines += 1;
            if let Err(e) = copy.send(line).await {
                failed = Some(e);
                break;
            }
        }
        let e = failed.expect("the bad row was not noticed while writing");
        // Stopped long before the end (what was still in flight when the
        // server's error arrived is bounded by the write-ahead buffer and
        // the socket buffers).
        assert!(lines < 500_000, "wrote {lines} lines before noticing");
        let db_error = e.as_db_error().expect("the server's error");
        assert_eq!(db_error.code().code(), "22P02", "{e}");
        assert!(
            db_error.where_().unwrap_or("").contains("line 500"),
            "CONTEXT should name the line: {e:?}"
        );
        // Writing stays stopped; finish reports the failure again.
        assert!(copy.send("1\tx\n").await.is_err());
        assert!(copy.finish().await.is_err());
        assert_eq!(count(&client).await, 0);
        // Errors before copy mode: a bad statement, the wrong kind of statement.
        let e = client.copy_in("COPY nope FROM STDIN").await.unwrap_err();
        assert_eq!(e.code().map(|c| c.code()), Some("42P01"));
        let e = client.copy_in("SELECT 1").await.unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidUse, "{e}");
        let e = client.copy_in("COPY t TO STDOUT").await.unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidUse, "{e}");
        // copy_out waits for the server to start streaming: its errors.
        let e = client.copy_out("COPY t FROM STDIN").await.unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidUse, "{e}");
        let e = client.copy_out("SELECT 1").await.unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidUse, "{e}");
        let one: i32 = client.query_one("SELECT 1", ()).await.unwrap().get(0);
        assert_eq!(one, 1);
    })
    .await;
}

#[tokio::test]
async fn other_tasks_queue_behind_a_copy_and_all_complete_after_it() {
    let db = database("copy_fence");
    bounded(async {
        let client = connect(&db).await;
        setup(&client).await;
        client
            .batch_execute(
                "CREATE TABLE kv (k int4 PRIMARY KEY, v text); \
                            INSERT INTO kv SELECT g, 'v' || g FROM generate_series(1, 1000) g",
            )
            .await
            .unwrap();
        let mut copy = client
            .copy_in("COPY t (id, name) FROM STDIN")
            .await
            .unwrap();
        let done = Arc::new(AtomicUsize::new(0));
        let mut tasks = Vec::new();
        for k in 1..=1000i32 {
            let c = client.clone();
            let done = done.clone();
            tasks.push(tokio::spawn(async move {
                let v: String = c
                    .query_one("SELECT v FROM kv WHERE k = $1", (k,))
                    .await
                    .unwrap()
                    .get(0);
                done.fetch_add(1, Ordering::Relaxed);
                (k, v)
            }));
        }
        // Let the selects queue up while the COPY streams its rows.
        let mut sent = 0;
        for chunk in 0..100 {
            let rows: String = (0..1000)
                .map(|i| format!("{}\tn\n", chunk * 1000 + i))
                .collect();
            copy.send(rows).await.unwrap();
            sent += 1000;
            tokio::task::yield_now().await;
        }
        assert_eq!(
            done.load(Ordering::Relaxed),
            0,
            "a select ran inside the COPY"
        );
        assert_eq!(copy.finish().await.unwrap(), sent);
        for task in tasks {
            let (k, v) = task.await.unwrap();
            assert_eq!(v, format!("v{k}"));
        }
        assert_eq!(count(&client).await, sent as i64);
    })
    .await;
}

#[tokio::test]
async fn copy_out_dropped_after_k_chunks_leaves_the_connection_usable() {
    let db = database("copy_out_drop");
    bounded(async {
        let client = connect(&db).await;
        client
            .batch_execute("CREATE TABLE big AS SELECT g AS id, repeat('x', 100) AS pad FROM generate_series(1, 200000) g")
            .await
            .unwrap();
        for k in [0usize, 1, 2, 10, 1000, 50_000] {
            let mut out = client.copy_out("COPY big TO STDOUT").await.unwrap();
            for _ in 0..k {
                out.next().await.unwrap().unwrap();
            }
            drop(out);
            let n: i64 = client
                .query_one("SELECT count(*) FROM big WHERE id <= $1", (k as i32,))
                .await
                .unwrap()
                .get(0);
            assert_eq!(n, k as i64);
        }
        // Backpressure held memory while the consumer was slow: the table
        // is ~22 MB of COPY text; what was held unread stayed at the 1 MiB
        // bound plus the driver's read batches.
        let mut out = client.copy_out("COPY big TO STDOUT").await.unwrap();
        tokio::time::sleep(std::time::Duration::from_millis(300)).await;
        let mut rows = 0u64;
        while let Some(chunk) = out.next().await {
            chunk.unwrap();
            rows += 1;
        }
        assert_eq!(out.rows(), Some(rows));
        assert!(client.stats().peak_buffered_bytes <= 8 << 20, "{:?}", client.stats());
    })
    .await;
}

#[tokio::test]
async fn notices_mid_copy_are_handled_and_transactions_and_pools_work() {
    let db = database("copy_misc");
    bounded(async {
        let mut client = connect(&db).await;
        setup(&client).await;
        client
            .batch_execute(
                "CREATE FUNCTION loud() RETURNS trigger LANGUAGE plpgsql AS $$ \
                 BEGIN IF NEW.id % 100 = 0 THEN RAISE NOTICE 'row %', NEW.id; \
                 PERFORM pg_notify('copied', NEW.id::text); END IF; RETURN NEW; END $$; \
                 CREATE TRIGGER loud BEFORE INSERT ON t FOR EACH ROW EXECUTE FUNCTION loud()",
            )
            .await
            .unwrap();
        let notices = Arc::new(AtomicUsize::new(0));
        let seen = notices.clone();
        client.on_notice(move |_| {
            seen.fetch_add(1, Ordering::Relaxed);
        });
        let mut copy = client.copy_in("COPY t (id) FROM STDIN").await.unwrap();
        let rows: String = (1..=10_000).map(|i| format!("{i}\n")).collect();
        copy.send(rows).await.unwrap();
        assert_eq!(copy.finish().await.unwrap(), 10_000);
        assert_eq!(notices.load(Ordering::Relaxed), 100);

        // Inside a transaction: rolled back with it.
        let tx = client.transaction().await.unwrap();
        let mut copy = tx.copy_in("COPY t (id) FROM STDIN").await.unwrap();
        copy.send("20001\n20002\n").await.unwrap();
        assert_eq!(copy.finish().await.unwrap(), 2);
        assert_eq!(
            tx.query_one("SELECT count(*) FROM t", ())
                .await
                .unwrap()
                .get::<i64, _>(0),
            10_002
        );
        tx.rollback().await.unwrap();
        assert_eq!(count(&client).await, 10_000);

        // On a pool connection.
        let pool = Pool::connect(&db.url(AuthRole::Trust)).await.unwrap();
        let conn = pool.get().await.unwrap();
        let mut copy = conn.copy_in("COPY t (id) FROM STDIN").await.unwrap();
        copy.send("30001\n").await.unwrap();
        assert_eq!(copy.finish().await.unwrap(), 1);
        let back = copy_out_all(&conn, "COPY (SELECT id FROM t WHERE id > 30000) TO STDOUT").await;
        assert_eq!(back, b"30001\n");
    })
    .await;
}

/// `COPY ... FROM STDIN` through a query method, pipelined between other
/// tasks' point queries on the same client: the server ignores a Sync in
/// copy-in mode, so a refusal sent after the statement's Sync would make
/// it swallow the next request's messages. Every other caller must get its
/// own answer, and the COPY caller an error pointing at `copy_in`.
#[tokio::test]
async fn copy_from_stdin_through_a_query_method_is_refused_without_disturbing_the_pipeline() {
    let db = database("copy_refused");
    bounded(async {
        let client = connect(&db).await;
        setup(&client).await;
        let prepared = client.prepare("COPY t (id) FROM STDIN").await.unwrap();
        for round in 0..20i64 {
            let mut tasks = Vec::new();
            for k in 0..8i64 {
                let c = client.clone();
                tasks.push(tokio::spawn(async move {
                    let v: i64 = c
                        .query_one("SELECT $1::int8 * 10", (round * 100 + k,))
                        .await
                        .unwrap()
                        .get(0);
                    assert_eq!(v, (round * 100 + k) * 10);
                }));
            }
            let c = client.clone();
            let prepared = prepared.clone();
            let copy = tokio::spawn(async move {
                let by_sql = c.execute("COPY t FROM STDIN", ()).await;
                let by_statement = c.query(&prepared, ()).await;
                let in_text = c.query_one("copy  T (id)\n from\tstdin;", ()).await;
                (by_sql, by_statement, in_text)
            });
            for k in 8..16i64 {
                let c = client.clone();
                tasks.push(tokio::spawn(async move {
                    let v: String = c
                        .query_one("SELECT $1::text", (format!("r{round}k{k}"),))
                        .await
                        .unwrap()
                        .get(0);
                    assert_eq!(v, format!("r{round}k{k}"));
                }));
            }
            let (by_sql, by_statement, in_text) = copy.await.unwrap();
            for e in [
                by_sql.unwrap_err(),
                by_statement.unwrap_err(),
                in_text.unwrap_err(),
            ] {
                assert_eq!(e.kind(), ErrorKind::Unsupported, "{e}");
                assert!(e.to_string().contains("copy_in"), "{e}");
            }
            for task in tasks {
                task.await.unwrap();
            }
        }
        // COPY t FROM a file or TO STDOUT is not mistaken for it, and the
        // connection is still in step.
        assert_eq!(count(&client).await, 0);
        let one: i32 = client.query_one("SELECT 1", ()).await.unwrap().get(0);
        assert_eq!(one, 1);
    })
    .await;
}

/// A `COPY ... FROM STDIN` given to `batch_execute` with requests
/// pipelined behind it is refused before it is sent: in copy-in mode the
/// server would read those requests as COPY data and drop the connection
/// ("protocol synchronization was lost"), failing every one of them.
#[tokio::test]
async fn a_simple_query_copy_from_stdin_is_refused_before_it_reaches_the_pipeline() {
    let db = database("copy_refused_deep");
    bounded(async {
        let client = connect(&db).await;
        setup(&client).await;
        // Cached, so each select below is queued at once, behind the COPY.
        client.query_one("SELECT $1::int8", (0i64,)).await.unwrap();
        for round in 0..5i64 {
            let c = client.clone();
            let copy = tokio::spawn(async move { c.batch_execute("COPY t FROM STDIN").await });
            let behind: Vec<_> = (0..40i64)
                .map(|k| {
                    let c = client.clone();
                    tokio::spawn(async move {
                        c.query_one("SELECT $1::int8", (round * 100 + k,))
                            .await
                            .map(|row| row.get::<i64, _>(0))
                    })
                })
                .collect();
            let e = copy.await.unwrap().unwrap_err();
            assert_eq!(e.kind(), ErrorKind::Unsupported, "{e}");
            assert!(e.to_string().contains("copy_in"), "{e}");
            for (k, select) in (0i64..).zip(behind) {
                assert_eq!(select.await.unwrap().unwrap(), round * 100 + k);
            }
        }
        assert_eq!(count(&client).await, 0);
    })
    .await;
}

/// A COPY OUT dropped half-read while it is alone on the connection is
/// cancelled: the server stops producing rows (a sequence the query
/// advances per row shows how far it got), the next query on the same
/// client succeeds. With another request pipelined behind it, it is
/// drained instead (a cancel could hit that request), and that request
/// gets its own answer.
#[tokio::test]
async fn a_dropped_copy_out_alone_is_cancelled_and_one_with_company_drained() {
    let db = database("copy_out_cancel");
    bounded(async {
        let mut client = connect(&db).await;
        client
            .batch_execute("CREATE SEQUENCE produced")
            .await
            .unwrap();
        // 20M rows: streaming them all would be ~200 MB.
        const TOTAL: i64 = 20_000_000;
        let sql = format!(
            "COPY (SELECT nextval('produced'), repeat('x', 2) FROM generate_series(1, {TOTAL})) TO STDOUT"
        );
        for k in [0usize, 1, 10, 5_000] {
            client
                .execute("SELECT setval('produced', 1, false)", ())
                .await
                .unwrap();
            let mut out = client.copy_out(&sql).await.unwrap();
            for _ in 0..k {
                out.next().await.unwrap().unwrap();
            }
            drop(out);
            let v: i64 = client
                .query_one("SELECT $1::int8 + 1", (k as i64,))
                .await
                .unwrap()
                .get(0);
            assert_eq!(v, k as i64 + 1);
            let produced: i64 = client
                .query_one("SELECT last_value FROM produced", ())
                .await
                .unwrap()
                .get(0);
            assert!(
                produced >= k as i64 && produced < TOTAL,
                "after k = {k}: the server produced {produced} of {TOTAL} rows"
            );
        }
        // Inside a transaction a cancel would abort it: drained, and the
        // transaction goes on.
        let tx = client.transaction().await.unwrap();
        let mut out = tx
            .copy_out("COPY (SELECT g FROM generate_series(1, 100000) g) TO STDOUT")
            .await
            .unwrap();
        out.next().await.unwrap().unwrap();
        drop(out);
        let n: i64 = tx.query_one("SELECT 7::int8", ()).await.unwrap().get(0);
        assert_eq!(n, 7);
        tx.commit().await.unwrap();
        // With a request pipelined behind it: drained, that request answered.
        for k in [0usize, 3] {
            let mut out = client
                .copy_out("COPY (SELECT g FROM generate_series(1, 100000) g) TO STDOUT")
                .await
                .unwrap();
            for _ in 0..k {
                out.next().await.unwrap().unwrap();
            }
            let text = k.to_string();
            let mut behind =
                std::pin::pin!(client.query_one("SELECT 'behind ' || $1::text", (text.as_str(),)));
            // One poll queues the query behind the COPY (its answer cannot
            // be in yet: it comes after all of the COPY's data).
            let first = std::future::poll_fn(|cx| {
                std::task::Poll::Ready(behind.as_mut().poll(cx).is_pending())
            })
            .await;
            assert!(first);
            drop(out);
            let v: String = behind.await.unwrap().get(0);
            assert_eq!(v, format!("behind {k}"));
        }
        let one: i32 = client.query_one("SELECT 1", ()).await.unwrap().get(0);
        assert_eq!(one, 1);
    })
    .await;
}
