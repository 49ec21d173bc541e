//! Observability: one `tracing` span per operation and, with the
//! `metrics` feature, metrics through the `metrics` facade, both named
//! after the OpenTelemetry database semantic conventions.
//!
//! # Spans
//!
//! Every operation (`query`, `execute`, `query_stream`, `batch`,
//! `prepare`, `simple_query`, `commit`, `rollback`, `copy_in` / `copy_out`
//! (the start of a COPY, up to the server's CopyIn/CopyOut response),
//! `connect`, `pool.acquire`) opens a
//! span at `DEBUG` level under the target `pgpipe::query` with these
//! fields:
//!
//! | field | value |
//! | --- | --- |
//! | `otel.name` | the query summary, else the operation name |
//! | `otel.kind` | `client` |
//! | `db.system.name` | `postgresql` |
//! | `db.namespace` | the database name |
//! | `db.operation.name` | the client operation (`query`, `execute`, ...) |
//! | `db.query.summary` | the named query's name (see [`crate::named`]); never parsed from SQL |
//! | `db.query.text` | the SQL text, only after [`record_query_text`]`(true)`; parameter values are never recorded |
//! | `server.address`, `server.port` | where the connection goes |
//! | `db.response.status_code` | the SQLSTATE on a server error |
//! | `error.type` | the SQLSTATE, or the [`ErrorKind`](crate::ErrorKind) of a client-side failure |
//! | `db.response.returned_rows` | rows returned (or affected) |
//! | `pgpipe.queue_time_us` | time until the request was handed to the connection (waiting for an in-flight slot, a reserved connection or a cancel's write gate) |
//! | `pgpipe.server_time_us` | time from that hand-off until the whole response was read: the server's work, the network, and requests pipelined ahead |
//! | `pgpipe.requests_ahead` | requests of other callers in flight on the connection when this one was handed over |
//!
//! With `tracing-opentelemetry`, `otel.name` becomes the span name, so an
//! OpenTelemetry backend shows `get_messages` rather than a generic name.
//!
//! When no subscriber is interested in `DEBUG` spans of `pgpipe::query`,
//! a span is `Span::none()`: the cost is tracing's cached callsite check,
//! no clock read and no allocation.
//!
//! A stream's span stays open until the stream is drained or dropped.
//!
//! # Metrics (feature `metrics`)
//!
//! Recorded through the `metrics` crate, so any exporter works
//! (Prometheus, OpenTelemetry, StatsD). Durations are in seconds.
//!
//! | name | kind | labels |
//! | --- | --- | --- |
//! | `db.client.operation.duration` | histogram | `db.system.name`, `db.operation.name`, `db.query.summary` (named queries), `error.type` (failures) |
//! | `db.client.connection.count` | gauge | `db.client.connection.state` = `idle` / `used` |
//! | `db.client.connection.max` | gauge | |
//! | `db.client.connection.pending_requests` | gauge | |
//! | `db.client.connection.timeouts` | counter | |
//! | `db.client.connection.create_time` | histogram | |
//! | `db.client.connection.wait_time` | histogram | |
//! | `db.client.connection.use_time` | histogram | |
//! | `pgpipe.statement_cache.hits` / `.misses` / `.evictions` | counter | hits are published in batches of 32 per thread (so a query pays for one recorder look-up, its duration) |
//! | `pgpipe.pipeline.depth` | histogram | requests in flight on the connection when one is handed over, sampled every 16th request per thread |
//! | `pgpipe.connection.peak_buffered_bytes` | gauge | the most response bytes a connection held unread (set when a stream ends) |
//!
//! Pool metrics carry `db.client.connection.pool.name`, the pool's
//! `host:port/database`.

#[cfg(feature = "metrics")]
pub(crate) mod metrics;
mod span;

pub(crate) use span::{sql_of, traced, with_summary, Op, Timing};

use std::sync::atomic::{AtomicBool, Ordering};

static QUERY_TEXT: AtomicBool = AtomicBool::new(false);

/// Records the SQL text of each operation in its span's `db.query.text`
/// (off by default: SQL text can be large and may hold literals).
/// Parameter values are never recorded.
pub fn record_query_text(on: bool) {
    QUERY_TEXT.store(on, Ordering::Relaxed);
}

pub(crate) fn query_text_enabled() -> bool {
    QUERY_TEXT.load(Ordering::Relaxed)
}

/// The OpenTelemetry `error.type` of an error: its SQLSTATE when the server
/// sent one, else the error kind in snake case.
pub(crate) fn error_type(e: &crate::Error) -> std::borrow::Cow<'static, str> {
    match e.code() {
        Some(code) => std::borrow::Cow::Owned(code.code().to_owned()),
        None => std::borrow::Cow::Owned(snake(&format!("{:?}", e.kind()))),
    }
}

fn snake(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 4);
    for (i, c) in s.chars().enumerate() {
        if c.is_ascii_uppercase() {
            if i > 0 {
                out.push('_');
            }
            out.push(c.to_ascii_lowercase());
        } else {
            out.push(c);
        }
    }
    out
}
