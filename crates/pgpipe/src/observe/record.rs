//! Where pgpipe's metrics go: the `metrics` facade (feature `metrics`)
//! and the OpenTelemetry API (feature `opentelemetry`), each with every
//! one that is on. Callers describe what happened once; each backend
//! names it after the conventions.

use std::time::Duration;

use super::span::Labels;
use crate::Error;

/// A database call ended (`db.client.operation.duration`).
pub(crate) fn operation(labels: &Labels, took: Duration, error: Option<&Error>) {
    #[cfg(feature = "metrics")]
    super::metrics::operation(labels, took, error);
    #[cfg(feature = "opentelemetry")]
    super::otel::operation(labels, took, error);
}

/// A pool's sizes after a change, and its configured bounds.
#[derive(Debug, Clone, Copy)]
pub(crate) struct PoolSizes {
    pub(crate) idle: usize,
    pub(crate) used: usize,
    pub(crate) pending: usize,
    pub(crate) max: usize,
    pub(crate) idle_min: usize,
}

/// Publishes a pool's connection counts and bounds. `series` is the
/// pool's OpenTelemetry state (what it last reported).
pub(crate) fn pool_sizes(pool: &str, sizes: PoolSizes, series: &PoolSeries) {
    #[cfg(feature = "metrics")]
    super::metrics::pool_gauges(pool, sizes);
    #[cfg(feature = "opentelemetry")]
    series.publish(pool, sizes);
    #[cfg(not(feature = "opentelemetry"))]
    let _ = series;
}

/// An acquire gave up waiting.
pub(crate) fn pool_timeout(pool: &str) {
    #[cfg(feature = "metrics")]
    super::metrics::pool_timeout(pool);
    #[cfg(feature = "opentelemetry")]
    super::otel::pool_timeout(pool);
}

/// A pool opened a connection in `took`.
pub(crate) fn pool_create_time(pool: &str, took: Duration) {
    #[cfg(feature = "metrics")]
    super::metrics::pool_create_time(pool, took);
    #[cfg(feature = "opentelemetry")]
    super::otel::pool_time(super::otel::PoolTime::Create, pool, took);
}

/// An acquire waited `took` for a connection.
pub(crate) fn pool_wait_time(pool: &str, took: Duration) {
    #[cfg(feature = "metrics")]
    super::metrics::pool_wait_time(pool, took);
    #[cfg(feature = "opentelemetry")]
    super::otel::pool_time(super::otel::PoolTime::Wait, pool, took);
}

/// A connection was checked out for `took`.
pub(crate) fn pool_use_time(pool: &str, took: Duration) {
    #[cfg(feature = "metrics")]
    super::metrics::pool_use_time(pool, took);
    #[cfg(feature = "opentelemetry")]
    super::otel::pool_time(super::otel::PoolTime::Use, pool, took);
}

#[cfg(feature = "opentelemetry")]
pub(crate) use super::otel::PoolSeries;

/// Without OpenTelemetry a pool keeps no reported state.
#[cfg(not(feature = "opentelemetry"))]
#[derive(Debug, Default)]
pub(crate) struct PoolSeries;
