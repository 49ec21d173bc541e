//! What `--tracing` and the `metrics` feature install, to measure the cost
//! of pgpipe's observability: a `tracing` subscriber writing nowhere, and
//! (with `--features metrics`) a metrics recorder that keeps every series
//! in a map, as exporters do.

use crate::cli::TracingLevel;

/// Installs the subscriber (and recorder) for the whole process; returns
/// a line describing them for the report.
pub fn install(level: TracingLevel) -> String {
    let tracing = match level {
        TracingLevel::Off => "tracing: off",
        TracingLevel::Info => {
            subscriber(tracing_subscriber::filter::LevelFilter::INFO);
            "tracing: subscriber at INFO (pgpipe spans disabled)"
        }
        TracingLevel::Debug => {
            subscriber(tracing_subscriber::filter::LevelFilter::DEBUG);
            "tracing: subscriber at DEBUG (pgpipe spans recorded)"
        }
    };
    format!("{tracing}; {}", metrics_recorder())
}

fn subscriber(level: tracing_subscriber::filter::LevelFilter) {
    let subscriber = tracing_subscriber::fmt()
        .with_max_level(level)
        .with_writer(std::io::sink)
        .finish();
    // Only the first install wins; the bench installs once.
    let _ = tracing::subscriber::set_global_default(subscriber);
}

#[cfg(not(feature = "metrics"))]
fn metrics_recorder() -> &'static str {
    "metrics: not built (feature off)"
}

#[cfg(feature = "metrics")]
fn metrics_recorder() -> &'static str {
    let _ = metrics::set_global_recorder(recorder::MapRecorder::default());
    "metrics: on, recorded into an in-process map"
}

#[cfg(feature = "metrics")]
mod recorder {
    use std::collections::HashMap;
    use std::sync::atomic::{AtomicU64, Ordering};
    use std::sync::{Arc, Mutex};

    use metrics::{
        Counter, CounterFn, Gauge, GaugeFn, Histogram, HistogramFn, Key, KeyName, Metadata,
        Recorder, SharedString, Unit,
    };

    /// One series: a count and a sum (enough for a rate and a mean).
    #[derive(Default)]
    pub(super) struct Cell {
        count: AtomicU64,
        bits: AtomicU64,
    }

    impl CounterFn for Cell {
        fn increment(&self, value: u64) {
            self.count.fetch_add(value, Ordering::Relaxed);
        }
        fn absolute(&self, value: u64) {
            self.count.fetch_max(value, Ordering::Relaxed);
        }
    }

    impl GaugeFn for Cell {
        fn increment(&self, value: f64) {
            self.set(f64::from_bits(self.bits.load(Ordering::Relaxed)) + value);
        }
        fn decrement(&self, value: f64) {
            self.set(f64::from_bits(self.bits.load(Ordering::Relaxed)) - value);
        }
        fn set(&self, value: f64) {
            self.bits.store(value.to_bits(), Ordering::Relaxed);
        }
    }

    impl HistogramFn for Cell {
        fn record(&self, value: f64) {
            self.count.fetch_add(1, Ordering::Relaxed);
            let sum = f64::from_bits(self.bits.load(Ordering::Relaxed)) + value;
            self.bits.store(sum.to_bits(), Ordering::Relaxed);
        }
    }

    #[derive(Default)]
    pub(super) struct MapRecorder {
        cells: Mutex<HashMap<Key, Arc<Cell>>>,
    }

    impl MapRecorder {
        fn cell(&self, key: &Key) -> Arc<Cell> {
            let mut cells = self.cells.lock().unwrap_or_else(|e| e.into_inner());
            cells.entry(key.clone()).or_default().clone()
        }
    }

    impl Recorder for MapRecorder {
        fn describe_counter(&self, _: KeyName, _: Option<Unit>, _: SharedString) {}
        fn describe_gauge(&self, _: KeyName, _: Option<Unit>, _: SharedString) {}
        fn describe_histogram(&self, _: KeyName, _: Option<Unit>, _: SharedString) {}
        fn register_counter(&self, key: &Key, _: &Metadata<'_>) -> Counter {
            Counter::from_arc(self.cell(key))
        }
        fn register_gauge(&self, key: &Key, _: &Metadata<'_>) -> Gauge {
            Gauge::from_arc(self.cell(key))
        }
        fn register_histogram(&self, key: &Key, _: &Metadata<'_>) -> Histogram {
            Histogram::from_arc(self.cell(key))
        }
    }
}
