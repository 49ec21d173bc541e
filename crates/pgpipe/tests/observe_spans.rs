//! Operation spans, seen through a recording subscriber: OpenTelemetry
//! field names, the named query's summary, the SQLSTATE on failure, no
//! parameter values, queue and server time, and a dropped stream closing
//! its span.

mod common;

use common::spans::{Recorder, SpanData};
use pgpipe::{FromRow, Query};

const TARGET: &str = "pgpipe::query";

#[derive(FromRow, Debug)]
struct Message {
    #[allow(dead_code)]
    mid: i64,
}

#[derive(Query)]
#[query(file = "tests/sql/spans.sql", name = "get_messages", row = Message)]
struct GetMessages {
    uid: i64,
    secret: String,
}

#[derive(Query)]
#[query(file = "tests/sql/spans.sql", name = "all_messages", row = Message)]
struct AllMessages {
    uid: i64,
}

fn last(recorder: &Recorder, operation: &str) -> SpanData {
    recorder
        .spans(TARGET)
        .into_iter()
        .rev()
        .find(|s| s.field("pgpipe.operation") == Some(operation))
        .unwrap_or_else(|| panic!("no {operation} span in {:#?}", recorder.spans(TARGET)))
}

#[tokio::test(flavor = "current_thread")]
async fn operation_spans_carry_opentelemetry_fields() {
    let recorder = Recorder::default();
    let _guard = tracing::subscriber::set_default(recorder.clone());
    common::bounded(async {
        let db = common::database("spans");
        let mut client = common::connect(&db).await;
        let connect = last(&recorder, "connect");
        assert!(connect.closed);
        // Opening a connection is no database operation of the conventions.
        assert_eq!(connect.field("otel.name"), Some("connect"));
        assert_eq!(connect.field("db.operation.name"), None);

        client
            .batch_execute(
                "CREATE TABLE messages (uid int8, mid int8, secret text);
                 INSERT INTO messages SELECT 7, g, 'hunter2' FROM generate_series(1, 5) g",
            )
            .await
            .unwrap();

        // A named query.
        let rows = GetMessages {
            uid: 7,
            secret: "hunter2-param".into(),
        }
        .fetch_all(&client)
        .await
        .unwrap();
        assert_eq!(rows.len(), 0);
        let rows = GetMessages {
            uid: 7,
            secret: "hunter2".into(),
        }
        .fetch_all(&client)
        .await
        .unwrap();
        assert_eq!(rows.len(), 5);
        let span = last(&recorder, "query");
        assert!(span.closed);
        assert_eq!(span.field("db.query.summary"), Some("get_messages"));
        assert_eq!(span.field("otel.name"), Some("get_messages"));
        assert_eq!(span.field("db.system.name"), Some("postgresql"));
        assert_eq!(span.field("db.namespace"), Some(db.name()));
        assert_eq!(
            span.field("server.port"),
            Some(common::cluster().port().to_string().as_str())
        );
        assert_eq!(span.field("otel.kind"), Some("client"));
        assert_eq!(span.field("otel.status_code"), None);
        // A generic call runs any SQL: no operation name (the conventions
        // forbid parsing it from the text).
        assert_eq!(span.field("db.operation.name"), None);
        assert_eq!(span.field("db.response.returned_rows"), Some("5"));
        assert!(span.field("pgpipe.queue_time_us").is_some(), "{span:#?}");
        assert!(span.field("pgpipe.server_time_us").is_some(), "{span:#?}");
        assert!(span.field("pgpipe.requests_ahead").is_some(), "{span:#?}");
        assert_eq!(span.field("error.type"), None);
        // Off by default: no SQL text; never parameter values.
        assert_eq!(span.field("db.query.text"), None);
        for s in recorder.spans(TARGET) {
            for (k, v) in &s.fields {
                assert!(!v.contains("hunter2"), "{k} = {v} leaks a parameter value");
            }
        }

        // SQL text on request.
        pgpipe::observe::record_query_text(true);
        client
            .execute("UPDATE messages SET mid = mid WHERE uid = $1", (7i64,))
            .await
            .unwrap();
        pgpipe::observe::record_query_text(false);
        let span = last(&recorder, "execute");
        assert_eq!(
            span.field("db.query.text"),
            Some("UPDATE messages SET mid = mid WHERE uid = $1")
        );
        assert_eq!(span.field("db.response.returned_rows"), Some("5"));
        assert_eq!(
            span.field("db.query.summary"),
            None,
            "never parsed from SQL"
        );
        // Without a summary or an operation name the span is named after
        // its target, the database.
        assert_eq!(span.field("otel.name"), Some(db.name()));

        // A failure records the SQLSTATE.
        let e = client
            .query("SELECT * FROM no_such_table", ())
            .await
            .unwrap_err();
        assert!(e.is_db());
        let span = last(&recorder, "query");
        assert_eq!(span.field("db.response.status_code"), Some("42P01"));
        assert_eq!(span.field("error.type"), Some("42P01"));
        assert_eq!(span.field("otel.status_code"), Some("ERROR"));
        assert!(span.closed);

        // A stream's span stays open while rows are read, and closes when
        // the stream is dropped half-read.
        let mut stream = AllMessages { uid: 7 }.stream(&client).await.unwrap();
        assert!(stream.next().await.unwrap().is_ok());
        let open = last(&recorder, "query_stream");
        assert_eq!(open.field("db.query.summary"), Some("all_messages"));
        assert!(!open.closed, "the stream is still alive");
        drop(stream);
        let closed = last(&recorder, "query_stream");
        assert!(closed.closed, "dropping the stream closes its span");
        assert_eq!(closed.field("db.response.returned_rows"), Some("1"));

        // Drained to the end: closed with every row counted.
        let mut stream = AllMessages { uid: 7 }.stream(&client).await.unwrap();
        let mut n = 0;
        while let Some(row) = stream.next().await {
            row.unwrap();
            n += 1;
        }
        assert_eq!(n, 5);
        assert_eq!(
            last(&recorder, "query_stream").field("db.response.returned_rows"),
            Some("5")
        );

        // Transactions: a named query inside one, then commit and rollback.
        let tx = client.transaction().await.unwrap();
        let rows = AllMessages { uid: 7 }.fetch_all(&tx).await.unwrap();
        assert_eq!(rows.len(), 5);
        tx.commit().await.unwrap();
        let commit = last(&recorder, "commit");
        assert!(commit.closed);
        assert_eq!(commit.field("error.type"), None);
        assert_eq!(commit.field("db.operation.name"), Some("COMMIT"));
        let commit_name = format!("COMMIT {}", db.name());
        assert_eq!(commit.field("otel.name"), Some(commit_name.as_str()));
        client
            .transaction()
            .await
            .unwrap()
            .rollback()
            .await
            .unwrap();
        assert!(last(&recorder, "rollback").closed);
        assert_eq!(
            last(&recorder, "rollback").field("db.operation.name"),
            Some("ROLLBACK")
        );

        // Other operations have spans too.
        client.prepare("SELECT 1").await.unwrap();
        assert!(last(&recorder, "prepare").closed);
        // A batch of one is a single operation; of two, a BATCH.
        let mut batch = client.batch();
        batch.add("SELECT 1", ());
        batch.run().await.unwrap();
        let one = last(&recorder, "batch");
        assert!(one.closed);
        assert_eq!(one.field("db.operation.name"), None);
        assert_eq!(one.field("db.operation.batch.size"), None);
        let mut batch = client.batch();
        batch.add("SELECT 1", ());
        batch.add("SELECT 2", ());
        batch.run_atomic().await.unwrap();
        let two = last(&recorder, "batch");
        assert_eq!(two.field("db.operation.name"), Some("BATCH"));
        assert_eq!(two.field("db.operation.batch.size"), Some("2"));
        let pool = pgpipe::Pool::connect(&db.url(pgpipe_testkit::AuthRole::Trust))
            .await
            .unwrap();
        drop(pool.get().await.unwrap());
        let acquire = last(&recorder, "pool.acquire");
        assert!(acquire.closed);
        assert_eq!(acquire.field("otel.kind"), Some("internal"));
        assert_eq!(acquire.field("db.operation.name"), None);
    })
    .await
}

