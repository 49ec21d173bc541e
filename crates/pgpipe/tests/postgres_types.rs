//! Types written for tokio-postgres (`postgres_types::ToSql` / `FromSql`)
//! as pgpipe parameters and columns (`pgpipe::compat`, feature
//! `postgres-types`), and sea-query statements with sea-query-postgres'
//! values run on a pgpipe pool.

mod common;

use std::error::Error as StdError;
use std::sync::atomic::{AtomicUsize, Ordering};

use bytes::BytesMut;
use pgpipe::compat::{params, PgType};
use pgpipe::ErrorKind;
use pgpipe_testkit::AuthRole;
use postgres_types::{accepts, to_sql_checked, FromSql, IsNull, ToSql, Type};
use sea_query::{Alias, Expr, Order, PostgresQueryBuilder, Query};
use sea_query_postgres::PostgresBinder;

type BoxError = Box<dyn StdError + Sync + Send>;

/// A newtype over TEXT, written by hand the tokio-postgres way.
#[derive(Debug, Clone, PartialEq)]
struct Email(String);

impl ToSql for Email {
    fn to_sql(&self, ty: &Type, out: &mut BytesMut) -> Result<IsNull, BoxError> {
        self.0.to_sql(ty, out)
    }
    accepts!(TEXT, VARCHAR);
    to_sql_checked!();
}

impl<'a> FromSql<'a> for Email {
    fn from_sql(ty: &Type, raw: &'a [u8]) -> Result<Email, BoxError> {
        String::from_sql(ty, raw).map(Email)
    }
    accepts!(TEXT, VARCHAR);
}

/// Derived with postgres-derive: checked against the enum's labels.
#[derive(Debug, Clone, Copy, PartialEq, ToSql, FromSql)]
#[postgres(name = "mood")]
enum Mood {
    #[postgres(name = "sad")]
    Sad,
    #[postgres(name = "ok")]
    Ok,
    #[postgres(name = "happy")]
    Happy,
}

/// Derived with postgres-derive: checked against the composite's fields.
#[derive(Debug, Clone, PartialEq, ToSql, FromSql)]
#[postgres(name = "pair")]
struct Pair {
    label: String,
    n: i32,
}

/// Counts its encodes and decodes, to show a refused value or column is
/// refused before anything of it is sent or read.
#[derive(Debug)]
struct Counted(i32);

static COUNTED_ENCODES: AtomicUsize = AtomicUsize::new(0);
static COUNTED_DECODES: AtomicUsize = AtomicUsize::new(0);

impl ToSql for Counted {
    fn to_sql(&self, ty: &Type, out: &mut BytesMut) -> Result<IsNull, BoxError> {
        COUNTED_ENCODES.fetch_add(1, Ordering::SeqCst);
        self.0.to_sql(ty, out)
    }
    accepts!(INT4);
    to_sql_checked!();
}

impl<'a> FromSql<'a> for Counted {
    fn from_sql(ty: &Type, raw: &'a [u8]) -> Result<Counted, BoxError> {
        COUNTED_DECODES.fetch_add(1, Ordering::SeqCst);
        i32::from_sql(ty, raw).map(Counted)
    }
    accepts!(INT4);
}

const SCHEMA: &str = "
    CREATE TYPE mood AS ENUM ('sad', 'ok', 'happy');
    CREATE TYPE pair AS (label text, n int4);
    CREATE DOMAIN email_address AS text CHECK (VALUE LIKE '%@%');
    CREATE TABLE person (
        id int8 PRIMARY KEY, email email_address, mood mood, pair pair,
        moods mood[], pairs pair[], emails text[], n int4
    );
";

async fn setup(hint: &str) -> (pgpipe_testkit::TestDatabase, pgpipe::Client) {
    let db = common::database(hint);
    let client = common::connect(&db).await;
    client.batch_execute(SCHEMA).await.unwrap();
    (db, client)
}

