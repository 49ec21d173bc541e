//! Metrics through the `metrics` facade (feature `metrics`); names and
//! labels follow the OpenTelemetry database conventions (see the module
//! docs of `observe`).

use std::cell::Cell;
use std::time::Duration;

use metrics::{counter, gauge, histogram, Key, Label, Level, Metadata, SharedString};

use super::record::PoolSizes;
use super::span::Labels;
use crate::Error;

const OPERATION_DURATION: &str = "db.client.operation.duration";

static METADATA: Metadata<'static> =
    Metadata::new(module_path!(), Level::INFO, Some(module_path!()));

/// One database call ended: `db.client.operation.duration` with the
/// conventions' attributes as labels (what is known of the call).
pub(crate) fn operation(labels: &Labels, took: Duration, error: Option<&Error>) {
    let mut list = Vec::with_capacity(8);
    list.push(Label::from_static_parts("db.system.name", "postgresql"));
    if let Some(op) = labels.db_operation {
        list.push(Label::from_static_parts("db.operation.name", op));
    }
    if let Some(summary) = labels.summary {
        list.push(Label::from_static_parts("db.query.summary", summary));
    }
    if let Some(collection) = &labels.collection {
        list.push(Label::new("db.collection.name", collection.to_string()));
    }
    if let Some(t) = &labels.target {
        list.push(Label::new(
            "db.namespace",
            SharedString::from(t.namespace.clone()),
        ));
        list.push(Label::new(
            "server.address",
            SharedString::from(t.address.clone()),
        ));
        list.push(Label::new("server.port", t.port.to_string()));
    }
    if let Some(e) = error {
        if let Some(code) = e.code() {
            list.push(Label::new(
                "db.response.status_code",
                code.code().to_owned(),
            ));
        }
        list.push(Label::new("error.type", super::error_type(e)));
    }
    let key = Key::from_parts(OPERATION_DURATION, list);
    metrics::with_recorder(|r| {
        r.register_histogram(&key, &METADATA)
            .record(took.as_secs_f64())
    });
}

/// Per-query events are batched per thread so that a query pays for at
/// most one recorder look-up (its duration): cache hits are published
/// every `HIT_BATCH` hits, the pipeline depth is sampled every
/// `DEPTH_SAMPLE`th request.
const HIT_BATCH: u32 = 32;
const DEPTH_SAMPLE: u32 = 16;

thread_local! {
    static HITS: Cell<u32> = const { Cell::new(0) };
    static SENDS: Cell<u32> = const { Cell::new(0) };
}

/// Requests in flight on a connection as one more is handed over
/// (sampled: every `DEPTH_SAMPLE`th request of a thread).
pub(crate) fn pipeline_depth(depth: usize) {
    let n = SENDS.with(|c| {
        let n = c.get().wrapping_add(1);
        c.set(n);
        n
    });
    if n % DEPTH_SAMPLE == 0 {
        histogram!("pgpipe.pipeline.depth").record(depth as f64);
    }
}

/// The statement cache answered a lookup. Misses are published at once
/// (they are rare and costly); hits in batches of `HIT_BATCH` per thread.
pub(crate) fn cache_lookup(hit: bool) {
    if !hit {
        counter!("pgpipe.statement_cache.misses").increment(1);
        return;
    }
    let n = HITS.with(|c| {
        let n = c.get() + 1;
        c.set(if n >= HIT_BATCH { 0 } else { n });
        n
    });
    if n >= HIT_BATCH {
        counter!("pgpipe.statement_cache.hits").increment(u64::from(n));
    }
}

/// The statement cache evicted a statement to make room.
pub(crate) fn cache_eviction() {
    counter!("pgpipe.statement_cache.evictions").increment(1);
}

/// The most response bytes a connection ever held unread, after a stream.
pub(crate) fn peak_buffered(bytes: usize) {
    gauge!("pgpipe.connection.peak_buffered_bytes").set(bytes as f64);
}

