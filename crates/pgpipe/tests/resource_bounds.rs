//! Resource bounds: a 1 GB result streamed with flat memory, a 512 MB
//! value each way, the 65,535-parameter limit (65,536 refused before a byte
//! is sent), and the request-queue bound under 100,000 queued tasks.
//!
//! The tests of this binary run one at a time (they measure the process's
//! resident memory).

mod common;

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use common::{cluster, database};
use pgpipe::ErrorKind;
use pgpipe_testkit::{AuthRole, FaultProxy};
use tokio::time::Instant;

const BOUND: Duration = Duration::from_secs(240);

async fn one_at_a_time() -> tokio::sync::MutexGuard<'static, ()> {
    static LOCK: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());
    LOCK.lock().await
}

fn rss_kb() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.split_whitespace().next()?.parse().ok())
        .unwrap_or(0)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_1_gb_result_streams_with_flat_memory() {
    let _one = one_at_a_time().await;
    tokio::time::timeout(BOUND, async {
        let db = database("bound_1gb");
        let client = common::connect(&db).await;
        // 100,000 rows of 10,000 bytes: 1 GB of values.
        const ROWS: i64 = 100_000;
        const WIDTH: usize = 10_000;
        let mut rows = client
            .query_stream(
                "SELECT g::int8, repeat('x', 10000) FROM generate_series(1, $1::int8) g",
                (ROWS,),
            )
            .await
            .unwrap();
        let started = Instant::now();
        let rss_start = rss_kb();
        let (mut n, mut bytes, mut rss_peak) = (0i64, 0usize, rss_start);
        while let Some(row) = rows.next().await {
            let row = row.unwrap();
            n += 1;
            assert_eq!(row.get::<i64, _>(0), n);
            let v: &str = row.get(1);
            assert_eq!(v.len(), WIDTH);
            bytes += v.len();
            if n % 2_000 == 0 {
                rss_peak = rss_peak.max(rss_kb());
            }
        }
        assert_eq!(n, ROWS);
        assert_eq!(bytes, 1_000_000_000);
        let grown = rss_peak.saturating_sub(rss_start);
        println!(
            "1 GB stream: {n} rows in {:?}; RSS {rss_start} kB at the start, peak {rss_peak} kB \
             (+{grown} kB); peak buffered {} bytes",
            started.elapsed(),
            client.stats().peak_buffered_bytes
        );
        // Flat: the driver holds at most about its 1 MiB bound; allow the
        // allocator and the runtime 64 MB. Buffering the result would be
        // 1,000,000 kB.
        assert!(
            grown < 64 * 1024,
            "RSS grew by {grown} kB while streaming 1 GB"
        );
        // And what the driver held unread stayed near its 1 MiB bound: one
        // read (64 KiB) past it at most, plus the message being framed.
        let peak = client.stats().peak_buffered_bytes;
        assert!(peak <= (1 << 20) + 128 * 1024, "peak buffered {peak} bytes");
    })
    .await
    .expect("1 GB stream exceeded its bound");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_512_mb_value_goes_both_ways() {
    let _one = one_at_a_time().await;
    tokio::time::timeout(BOUND, async {
        let db = database("bound_512mb");
        let client = common::connect(&db).await;
        const SIZE: usize = 512 * 1024 * 1024;
        // From the server: one DataRow of 512 MB.
        let row = client
            .query_one("SELECT repeat('ab', $1::int4 / 2)::bytea", (SIZE as i32,))
            .await
            .unwrap();
        let v: &[u8] = row.get(0);
        assert_eq!(v.len(), SIZE);
        // Compared 1 MiB at a time (memcmp): a byte-pair loop over 512 MB
        // in an unoptimized test build took minutes on a loaded machine.
        let block = b"ab".repeat(1 << 19);
        assert!(v.chunks(block.len()).all(|c| c == &block[..c.len()]));
        drop(row);
        // To the server: one 512 MB parameter.
        let mut big = vec![7u8; SIZE];
        big[SIZE - 1] = 9;
        let row = client
            .query_one(
                "SELECT length($1::bytea)::int8, get_byte($1::bytea, $2::int4)",
                (&big[..], (SIZE - 1) as i32),
            )
            .await
            .unwrap();
        assert_eq!(row.get::<i64, _>(0), SIZE as i64);
        assert_eq!(row.get::<i32, _>(1), 9);
        // The connection is fine afterwards.
        assert_eq!(
            client
                .query_one("SELECT 1::int4", ())
                .await
                .unwrap()
                .get::<i32, _>(0),
            1
        );
    })
    .await
    .expect("512 MB test exceeded its bound");
}

#[tokio::test]
async fn parameters_up_to_65535_work_and_65536_are_refused_before_sending() {
    let _one = one_at_a_time().await;
    tokio::time::timeout(BOUND, async {
        let db = database("bound_params");
        // Through a proxy, to count what reaches the server.
        let proxy = FaultProxy::start(("127.0.0.1", cluster().port())).unwrap();
        let url = proxy.rewrite_url(&db.url(AuthRole::Trust), cluster().port());
        let client = pgpipe::connect(&url).await.unwrap();
        let sql = |n: usize| {
            let list: Vec<String> = (1..=n).map(|i| format!("${i}")).collect();
            format!(
                "SELECT (SELECT sum(x) FROM unnest(ARRAY[{}]::int8[]) x)::int8",
                list.join(",")
            )
        };
        let values: Vec<i64> = (1..=65_535).collect();
        let sum: i64 = client
            .query_one(&sql(65_535), &values)
            .await
            .unwrap()
            .get(0);
        assert_eq!(sum, 65_535 * 65_536 / 2);

        let values: Vec<i64> = (1..=65_536).collect();
        let text = sql(65_536);
        let sent = proxy.stats().to_server;
        let err = client.query_one(&text, &values).await.unwrap_err();
        assert!(
            matches!(err.kind(), ErrorKind::Encode | ErrorKind::ParameterCount),
            "{err:?}"
        );
        assert!(err.to_string().contains("65535"), "{err}");
        assert_eq!(proxy.stats().to_server, sent, "bytes reached the server");
        assert_eq!(
            client
                .query_one("SELECT 2::int4", ())
                .await
                .unwrap()
                .get::<i32, _>(0),
            2
        );
    })
    .await
    .expect("parameter-limit test exceeded its bound");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_request_queue_bound_holds_under_100000_queued_tasks() {
    let _one = one_at_a_time().await;
    tokio::time::timeout(BOUND, async {
        let db = database("bound_queue");
        let client = common::connect(&db).await;
        let stop = Arc::new(AtomicBool::new(false));
        let peak = Arc::new(AtomicUsize::new(0));
        let sampler = {
            let (client, stop, peak) = (client.clone(), stop.clone(), peak.clone());
            tokio::spawn(async move {
                while !stop.load(Ordering::Relaxed) {
                    peak.fetch_max(client.pending_requests(), Ordering::Relaxed);
                    tokio::time::sleep(Duration::from_millis(1)).await;
                }
            })
        };
        let started = Instant::now();
        let tasks: Vec<_> = (0..100_000i32)
            .map(|i| {
                let c = client.clone();
                tokio::spawn(async move {
                    let v: i32 = c.query_one("SELECT $1::int4", (i,)).await.unwrap().get(0);
                    assert_eq!(v, i);
                })
            })
            .collect();
        for t in tasks {
            t.await.unwrap();
        }
        stop.store(true, Ordering::Relaxed);
        sampler.await.unwrap();
        let peak = peak.load(Ordering::Relaxed);
        println!(
            "request queue: 100,000 tasks answered in {:?}; peak pending requests {peak}",
            started.elapsed()
        );
        // The queue's documented bound (4,096 queued or unanswered requests).
        assert!(peak <= 4096, "pending requests peaked at {peak}");
        assert!(peak > 100, "the load never queued up (peak {peak})");
        assert_eq!(client.pending_requests(), 0);
    })
    .await
    .expect("queue-bound test exceeded its bound");
}
