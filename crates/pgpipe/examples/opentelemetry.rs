//! pgpipe's spans and metrics exported through the OpenTelemetry SDK, to
//! standard output: spans through `tracing-opentelemetry`, metrics
//! through the OpenTelemetry API (feature `opentelemetry`). With
//! `DATABASE_URL` unset it starts a throwaway PostgreSQL cluster
//! (pgpipe-testkit).
//!
//! ```text
//! cargo run -p pgpipe --features opentelemetry --example opentelemetry
//! ```

use opentelemetry::trace::TracerProvider as _;
use opentelemetry_sdk::metrics::{PeriodicReader, SdkMeterProvider};
use opentelemetry_sdk::trace::SdkTracerProvider;
use pgpipe_testkit::{AuthRole, Cluster};
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::util::SubscriberInitExt;

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    // Spans: pgpipe's `tracing` spans (target `pgpipe::query`, level
    // DEBUG) become OpenTelemetry spans, named and kinded by their
    // `otel.*` fields.
    let tracer_provider = SdkTracerProvider::builder()
        .with_simple_exporter(opentelemetry_stdout::SpanExporter::default())
        .build();
    let tracer = tracer_provider.tracer("opentelemetry-example");
    let filter = tracing_subscriber::filter::Targets::new()
        .with_target("pgpipe::query", tracing::Level::DEBUG);
    tracing_subscriber::registry()
        .with(tracing_opentelemetry::layer().with_tracer(tracer))
        .with(filter)
        .init();

    // Metrics: set the global meter provider before pgpipe's first
    // operation (or hand pgpipe a meter with `pgpipe::observe::set_meter`).
    let reader = PeriodicReader::builder(opentelemetry_stdout::MetricExporter::default()).build();
    let meter_provider = SdkMeterProvider::builder().with_reader(reader).build();
    opentelemetry::global::set_meter_provider(meter_provider.clone());

    let (url, _cluster) = match std::env::var("DATABASE_URL") {
        Ok(url) => (url, None),
        Err(_) => {
            let cluster = Cluster::start()?;
            let db = cluster.create_database("otel_example")?;
            (db.url(AuthRole::Trust), Some((db, cluster)))
        }
    };

    let pool = pgpipe::Pool::connect(&url).await?;
    {
        let client = pool.get().await?;
        client
            .execute("CREATE TEMP TABLE item (id int, name text)", ())
            .await?;
        client
            .execute("INSERT INTO item VALUES ($1, $2)", (1_i32, "first"))
            .await?;
        let rows = client.query("SELECT id, name FROM item", ()).await?;
        println!("{} row(s)", rows.len());
        // A failed query: its span has status Error, `error.type` and
        // `db.response.status_code` 42P01.
        let failed = client.query("SELECT * FROM no_such_table", ()).await;
        println!("failed as expected: {}", failed.is_err());
    }

    // Export what is buffered before exiting.
    tracer_provider.shutdown()?;
    meter_provider.shutdown()?;
    Ok(())
}
