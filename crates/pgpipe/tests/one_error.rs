//! One server error reads the same from every query path: the same kind,
//! SQLSTATE, server message and hint, and the same text (a batch adds which
//! statement failed in front of it), whether it came through `query`,
//! `query_one`, `execute`, `query_stream`, a prepared statement, a portal,
//! a batch or the simple protocol, directly or through PgBouncer.

mod common;

use std::sync::OnceLock;

use common::{bounded, cluster, connect, database};
use pgpipe::{Client, Error, ErrorKind, SqlState};
use pgpipe_testkit::Bouncer;

/// What a user checks of an error.
#[derive(Debug, PartialEq)]
struct Facts {
    kind: ErrorKind,
    code: Option<SqlState>,
    message: Option<String>,
    hint: Option<String>,
    shown: String,
}

fn facts(e: &Error) -> Facts {
    Facts {
        kind: e.kind(),
        code: e.code().cloned(),
        message: e.as_db_error().map(|db| unnamed(db.message())),
        hint: e
            .as_db_error()
            .and_then(|db| db.hint())
            .map(ToOwned::to_owned),
        shown: unnamed(&e.to_string()),
    }
}

/// `text` with the statement name the server quotes (`prepared statement
/// "pgpipe_..._s0"`, or `""` for the unnamed one) left out: which name a
/// path used is the only difference the server's message may show.
fn unnamed(text: &str) -> String {
    const AT: &str = "prepared statement \"";
    let mut out = String::new();
    let mut rest = text;
    while let Some(i) = rest.find(AT) {
        out.push_str(&rest[..i + AT.len()]);
        rest = &rest[i + AT.len()..];
        match rest.find('"') {
            Some(end) => rest = &rest[end..],
            None => break,
        }
    }
    out.push_str(rest);
    out
}

/// Runs `sql` with `params` through every extended-protocol path and
/// returns each path's error, labelled.
macro_rules! every_path {
    ($client:expr, $sql:expr, $params:expr) => {{
        let client: &Client = $client;
        let sql: &str = $sql;
        let mut errors: Vec<(&str, Error)> = Vec::new();
        errors.push(("query", client.query(sql, $params).await.unwrap_err()));
        errors.push((
            "query_one",
            client.query_one(sql, $params).await.unwrap_err(),
        ));
        errors.push((
            "query_opt",
            client.query_opt(sql, $params).await.unwrap_err(),
        ));
        errors.push(("execute", client.execute(sql, $params).await.unwrap_err()));
        let stream_error = match client.query_stream(sql, $params).await {
            Err(e) => e,
            Ok(mut stream) => loop {
                match stream.next().await {
                    Some(Ok(_)) => {}
                    Some(Err(e)) => break e,
                    None => panic!("query_stream of {sql:?} ended without an error"),
                }
            },
        };
        errors.push(("query_stream", stream_error));
        client.batch_execute("BEGIN").await.unwrap();
        let portal_error = match client.bind_portal(sql, $params).await {
            Err(e) => e,
            Ok(mut portal) => portal.fetch(10).await.unwrap_err(),
        };
        client.batch_execute("ROLLBACK").await.unwrap();
        errors.push(("portal", portal_error));
        let mut batch = client.batch();
        batch.add(sql, $params);
        let mut results = batch.run().await.unwrap();
        errors.push(("batch", results.remove(0).unwrap_err()));
        let mut batch = client.batch();
        batch.add(sql, $params);
        errors.push(("atomic batch", batch.run_atomic().await.unwrap_err()));
        errors
    }};
}

/// Every error of `errors` says what the first one says; a batch may put
/// which statement failed in front.
fn assert_all_equal(case: &str, errors: &[(&str, Error)]) -> Facts {
    let (first_path, first) = &errors[0];
    let expected = facts(first);
    for (path, e) in errors {
        let mut got = facts(e);
        if path.contains("batch") {
            assert!(
                got.shown.starts_with("statement 1 of the batch")
                    && got.shown.ends_with(&expected.shown),
                "{case}: {path} says {:?}, {first_path} says {:?}",
                got.shown,
                expected.shown
            );
            got.shown = expected.shown.clone();
        }
        assert_eq!(got, expected, "{case}: {path} differs from {first_path}");
    }
    expected
}

/// The simple protocol's error for `sql` has the same facts.
async fn assert_simple_equal(case: &str, client: &Client, sql: &str, expected: &Facts) {
    let e = client.simple_query(sql).await.unwrap_err();
    assert_eq!(&facts(&e), expected, "{case}: simple_query");
    let e = client.batch_execute(sql).await.unwrap_err();
    assert_eq!(&facts(&e), expected, "{case}: batch_execute");
}

async fn undefined_table(client: &Client) -> Facts {
    let sql = "SELECT * FROM no_such_table";
    let mut errors = every_path!(client, sql, ());
    errors.push(("prepare", client.prepare(sql).await.unwrap_err()));
    let expected = assert_all_equal("42P01", &errors);
    assert_eq!(expected.kind, ErrorKind::Db);
    assert_eq!(expected.code, Some(SqlState::UNDEFINED_TABLE));
    assert_simple_equal("42P01", client, sql, &expected).await;
    expected
}

