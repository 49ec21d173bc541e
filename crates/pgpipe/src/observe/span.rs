//! The span of one operation, and the clock readings behind its queue and
//! server times. Everything here is free when nobody listens: the span is
//! `Span::none()` and no clock is read (see the module docs).

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Instant;

use tracing::field::Empty;
use tracing::Span;

use super::convention::{self, Target};
use super::stamps::Stamped;
use crate::Error;

/// The target every pgpipe operation span is recorded under.
pub(crate) const TARGET: &str = "pgpipe::query";

tokio::task_local! {
    /// The name of the named query running in this task (set by
    /// `pgpipe::named`), for `db.query.summary`.
    static SUMMARY: &'static str;
}

/// Runs `f` with `name` as the query summary of the operations it starts.
pub(crate) async fn with_summary<F: Future>(name: &'static str, f: F) -> F::Output {
    SUMMARY.scope(name, f).await
}

/// The summary set by [`with_summary`] for this task, if any.
pub(crate) fn summary() -> Option<&'static str> {
    SUMMARY.try_with(|s| *s).ok()
}

/// What a span reads of the connection an operation runs on (the session
/// implements it). Read only when a subscriber records the span, when
/// metrics are on, or for the pipeline depth metric.
pub(crate) trait ConnInfo {
    /// `db.namespace`, `server.address` and `server.port`, once connected.
    fn target(&self) -> Option<&Arc<Target>>;
    /// Requests in flight on the connection, this one included.
    fn in_flight(&self) -> usize;
}

/// Handles hold their session behind an `Arc`.
impl<T: ConnInfo + ?Sized> ConnInfo for std::sync::Arc<T> {
    fn target(&self) -> Option<&Arc<Target>> {
        (**self).target()
    }

    fn in_flight(&self) -> usize {
        (**self).in_flight()
    }
}

/// What an operation is, beyond its name: the table of a COPY into one
/// (`db.collection.name`) and the statements of a batch
/// (`db.operation.batch.size`).
#[derive(Default, Clone, Copy)]
pub(crate) struct Detail<'a> {
    pub(crate) collection: Option<&'a str>,
    pub(crate) batch_size: Option<usize>,
}

/// One operation: its span and, when someone records it, its start.
pub(crate) struct Op {
    span: Span,
    /// Read only when the span is enabled or metrics are on.
    start: Option<Instant>,
    #[cfg(any(feature = "metrics", feature = "opentelemetry"))]
    labels: Option<Box<Labels>>,
}

/// What an operation's duration metric is labelled with, kept from its
/// start to its end (boxed: an `Op` sits in every query's future).
#[cfg(any(feature = "metrics", feature = "opentelemetry"))]
pub(crate) struct Labels {
    pub(crate) db_operation: Option<&'static str>,
    pub(crate) summary: Option<&'static str>,
    pub(crate) collection: Option<Box<str>>,
    pub(crate) target: Option<Arc<Target>>,
}

impl Op {
    /// Opens the span of `operation` on the connection `shared`;
    /// `sql` is recorded only when [`record_query_text`](super::record_query_text) is on.
    #[inline]
    pub(crate) fn start(
        operation: &'static str,
        shared: Option<&dyn ConnInfo>,
        sql: Option<&str>,
    ) -> Op {
        Op::start_with(operation, shared, sql, Detail::default())
    }

