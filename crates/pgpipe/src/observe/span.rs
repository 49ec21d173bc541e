//! The span of one operation, and the clock readings behind its queue and
//! server times. Everything here is free when nobody listens: the span is
//! `Span::none()` and no clock is read (see the module docs).

use std::future::Future;
use std::time::Instant;

use tracing::field::Empty;
use tracing::Span;

use crate::config::Host;
use crate::driver::Shared;
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

/// One operation: its span and, when someone records it, its start.
pub(crate) struct Op {
    span: Span,
    /// Read only when the span is enabled or metrics are on.
    start: Option<Instant>,
    #[cfg(feature = "metrics")]
    operation: &'static str,
    #[cfg(feature = "metrics")]
    summary: Option<&'static str>,
}

impl Op {
    /// Opens the span of `operation` on the connection behind `shared`;
    /// `sql` is recorded only when [`record_query_text`](super::record_query_text) is on.
    #[inline]
    pub(crate) fn start(operation: &'static str, shared: Option<&Shared>, sql: Option<&str>) -> Op {
        let span = tracing::debug_span!(
            target: TARGET,
            "pgpipe.operation",
            otel.name = Empty,
            otel.kind = "client",
            db.system.name = "postgresql",
            db.namespace = Empty,
            db.operation.name = operation,
            db.query.summary = Empty,
            db.query.text = Empty,
            server.address = Empty,
            server.port = Empty,
            db.response.status_code = Empty,
            error.type = Empty,
            db.response.returned_rows = Empty,
            pgpipe.queue_time_us = Empty,
            pgpipe.server_time_us = Empty,
            pgpipe.requests_ahead = Empty,
        );
        let enabled = !span.is_disabled();
        let metrics = cfg!(feature = "metrics");
        if !enabled && !metrics {
            return Op {
                span,
                start: None,
                #[cfg(feature = "metrics")]
                operation,
                #[cfg(feature = "metrics")]
                summary: None,
            };
        }
        let summary = summary();
        if enabled {
            span.record("otel.name", summary.unwrap_or(operation));
            if let Some(s) = summary {
                span.record("db.query.summary", s);
            }
            if let (Some(sql), true) = (sql, super::query_text_enabled()) {
                span.record("db.query.text", sql);
            }
            if let Some(shared) = shared {
                record_peer(&span, shared);
            }
        }
        Op {
            span,
            start: Some(Instant::now()),
            #[cfg(feature = "metrics")]
            operation,
            #[cfg(feature = "metrics")]
            summary,
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
    /// the first call records anything.
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
                    if let Some(code) = e.code() {
                        self.span.record("db.response.status_code", code.code());
                    }
                    self.span
                        .record("error.type", super::error_type(e).as_ref());
                }
            }
        }
        #[cfg(feature = "metrics")]
        super::metrics::operation(
            self.operation,
            self.summary,
            _start.elapsed(),
            outcome.err(),
        );
    }
}

fn record_peer(span: &Span, shared: &Shared) {
    if let Some(db) = shared.database.get() {
        span.record("db.namespace", db.as_str());
    }
    match &shared.cancel.host {
        Host::Tcp(host) => span.record("server.address", host.as_str()),
        Host::Unix(dir) => span.record("server.address", dir.display().to_string().as_str()),
    };
    span.record("server.port", shared.cancel.port);
}

/// Clock readings of one request inside an operation: when it started
/// waiting and when it was handed to the connection. Reads no clock unless
/// the current span records it.
pub(crate) struct Timing {
    start: Option<Instant>,
}

impl Timing {
    /// Starts timing a request of the operation whose span is current.
    #[inline]
    pub(crate) fn start() -> Timing {
        let on = tracing::enabled!(target: TARGET, tracing::Level::DEBUG);
        Timing {
            start: on.then(Instant::now),
        }
    }

    /// The request was handed to the connection, with `ahead` requests of
    /// others in flight there. Records the queue time; returns the timing
    /// of the server part.
    #[inline]
    pub(crate) fn sent(self, shared: &Shared) -> Timing {
        #[cfg(feature = "metrics")]
        super::metrics::pipeline_depth(shared.outstanding());
        let Some(start) = self.start else {
            return self;
        };
        let now = Instant::now();
        let span = Span::current();
        span.record("pgpipe.queue_time_us", micros(now - start));
        span.record(
            "pgpipe.requests_ahead",
            shared.outstanding().saturating_sub(1) as u64,
        );
        Timing { start: Some(now) }
    }

    /// The whole response was read: records the server time.
    #[inline]
    pub(crate) fn answered(self) {
        if let Some(sent) = self.start {
            Span::current().record("pgpipe.server_time_us", micros(sent.elapsed()));
        }
    }
}

fn micros(d: std::time::Duration) -> u64 {
    u64::try_from(d.as_micros()).unwrap_or(u64::MAX)
}

/// Runs one operation under its span: opens it, instruments `f` with it,
/// records the outcome (`rows` says how many rows a success returned).
#[inline]
pub(crate) async fn traced<T, F>(
    operation: &'static str,
    shared: Option<&Shared>,
    sql: Option<&str>,
    rows: impl FnOnce(&T) -> u64,
    f: F,
) -> Result<T, Error>
where
    F: Future<Output = Result<T, Error>>,
{
    use tracing::Instrument;
    let op = Op::start(operation, shared, sql);
    let result = f.instrument(op.span().clone()).await;
    op.finish(&result, rows);
    result
}

/// The SQL text of a statement, for `db.query.text`.
pub(crate) fn sql_of<'a>(statement: &crate::query::StatementRef<'a>) -> Option<&'a str> {
    Some(match statement {
        crate::query::StatementRef::Sql(sql) => sql,
        crate::query::StatementRef::Prepared(stmt) => stmt.sql(),
    })
}