fn micros(span: &SpanData, field: &str) -> u64 {
    span.field(field)
        .unwrap_or_else(|| panic!("no {field} in {span:#?}"))
        .parse()
        .unwrap_or_else(|e| panic!("{field} is not a number ({e}) in {span:#?}"))
}

/// Requests pipelined behind a slow one: the time they wait behind its
/// answer is queue time, not server time; the slow one's sleep is server
/// time. Only relations and lower bounds the server guarantees are
/// asserted (a sleep lasts at least its length), never how fast anything
/// ran.
#[tokio::test(flavor = "current_thread")]
async fn pipelined_requests_report_queue_time_behind_a_slow_one() {
    const SLEEP_US: u64 = 1_000_000;
    const QUICK: usize = 4;
    let recorder = Recorder::default();
    let _guard = tracing::subscriber::set_default(recorder.clone());
    common::bounded(async {
        let db = common::database("spans_queue");
        let client = common::connect(&db).await;
        // All issued in one poll of this task, before the driver runs: one
        // write batch, the slow statement first. The slow one is an
        // `execute`, the quick ones `query`, to tell their spans apart.
        let slow = client.execute("SELECT pg_sleep(1)", ());
        let quick = |i: i32| client.query_one("SELECT $1::int4", (i,));
        let (slow, q0, q1, q2, q3) = tokio::join!(slow, quick(0), quick(1), quick(2), quick(3));
        slow.unwrap();
        for (i, row) in [q0, q1, q2, q3].into_iter().enumerate() {
            assert_eq!(row.unwrap().get::<i32, _>(0), i as i32);
        }

        let spans = recorder.spans(TARGET);
        let slow = spans
            .iter()
            .rev()
            .find(|s| s.field("pgpipe.operation") == Some("execute"))
            .unwrap_or_else(|| panic!("no execute span in {spans:#?}"));
        // The sleep happened on the server, after the write.
        assert!(
            micros(slow, "pgpipe.server_time_us") >= SLEEP_US * 9 / 10,
            "the slow statement's sleep is server time: {slow:#?}"
        );
        let quick: Vec<&SpanData> = spans
            .iter()
            .filter(|s| s.field("pgpipe.operation") == Some("query"))
            .collect();
        assert_eq!(quick.len(), QUICK, "{spans:#?}");
        for span in quick {
            assert!(span.closed);
            let queued = micros(span, "pgpipe.queue_time_us");
            let server = micros(span, "pgpipe.server_time_us");
            // Written with the slow one, answered only after it: at least
            // the sleep was spent queued behind it.
            assert!(
                queued >= SLEEP_US / 2,
                "waiting behind the slow statement is queue time: {span:#?}"
            );
            assert!(
                server < queued,
                "a quick statement's server time is less than its wait: {span:#?}"
            );
            assert!(
                micros(span, "pgpipe.requests_ahead") >= 1,
                "the slow statement was ahead: {span:#?}"
            );
        }
    })
    .await
}

