//! A test `tracing` subscriber that records every span's name, fields and
//! whether it was closed (all references dropped).

use std::collections::HashMap;
use std::fmt::Debug;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing::{Event, Metadata, Subscriber};

#[derive(Debug, Clone, Default)]
pub struct SpanData {
    pub name: String,
    pub target: String,
    pub fields: HashMap<String, String>,
    pub closed: bool,
    refs: usize,
    metadata: Option<&'static Metadata<'static>>,
}

impl SpanData {
    pub fn field(&self, name: &str) -> Option<&str> {
        self.fields.get(name).map(String::as_str)
    }
}

#[derive(Clone, Default)]
pub struct Recorder {
    spans: Arc<Mutex<HashMap<u64, SpanData>>>,
    next: Arc<AtomicU64>,
    /// Entered spans (the tests run on one thread).
    stack: Arc<Mutex<Vec<u64>>>,
}

impl Recorder {
    /// Every span recorded so far under `target`, in creation order.
    pub fn spans(&self, target: &str) -> Vec<SpanData> {
        let spans = self.spans.lock().unwrap();
        let mut ids: Vec<&u64> = spans.keys().collect();
        ids.sort();
        ids.into_iter()
            .map(|id| spans[id].clone())
            .filter(|s| s.target == target)
            .collect()
    }
}

struct Fields<'a>(&'a mut HashMap<String, String>);

impl Visit for Fields<'_> {
    fn record_debug(&mut self, field: &Field, value: &dyn Debug) {
        self.0.insert(field.name().to_owned(), format!("{value:?}"));
    }
    fn record_str(&mut self, field: &Field, value: &str) {
        self.0.insert(field.name().to_owned(), value.to_owned());
    }
}

impl Subscriber for Recorder {
    fn enabled(&self, _: &Metadata<'_>) -> bool {
        true
    }

    fn new_span(&self, attrs: &Attributes<'_>) -> Id {
        let id = self.next.fetch_add(1, Ordering::Relaxed) + 1;
        let mut data = SpanData {
            name: attrs.metadata().name().to_owned(),
            target: attrs.metadata().target().to_owned(),
            refs: 1,
            metadata: Some(attrs.metadata()),
            ..SpanData::default()
        };
        attrs.record(&mut Fields(&mut data.fields));
        self.spans.lock().unwrap().insert(id, data);
        Id::from_u64(id)
    }

    fn record(&self, span: &Id, values: &Record<'_>) {
        if let Some(data) = self.spans.lock().unwrap().get_mut(&span.into_u64()) {
            values.record(&mut Fields(&mut data.fields));
        }
    }

    fn record_follows_from(&self, _: &Id, _: &Id) {}

    fn event(&self, _: &Event<'_>) {}

    fn enter(&self, id: &Id) {
        self.stack.lock().unwrap().push(id.into_u64());
    }

    fn exit(&self, id: &Id) {
        let mut stack = self.stack.lock().unwrap();
        if let Some(i) = stack.iter().rposition(|s| *s == id.into_u64()) {
            stack.remove(i);
        }
    }

    fn current_span(&self) -> tracing_core::span::Current {
        let top = self.stack.lock().unwrap().last().copied();
        let spans = self.spans.lock().unwrap();
        match top.and_then(|id| Some((id, spans.get(&id)?.metadata?))) {
            Some((id, meta)) => tracing_core::span::Current::new(Id::from_u64(id), meta),
            None => tracing_core::span::Current::none(),
        }
    }

    fn clone_span(&self, id: &Id) -> Id {
        if let Some(data) = self.spans.lock().unwrap().get_mut(&id.into_u64()) {
            data.refs += 1;
        }
        id.clone()
    }

    fn try_close(&self, id: Id) -> bool {
        let mut spans = self.spans.lock().unwrap();
        let Some(data) = spans.get_mut(&id.into_u64()) else {
            return false;
        };
        data.refs -= 1;
        data.closed = data.refs == 0;
        data.closed
    }
}
