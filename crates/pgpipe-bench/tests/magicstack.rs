//! The `magicstack` workload against a testkit cluster: every in-process
//! driver runs each of MagicStack's queries once and returns the right
//! rows; the external peers (asyncpg, pgx) run each query briefly when
//! their toolchain and library are already here (nothing is downloaded:
//! the Go build is offline), and are skipped with a printed reason when
//! not. No timing assertions.

mod common;

use std::time::Duration;

use common::url;
use pgpipe_bench::catalog::{connect_boxed, DriverKind, Workload};
use pgpipe_bench::drivers::external::{availability, Fetch};
use pgpipe_bench::families::magicstack::MagicQuery;
use pgpipe_bench::families::ozo;
use pgpipe_bench::runner::Subject;
use pgpipe_bench::shape::Shape;
use pgpipe_bench::workload::Variant;

/// The two tests write to the same tables: one at a time, so that the
/// row counts they check are their own.
static SERIAL: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

async fn count(url: &str, q: MagicQuery) -> i64 {
    let client = pgpipe_bench::fixtures::setup_client(url)
        .await
        .expect("client");
    let sql = format!("SELECT count(*)::int8 FROM {}._test", q.schema());
    client.query_one(&sql, &[]).await.expect(&sql).get(0)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn in_process_drivers_run_every_query() {
    let _serial = SERIAL.lock().await;
    let url = url();
    for driver in [DriverKind::Pgpipe, DriverKind::TokioPostgres] {
        for q in MagicQuery::ALL {
            let what = format!("{driver} {q}");
            let writes = matches!(q, MagicQuery::Copyfrom | MagicQuery::Batch);
            let session = connect_boxed(driver, &url, Workload::Magicstack, Shape::Magic(q))
                .await
                .unwrap_or_else(|e| panic!("{what}: {e}"));
            let before = if writes { count(&url, q).await } else { 0 };
            // Counted after this query's setup: each query's tables add
            // rows to pg_type, so a count taken once at the start is stale
            // as soon as a later query's schema is created.
            let pg_type_rows = ozo::expected(&url).await.expect("expected").rows;
            assert!(pg_type_rows > 0);
            let rows = session
                .op(0)
                .await
                .unwrap_or_else(|e| panic!("{what}: {e}"));
            assert_eq!(rows, q.rows_per_op(pg_type_rows), "{what}");
            assert_eq!(session.ops_per_call(), 1, "{what}");
            if writes {
                // The rows really arrived, in the query's own schema.
                assert_eq!(count(&url, q).await - before, rows as i64, "{what}");
            }
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn external_drivers_run_every_query_when_present() {
    let _serial = SERIAL.lock().await;
    let url = url();
    let pg_type_rows = ozo::expected(&url).await.expect("expected").rows;
    for driver in [DriverKind::Asyncpg, DriverKind::Pgx] {
        let command = match availability(driver, Fetch::Offline).await {
            Ok(c) => c,
            Err(why) => {
                println!("skipped {driver}: {why}");
                continue;
            }
        };
        println!("{driver}: {command:?}");
        for q in MagicQuery::ALL {
            let what = format!("{driver} {q}");
            let variant = Variant {
                label: q.name().into(),
                connections: 2,
                ..Variant::single(1)
            };
            let variant = Variant {
                shape: Shape::Magic(q),
                ..variant
            };
            let subject = Subject::connect(driver, &url, Workload::Magicstack, &variant)
                .await
                .unwrap_or_else(|e| panic!("{what}: {e}"));
            let out = subject
                // Long enough for a peer under load to finish at least one
                // operation after connecting; only `ops > 0` is asserted.
                .run(1, Duration::from_secs(2), None)
                .await
                .unwrap_or_else(|e| panic!("{what}: {e}"));
            assert!(out.ops > 0, "{what}");
            let rows = out.rows.expect("rows");
            if q == MagicQuery::PgType {
                assert!(
                    rows >= out.ops * pg_type_rows,
                    "{what}: {rows} rows, {} ops",
                    out.ops
                );
            } else {
                assert_eq!(rows, out.ops * q.rows_per_op(pg_type_rows), "{what}");
            }
            assert!(out.costs.cpu > Duration::ZERO, "{what}: {:?}", out.costs);
        }
    }
}