/// A COPY's span covers the whole COPY (open while data is written, closed
/// with the row count at the end, with the SQLSTATE on failure, and when
/// the writer or the stream is dropped); portals and LISTEN/NOTIFY have
/// spans too.
#[tokio::test(flavor = "current_thread")]
async fn copy_portal_and_listen_spans() {
    let recorder = Recorder::default();
    let _guard = tracing::subscriber::set_default(recorder.clone());
    common::bounded(async {
        let db = common::database("spans_copy");
        let mut client = common::connect(&db).await;
        client
            .batch_execute("CREATE TABLE boxes (uid int8, name text)")
            .await
            .unwrap();

        // COPY IN: open while writing, closed with the rows at finish.
        let mut copy = client
            .copy_in("COPY boxes (uid, name) FROM STDIN")
            .await
            .unwrap();
        copy.send("1\tinbox\n2\tsent\n").await.unwrap();
        let open = last(&recorder, "copy_in");
        assert!(!open.closed, "the COPY is still being written: {open:#?}");
        copy.send("3\tspam\n").await.unwrap();
        assert_eq!(copy.finish().await.unwrap(), 3);
        let done = last(&recorder, "copy_in");
        assert!(done.closed, "{done:#?}");
        assert_eq!(done.field("db.response.returned_rows"), Some("3"));
        assert_eq!(done.field("error.type"), None);
        assert_eq!(done.field("db.namespace"), Some(db.name()));
        assert_eq!(done.field("db.operation.name"), Some("COPY"));
        assert_eq!(
            done.field("db.collection.name"),
            None,
            "never parsed from SQL"
        );

        // A bad row: the span ends with the server's SQLSTATE.
        let mut copy = client
            .copy_in("COPY boxes (uid, name) FROM STDIN")
            .await
            .unwrap();
        let sent = copy.send("not-a-number\tx\n").await;
        let e = match sent {
            Err(e) => e,
            Ok(()) => copy.finish().await.unwrap_err(),
        };
        assert_eq!(e.code().map(|c| c.code()), Some("22P02"), "{e}");
        let failed = last(&recorder, "copy_in");
        assert!(failed.closed, "{failed:#?}");
        assert_eq!(failed.field("error.type"), Some("22P02"));
        assert_eq!(failed.field("db.response.status_code"), Some("22P02"));

        // Dropped unfinished: closed, nothing copied.
        let copy = client
            .copy_in("COPY boxes (uid, name) FROM STDIN")
            .await
            .unwrap();
        assert!(!last(&recorder, "copy_in").closed);
        drop(copy);
        let dropped = last(&recorder, "copy_in");
        assert!(dropped.closed, "{dropped:#?}");
        assert_eq!(dropped.field("db.response.returned_rows"), Some("0"));

        // Aborted: closed too.
        let copy = client
            .copy_in("COPY boxes (uid, name) FROM STDIN")
            .await
            .unwrap();
        copy.abort("changed my mind").await.unwrap();
        assert!(last(&recorder, "copy_in").closed);

        // Typed COPY IN: the same span, through the typed writer.
        let mut rows = client
            .copy_in_rows::<(i64, String)>("boxes", &["uid", "name"])
            .await
            .unwrap();
        rows.write(&(4, "drafts".to_owned())).await.unwrap();
        assert!(!last(&recorder, "copy_in").closed);
        assert_eq!(rows.finish().await.unwrap(), 1);
        let typed = last(&recorder, "copy_in");
        assert!(typed.closed);
        assert_eq!(typed.field("db.response.returned_rows"), Some("1"));
        // The typed API names its table.
        assert_eq!(typed.field("db.collection.name"), Some("boxes"));
        assert_eq!(typed.field("otel.name"), Some("COPY boxes"));

        // COPY OUT: open while read, closed with the server's row count.
        let mut out = client.copy_out("COPY boxes TO STDOUT").await.unwrap();
        assert!(out.next().await.unwrap().is_ok());
        assert!(!last(&recorder, "copy_out").closed);
        while let Some(chunk) = out.next().await {
            chunk.unwrap();
        }
        let read = last(&recorder, "copy_out");
        assert!(read.closed, "{read:#?}");
        assert_eq!(read.field("db.response.returned_rows"), Some("4"));
        // Dropped half-read: closed.
        let mut out = client.copy_out("COPY boxes TO STDOUT").await.unwrap();
        assert!(out.next().await.unwrap().is_ok());
        drop(out);
        assert!(last(&recorder, "copy_out").closed);
        // A failing COPY OUT (no such table): `copy_out` waits for the
        // server to start streaming, so the error is its own, and the span
        // ends with the SQLSTATE.
        let err = client.copy_out("COPY nope TO STDOUT").await.unwrap_err();
        assert_eq!(
            err.code(),
            Some(&pgpipe::SqlState::UNDEFINED_TABLE),
            "{err}"
        );
        let failed = last(&recorder, "copy_out");
        assert!(failed.closed, "{failed:#?}");
        assert_eq!(failed.field("error.type"), Some("42P01"));

        // Portals: binding, and each fetch with its rows.
        let tx = client.transaction().await.unwrap();
        let mut portal = tx
            .bind_portal("SELECT g FROM generate_series(1, 5) g", ())
            .await
            .unwrap();
        let bind = last(&recorder, "bind_portal");
        assert!(bind.closed);
        assert_eq!(bind.field("db.namespace"), Some(db.name()));
        assert_eq!(portal.fetch(3).await.unwrap().len(), 3);
        let fetch = last(&recorder, "portal_fetch");
        assert!(fetch.closed);
        assert_eq!(fetch.field("db.response.returned_rows"), Some("3"));
        assert_eq!(portal.fetch(0).await.unwrap().len(), 2);
        assert_eq!(
            last(&recorder, "portal_fetch").field("db.response.returned_rows"),
            Some("2")
        );
        drop(portal);
        tx.rollback().await.unwrap();
        // Outside a transaction block: the failure is on the span.
        assert!(client.bind_portal("SELECT 1", ()).await.is_err());
        assert_eq!(
            last(&recorder, "bind_portal").field("error.type"),
            Some("invalid_use")
        );

        // LISTEN / NOTIFY on a client, and a Listener's subscription.
        let mut events = client.listen("spans_chan").await.unwrap();
        let listen = last(&recorder, "listen");
        assert!(listen.closed);
        assert_eq!(listen.field("db.namespace"), Some(db.name()));
        client.notify("spans_chan", "hello").await.unwrap();
        assert!(last(&recorder, "notify").closed);
        match events.next().await {
            Some(Ok(pgpipe::Event::Notification(n))) => assert_eq!(n.payload(), "hello"),
            other => panic!("expected the notification, got {other:?}"),
        }
        let listener = pgpipe::Listener::connect(&db.url(pgpipe_testkit::AuthRole::Trust))
            .await
            .unwrap();
        let before = recorder
            .spans(TARGET)
            .iter()
            .filter(|s| s.field("pgpipe.operation") == Some("listen"))
            .count();
        let _sub = listener.listen("spans_other").await.unwrap();
        let spans = recorder.spans(TARGET);
        let listens: Vec<_> = spans
            .iter()
            .filter(|s| s.field("pgpipe.operation") == Some("listen"))
            .collect();
        assert_eq!(listens.len(), before + 1, "{spans:#?}");
        assert!(listens[before].closed);
        assert_eq!(listens[before].field("error.type"), None);
    })
    .await
}
