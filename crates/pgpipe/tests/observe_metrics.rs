//! Metrics (feature `metrics`) through a recording `metrics` exporter:
//! names, labels and counts after a known workload.
//!
//! `cargo test -p pgpipe --features metrics --test observe_metrics`

mod common;

use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use metrics::{
    Counter, CounterFn, Gauge, GaugeFn, Histogram, HistogramFn, Key, KeyName, Metadata, Recorder,
    SharedString, Unit,
};
use pgpipe::{FromRow, Pool, PoolConfig, Query};

/// A metric's name and its labels, sorted.
type Id = (String, BTreeMap<String, String>);

#[derive(Default)]
struct Cell {
    counter: AtomicU64,
    gauge: Mutex<f64>,
    samples: Mutex<Vec<f64>>,
}

impl CounterFn for Cell {
    fn increment(&self, value: u64) {
        self.counter.fetch_add(value, Ordering::Relaxed);
    }
    fn absolute(&self, value: u64) {
        self.counter.fetch_max(value, Ordering::Relaxed);
    }
}

impl GaugeFn for Cell {
    fn increment(&self, value: f64) {
        *self.gauge.lock().unwrap() += value;
    }
    fn decrement(&self, value: f64) {
        *self.gauge.lock().unwrap() -= value;
    }
    fn set(&self, value: f64) {
        *self.gauge.lock().unwrap() = value;
    }
}

impl HistogramFn for Cell {
    fn record(&self, value: f64) {
        self.samples.lock().unwrap().push(value);
    }
}

#[derive(Clone, Default)]
struct Exporter {
    cells: Arc<Mutex<HashMap<Id, Arc<Cell>>>>,
}

impl Exporter {
    fn cell(&self, key: &Key) -> Arc<Cell> {
        let labels = key
            .labels()
            .map(|l| (l.key().to_owned(), l.value().to_owned()))
            .collect();
        let id = (key.name().to_owned(), labels);
        self.cells.lock().unwrap().entry(id).or_default().clone()
    }

    /// Every series of `name` whose labels include `labels`.
    fn find(&self, name: &str, labels: &[(&str, &str)]) -> Vec<Arc<Cell>> {
        self.cells
            .lock()
            .unwrap()
            .iter()
            .filter(|((n, l), _)| {
                n == name
                    && labels
                        .iter()
                        .all(|(k, v)| l.get(*k).map(String::as_str) == Some(*v))
            })
            .map(|(_, c)| c.clone())
            .collect()
    }

    /// Samples of the one series of `name` whose labels are exactly `labels`.
    fn samples_exact(&self, name: &str, labels: &[(&str, &str)]) -> usize {
        let want: BTreeMap<String, String> = labels
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect();
        let cells = self.cells.lock().unwrap();
        cells
            .get(&(name.to_owned(), want))
            .map_or(0, |c| c.samples.lock().unwrap().len())
    }

    fn count(&self, name: &str, labels: &[(&str, &str)]) -> u64 {
        self.find(name, labels)
            .iter()
            .map(|c| c.counter.load(Ordering::Relaxed))
            .sum()
    }

    fn samples(&self, name: &str, labels: &[(&str, &str)]) -> usize {
        self.find(name, labels)
            .iter()
            .map(|c| c.samples.lock().unwrap().len())
            .sum()
    }

    fn gauge(&self, name: &str, labels: &[(&str, &str)]) -> f64 {
        let cells = self.find(name, labels);
        assert_eq!(
            cells.len(),
            1,
            "one {name} series with {labels:?}, names: {:?}",
            self.names()
        );
        let g = *cells[0].gauge.lock().unwrap();
        g
    }

    fn names(&self) -> Vec<Id> {
        self.cells.lock().unwrap().keys().cloned().collect()
    }
}

impl Recorder for Exporter {
    fn describe_counter(&self, _: KeyName, _: Option<Unit>, _: SharedString) {}
    fn describe_gauge(&self, _: KeyName, _: Option<Unit>, _: SharedString) {}
    fn describe_histogram(&self, _: KeyName, _: Option<Unit>, _: SharedString) {}
    fn register_counter(&self, key: &Key, _: &Metadata<'_>) -> Counter {
        Counter::from_arc(self.cell(key))
    }
    fn register_gauge(&self, key: &Key, _: &Metadata<'_>) -> Gauge {
        Gauge::from_arc(self.cell(key))
    }
    fn register_histogram(&self, key: &Key, _: &Metadata<'_>) -> Histogram {
        Histogram::from_arc(self.cell(key))
    }
}

