//! The pool's OpenTelemetry metrics (feature `metrics`): gauges published
//! after each checkout and return, timings as they happen. Names are
//! listed in `crate::observe`.

use std::sync::atomic::Ordering;
use std::time::Duration;

use super::inner::PoolInner;
use crate::config::{Config, Host};
use crate::observe::metrics;

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

impl PoolInner {
    fn metrics_name(&self) -> &str {
        self.counters.name.get().map_or("", String::as_str)
    }

    /// Publishes the connection-count gauges.
    pub(crate) fn publish_metrics(&self) {
        let c = &self.counters;
        let used = c.in_use.load(Ordering::Relaxed);
        let pending = c.waiters.load(Ordering::Relaxed);
        metrics::pool_gauges(
            self.metrics_name(),
            self.idle_count(),
            used,
            self.config.get_max_size(),
            pending,
        );
    }

    /// An acquire ended: how long it waited, or whether it timed out.
    pub(crate) fn acquire_metrics(&self, waited: Duration, timed_out: bool) {
        if timed_out {
            metrics::pool_timeout(self.metrics_name());
        } else {
            metrics::pool_wait_time(self.metrics_name(), waited);
        }
        self.publish_metrics();
    }

    /// A connection was opened in `took`.
    pub(crate) fn created_metrics(&self, took: Duration) {
        metrics::pool_create_time(self.metrics_name(), took);
    }

    /// A checked-out connection came back after `took`.
    pub(crate) fn returned_metrics(&self, took: Duration) {
        metrics::pool_use_time(self.metrics_name(), took);
        self.publish_metrics();
    }
}