/// A pool's gauges, after a change.
pub(crate) fn pool_gauges(pool: &str, sizes: PoolSizes) {
    const POOL: &str = "db.client.connection.pool.name";
    const STATE: &str = "db.client.connection.state";
    let name = pool.to_owned();
    gauge!("db.client.connection.count", POOL => name.clone(), STATE => "idle")
        .set(sizes.idle as f64);
    gauge!("db.client.connection.count", POOL => name.clone(), STATE => "used")
        .set(sizes.used as f64);
    gauge!("db.client.connection.max", POOL => name.clone()).set(sizes.max as f64);
    // Every connection of a pgpipe pool may sit idle: the idle maximum is
    // the pool's maximum.
    gauge!("db.client.connection.idle.max", POOL => name.clone()).set(sizes.max as f64);
    gauge!("db.client.connection.idle.min", POOL => name.clone()).set(sizes.idle_min as f64);
    gauge!("db.client.connection.pending_requests", POOL => name).set(sizes.pending as f64);
}

/// An acquire gave up waiting.
pub(crate) fn pool_timeout(pool: &str) {
    counter!("db.client.connection.timeouts", "db.client.connection.pool.name" => pool.to_owned())
        .increment(1);
}

/// A pool opened a connection in `took`.
pub(crate) fn pool_create_time(pool: &str, took: Duration) {
    histogram!("db.client.connection.create_time", "db.client.connection.pool.name" => pool.to_owned())
        .record(took.as_secs_f64());
}

/// An acquire waited `took` for a connection.
pub(crate) fn pool_wait_time(pool: &str, took: Duration) {
    histogram!("db.client.connection.wait_time", "db.client.connection.pool.name" => pool.to_owned())
        .record(took.as_secs_f64());
}

/// A connection was checked out for `took`.
pub(crate) fn pool_use_time(pool: &str, took: Duration) {
    histogram!("db.client.connection.use_time", "db.client.connection.pool.name" => pool.to_owned())
        .record(took.as_secs_f64());
}

/// One host of a cluster as its probe round saw it (see
/// [`cluster_host`]).
pub(crate) struct ClusterHost<'a> {
    pub(crate) shard: u32,
    pub(crate) host: &'a str,
    pub(crate) role: &'static str,
    pub(crate) idle: usize,
    pub(crate) used: usize,
    pub(crate) pending: usize,
    pub(crate) requests: u64,
    pub(crate) errors: u64,
    pub(crate) lag: Option<Duration>,
}

/// A cluster host's connections, requests, errors and lag, labelled
/// `pgpipe.shard` and `server.address` (the host's `host:port/dbname`),
/// named as the pool's metrics are under `pgpipe.cluster.`.
pub(crate) fn cluster_host(h: &ClusterHost<'_>) {
    const SHARD: &str = "pgpipe.shard";
    const HOST: &str = "server.address";
    let (shard, host) = (h.shard.to_string(), h.host.to_owned());
    let labels = || [(SHARD, shard.clone()), (HOST, host.clone())];
    let state = |s: &'static str| {
        let mut l = labels().to_vec();
        l.push(("db.client.connection.state", s.to_owned()));
        l
    };
    gauge!("pgpipe.cluster.connection.count", &state("idle")).set(h.idle as f64);
    gauge!("pgpipe.cluster.connection.count", &state("used")).set(h.used as f64);
    gauge!("pgpipe.cluster.connection.pending_requests", &labels()).set(h.pending as f64);
    // 1 on the series of the role the host has now; the others 0.
    for r in ["primary", "standby", "read_only", "unreachable", "unknown"] {
        let mut l = labels().to_vec();
        l.push(("pgpipe.cluster.role", r.to_owned()));
        gauge!("pgpipe.cluster.host.role", &l).set(f64::from(u8::from(h.role == r)));
    }
    counter!("pgpipe.cluster.requests", &labels()).absolute(h.requests);
    counter!("pgpipe.cluster.errors", &labels()).absolute(h.errors);
    if let Some(lag) = h.lag {
        gauge!("pgpipe.cluster.replica.lag", &labels()).set(lag.as_secs_f64());
    }
}

/// The cluster's connection budget: its cap, the connections holding a
/// place, and how often openings waited, evicted or gave up.
pub(crate) fn cluster_budget(limit: usize, open: usize, waits: u64, evictions: u64, timeouts: u64) {
    gauge!("pgpipe.cluster.connection.budget.max").set(limit as f64);
    gauge!("pgpipe.cluster.connection.budget.used").set(open as f64);
    counter!("pgpipe.cluster.connection.budget.waits").absolute(waits);
    counter!("pgpipe.cluster.connection.budget.evictions").absolute(evictions);
    counter!("pgpipe.cluster.connection.budget.timeouts").absolute(timeouts);
}
