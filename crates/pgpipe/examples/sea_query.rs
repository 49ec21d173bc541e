//! Queries built with sea-query, run on a pgpipe `Pool`: sea-query-postgres
//! turns a statement into SQL and `postgres_types::ToSql` values, and
//! `pgpipe::compat::params` hands those to pgpipe (feature
//! `postgres-types`). A type written for tokio-postgres (a derived enum)
//! goes in and out through `pgpipe::compat::PgType`.
//!
//! With `DATABASE_URL` unset it starts a throwaway PostgreSQL cluster
//! (pgpipe-testkit) and removes it afterwards.
//!
//! ```text
//! cargo run -p pgpipe --example sea_query
//! ```

use std::fmt::Write;

use pgpipe::compat::{params, PgType};
use pgpipe_testkit::{AuthRole, Cluster};
use postgres_types::{FromSql, ToSql};
use sea_query::{Expr, Iden, Order, PostgresQueryBuilder, Query};
use sea_query_postgres::PostgresBinder;

/// The table and its columns, as sea-query names them.
#[derive(Clone, Copy)]
enum Book {
    Table,
    Id,
    Title,
    Pages,
    InPrint,
}

impl Iden for Book {
    fn unquoted(&self, s: &mut dyn Write) {
        let name = match self {
            Book::Table => "book",
            Book::Id => "id",
            Book::Title => "title",
            Book::Pages => "pages",
            Book::InPrint => "in_print",
        };
        // Writing to a String cannot fail.
        let _ = s.write_str(name);
    }
}

/// A type written for tokio-postgres, used unchanged.
#[derive(Debug, Clone, Copy, PartialEq, ToSql, FromSql)]
#[postgres(name = "genre")]
enum Genre {
    #[postgres(name = "novel")]
    Novel,
    #[postgres(name = "poetry")]
    Poetry,
}

/// id, title, pages, in print, genre.
type BookRow = (i64, String, Option<i32>, bool, Option<PgType<Genre>>);

#[tokio::main]
async fn main() {
    if let Err(e) = run().await {
        eprintln!("sea_query example failed: {e}");
        std::process::exit(1);
    }
}

async fn run() -> Result<(), Box<dyn std::error::Error>> {
    // Keep the cluster alive until the end of main.
    let (url, _cluster) = match std::env::var("DATABASE_URL") {
        Ok(url) => (url, None),
        Err(_) => {
            println!("DATABASE_URL is not set: starting a throwaway PostgreSQL cluster...");
            let cluster = Cluster::start()?;
            let db = cluster.create_database("sea_query")?;
            (db.url(AuthRole::Scram), Some((db, cluster)))
        }
    };
    let pool = pgpipe::Pool::connect(&url).await?;
    pool.batch_execute(
        "DROP TABLE IF EXISTS book; DROP TYPE IF EXISTS genre;
         CREATE TYPE genre AS ENUM ('novel', 'poetry');
         CREATE TABLE book (id bigserial PRIMARY KEY, title text NOT NULL,
                            pages int4, in_print bool NOT NULL DEFAULT true, genre genre)",
    )
    .await?;

    // INSERT: sea-query's values go through `params`.
    let (sql, values) = Query::insert()
        .into_table(Book::Table)
        .columns([Book::Title, Book::Pages])
        .values_panic(["Middlemarch".into(), 880.into()])
        .values_panic(["Leaves of Grass".into(), 145.into()])
        .returning_col(Book::Id)
        .build_postgres(PostgresQueryBuilder);
    let ids: Vec<i64> = pool
        .query(&sql, params(&values.as_params()))
        .await?
        .iter()
        .map(|row| row.get(0))
        .collect();
    println!("inserted {ids:?} with: {sql}");

    // UPDATE.
    let (sql, values) = Query::update()
        .table(Book::Table)
        .values([(Book::InPrint, false.into())])
        .and_where(Expr::col(Book::Pages).lt(200))
        .build_postgres(PostgresQueryBuilder);
    let updated = pool.execute(&sql, params(&values.as_params())).await?;
    println!("{updated} book(s) out of print");

    // A tokio-postgres type as a parameter, next to pgpipe's own.
    pool.execute(
        "UPDATE book SET genre = $1 WHERE id = $2",
        (PgType(Genre::Poetry), ids[1]),
    )
    .await?;

    // SELECT, read into Rust types; the tokio-postgres type is checked
    // against its column before the first row is decoded.
    let (sql, values) = Query::select()
        .columns([Book::Id, Book::Title, Book::Pages, Book::InPrint])
        .expr(Expr::cust("genre"))
        .from(Book::Table)
        .and_where(Expr::col(Book::Title).like("%e%"))
        .order_by(Book::Id, Order::Asc)
        .build_postgres(PostgresQueryBuilder);
    let books: Vec<BookRow> = pool.query_as(&sql, params(&values.as_params())).await?;
    for (id, title, pages, in_print, genre) in books {
        let genre = genre.map(PgType::into_inner);
        println!("{id}: {title} ({pages:?} pages, in print: {in_print}, genre: {genre:?})");
    }
    Ok(())
}
