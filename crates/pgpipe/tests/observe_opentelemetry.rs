//! Spans (through `tracing-opentelemetry`) and metrics (feature
//! `opentelemetry`) exported by the OpenTelemetry SDK into in-memory
//! exporters, checked name by name against the database semantic
//! conventions v1.44.0 (docs/db/database-spans.md, database-metrics.md,
//! postgresql.md): a query, a failed query, a transaction, a COPY and
//! pool checkouts.
//!
//! `cargo test -p pgpipe --features opentelemetry --test observe_opentelemetry`

mod common;

use std::collections::BTreeMap;
use std::time::Duration;

use opentelemetry::metrics::MeterProvider as _;
use opentelemetry::trace::{SpanKind, Status, TracerProvider as _};
use opentelemetry::{KeyValue, Value};
use opentelemetry_sdk::metrics::data::{AggregatedMetrics, Metric, MetricData, ResourceMetrics};
use opentelemetry_sdk::metrics::{InMemoryMetricExporter, PeriodicReader, SdkMeterProvider};
use opentelemetry_sdk::trace::{InMemorySpanExporter, SdkTracerProvider, SpanData};
use pgpipe::{Pool, PoolConfig};
use tracing_subscriber::layer::SubscriberExt;

/// Every attribute the conventions define for a database client span
/// (database-spans.md, "Span definition"; postgresql.md adds none).
const SPAN_ATTRIBUTES: &[&str] = &[
    "db.system.name",
    "db.collection.name",
    "db.namespace",
    "db.operation.name",
    "db.response.status_code",
    "error.type",
    "server.port",
    "db.operation.batch.size",
    "db.query.summary",
    "db.query.text",
    "db.stored_procedure.name",
    "network.peer.address",
    "network.peer.port",
    "server.address",
    "db.response.returned_rows",
];

/// Every attribute of `db.client.operation.duration`
/// (database-metrics.md).
const DURATION_ATTRIBUTES: &[&str] = &[
    "db.system.name",
    "db.collection.name",
    "db.namespace",
    "db.operation.name",
    "db.response.status_code",
    "error.type",
    "server.port",
    "db.query.summary",
    "db.stored_procedure.name",
    "network.peer.address",
    "network.peer.port",
    "server.address",
    "db.query.text",
];

/// The explicit bucket boundaries the conventions advise for
/// `db.client.operation.duration`.
const DURATION_BUCKETS: [f64; 9] = [0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1.0, 5.0, 10.0];

/// The namespaces the conventions' attributes live in: any attribute in
/// them on pgpipe's spans or metrics must be one of the lists above.
fn in_convention_namespace(key: &str) -> bool {
    ["db.", "server.", "error.", "network."]
        .iter()
        .any(|p| key.starts_with(p))
}

fn text(v: &Value) -> String {
    match v {
        Value::String(s) => s.as_str().to_owned(),
        other => other.to_string(),
    }
}

fn attributes<'a>(kvs: impl Iterator<Item = &'a KeyValue>) -> BTreeMap<String, String> {
    kvs.map(|kv| (kv.key.as_str().to_owned(), text(&kv.value)))
        .collect()
}

fn span_attributes(span: &SpanData) -> BTreeMap<String, String> {
    attributes(span.attributes.iter())
}

/// The conventions' attributes of a span, and nothing else (the bridge
/// adds code and thread attributes; pgpipe adds `pgpipe.*`).
fn convention_attributes(span: &SpanData) -> BTreeMap<String, String> {
    span_attributes(span)
        .into_iter()
        .filter(|(k, _)| in_convention_namespace(k))
        .collect()
}

fn expect(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect()
}

fn metric<'a>(exported: &'a ResourceMetrics, name: &str) -> &'a Metric {
    exported
        .scope_metrics()
        .flat_map(|s| s.metrics())
        .find(|m| m.name() == name)
        .unwrap_or_else(|| panic!("no metric {name}"))
}