#[tokio::test]
async fn custom_types_round_trip_as_parameters_and_columns() {
    common::bounded(async {
        let (_db, mut client) = setup("pgt_round_trip").await;
        let pair = Pair {
            label: "x".into(),
            n: 7,
        };
        let n = client
            .execute(
                "INSERT INTO person (id, email, mood, pair) VALUES ($1, $2, $3, $4)",
                (
                    1i64,
                    PgType(Email("ann@example.com".into())),
                    PgType(Mood::Happy),
                    PgType(pair.clone()),
                ),
            )
            .await
            .unwrap();
        assert_eq!(n, 1);
        // The server holds what a native query sees.
        let row = client
            .query_one(
                "SELECT email::text, mood::text, (pair).label, (pair).n FROM person",
                (),
            )
            .await
            .unwrap();
        assert_eq!(row.get::<&str, _>(0), "ann@example.com");
        assert_eq!(row.get::<&str, _>(1), "happy");
        assert_eq!(row.get::<&str, _>(2), "x");
        assert_eq!(row.get::<i32, _>(3), 7);

        // Read back, by `Row::get` and by `query_as`; the domain column is
        // looked through to the text `Email` accepts.
        let row = client
            .query_one(
                "SELECT email, mood, pair FROM person WHERE mood = $1",
                (PgType(Mood::Happy),),
            )
            .await
            .unwrap();
        assert_eq!(
            row.get::<PgType<Email>, _>(0).0,
            Email("ann@example.com".into())
        );
        assert_eq!(row.get::<PgType<Mood>, _>("mood").0, Mood::Happy);
        assert_eq!(row.get::<PgType<Pair>, _>(2).0, pair);
        let rows: Vec<(i64, PgType<Mood>, PgType<Pair>)> = client
            .query_as(
                "SELECT id, mood, pair FROM person WHERE pair = $1::pair",
                (PgType(pair.clone()),),
            )
            .await
            .unwrap();
        assert_eq!(rows.len(), 1);
        assert_eq!((rows[0].1 .0, &rows[0].2 .0), (Mood::Happy, &pair));

        // The same in a transaction (the Describe runs inside it), on a
        // prepared statement (its own types), and as a stream.
        let tx = client.transaction().await.unwrap();
        tx.execute(
            "UPDATE person SET mood = $1 WHERE id = $2",
            (PgType(Mood::Sad), 1i64),
        )
        .await
        .unwrap();
        tx.commit().await.unwrap();
        let stmt = client
            .prepare("SELECT count(*) FROM person WHERE mood = $1")
            .await
            .unwrap();
        let count: i64 = client
            .query_one(&stmt, (PgType(Mood::Sad),))
            .await
            .unwrap()
            .get(0);
        assert_eq!(count, 1);
        let mut stream = client
            .query_stream(
                "SELECT mood FROM person WHERE mood = $1",
                (PgType(Mood::Sad),),
            )
            .await
            .unwrap();
        let mut seen = Vec::new();
        while let Some(row) = stream.next().await {
            seen.push(row.unwrap().get::<PgType<Mood>, _>(0).0);
        }
        assert_eq!(seen, [Mood::Sad]);
        client.batch_execute("BEGIN").await.unwrap();
        let mut portal = client
            .bind_portal(
                "SELECT id FROM person WHERE mood = $1",
                (PgType(Mood::Sad),),
            )
            .await
            .unwrap();
        let rows = portal.fetch(10).await.unwrap();
        assert_eq!(
            rows.iter().map(|r| r.get::<i64, _>(0)).collect::<Vec<_>>(),
            [1]
        );
        drop(portal);
        client.batch_execute("COMMIT").await.unwrap();
    })
    .await;
}

