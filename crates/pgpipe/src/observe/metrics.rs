//! Metrics through the `metrics` facade (feature `metrics`); names and
//! labels follow the OpenTelemetry database conventions (see the module
//! docs of `observe`).

use std::cell::Cell;
use std::time::Duration;

use metrics::{counter, gauge, histogram, Key, Label, Level, Metadata};

use crate::Error;

const OPERATION_DURATION: &str = "db.client.operation.duration";

static METADATA: Metadata<'static> =
    Metadata::new(module_path!(), Level::INFO, Some(module_path!()));

macro_rules! op_labels {
    ($($op:literal),* $(,)?) => {
        /// `db.system.name` and `db.operation.name` as a static label list.
        fn static_labels(operation: &'static str) -> Option<&'static [Label]> {
            $(
                {
                    static LABELS: [Label; 2] = [
                        Label::from_static_parts("db.system.name", "postgresql"),
                        Label::from_static_parts("db.operation.name", $op),
                    ];
                    if operation == $op {
                        return Some(&LABELS);
                    }
                }
            )*
            None
        }
    };
}

op_labels!(
    "query",
    "execute",
    "query_stream",
    "batch",
    "prepare",
    "simple_query",
    "commit",
    "rollback",
    "connect",
    "pool.acquire",
    "copy_in",
    "copy_out",
    "bind_portal",
    "portal_fetch",
    "listen",
    "notify",
);

/// One operation ended.
pub(crate) fn operation(
    operation: &'static str,
    summary: Option<&'static str>,
    took: Duration,
    error: Option<&Error>,
) {
    let seconds = took.as_secs_f64();
    match (summary, error) {
        // The common case without a label list built per call.
        (None, None) => match static_labels(operation) {
            Some(labels) => metrics::with_recorder(|r| {
                let key = Key::from_static_parts(OPERATION_DURATION, labels);
                r.register_histogram(&key, &METADATA).record(seconds)
            }),
            None => histogram!(
                OPERATION_DURATION,
                "db.system.name" => "postgresql",
                "db.operation.name" => operation,
            )
            .record(seconds),
        },
        (Some(s), None) => histogram!(
            "db.client.operation.duration",
            "db.system.name" => "postgresql",
            "db.operation.name" => operation,
            "db.query.summary" => s,
        )
        .record(seconds),
        (None, Some(e)) => histogram!(
            "db.client.operation.duration",
            "db.system.name" => "postgresql",
            "db.operation.name" => operation,
            "error.type" => super::error_type(e),
        )
        .record(seconds),
        (Some(s), Some(e)) => histogram!(
            "db.client.operation.duration",
            "db.system.name" => "postgresql",
            "db.operation.name" => operation,
            "db.query.summary" => s,
            "error.type" => super::error_type(e),
        )
        .record(seconds),
    }
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
pub(crate) fn pool_gauges(pool: &str, idle: usize, used: usize, max: usize, pending: usize) {
    let name = pool.to_owned();
    gauge!("db.client.connection.count", "db.client.connection.pool.name" => name.clone(), "db.client.connection.state" => "idle")
        .set(idle as f64);
    gauge!("db.client.connection.count", "db.client.connection.pool.name" => name.clone(), "db.client.connection.state" => "used")
        .set(used as f64);
    gauge!("db.client.connection.max", "db.client.connection.pool.name" => name.clone())
        .set(max as f64);
    gauge!("db.client.connection.pending_requests", "db.client.connection.pool.name" => name)
        .set(pending as f64);
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
