//! What a `#[pgpipe_testkit::test]` costs: the first test of a binary
//! (server start, template build) and every test after it (database
//! copy, fixtures, drop), measured and printed; nothing is asserted.
//!
//! ```text
//! cargo run -p pgpipe-testkit-sample --example overhead [-- ROUNDS]
//! ```
//!
//! Runs against `PGPIPE_TEST_URL` / `DATABASE_URL` when set (then there is
//! no server start to measure), a throwaway cluster otherwise.

use std::time::{Duration, Instant};

use pgpipe_testkit::{run_test, test_server, TestSpec};

const MIGRATIONS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/migrations");
const USERS: &str = include_str!("../tests/isolation/fixtures/users.sql");
const MESSAGES: &str = include_str!("../tests/isolation/fixtures/messages.sql");

/// The body every measured test runs: a pool, one query.
async fn body(url: String) -> Result<(), pgpipe::Error> {
    let pool = pgpipe::Pool::connect(&url).await?;
    pool.query_one("SELECT 1", ()).await?;
    Ok(())
}

fn spec(name: &str) -> TestSpec {
    TestSpec::new(name).migrations(MIGRATIONS)
}

fn summary(mut took: Vec<Duration>) -> String {
    took.sort();
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    let mean = took.iter().sum::<Duration>() / took.len() as u32;
    format!(
        "mean {:6.1} ms, median {:6.1} ms, p90 {:6.1} ms (n = {})",
        ms(mean),
        ms(took[took.len() / 2]),
        ms(took[took.len() * 9 / 10]),
        took.len()
    )
}

fn timed(rounds: usize, mut f: impl FnMut(usize)) -> Vec<Duration> {
    (0..rounds)
        .map(|i| {
            let t = Instant::now();
            f(i);
            t.elapsed()
        })
        .collect()
}

fn main() {
    let rounds: usize = std::env::args()
        .nth(1)
        .map(|a| a.parse().expect("ROUNDS is a number"))
        .unwrap_or(30);

    let t = Instant::now();
    let server = test_server().expect("a test server");
    let started = t.elapsed();
    println!(
        "server: {} ({})",
        if server.is_external() {
            "external"
        } else {
            "throwaway cluster"
        },
        server.version()
    );
    println!(
        "first test, server start:      {:8.1} ms",
        started.as_secs_f64() * 1e3
    );
    let t = Instant::now();
    run_test(spec("first"), body);
    println!(
        "first test, template + test:   {:8.1} ms (a template already on the server is reused)",
        t.elapsed().as_secs_f64() * 1e3
    );

    println!("per test, sequential:");
    let whole = timed(rounds, |i| run_test(spec(&format!("t{i}")), body));
    println!("  whole test, migrations:      {}", summary(whole));
    let db_only = timed(rounds, |i| {
        drop(spec(&format!("d{i}")).create_database().unwrap())
    });
    println!("  database copy + drop only:   {}", summary(db_only));
    let plain = timed(rounds, |i| {
        drop(TestSpec::new(format!("p{i}")).create_database().unwrap())
    });
    println!("  same, without migrations:    {}", summary(plain));
    let fixtures = timed(rounds, |i| {
        drop(
            spec(&format!("f{i}"))
                .fixture("users", USERS)
                .fixture("messages", MESSAGES)
                .create_database()
                .unwrap(),
        )
    });
    println!("  same, two fixtures:          {}", summary(fixtures));
    let mut connect = Vec::new();
    run_test(spec("connect"), |url| async move {
        for _ in 0..rounds {
            let t = Instant::now();
            let pool = pgpipe::Pool::connect(&url).await.unwrap();
            pool.query_one("SELECT 1", ()).await.unwrap();
            connect.push(t.elapsed());
        }
        let _ = &connect;
        println!("  the body alone (pool, query): {}", summary(connect));
    });

    for threads in [2, 8] {
        let tests = 50;
        let t = Instant::now();
        std::thread::scope(|s| {
            for k in 0..threads {
                s.spawn(move || {
                    for i in (k..tests).step_by(threads) {
                        run_test(spec(&format!("par{i}")), body);
                    }
                });
            }
        });
        let wall = t.elapsed();
        println!(
            "{tests} tests on {threads} threads: {:8.1} ms wall, {:6.1} ms per test",
            wall.as_secs_f64() * 1e3,
            wall.as_secs_f64() * 1e3 / tests as f64
        );
    }
}
