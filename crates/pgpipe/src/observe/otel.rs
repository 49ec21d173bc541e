//! Metrics through the OpenTelemetry API (feature `opentelemetry`): the
//! instruments of the database client conventions (semantic-conventions
//! v1.44.0), with their units, kinds and, for the operation duration,
//! the conventions' bucket boundaries as advice.
//!
//! The instruments are made once, from the meter given to [`set_meter`]
//! or else from the global meter provider at pgpipe's first operation.

use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use opentelemetry::metrics::{Counter, Histogram, Meter, UpDownCounter};
use opentelemetry::{InstrumentationScope, KeyValue, StringValue, Value};

use super::record::PoolSizes;
use super::span::Labels;
use crate::Error;

/// The explicit bucket boundaries the conventions give
/// `db.client.operation.duration`, in seconds.
pub(crate) const DURATION_BOUNDARIES: [f64; 9] =
    [0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1.0, 5.0, 10.0];

const POOL_NAME: &str = "db.client.connection.pool.name";

struct Instruments {
    duration: Histogram<f64>,
    count: UpDownCounter<i64>,
    max: UpDownCounter<i64>,
    idle_max: UpDownCounter<i64>,
    idle_min: UpDownCounter<i64>,
    pending: UpDownCounter<i64>,
    timeouts: Counter<u64>,
    create_time: Histogram<f64>,
    wait_time: Histogram<f64>,
    use_time: Histogram<f64>,
}

impl Instruments {
    fn new(meter: &Meter) -> Instruments {
        let seconds = |name: &'static str, description: &'static str| {
            meter
                .f64_histogram(name)
                .with_unit("s")
                .with_description(description)
                // The conventions give these boundaries for the operation
                // duration only; the pool's timings use them too rather
                // than the SDK's default (made for milliseconds).
                .with_boundaries(DURATION_BOUNDARIES.to_vec())
                .build()
        };
        let connections = |name: &'static str, description: &'static str| {
            meter
                .i64_up_down_counter(name)
                .with_unit("{connection}")
                .with_description(description)
                .build()
        };
        Instruments {
            duration: seconds(
                "db.client.operation.duration",
                "Duration of database client operations.",
            ),
            count: connections(
                "db.client.connection.count",
                "The number of connections that are currently in state described by the `state` attribute.",
            ),
            max: connections(
                "db.client.connection.max",
                "The maximum number of open connections allowed.",
            ),
            idle_max: connections(
                "db.client.connection.idle.max",
                "The maximum number of idle open connections allowed.",
            ),
            idle_min: connections(
                "db.client.connection.idle.min",
                "The minimum number of idle open connections allowed.",
            ),
            pending: meter
                .i64_up_down_counter("db.client.connection.pending_requests")
                .with_unit("{request}")
                .with_description("The number of current pending requests for an open connection.")
                .build(),
            timeouts: meter
                .u64_counter("db.client.connection.timeouts")
                .with_unit("{timeout}")
                .with_description("The number of connection timeouts that have occurred trying to obtain a connection from the pool.")
                .build(),
            create_time: seconds(
                "db.client.connection.create_time",
                "The time it took to create a new connection.",
            ),
            wait_time: seconds(
                "db.client.connection.wait_time",
                "The time it took to obtain an open connection from the pool.",
            ),
            use_time: seconds(
                "db.client.connection.use_time",
                "The time between borrowing a connection and returning it to the pool.",
            ),
        }
    }
}

static INSTRUMENTS: OnceLock<Instruments> = OnceLock::new();

fn instruments() -> &'static Instruments {
    INSTRUMENTS.get_or_init(|| {
        let scope = InstrumentationScope::builder("pgpipe")
            .with_version(env!("CARGO_PKG_VERSION"))
            .build();
        Instruments::new(&opentelemetry::global::meter_with_scope(scope))
    })
}

/// Records pgpipe's metrics through `meter` instead of the global meter
/// provider's. Returns `false` (and changes nothing) if pgpipe's
/// instruments were already made: call it before the first connection,
/// pool or query.
///
/// Without this call the instruments come from
/// [`opentelemetry::global::meter_provider`] when pgpipe first records
/// something, so the global provider must be set before then.
pub fn set_meter(meter: Meter) -> bool {
    INSTRUMENTS.set(Instruments::new(&meter)).is_ok()
}

fn text(s: &Arc<str>) -> Value {
    Value::String(StringValue::from(s.clone()))
}