#[tokio::test]
async fn arrays_of_custom_types_round_trip() {
    common::bounded(async {
        let (_db, client) = setup("pgt_arrays").await;
        let moods = vec![Mood::Sad, Mood::Happy, Mood::Ok];
        let pairs = vec![
            Pair {
                label: "a".into(),
                n: 1,
            },
            Pair {
                label: "b".into(),
                n: -2,
            },
        ];
        let emails = vec![Email("a@x".into()), Email("b@y".into())];
        client
            .execute(
                "INSERT INTO person (id, moods, pairs, emails) VALUES (1, $1, $2, $3)",
                (
                    PgType(moods.clone()),
                    PgType(pairs.clone()),
                    PgType(emails.clone()),
                ),
            )
            .await
            .unwrap();
        let row = client
            .query_one(
                "SELECT moods, pairs, emails, array_length(moods, 1) FROM person",
                (),
            )
            .await
            .unwrap();
        assert_eq!(row.get::<PgType<Vec<Mood>>, _>(0).0, moods);
        assert_eq!(row.get::<PgType<Vec<Pair>>, _>(1).0, pairs);
        assert_eq!(row.get::<PgType<Vec<Email>>, _>(2).0, emails);
        assert_eq!(row.get::<i32, _>(3), 3);
        // An array parameter compared on the server.
        let found: i64 = client
            .query_one(
                "SELECT count(*) FROM person WHERE moods = $1",
                (PgType(moods.clone()),),
            )
            .await
            .unwrap()
            .get(0);
        assert_eq!(found, 1);
    })
    .await;
}

#[tokio::test]
async fn nulls_both_ways() {
    common::bounded(async {
        let (_db, client) = setup("pgt_nulls").await;
        client
            .execute(
                "INSERT INTO person (id, mood, pair, email) VALUES (1, $1, $2, $3)",
                (
                    PgType(None::<Mood>),
                    PgType(None::<Pair>),
                    PgType(None::<Email>),
                ),
            )
            .await
            .unwrap();
        let nulls: i64 = client
            .query_one(
                "SELECT count(*) FROM person WHERE mood IS NULL AND pair IS NULL AND email IS NULL",
                (),
            )
            .await
            .unwrap()
            .get(0);
        assert_eq!(nulls, 1);
        let row = client
            .query_one("SELECT mood, pair FROM person", ())
            .await
            .unwrap();
        assert_eq!(row.get::<Option<PgType<Mood>>, _>(0), None);
        assert_eq!(row.get::<PgType<Option<Mood>>, _>(0).0, None);
        assert_eq!(row.get::<PgType<Option<Pair>>, _>(1).0, None);
        // NULL into a type that cannot hold it: pgpipe's NULL error.
        let e = row.try_get::<PgType<Mood>, _>(0).unwrap_err();
        assert!(e.to_string().contains("NULL"), "{e}");
        // sea-query's NULL values.
        let (sql, values) = Query::update()
            .table(Alias::new("person"))
            .values([(Alias::new("n"), Option::<i32>::None.into())])
            .and_where(Expr::col(Alias::new("id")).eq(1i64))
            .build_postgres(PostgresQueryBuilder);
        assert_eq!(
            client
                .execute(&sql, params(&values.as_params()))
                .await
                .unwrap(),
            1
        );
        let n: Option<i32> = client
            .query_one("SELECT n FROM person", ())
            .await
            .unwrap()
            .get(0);
        assert_eq!(n, None);
    })
    .await;
}

#[tokio::test]
async fn a_column_the_type_refuses_is_refused_before_the_first_row() {
    common::bounded(async {
        let (_db, client) = setup("pgt_column_mismatch").await;
        let sql = "SELECT g::int8 FROM generate_series(1, 3) g";
        // pgpipe's own check, for comparison.
        let native = client.query_as::<(i32,), _, _>(sql, ()).await.unwrap_err();
        let before = COUNTED_DECODES.load(Ordering::SeqCst);
        let e = client
            .query_as::<(PgType<Counted>,), _, _>(sql, ())
            .await
            .unwrap_err();
        assert_eq!(
            COUNTED_DECODES.load(Ordering::SeqCst),
            before,
            "no row decoded"
        );
        assert_eq!(e.kind(), native.kind(), "{e} / {native}");
        let msg = e.to_string();
        assert!(msg.contains("int8") && msg.contains("Counted"), "{msg}");
        // A user-defined column: an enum read as a composite.
        let e = client
            .query_as::<(PgType<Pair>,), _, _>("SELECT 'ok'::mood", ())
            .await
            .unwrap_err();
        assert_eq!(e.kind(), native.kind(), "{e}");
        assert!(e.to_string().contains("mood"), "{e}");
        // The accepted type decodes.
        let rows = client
            .query_as::<(PgType<Counted>,), _, _>("SELECT g FROM generate_series(1, 3) g", ())
            .await
            .unwrap();
        assert_eq!(
            rows.iter().map(|r| r.0 .0 .0).collect::<Vec<_>>(),
            [1, 2, 3]
        );
    })
    .await;
}