    /// [`start`](Self::start) with what else is known of the operation.
    ///
    /// Every field known now is given to the span as it is created (the
    /// macro evaluates them only when the span is enabled): one call into
    /// the subscriber instead of one per field, and the conventions ask
    /// for the sampling-relevant ones at creation.
    #[inline]
    pub(crate) fn start_with(
        operation: &'static str,
        shared: Option<&dyn ConnInfo>,
        sql: Option<&str>,
        detail: Detail<'_>,
    ) -> Op {
        let db_operation = convention::db_operation_name(operation, detail.batch_size);
        let target = shared.and_then(|s| s.target());
        let database_call = convention::is_database_call(operation);
        let span = tracing::debug_span!(
            target: TARGET,
            "pgpipe.operation",
            otel.name = convention::span_name(
                operation,
                db_operation,
                summary(),
                detail.collection,
                target.map(|t| &**t),
            )
            .as_ref(),
            otel.kind = if database_call { "client" } else { "internal" },
            otel.status_code = Empty,
            db.system.name = "postgresql",
            db.namespace = target.map(|t| &*t.namespace),
            db.operation.name = db_operation,
            db.collection.name = detail.collection,
            db.operation.batch.size = convention::batch_size(detail.batch_size),
            db.query.summary = summary(),
            db.query.text = sql.filter(|_| super::query_text_enabled()),
            server.address = target.map(|t| &*t.address),
            server.port = target.map(|t| t.port),
            db.response.status_code = Empty,
            error.type = Empty,
            db.response.returned_rows = Empty,
            pgpipe.operation = operation,
            pgpipe.queue_time_us = Empty,
            pgpipe.server_time_us = Empty,
            pgpipe.requests_ahead = Empty,
        );
        let enabled = !span.is_disabled();
        let metrics = cfg!(any(feature = "metrics", feature = "opentelemetry"));
        if !enabled && !metrics {
            return Op {
                span,
                start: None,
                #[cfg(any(feature = "metrics", feature = "opentelemetry"))]
                labels: None,
            };
        }
        Op {
            span,
            start: Some(Instant::now()),
            // Only database calls go into `db.client.operation.duration`.
            #[cfg(any(feature = "metrics", feature = "opentelemetry"))]
            labels: database_call.then(|| {
                Box::new(Labels {
                    db_operation,
                    summary: summary(),
                    collection: detail.collection.map(Box::from),
                    target: target.cloned(),
                })
            }),
        }
    }

    /// An operation nobody traces (a placeholder until the real one is
    /// attached).
    pub(crate) fn none() -> Op {
        Op {
            span: Span::none(),
            start: None,
            #[cfg(any(feature = "metrics", feature = "opentelemetry"))]
            labels: None,
        }
    }

    /// Records the queue and server time of the operation's one request
    /// (a stream's, once it has ended), timed from the operation's start.
    pub(crate) fn record_times(&self, slot: &impl Stamped) {
        if let (Some(start), false) = (self.start, self.span.is_disabled()) {
            record_times(&self.span, start, slot);
        }
    }

    /// The span, to instrument the operation's future with.
    pub(crate) fn span(&self) -> &Span {
        &self.span
    }

    /// Ends the operation: records its row count or its error, and with the
    /// `metrics` feature its duration.
    #[inline]
    pub(crate) fn finish<T>(self, result: &Result<T, Error>, rows: impl FnOnce(&T) -> u64) {
        let mut op = self;
        if op.start.is_none() {
            return;
        }
        op.end(result.as_ref().map(rows));
    }

    /// Ends the operation with `e`, handing it back.
    pub(crate) fn failed(mut self, e: Error) -> Error {
        self.end(Err(&e));
        e
    }

    /// [`finish`](Self::finish) with the outcome already reduced to a row
    /// count (for streams, which end long after they were started). Only
    /// the first call records anything; it closes the span.
    pub(crate) fn end(&mut self, outcome: Result<u64, &Error>) {
        let Some(_start) = self.start.take() else {
            return;
        };
        if !self.span.is_disabled() {
            match outcome {
                Ok(rows) => {
                    self.span.record("db.response.returned_rows", rows);
                }
                Err(e) => {
                    // The span's status (tracing-opentelemetry reads
                    // `otel.status_code`). No description: a server's
                    // message may quote the offending value.
                    self.span.record("otel.status_code", "ERROR");
                    if let Some(code) = e.code() {
                        self.span.record("db.response.status_code", code.code());
                    }
                    self.span
                        .record("error.type", super::error_type(e).as_ref());
                }
            }
        }
        #[cfg(any(feature = "metrics", feature = "opentelemetry"))]
        if let Some(labels) = self.labels.take() {
            super::record::operation(&labels, _start.elapsed(), outcome.err());
        }
        // The operation is over: its span closes now, even if what holds
        // it (a drained stream, a finished COPY) lives on.
        self.span = Span::none();
    }
}

/// Whether requests made now should be timed by the driver: a subscriber
/// is interested in pgpipe's `DEBUG` operation spans. With none (or one at
/// `INFO`), this stops at tracing's level check and no clock is read.
#[inline]
pub(crate) fn request_timing_enabled() -> bool {
    tracing::enabled!(target: TARGET, tracing::Level::DEBUG)
}

