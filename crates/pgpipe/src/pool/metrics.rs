//! The pool's OpenTelemetry metrics (features `metrics` and
//! `opentelemetry`): connection counts published
//! after each checkout and return, timings as they happen. Names are
//! listed in `crate::observe`.

use std::sync::atomic::Ordering;
use std::time::Duration;

use super::stats::Counters;
use crate::config::{Config, Host};
use crate::observe::record::{self as metrics, PoolSizes};

/// `db.client.connection.pool.name`: the pool's first `host:port/dbname`.
pub(crate) fn pool_name(config: &Config) -> String {
    let host = match config.get_hosts().first() {
        Some(Host::Tcp(h)) => h.clone(),
        Some(Host::Unix(dir)) => dir.display().to_string(),
        None => "localhost".to_owned(),
    };
    let port = config.get_ports().first().copied().unwrap_or(5432);
    let db = config.get_dbname().unwrap_or_default();
    format!("{host}:{port}/{db}")
}

/// The pool's sizes the gauges report, taken by the caller (this file
/// does not know the pool's state, only what it is given).
pub(crate) struct Gauges {
    pub(crate) idle: usize,
    pub(crate) max_size: usize,
    pub(crate) min_idle: usize,
}

fn name(counters: &Counters) -> &str {
    counters.name.get().map_or("", String::as_str)
}

/// Publishes the connection counts and the pool's bounds.
fn publish(counters: &Counters, gauges: Gauges) {
    let used = counters.in_use.load(Ordering::Relaxed);
    let pending = counters.waiters.load(Ordering::Relaxed);
    let sizes = PoolSizes {
        idle: gauges.idle,
        used,
        pending,
        max: gauges.max_size,
        idle_min: gauges.min_idle,
    };
    metrics::pool_sizes(name(counters), sizes, &counters.series);
}

/// An acquire ended: how long it waited, or whether it timed out.
pub(crate) fn acquired(counters: &Counters, gauges: Gauges, waited: Duration, timed_out: bool) {
    if timed_out {
        metrics::pool_timeout(name(counters));
    } else {
        metrics::pool_wait_time(name(counters), waited);
    }
    publish(counters, gauges);
}

/// A connection was opened in `took`.
pub(crate) fn created(counters: &Counters, took: Duration) {
    metrics::pool_create_time(name(counters), took);
}

/// A checked-out connection came back after `took`.
pub(crate) fn returned(counters: &Counters, gauges: Gauges, took: Duration) {
    metrics::pool_use_time(name(counters), took);
    publish(counters, gauges);
}