#[tokio::test]
async fn an_undefined_table_reads_the_same_from_every_path() {
    bounded(async {
        let db = database("one_error_42p01");
        let client = connect(&db).await;
        undefined_table(&client).await;
        // The connection serves the next query.
        let one: i32 = client.query_one("SELECT 1", ()).await.unwrap().get(0);
        assert_eq!(one, 1);
    })
    .await
}

#[tokio::test]
async fn a_division_by_zero_reads_the_same_from_every_path() {
    bounded(async {
        let db = database("one_error_22012");
        let client = connect(&db).await;
        // Raised while rows are produced, not while planning.
        let sql = "SELECT 1 / g FROM generate_series(0, 0) g";
        let mut errors = every_path!(&client, sql, ());
        let prepared = client.prepare(sql).await.unwrap();
        errors.push((
            "prepared statement",
            client.query(&prepared, ()).await.unwrap_err(),
        ));
        let expected = assert_all_equal("22012", &errors);
        assert_eq!(expected.kind, ErrorKind::Db);
        assert_eq!(expected.code, Some(SqlState::DIVISION_BY_ZERO));
        assert_simple_equal("22012", &client, sql, &expected).await;
    })
    .await
}

#[tokio::test]
async fn a_wrong_parameter_count_reads_the_same_from_every_path() {
    bounded(async {
        let db = database("one_error_params");
        let client = connect(&db).await;
        // Two placeholders, one value: the server finds it at Bind, the
        // first time through Parse and later from the statement cache.
        let sql = "SELECT $1::int4 + $2::int4";
        let errors = every_path!(&client, sql, (1i32,));
        let expected = assert_all_equal("wrong parameter count", &errors);
        assert_eq!(expected.kind, ErrorKind::ParameterCount);
        assert_eq!(expected.code, Some(SqlState::PROTOCOL_VIOLATION));
        assert!(
            expected.shown.starts_with("wrong number of parameters"),
            "{}",
            expected.shown
        );
        // A prepared statement knows its parameters: the same mistake is
        // refused before anything is sent, with the same kind.
        let prepared = client.prepare(sql).await.unwrap();
        let e = client.query(&prepared, (1i32,)).await.unwrap_err();
        assert_eq!(e.kind(), ErrorKind::ParameterCount, "{e}");
        let three: i32 = client.query_one(sql, (1i32, 2i32)).await.unwrap().get(0);
        assert_eq!(three, 3);
    })
    .await
}

fn bouncer() -> &'static Bouncer {
    static BOUNCER: OnceLock<Bouncer> = OnceLock::new();
    BOUNCER.get_or_init(|| Bouncer::start(cluster()).expect("pgbouncer"))
}

#[tokio::test]
async fn through_pgbouncer_an_error_reads_as_it_does_directly() {
    bounded(async {
        let db = database("one_error_bouncer");
        let url = format!("{}?query_mode=unnamed", bouncer().url(db.name()));
        let through = pgpipe::connect(&url).await.unwrap();
        let direct = connect(&db).await;
        let expected = undefined_table(&direct).await;
        assert_eq!(undefined_table(&through).await, expected);
        let sql = "SELECT $1::int4 + $2::int4";
        let errors = every_path!(&through, sql, (1i32,));
        let got = assert_all_equal("wrong parameter count through pgbouncer", &errors);
        assert_eq!(got.kind, ErrorKind::ParameterCount);
    })
    .await
}

/// A statement of pgpipe's naming that vanished (as it does behind a
/// pooler in transaction mode) reads the same from every path: the server's
/// 26000 with the advice to use `query_mode=unnamed`.
#[tokio::test]
async fn a_vanished_statement_says_to_use_unnamed_mode_on_every_path() {
    bounded(async {
        let db = database("one_error_vanished");
        let client = connect(&db).await;
        let sql = "SELECT $1::int8 + 1";
        let mut errors: Vec<(&str, Error)> = Vec::new();
        // Each time: cached outside a transaction, then gone inside one
        // (where nothing is retried, so the error shows).
        macro_rules! vanished {
            ($path:expr, $run:expr) => {{
                client.query_one(sql, (1i64,)).await.unwrap();
                client.batch_execute("BEGIN; DEALLOCATE ALL").await.unwrap();
                let e = $run;
                client.batch_execute("ROLLBACK").await.unwrap();
                errors.push(($path, e));
            }};
        }
        vanished!("query", client.query(sql, (1i64,)).await.unwrap_err());
        vanished!("execute", client.execute(sql, (1i64,)).await.unwrap_err());
        vanished!("query_stream", {
            match client.query_stream(sql, (1i64,)).await {
                Err(e) => e,
                Ok(mut stream) => match stream.next().await {
                    Some(Err(e)) => e,
                    other => panic!("query_stream of a vanished statement: {other:?}"),
                },
            }
        });
        vanished!("batch", {
            let mut batch = client.batch();
            batch.add(sql, (1i64,));
            batch.run().await.unwrap().remove(0).unwrap_err()
        });
        let expected = assert_all_equal("26000", &errors);
        assert_eq!(expected.code, Some(SqlState::INVALID_SQL_STATEMENT_NAME));
        assert!(
            expected.shown.contains("query_mode=unnamed"),
            "{}",
            expected.shown
        );
    })
    .await
}
