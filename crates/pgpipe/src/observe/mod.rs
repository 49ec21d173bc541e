//! Observability: one `tracing` span per operation and, with the
//! `metrics` feature, metrics through the `metrics` facade, both named
//! after the OpenTelemetry database semantic conventions.
//!
//! # Spans
//!
//! Every operation (`query`, `execute`, `query_stream`, `batch`,
//! `prepare`, `simple_query`, `commit`, `rollback`, `copy_in` /
//! `copy_out`, `bind_portal`, `portal_fetch`, `listen` (a client's or a
//! [`Listener`](crate::Listener)'s), `notify`, `connect`, `pool.acquire`)
//! opens a span at `DEBUG` level under the target `pgpipe::query` with
//! these fields:
//!
//! | field | value |
//! | --- | --- |
//! | `otel.name` | the query summary, else the operation name |
//! | `otel.kind` | `client` |
//! | `db.system.name` | `postgresql` |
//! | `db.namespace` | the database name |
//! | `db.operation.name` | the client operation (`query`, `execute`, ...) |
//! | `db.query.summary` | the named query's name (see `pgpipe::named`); never parsed from SQL |
//! | `db.query.text` | the SQL text, only after [`record_query_text`]`(true)`; parameter values are never recorded |
//! | `server.address`, `server.port` | where the connection goes |
//! | `db.response.status_code` | the SQLSTATE on a server error |
//! | `error.type` | the SQLSTATE, or the [`ErrorKind`](crate::ErrorKind) of a client-side failure |
//! | `db.response.returned_rows` | rows returned (or affected) |
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
//! OpenTelemetry backend shows `get_messages` rather than a generic name.
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
mod stamps;

pub(crate) use span::{request_timing_enabled, traced, with_summary, ConnInfo, Op, Timing};
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