/// One database call ended.
pub(crate) fn operation(labels: &Labels, took: Duration, error: Option<&Error>) {
    let mut attributes = Vec::with_capacity(8);
    attributes.push(KeyValue::new("db.system.name", "postgresql"));
    if let Some(op) = labels.db_operation {
        attributes.push(KeyValue::new("db.operation.name", op));
    }
    if let Some(summary) = labels.summary {
        attributes.push(KeyValue::new("db.query.summary", summary));
    }
    if let Some(collection) = &labels.collection {
        attributes.push(KeyValue::new("db.collection.name", collection.to_string()));
    }
    if let Some(t) = &labels.target {
        attributes.push(KeyValue::new("db.namespace", text(&t.namespace)));
        attributes.push(KeyValue::new("server.address", text(&t.address)));
        attributes.push(KeyValue::new("server.port", i64::from(t.port)));
    }
    if let Some(e) = error {
        if let Some(code) = e.code() {
            attributes.push(KeyValue::new(
                "db.response.status_code",
                code.code().to_owned(),
            ));
        }
        attributes.push(KeyValue::new("error.type", super::error_type(e)));
    }
    instruments()
        .duration
        .record(took.as_secs_f64(), &attributes);
}

/// An acquire gave up waiting.
pub(crate) fn pool_timeout(pool: &str) {
    instruments()
        .timeouts
        .add(1, &[KeyValue::new(POOL_NAME, pool.to_owned())]);
}

/// Which pool timing a duration is.
pub(crate) enum PoolTime {
    Create,
    Wait,
    Use,
}

pub(crate) fn pool_time(which: PoolTime, pool: &str, took: Duration) {
    let i = instruments();
    let histogram = match which {
        PoolTime::Create => &i.create_time,
        PoolTime::Wait => &i.wait_time,
        PoolTime::Use => &i.use_time,
    };
    histogram.record(
        took.as_secs_f64(),
        &[KeyValue::new(POOL_NAME, pool.to_owned())],
    );
}

/// A pool's connection counts as last reported. The conventions make
/// them up-down counters, which take changes: each report adds the
/// difference to the value reported before (swapped atomically, so
/// concurrent reports add up to the last one), and a dropped pool takes
/// back what it reported.
#[derive(Debug, Default)]
pub(crate) struct PoolSeries {
    name: OnceLock<Arc<str>>,
    /// idle, used, max, idle max, idle min, pending.
    last: [AtomicI64; 6],
}

impl PoolSeries {
    pub(crate) fn publish(&self, pool: &str, sizes: PoolSizes) {
        // The first report adds zeros too, so that every series exists
        // (a pool without a minimum still reports `idle.min` = 0).
        let first = self.name.get().is_none();
        let name = self.name.get_or_init(|| Arc::from(pool));
        let now = [
            sizes.idle,
            sizes.used,
            sizes.max,
            // Every connection of a pgpipe pool may sit idle.
            sizes.max,
            sizes.idle_min,
            sizes.pending,
        ]
        .map(|n| i64::try_from(n).unwrap_or(i64::MAX));
        self.add(name, now, first);
    }

    /// Adds `now - last` for each value, remembering `now`; a zero
    /// difference only if `always`.
    fn add(&self, name: &Arc<str>, now: [i64; 6], always: bool) {
        let i = instruments();
        let pool = KeyValue::new(POOL_NAME, text(name));
        for (k, value) in now.into_iter().enumerate() {
            let delta = value - self.last[k].swap(value, Ordering::Relaxed);
            if delta == 0 && !always {
                continue;
            }
            match k {
                0 | 1 => {
                    let state = if k == 0 { "idle" } else { "used" };
                    i.count.add(
                        delta,
                        &[
                            pool.clone(),
                            KeyValue::new("db.client.connection.state", state),
                        ],
                    );
                }
                2 => i.max.add(delta, std::slice::from_ref(&pool)),
                3 => i.idle_max.add(delta, std::slice::from_ref(&pool)),
                4 => i.idle_min.add(delta, std::slice::from_ref(&pool)),
                _ => i.pending.add(delta, std::slice::from_ref(&pool)),
            }
        }
    }
}

impl Drop for PoolSeries {
    fn drop(&mut self) {
        if let Some(name) = self.name.get().cloned() {
            self.add(&name, [0; 6], false);
        }
    }
}