#[tokio::test]
async fn a_parameter_the_type_refuses_is_refused_before_execution() {
    common::bounded(async {
        let (_db, client) = setup("pgt_param_mismatch").await;
        let sql = "INSERT INTO person (id, n) VALUES (1, $1)";
        let before = COUNTED_ENCODES.load(Ordering::SeqCst);
        // Twice: the first learns the types with a Describe, the second
        // (a different mismatch) takes them from the statement cache.
        for attempt in 0..2 {
            let e = client
                .execute(
                    "INSERT INTO person (id, mood) VALUES (1, $1)",
                    (PgType(Counted(attempt)),),
                )
                .await
                .unwrap_err();
            assert_eq!(e.kind(), ErrorKind::Encode, "{e}");
            let msg = e.to_string();
            assert!(
                msg.contains("parameter $1") && msg.contains("Counted") && msg.contains("mood"),
                "{msg}"
            );
        }
        let e = client.execute(sql, (PgType(Mood::Ok),)).await.unwrap_err();
        let msg = e.to_string();
        assert!(
            msg.contains("parameter $1") && msg.contains("int4"),
            "{msg}"
        );
        assert_eq!(
            COUNTED_ENCODES.load(Ordering::SeqCst),
            before,
            "nothing encoded"
        );
        // A trait object cannot call `accepts`: its own `to_sql_checked`
        // refuses it while the Bind is encoded, still before anything is sent.
        let wrong: &(dyn ToSql + Sync) = &Mood::Ok;
        let e = client.execute(sql, params(&[wrong])).await.unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Encode, "{e}");
        let full = format!("{e} {:?}", e.source());
        assert!(
            full.contains("$1") && full.contains("int4") && full.contains("Mood"),
            "{full}"
        );
        let rows: i64 = client
            .query_one("SELECT count(*) FROM person", ())
            .await
            .unwrap()
            .get(0);
        assert_eq!(rows, 0, "no statement ran");
        // The connection is fine, and an accepted value goes through.
        client.execute(sql, (PgType(Counted(5)),)).await.unwrap();
        let n: i32 = client
            .query_one("SELECT n FROM person", ())
            .await
            .unwrap()
            .get(0);
        assert_eq!(n, 5);
    })
    .await;
}

#[tokio::test]
async fn cached_statements_need_no_extra_round_trip() {
    common::bounded(async {
        let (db, client) = setup("pgt_round_trips").await;
        // The enum's catalog look-up out of the way.
        client
            .query_one("SELECT $1::mood", (PgType(Mood::Ok),))
            .await
            .unwrap();
        let writes = || client.stats().socket_writes;
        let sql = "SELECT count(*) FROM person WHERE mood = $1 AND id > $2";
        let w0 = writes();
        client
            .query_one(sql, (PgType(Mood::Ok), 0i64))
            .await
            .unwrap();
        let w1 = writes();
        assert_eq!(w1 - w0, 2, "first time: Describe, then the statement");
        for _ in 0..3 {
            client
                .query_one(sql, (PgType(Mood::Sad), 0i64))
                .await
                .unwrap();
        }
        assert_eq!(writes() - w1, 3, "cached: one round trip each");

        // With the statement cache off, every such query describes first,
        // and still works.
        let url = format!("{}?statement_cache_capacity=0", db.url(AuthRole::Trust));
        let uncached = pgpipe::connect(&url).await.unwrap();
        for mood in [Mood::Ok, Mood::Happy] {
            let n: i64 = uncached
                .query_one(sql, (PgType(mood), 0i64))
                .await
                .unwrap()
                .get(0);
            assert_eq!(n, 0);
        }
    })
    .await;
}