/// An up-down counter's points (a non-monotonic i64 sum), by attributes.
fn up_down(m: &Metric, unit: &str) -> Vec<(BTreeMap<String, String>, i64)> {
    assert_eq!(m.unit(), unit, "{}", m.name());
    match m.data() {
        AggregatedMetrics::I64(MetricData::Sum(sum)) => {
            assert!(!sum.is_monotonic(), "{} is an UpDownCounter", m.name());
            sum.data_points()
                .map(|p| (attributes(p.attributes()), p.value()))
                .collect()
        }
        other => panic!("{} is an i64 UpDownCounter, not {other:?}", m.name()),
    }
}

/// A seconds histogram's points: attributes, count, bounds.
fn seconds(m: &Metric) -> Vec<(BTreeMap<String, String>, u64, Vec<f64>)> {
    assert_eq!(m.unit(), "s", "{}", m.name());
    match m.data() {
        AggregatedMetrics::F64(MetricData::Histogram(h)) => h
            .data_points()
            .map(|p| (attributes(p.attributes()), p.count(), p.bounds().collect()))
            .collect(),
        other => panic!("{} is an f64 Histogram, not {other:?}", m.name()),
    }
}

#[tokio::test]
async fn spans_and_metrics_follow_the_database_conventions() {
    // Spans: pgpipe's DEBUG spans through tracing-opentelemetry.
    let spans = InMemorySpanExporter::default();
    let tracer_provider = SdkTracerProvider::builder()
        .with_simple_exporter(spans.clone())
        .build();
    let subscriber = tracing_subscriber::registry()
        .with(tracing_opentelemetry::layer().with_tracer(tracer_provider.tracer("test")))
        .with(
            tracing_subscriber::filter::Targets::new()
                .with_target("pgpipe::query", tracing::Level::DEBUG),
        );
    tracing::subscriber::set_global_default(subscriber)
        .expect("the only subscriber of this binary");
    // Metrics: the global meter provider, read on demand.
    let metrics = InMemoryMetricExporter::default();
    let meter_provider = SdkMeterProvider::builder()
        .with_reader(PeriodicReader::builder(metrics.clone()).build())
        .build();
    opentelemetry::global::set_meter_provider(meter_provider.clone());

    common::bounded(async {
        let db = common::database("otel");
        let port = common::cluster().port().to_string();
        let (config, _) = PoolConfig::from_url(&db.url(pgpipe_testkit::AuthRole::Trust)).unwrap();
        let pool_config = PoolConfig::new()
            .max_size(2)
            .min_idle(0)
            .acquire_timeout(Duration::from_millis(300));
        let pool = Pool::connect_with_config(config, pool_config)
            .await
            .unwrap();
        // pgpipe's instruments exist now, from the global provider.
        assert!(!pgpipe::observe::set_meter(meter_provider.meter("other")));

        let mut client = pool.get().await.unwrap();
        client
            .execute("CREATE TABLE items (id int4, name text)", ())
            .await
            .unwrap();
        spans.reset();
        // A query.
        let rows = client
            .query("SELECT $1::int4 AS n", (7_i32,))
            .await
            .unwrap();
        assert_eq!(rows.len(), 1);
        // A failed query.
        let e = client
            .query("SELECT * FROM no_such_table", ())
            .await
            .unwrap_err();
        assert_eq!(e.code().map(|c| c.code()), Some("42P01"));
        // A transaction.
        let tx = client.transaction().await.unwrap();
        tx.execute("INSERT INTO items VALUES (1, 'one')", ())
            .await
            .unwrap();
        tx.commit().await.unwrap();
        // A COPY into a named table.
        let mut copy = client
            .copy_in_rows::<(i32, String)>("items", &["id", "name"])
            .await
            .unwrap();
        copy.write(&(2, "two".to_owned())).await.unwrap();
        assert_eq!(copy.finish().await.unwrap(), 1);
        drop(client);
        // Checkouts: both connections held, a third acquire times out.
        let a = pool.get().await.unwrap();
        let b = pool.get().await.unwrap();
        assert!(pool.get().await.unwrap_err().is_timeout());
        drop((a, b));

        tracer_provider.force_flush().unwrap();
        let exported = spans.get_finished_spans().unwrap();
        let by_operation = |op: &str| -> Vec<&SpanData> {
            exported
                .iter()
                .filter(|s| {
                    span_attributes(s)
                        .get("pgpipe.operation")
                        .map(String::as_str)
                        == Some(op)
                })
                .collect()
        };
        let target = [
            ("db.system.name", "postgresql"),
            ("db.namespace", db.name()),
            ("server.address", "127.0.0.1"),
            ("server.port", port.as_str()),
        ];

        // Every span: CLIENT (database calls) or INTERNAL (pool waits),
        // with only the conventions' attributes in their namespaces.
        for span in &exported {
            for key in convention_attributes(span).keys() {
                assert!(
                    SPAN_ATTRIBUTES.contains(&key.as_str()),
                    "{key} on {}",
                    span.name
                );
            }
        }

        // The query: named after its target (no summary, no operation
        // name), status unset.
        let queries = by_operation("query");
        assert_eq!(queries.len(), 2, "{queries:#?}");
        let ok = queries[0];
        assert_eq!(ok.name, db.name());
        assert_eq!(ok.span_kind, SpanKind::Client);
        assert_eq!(ok.status, Status::Unset);
        let mut want = expect(&target);
        want.insert("db.response.returned_rows".into(), "1".into());
        assert_eq!(convention_attributes(ok), want);

        // The failed query: status Error, SQLSTATE in both attributes.
        let failed = queries[1];
        assert!(
            matches!(failed.status, Status::Error { .. }),
            "{:?}",
            failed.status
        );
        let mut want = expect(&target);
        want.insert("db.response.status_code".into(), "42P01".into());
        want.insert("error.type".into(), "42P01".into());
        assert_eq!(convention_attributes(failed), want);

        // The transaction: the INSERT, then COMMIT named by its command.
        assert_eq!(by_operation("execute").len(), 1);
        let commit = by_operation("commit");
        assert_eq!(commit.len(), 1);
        assert_eq!(commit[0].name, format!("COMMIT {}", db.name()));
        assert_eq!(commit[0].span_kind, SpanKind::Client);
        let mut want = expect(&target);
        want.insert("db.operation.name".into(), "COMMIT".into());
        want.insert("db.response.returned_rows".into(), "0".into());
        assert_eq!(convention_attributes(commit[0]), want);

        // The COPY: its table is the collection and the span's target.
        let copy = by_operation("copy_in");
        assert_eq!(copy.len(), 1);
        assert_eq!(copy[0].name, "COPY items");
        let mut want = expect(&target);
        want.insert("db.operation.name".into(), "COPY".into());
        want.insert("db.collection.name".into(), "items".into());
        want.insert("db.response.returned_rows".into(), "1".into());
        assert_eq!(convention_attributes(copy[0]), want);

        // Pool checkouts: internal spans, no database operation.
        let acquires = by_operation("pool.acquire");
        assert_eq!(acquires.len(), 3);
        for span in &acquires {
            assert_eq!(span.name, "pool.acquire");
            assert_eq!(span.span_kind, SpanKind::Internal);
            assert!(!convention_attributes(span).contains_key("db.operation.name"));
        }
        assert!(matches!(acquires[2].status, Status::Error { .. }));
        assert_eq!(
            convention_attributes(acquires[2])
                .get("error.type")
                .map(String::as_str),
            Some("timeout")
        );

        // Metrics.
        meter_provider.force_flush().unwrap();
        let all = metrics.get_finished_metrics().unwrap();
        let exported = all.last().expect("one export");

        // db.client.operation.duration: a seconds histogram with the
        // conventions' buckets, one series per kind of call.
        let duration = metric(exported, "db.client.operation.duration");
        let points = seconds(duration);
        let series: BTreeMap<_, _> = points
            .iter()
            .map(|(attrs, count, bounds)| {
                assert_eq!(bounds, &DURATION_BUCKETS.to_vec(), "{attrs:?}");
                for key in attrs.keys() {
                    assert!(DURATION_ATTRIBUTES.contains(&key.as_str()), "{key}");
                }
                (attrs.clone(), *count)
            })
            .collect();
        let generic = expect(&target);
        // CREATE TABLE, the query, the INSERT (the pool's checks are
        // no calls of the user's but run through the same client).
        assert!(series[&generic] >= 3, "{series:#?}");
        let mut failed = expect(&target);
        failed.insert("db.response.status_code".into(), "42P01".into());
        failed.insert("error.type".into(), "42P01".into());
        assert_eq!(series[&failed], 1, "{series:#?}");
        let mut commit = expect(&target);
        commit.insert("db.operation.name".into(), "COMMIT".into());
        assert_eq!(series[&commit], 1, "{series:#?}");
        let mut copy = expect(&target);
        copy.insert("db.operation.name".into(), "COPY".into());
        copy.insert("db.collection.name".into(), "items".into());
        assert_eq!(series[&copy], 1, "{series:#?}");
        // Connecting and waiting for the pool are not database calls.
        assert_eq!(series.len(), 4, "{series:#?}");

        // The pool's metrics, under the conventions' development names.
        let pool_name = format!("127.0.0.1:{port}/{}", db.name());
        let named = expect(&[("db.client.connection.pool.name", pool_name.as_str())]);
        let by_state = |state: &str| {
            let mut a = named.clone();
            a.insert("db.client.connection.state".into(), state.into());
            a
        };
        let count = up_down(
            metric(exported, "db.client.connection.count"),
            "{connection}",
        );
        let count: BTreeMap<_, _> = count.into_iter().collect();
        assert_eq!(count.len(), 2, "{count:?}");
        assert_eq!(count[&by_state("used")], 0);
        assert_eq!(count[&by_state("idle")], 2);
        for (name, unit, value) in [
            ("db.client.connection.max", "{connection}", 2),
            ("db.client.connection.idle.max", "{connection}", 2),
            ("db.client.connection.idle.min", "{connection}", 0),
            ("db.client.connection.pending_requests", "{request}", 0),
        ] {
            assert_eq!(
                up_down(metric(exported, name), unit),
                vec![(named.clone(), value)],
                "{name}"
            );
        }
        let timeouts = metric(exported, "db.client.connection.timeouts");
        assert_eq!(timeouts.unit(), "{timeout}");
        match timeouts.data() {
            AggregatedMetrics::U64(MetricData::Sum(sum)) => {
                assert!(sum.is_monotonic(), "a Counter");
                let points: Vec<_> = sum
                    .data_points()
                    .map(|p| (attributes(p.attributes()), p.value()))
                    .collect();
                assert_eq!(points, vec![(named.clone(), 1)]);
            }
            other => panic!("timeouts is a u64 Counter, not {other:?}"),
        }
        // Checkouts: the pool's own first one, then 1 + 2 (and the timeout
        // waited without getting one).
        for (name, count) in [
            ("db.client.connection.create_time", 2),
            ("db.client.connection.wait_time", 4),
            ("db.client.connection.use_time", 4),
        ] {
            let points = seconds(metric(exported, name));
            assert_eq!(points.len(), 1, "{name}: {points:?}");
            assert_eq!(points[0].0, named, "{name}");
            assert_eq!(points[0].1, count, "{name}");
        }
        drop(pool);
    })
    .await;
    meter_provider.shutdown().unwrap();
    tracer_provider.shutdown().unwrap();
}