/// The queue and server time of one request inside an operation, recorded
/// on the current span. Reads no clock unless a subscriber records the
/// span (then one at the call; the driver stamps the rest, see
/// the driver's `Stamps` on the request's slot).
pub(crate) struct Timing {
    start: Option<Instant>,
    /// Requests of others in flight when this one was handed over.
    ahead: u64,
}

impl Timing {
    /// Starts timing a request of the operation whose span is current.
    #[inline]
    pub(crate) fn start() -> Timing {
        Timing {
            start: request_timing_enabled().then(Instant::now),
            ahead: 0,
        }
    }

    /// The request was handed to the connection, with the requests of
    /// others in flight there counted.
    #[inline]
    pub(crate) fn sent(mut self, shared: &dyn ConnInfo) -> Timing {
        #[cfg(feature = "metrics")]
        super::metrics::pipeline_depth(shared.in_flight());
        if self.start.is_some() {
            self.ahead = shared.in_flight().saturating_sub(1) as u64;
        }
        self
    }

    /// The whole response was read: records the requests ahead and the
    /// queue and server times from the driver's stamps on `slot`.
    #[inline]
    pub(crate) fn answered(self, slot: &impl Stamped) {
        if let Some(start) = self.start {
            let span = Span::current();
            span.record("pgpipe.requests_ahead", self.ahead);
            record_times(&span, start, slot);
        }
    }
}

/// Records `pgpipe.queue_time_us` and `pgpipe.server_time_us` of a request
/// made at `start` whose answer `slot` holds (nothing if the driver did
/// not stamp it: the connection failed, or it was not timed).
pub(crate) fn record_times(span: &Span, start: Instant, slot: &impl Stamped) {
    let stamps = slot.stamps();
    let (Some(server_start), Some(done)) = (stamps.server_start(), stamps.done) else {
        return;
    };
    span.record(
        "pgpipe.queue_time_us",
        micros(server_start.saturating_duration_since(start)),
    );
    span.record(
        "pgpipe.server_time_us",
        micros(done.saturating_duration_since(server_start)),
    );
}

fn micros(d: std::time::Duration) -> u64 {
    u64::try_from(d.as_micros()).unwrap_or(u64::MAX)
}

/// Runs one operation under its span: opens it, instruments `f` with it,
/// records the outcome (`rows` says how many rows a success returned).
///
/// A future of its own rather than an `async fn` around
/// `f.instrument(span)`: that one holds `f` twice (as its argument and
/// inside `Instrumented`), doubling the size of every query's future, and
/// the whole of it is copied each time a query starts.
#[inline]
pub(crate) fn traced<T, F, R>(
    operation: &'static str,
    shared: Option<&dyn ConnInfo>,
    sql: Option<&str>,
    rows: R,
    f: F,
) -> Traced<F, R>
where
    F: Future<Output = Result<T, Error>>,
    R: FnOnce(&T) -> u64,
{
    traced_with(operation, shared, sql, Detail::default(), rows, f)
}

/// [`traced`] with what else is known of the operation.
#[inline]
pub(crate) fn traced_with<T, F, R>(
    operation: &'static str,
    shared: Option<&dyn ConnInfo>,
    sql: Option<&str>,
    detail: Detail<'_>,
    rows: R,
    f: F,
) -> Traced<F, R>
where
    F: Future<Output = Result<T, Error>>,
    R: FnOnce(&T) -> u64,
{
    Traced {
        f,
        ended: Some((Op::start_with(operation, shared, sql, detail), rows)),
    }
}

pin_project_lite::pin_project! {
    /// The future of [`traced`]: polls the operation inside its span.
    pub(crate) struct Traced<F, R> {
        #[pin]
        f: F,
        ended: Option<(Op, R)>,
    }
}

impl<T, F, R> Future for Traced<F, R>
where
    F: Future<Output = Result<T, Error>>,
    R: FnOnce(&T) -> u64,
{
    type Output = Result<T, Error>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.project();
        let result = {
            let _entered = this.ended.as_ref().map(|(op, _)| op.span().enter());
            std::task::ready!(this.f.poll(cx))
        };
        if let Some((op, rows)) = this.ended.take() {
            op.finish(&result, rows);
        }
        Poll::Ready(result)
    }
}