#[tokio::test]
async fn sea_query_select_insert_update_on_a_pool() {
    common::bounded(async {
        let db = common::database("pgt_sea_query");
        let pool = pgpipe::Pool::connect(&db.url(AuthRole::Trust))
            .await
            .unwrap();
        pool.batch_execute(
            "CREATE TABLE book (id bigserial PRIMARY KEY, title text NOT NULL, pages int4, \
             price float8, in_print bool NOT NULL DEFAULT true, isbn bytea)",
        )
        .await
        .unwrap();
        let (book, id, title, pages, price, in_print, isbn) = (
            Alias::new("book"),
            Alias::new("id"),
            Alias::new("title"),
            Alias::new("pages"),
            Alias::new("price"),
            Alias::new("in_print"),
            Alias::new("isbn"),
        );

        let (sql, values) = Query::insert()
            .into_table(book.clone())
            .columns([title.clone(), pages.clone(), price.clone(), isbn.clone()])
            .values_panic([
                "Middlemarch".into(),
                880i32.into(),
                12.5f64.into(),
                vec![1u8, 2, 3].into(),
            ])
            .values_panic([
                "Leaves of Grass".into(),
                145i32.into(),
                Option::<f64>::None.into(),
                Option::<Vec<u8>>::None.into(),
            ])
            .returning_col(id.clone())
            .build_postgres(PostgresQueryBuilder);
        let ids: Vec<(i64,)> = pool
            .query_as(&sql, params(&values.as_params()))
            .await
            .unwrap();
        assert_eq!(ids.len(), 2);

        let (sql, values) = Query::update()
            .table(book.clone())
            .values([
                (in_print.clone(), false.into()),
                (pages.clone(), 150i32.into()),
            ])
            .and_where(Expr::col(title.clone()).eq("Leaves of Grass"))
            .build_postgres(PostgresQueryBuilder);
        assert_eq!(
            pool.execute(&sql, params(&values.as_params()))
                .await
                .unwrap(),
            1
        );

        let (sql, values) = Query::select()
            .columns([
                id.clone(),
                title.clone(),
                pages.clone(),
                price.clone(),
                in_print.clone(),
                isbn.clone(),
            ])
            .from(book.clone())
            .and_where(Expr::col(pages.clone()).gt(100i32))
            .and_where(Expr::col(title.clone()).like("%e%"))
            .order_by(id.clone(), Order::Asc)
            .build_postgres(PostgresQueryBuilder);
        type Book = (i64, String, Option<i32>, Option<f64>, bool, Option<Vec<u8>>);
        let books: Vec<Book> = pool
            .query_as(&sql, params(&values.as_params()))
            .await
            .unwrap();
        assert_eq!(
            books,
            [
                (
                    ids[0].0,
                    "Middlemarch".into(),
                    Some(880),
                    Some(12.5),
                    true,
                    Some(vec![1, 2, 3])
                ),
                (
                    ids[1].0,
                    "Leaves of Grass".into(),
                    Some(150),
                    None,
                    false,
                    None
                ),
            ]
        );
        // Rows by index, and a statement run again (its types cached).
        for _ in 0..2 {
            let rows = pool.query(&sql, params(&values.as_params())).await.unwrap();
            assert_eq!(rows.len(), 2);
            assert_eq!(rows[1].get::<&str, _>("title"), "Leaves of Grass");
        }
    })
    .await;
}

#[tokio::test]
async fn paths_that_do_not_learn_parameter_types_say_so() {
    common::bounded(async {
        let (_db, client) = setup("pgt_batch").await;
        // A batch sends its statements without a Describe first: SQL text
        // with a `ToSql` value is refused, naming what to do instead; a
        // prepared statement carries its types and works.
        let sql = "INSERT INTO person (id, mood) VALUES (1, $1)";
        let mut batch = client.batch();
        batch.add(sql, (PgType(Mood::Ok),));
        let e = batch.run_atomic().await.unwrap_err();
        let full = format!("{e} {:?}", e.source());
        assert!(full.contains("prepared statement"), "{full}");
        let stmt = client.prepare(sql).await.unwrap();
        let mut batch = client.batch();
        batch.add(&stmt, (PgType(Mood::Ok),));
        batch.run_atomic().await.unwrap();
        let mood: PgType<Mood> = client
            .query_one("SELECT mood FROM person", ())
            .await
            .unwrap()
            .get(0);
        assert_eq!(mood.0, Mood::Ok);
    })
    .await;
}
