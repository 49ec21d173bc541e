//! Observability: one `tracing` span per operation and metrics (feature
//! `metrics` through the `metrics` facade, feature `opentelemetry`
//! through the OpenTelemetry API), named after the OpenTelemetry database
//! semantic conventions, checked against semantic-conventions v1.44.0
//! (database spans and metrics stable; the pool metrics still in
//! development there). pgpipe has only ever emitted these names, never
//! the experimental ones of v1.24.0 and before, so
//! `OTEL_SEMCONV_STABILITY_OPT_IN` has nothing to switch.
//!
//! # Spans
//!
//! Every operation (`query`, `execute`, `query_stream`, `batch`,
//! `prepare`, `simple_query`, `commit`, `rollback`, `copy_in` /
//! `copy_out`, `bind_portal`, `portal_fetch`, `listen` (a client's or a
//! [`Listener`](crate::Listener)'s), `notify`, `connect`, `pool.acquire`)
//! opens a span at `DEBUG` level under the target `pgpipe::query` with
//! these fields (`otel.*` are read by `tracing-opentelemetry`):
//!
//! | field | value |
//! | --- | --- |
//! | `otel.name` | the span name: `db.query.summary` if set, else `{db.operation.name} {target}`, else `{target}`, where the target is `db.collection.name`, else `db.namespace`, else `server.address:server.port`; `connect` and `pool.acquire` for those |
//! | `otel.kind` | `client`; `internal` for `pool.acquire` |
//! | `otel.status_code` | `ERROR` when the operation failed (no description: a server's message may quote a value) |
//! | `db.system.name` | `postgresql` |
//! | `db.namespace` | the database named at connect (not the schema: pgpipe does not track `search_path`) |
//! | `db.operation.name` | only where one command describes the call: `COMMIT`, `ROLLBACK`, `COPY`, `LISTEN`, `NOTIFY`, `BATCH` (a batch of two or more statements); the generic calls run any SQL and the conventions forbid parsing it, so they have none |
//! | `db.operation.batch.size` | the statements of a batch, unless 1 |
//! | `db.collection.name` | the table of [`copy_in_rows`](crate::Client::copy_in_rows); never parsed from SQL |
//! | `db.query.summary` | the named query's name (see `pgpipe::named`); never parsed from SQL |
//! | `db.query.text` | the SQL text, only after [`record_query_text`]`(true)`; parameter values are never recorded (the conventions ask for parameterized text by default, but pgpipe cannot tell it from text with literals without parsing it) |
//! | `server.address`, `server.port` | where the connection goes (the host name or address as configured, or the socket directory) |
//! | `db.response.status_code` | the SQLSTATE on a server error |
//! | `error.type` | the SQLSTATE, or the [`ErrorKind`](crate::ErrorKind) of a client-side failure in snake case (`timeout`, `io`, `closed`, ...) |
//! | `db.response.returned_rows` | rows returned (or affected); opt-in in the conventions, always on here (a count, never sensitive) |
//! | `pgpipe.operation` | the client call (`query`, `execute`, `commit`, `pool.acquire`, ...) |
//! | `pgpipe.queue_time_us` | time queued before the server could work on the request (see below) |
//! | `pgpipe.server_time_us` | time from then until the request's answer was complete (see below) |
//! | `pgpipe.requests_ahead` | requests of other callers in flight on the connection when this one was handed over |
//!
//! ## Queue time and server time
//!
//! On a pipelined connection a request waits twice before the server works
//! on it: until the driver writes it (for a place in the request queue, a
//! connection held by a transaction or COPY, a cancel's write gate, or the
//! previous write batch), and then behind the requests written ahead of it,
//! which the server answers first, one at a time. The driver stamps, for
//! each request whose span is recorded:
//!
//! - *written*: when it took the request's bytes for the socket write;
//! - *ahead done*: when the answer to the request just ahead of it was
//!   complete (its ReadyForQuery read), if one was in flight;
//! - *done*: when its own ReadyForQuery was read.
//!
//! The server starts on a request at the later of *written* and *ahead
//! done* (what the server does in between cannot be seen from the client;
//! this is the closest observable point). Then:
//!
//! - `pgpipe.queue_time_us` = from the call to that start: the wait to be
//!   written plus the wait behind earlier requests' answers;
//! - `pgpipe.server_time_us` = from that start to *done*: the server's work
//!   on this request and the network. The caller's own decoding after
//!   *done* is in neither.
//!
//! Stamps are clock readings of the driver taken once per write batch and
//! once per read, so answers that arrive in one read share one reading
//! (a pipelined request whose answer arrived together with the one ahead
//! of it shows a server time near zero). They are taken only while a
//! subscriber records pgpipe's `DEBUG` spans. Operations of several
//! requests (`batch`, `prepare`, `commit`) do not record them; a stream
//! records them when it ends, and an operation retried after a stale
//! cached statement records its last attempt. They are span fields only:
//! no metric carries them.
//!
//! With `tracing-opentelemetry`, `otel.name` becomes the span name, so an
//! OpenTelemetry backend shows `get_messages` rather than a generic name,
//! `otel.kind` the span kind and `otel.status_code` its status.
//!
//! When no subscriber is interested in `DEBUG` spans of `pgpipe::query`,
//! a span is `Span::none()`: the cost is tracing's cached callsite check,
//! no clock read and no allocation.
//!
//! A stream's span stays open until the stream is drained or dropped.
//! A COPY's span covers the whole COPY: from the statement until
//! [`finish`](crate::CopyIn::finish) (with the rows copied), a failure
//! (with its error fields), [`abort`](crate::CopyIn::abort) or drop (0
//! rows); for `copy_out`, until the data ends (the server's row count)
//! or the stream is dropped. `portal_fetch` records the rows of that
//! fetch.
//!
//! # Metrics (features `metrics` and `opentelemetry`)
//!
//! The same metrics go to each backend that is on: the `metrics` facade
//! (any exporter: Prometheus, StatsD, ...; no units or instrument kinds
//! there: counts are gauges) and the OpenTelemetry API (instruments of
//! the conventions' kinds and units, from the global meter provider or
//! the meter given to `set_meter`). Durations are in seconds.
//!
//! | name | OpenTelemetry instrument | unit | attributes |
//! | --- | --- | --- | --- |
//! | `db.client.operation.duration` | Histogram, boundaries `[0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 10]` (advice) | `s` | `db.system.name`, `db.namespace`, `server.address`, `server.port`, and where known `db.operation.name`, `db.collection.name`, `db.query.summary`, `error.type` and `db.response.status_code` (failures) |
//! | `db.client.connection.count` | UpDownCounter | `{connection}` | `db.client.connection.state` = `idle` / `used` |
//! | `db.client.connection.max` | UpDownCounter | `{connection}` | |
//! | `db.client.connection.idle.max` | UpDownCounter | `{connection}` | the pool's maximum (every connection may sit idle) |
//! | `db.client.connection.idle.min` | UpDownCounter | `{connection}` | the pool's `min_idle` |
//! | `db.client.connection.pending_requests` | UpDownCounter | `{request}` | |
//! | `db.client.connection.timeouts` | Counter | `{timeout}` | |
//! | `db.client.connection.create_time` | Histogram | `s` | |
//! | `db.client.connection.wait_time` | Histogram | `s` | |
//! | `db.client.connection.use_time` | Histogram | `s` | |
//! | `pgpipe.statement_cache.hits` / `.misses` / `.evictions` | (`metrics` only) counter | | hits are published in batches of 32 per thread (so a query pays for one recorder look-up, its duration) |
//! | `pgpipe.pipeline.depth` | (`metrics` only) histogram | | requests in flight on the connection when one is handed over, sampled every 16th request per thread |
//! | `pgpipe.connection.peak_buffered_bytes` | (`metrics` only) gauge | | the most response bytes a connection held unread (set when a stream ends) |
//! | `pgpipe.cluster.connection.count`, `.pending_requests`, `pgpipe.cluster.requests`, `.errors`, `.replica.lag` (s), `.host.role` | (`metrics` only) gauges and counters, published each probe round | | `pgpipe.shard`, `server.address` (`host:port/dbname`); `db.client.connection.state` on the count, `pgpipe.cluster.role` on the role (1 on the current one) |
//! | `pgpipe.cluster.connection.budget.max`, `.used`, `.waits`, `.evictions`, `.timeouts` | (`metrics` only) gauges and counters | | the cluster's connection budget (`ClusterBuilder::max_connections`) |
//!
//! Only database calls count in `db.client.operation.duration`: opening a
//! connection and waiting for one from a pool are in `create_time` and
//! `wait_time`. The pool's timings use the duration's boundaries too (the
//! conventions give none for them). Pool metrics carry
//! `db.client.connection.pool.name`, the pool's `host:port/database`
//! (the conventions' suggestion for a pool without a name); a dropped
//! pool takes its counts back.

mod convention;
#[cfg(feature = "metrics")]
pub(crate) mod metrics;
#[cfg(feature = "opentelemetry")]
mod otel;
#[cfg(any(feature = "metrics", feature = "opentelemetry"))]
pub(crate) mod record;
mod span;
mod stamps;

pub(crate) use convention::Target;
#[cfg(feature = "opentelemetry")]
pub use otel::set_meter;
pub(crate) use span::{
    request_timing_enabled, traced, traced_with, with_summary, ConnInfo, Detail, Op, Timing,
};
pub(crate) use stamps::{Stamped, Stamps};

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
