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
        .find(|s| s.field("db.operation.name") == Some(operation))
        .unwrap_or_else(|| panic!("no {operation} span in {:#?}", recorder.spans(TARGET)))
}

#[tokio::test(flavor = "current_thread")]
async fn operation_spans_carry_opentelemetry_fields() {
    let recorder = Recorder::default();
    let _guard = tracing::subscriber::set_default(recorder.clone());
    common::bounded(async {
        let db = common::database("spans");
        let client = common::connect(&db).await;
        let connect = last(&recorder, "connect");
        assert!(connect.closed);

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

        // A failure records the SQLSTATE.
        let e = client
            .query("SELECT * FROM no_such_table", ())
            .await
            .unwrap_err();
        assert!(e.is_db());
        let span = last(&recorder, "query");
        assert_eq!(span.field("db.response.status_code"), Some("42P01"));
        assert_eq!(span.field("error.type"), Some("42P01"));
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
        client
            .transaction()
            .await
            .unwrap()
            .rollback()
            .await
            .unwrap();
        assert!(last(&recorder, "rollback").closed);

        // Other operations have spans too.
        client.prepare("SELECT 1").await.unwrap();
        assert!(last(&recorder, "prepare").closed);
        let mut batch = client.batch();
        batch.add("SELECT 1", ());
        batch.run().await.unwrap();
        assert!(last(&recorder, "batch").closed);
        let pool = pgpipe::Pool::connect(&db.url(pgpipe_testkit::AuthRole::Trust))
            .await
            .unwrap();
        drop(pool.get().await.unwrap());
        assert!(last(&recorder, "pool.acquire").closed);
    })
    .await
}
