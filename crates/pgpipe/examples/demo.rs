//! A short tour of pgpipe. With `DATABASE_URL` unset it starts a throwaway
//! PostgreSQL cluster (pgpipe-testkit) and removes it afterwards.
//!
//! ```text
//! scripts/demo.sh                       # throwaway cluster
//! DATABASE_URL=postgres://... scripts/demo.sh
//! ```

use std::time::Instant;

use pgpipe_testkit::{AuthRole, Cluster};

#[tokio::main]
async fn main() {
    if let Err(e) = run().await {
        eprintln!("demo failed: {e}");
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
            let url = cluster.url(AuthRole::Scram, "postgres");
            (url, Some(cluster))
        }
    };

    let client = pgpipe::connect(&url).await?;
    println!(
        "connected: PostgreSQL {}, backend pid {}",
        client.parameter("server_version").unwrap_or_default(),
        client.backend_pid()
    );

    client
        .batch_execute(
            "CREATE TEMP TABLE mailbox (id int8 PRIMARY KEY, owner text NOT NULL, unread int4);
             INSERT INTO mailbox SELECT g, 'user' || g, g % 7 FROM generate_series(1, 1000) g",
        )
        .await?;

    let row = client
        .query_one("SELECT owner, unread FROM mailbox WHERE id = $1", (42i64,))
        .await?;
    let owner: &str = row.get("owner");
    let unread: Option<i32> = row.get("unread");
    println!("mailbox 42: owner={owner} unread={unread:?}");

    let updated = client
        .execute("UPDATE mailbox SET unread = 0 WHERE unread > $1", (5i32,))
        .await?;
    println!("marked {updated} mailboxes read");

    // 200 lookups from concurrent tasks share the one connection: pipelined.
    let started = Instant::now();
    let mut tasks = Vec::new();
    for id in 1..=200i64 {
        let client = client.clone();
        tasks.push(tokio::spawn(async move {
            let row = client
                .query_one("SELECT owner FROM mailbox WHERE id = $1", (id,))
                .await?;
            Ok::<_, pgpipe::Error>(row.get::<String, _>(0) == format!("user{id}"))
        }));
    }
    let mut correct = 0;
    for t in tasks {
        if t.await?? {
            correct += 1;
        }
    }
    println!(
        "200 concurrent point selects on one connection: {correct} correct in {:?}",
        started.elapsed()
    );

    match client
        .execute("INSERT INTO mailbox VALUES (1, 'dup', 0)", ())
        .await
    {
        Err(e) if e.code() == Some(&pgpipe::SqlState::UNIQUE_VIOLATION) => {
            println!("duplicate insert refused as expected: {e}");
        }
        other => return Err(format!("expected a unique violation, got {other:?}").into()),
    }
    let n: i64 = client
        .query_one("SELECT count(*) FROM mailbox", ())
        .await?
        .get(0);
    println!("the connection is still fine after the error: {n} mailboxes");
    Ok(())
}