#[derive(FromRow)]
struct One {
    #[allow(dead_code)]
    one: i32,
}

#[derive(Query)]
#[query(file = "tests/sql/metrics.sql", name = "select_one", row = One)]
struct SelectOne {
    x: i32,
}

const SYSTEM: (&str, &str) = ("db.system.name", "postgresql");

#[tokio::test]
async fn pool_and_operation_metrics_after_a_known_workload() {
    let exporter = Exporter::default();
    metrics::set_global_recorder(exporter.clone()).expect("the only recorder of this test binary");
    common::bounded(async {
        let db = common::database("metrics");

        // Operations on one client: 10 named queries, 3 executes, 1 failure.
        let client = common::connect(&db).await;
        for x in 0..10 {
            SelectOne { x }.fetch_all(&client).await.unwrap();
        }
        for _ in 0..3 {
            client.execute("SELECT 1", ()).await.unwrap();
        }
        client
            .query("SELECT * FROM no_such_table", ())
            .await
            .unwrap_err();
        let op = "db.client.operation.duration";
        let port = common::cluster().port().to_string();
        // Every call names the database and the server; the generic calls
        // (query, execute) have no `db.operation.name` (the conventions
        // forbid parsing it from the SQL).
        let generic = [
            SYSTEM,
            ("db.namespace", db.name()),
            ("server.address", "127.0.0.1"),
            ("server.port", port.as_str()),
        ];
        let named = [generic.as_slice(), &[("db.query.summary", "select_one")]].concat();
        assert_eq!(exporter.samples_exact(op, &named), 10);
        assert_eq!(exporter.samples_exact(op, &generic), 3);
        let failed = [
            generic.as_slice(),
            &[
                ("error.type", "42P01"),
                ("db.response.status_code", "42P01"),
            ],
        ]
        .concat();
        assert_eq!(exporter.samples_exact(op, &failed), 1);
        // Connecting is no database call: nothing but these three series.
        assert_eq!(exporter.samples(op, &[]), 14, "{:?}", exporter.names());
        // Statement cache: each distinct statement missed once, then hit
        // (hits are published in batches of 32 per thread, depth sampled
        // every 16th request).
        for _ in 0..100 {
            client.execute("SELECT 1", ()).await.unwrap();
        }
        assert!(exporter.count("pgpipe.statement_cache.misses", &[]) >= 3);
        let hits = exporter.count("pgpipe.statement_cache.hits", &[]);
        assert!((111 - 32..=114).contains(&hits), "{hits} hits");
        let depth = exporter.samples("pgpipe.pipeline.depth", &[]);
        assert!(
            (114 / 16 - 1..=114 / 16 + 1).contains(&depth),
            "{depth} samples"
        );

        // A cache of one statement evicts.
        let url = db.url(pgpipe_testkit::AuthRole::Trust);
        let sep = if url.contains('?') { '&' } else { '?' };
        let small = pgpipe::connect(&format!("{url}{sep}statement_cache_capacity=1"))
            .await
            .unwrap();
        let evicted = exporter.count("pgpipe.statement_cache.evictions", &[]);
        small.execute("SELECT 1", ()).await.unwrap();
        small.execute("SELECT 2", ()).await.unwrap();
        assert!(exporter.count("pgpipe.statement_cache.evictions", &[]) > evicted);

        // A pool of two: 3 checkouts, then a timeout while both are held.
        let (config, _) = PoolConfig::from_url(&db.url(pgpipe_testkit::AuthRole::Trust)).unwrap();
        let pool_config = PoolConfig::new()
            .max_size(2)
            .min_idle(0)
            .acquire_timeout(Duration::from_millis(300));
        let pool = Pool::connect_with_config(config, pool_config)
            .await
            .unwrap();
        for _ in 0..3 {
            let conn = pool.get().await.unwrap();
            conn.execute("SELECT 1", ()).await.unwrap();
        }
        let a = pool.get().await.unwrap();
        let b = pool.get().await.unwrap();
        let e = pool.get().await.unwrap_err();
        assert!(e.is_timeout(), "{e}");
        let used = [("db.client.connection.state", "used")];
        let idle = [("db.client.connection.state", "idle")];
        assert_eq!(exporter.gauge("db.client.connection.count", &used), 2.0);
        drop((a, b));
        assert_eq!(exporter.gauge("db.client.connection.count", &used), 0.0);
        assert_eq!(exporter.gauge("db.client.connection.count", &idle), 2.0);
        assert_eq!(exporter.gauge("db.client.connection.max", &[]), 2.0);
        assert_eq!(exporter.gauge("db.client.connection.idle.max", &[]), 2.0);
        assert_eq!(exporter.gauge("db.client.connection.idle.min", &[]), 0.0);
        assert_eq!(
            exporter.gauge("db.client.connection.pending_requests", &[]),
            0.0
        );
        assert_eq!(exporter.count("db.client.connection.timeouts", &[]), 1);
        // connect_with checks out one connection too: 1 + 3 + 2 checkouts.
        assert_eq!(exporter.samples("db.client.connection.wait_time", &[]), 6);
        assert_eq!(exporter.samples("db.client.connection.use_time", &[]), 6);
        assert_eq!(exporter.samples("db.client.connection.create_time", &[]), 2);
        // Every pool series names its pool.
        let pool_name = format!("127.0.0.1:{}/{}", common::cluster().port(), db.name());
        let with_name = [("db.client.connection.pool.name", pool_name.as_str())];
        assert_eq!(
            exporter.count("db.client.connection.timeouts", &with_name),
            1
        );

        // A cluster publishes per host and shard at each probe round.
        let shards = [
            common::database("metrics_shard"),
            common::database("metrics_shard"),
        ];
        let c = common::cluster();
        let url = |db: &pgpipe_testkit::TestDatabase| {
            format!(
                "postgres://{}@127.0.0.1:{}/{}",
                c.superuser(),
                c.port(),
                db.name()
            )
        };
        let cluster = pgpipe::cluster::Cluster::builder()
            .shard(0, [url(&shards[0])])
            .shard(1, [url(&shards[1])])
            .max_connections(4)
            .probe_interval(Duration::from_millis(50))
            .build()
            .unwrap();
        for _ in 0..3 {
            cluster
                .shard_id(0)
                .unwrap()
                .primary()
                .execute("SELECT 1", ())
                .await
                .unwrap();
        }
        cluster
            .shard_id(1)
            .unwrap()
            .primary()
            .execute("SELECT 1/0", ())
            .await
            .unwrap_err();
        let host0 = format!("127.0.0.1:{}/{}", c.port(), shards[0].name());
        let host1 = format!("127.0.0.1:{}/{}", c.port(), shards[1].name());
        let on0 = [("pgpipe.shard", "0"), ("server.address", host0.as_str())];
        let on1 = [("pgpipe.shard", "1"), ("server.address", host1.as_str())];
        common::eventually("a probe round published both shards", || async {
            exporter.count("pgpipe.cluster.requests", &on0) == 3
                && exporter.count("pgpipe.cluster.errors", &on1) == 1
        })
        .await;
        assert_eq!(exporter.count("pgpipe.cluster.requests", &on1), 1);
        assert_eq!(exporter.count("pgpipe.cluster.errors", &on0), 0);
        let primary = [on0.as_slice(), &[("pgpipe.cluster.role", "primary")]].concat();
        assert_eq!(exporter.gauge("pgpipe.cluster.host.role", &primary), 1.0);
        let standby = [on0.as_slice(), &[("pgpipe.cluster.role", "standby")]].concat();
        assert_eq!(exporter.gauge("pgpipe.cluster.host.role", &standby), 0.0);
        // Idle plus used (checked out or serving the shared lane) is every
        // connection of the host's pool.
        let used = [on0.as_slice(), &[("db.client.connection.state", "used")]].concat();
        let idle = [on0.as_slice(), &[("db.client.connection.state", "idle")]].concat();
        let open = exporter.gauge("pgpipe.cluster.connection.count", &used)
            + exporter.gauge("pgpipe.cluster.connection.count", &idle);
        assert_eq!(open, cluster.stats().shards[0].open as f64);
        assert!(open >= 1.0);
        assert_eq!(
            exporter.gauge("pgpipe.cluster.connection.budget.max", &[]),
            4.0
        );
        let held = exporter.gauge("pgpipe.cluster.connection.budget.used", &[]);
        assert!((1.0..=4.0).contains(&held), "{held}");
    })
    .await
}
