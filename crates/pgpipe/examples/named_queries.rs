//! Named queries from `sql/mail.sql`, checked at compile time by
//! `#[derive(pgpipe::Query)]` and against the server at startup by
//! `pgpipe::named::check_queries`. With `DATABASE_URL` unset it starts a
//! throwaway PostgreSQL cluster (pgpipe-testkit).
//!
//! ```text
//! cargo run -p pgpipe --example named_queries
//! ```

use pgpipe::named::{check_queries, Query as _};
use pgpipe::{Composite, FromRow, Query};
use pgpipe_testkit::{AuthRole, Cluster};

#[derive(Composite, Debug, Clone, PartialEq)]
#[pg(name = "mail.attach")]
struct Attach {
    filename: String,
    r#type: String,
    size: i64,
}

#[derive(FromRow, Debug)]
struct Message {
    mid: i64,
    subject: String,
    snippet: Option<String>,
    seen: bool,
    attaches: Vec<Attach>,
}

#[derive(FromRow, Debug)]
struct Unread {
    unread: i64,
}

#[derive(Query)]
#[query(file = "sql/mail.sql", name = "insert_message")]
struct InsertMessage<'a> {
    uid: i64,
    mid: i64,
    subject: &'a str,
    snippet: Option<&'a str>,
    attaches: &'a [Attach],
}

#[derive(Query)]
#[query(file = "sql/mail.sql", name = "get_messages", row = Message)]
struct GetMessages {
    uid: i64,
    mids: Vec<i64>,
}

// count(*) is an expression: the catalog cannot say it is never NULL, but
// an aggregate count is, so the startup check is told so.
#[derive(Query)]
#[query(file = "sql/mail.sql", name = "count_unread", row = Unread, assume_not_null = "unread")]
struct CountUnread {
    uid: i64,
}

#[derive(Query)]
#[query(file = "sql/mail.sql", name = "mark_seen")]
struct MarkSeen {
    uid: i64,
    mids: Vec<i64>,
}

#[derive(Query)]
#[query(file = "sql/mail.sql", name = "stream_mailbox", row = Message)]
struct StreamMailbox {
    uid: i64,
}

#[tokio::main]
async fn main() {
    if let Err(e) = run().await {
        eprintln!("named_queries failed: {e}");
        std::process::exit(1);
    }
}

async fn run() -> Result<(), Box<dyn std::error::Error>> {
    let (url, _cluster) = match std::env::var("DATABASE_URL") {
        Ok(url) => (url, None),
        Err(_) => {
            let cluster = Cluster::start()?;
            let db = cluster.create_database("named_queries")?;
            (db.url(AuthRole::Scram), Some((db, cluster)))
        }
    };
    let pool = pgpipe::Pool::connect(&url).await?;
    pool.get()
        .await?
        .batch_execute(concat!(
            "DROP SCHEMA IF EXISTS mail CASCADE;",
            include_str!("../sql/mail_schema.sql")
        ))
        .await?;

    // Startup: every query against the real server, all mismatches at once.
    let report = check_queries(
        &pool,
        &[
            InsertMessage::INFO,
            GetMessages::INFO,
            CountUnread::INFO,
            MarkSeen::INFO,
            StreamMailbox::INFO,
        ],
    )
    .await?
    .into_result()?;
    println!("{report}");

    let pdf = Attach {
        filename: "report.pdf".into(),
        r#type: "application/pdf".into(),
        size: 48_213,
    };
    for mid in 1..=3 {
        let attaches = if mid == 2 { vec![pdf.clone()] } else { vec![] };
        InsertMessage {
            uid: 42,
            mid,
            subject: &format!("message {mid}"),
            snippet: (mid != 3).then_some("hello"),
            attaches: &attaches,
        }
        .execute(&pool)
        .await?;
    }

    let msgs = GetMessages {
        uid: 42,
        mids: vec![1, 2],
    }
    .fetch_all(&pool)
    .await?;
    for m in &msgs {
        println!(
            "#{} {:?} seen={} snippet={:?} attaches={:?}",
            m.mid, m.subject, m.seen, m.snippet, m.attaches
        );
    }
    assert_eq!(msgs.len(), 2);
    assert_eq!(
        msgs.iter().find(|m| m.mid == 2).map(|m| m.attaches.clone()),
        Some(vec![pdf])
    );

    let marked = MarkSeen {
        uid: 42,
        mids: vec![1, 2],
    }
    .execute(&pool)
    .await?;
    let unread = CountUnread { uid: 42 }.fetch_one(&pool).await?.unread;
    println!("marked {marked} seen; {unread} unread");
    assert_eq!((marked, unread), (2, 1));

    let client = pool.get().await?;
    let mut rows = StreamMailbox { uid: 42 }.stream(&client).await?;
    let mut streamed = 0;
    while let Some(row) = rows.next().await {
        let m = Message::from_row(&row?)?;
        streamed += 1;
        println!("streamed #{}", m.mid);
    }
    assert_eq!(streamed, 3);
    println!("named queries: ok");
    Ok(())
}
