//! The simple-query protocol: multi-statement SQL text with text results.

use std::sync::Arc;

use bytes::Bytes;
use pgpipe_proto::backend::{tag, Message};

use super::conn::ConnRef;
use super::control::{read_control, send_control};
use super::encode_error;
use crate::driver::Responses;
use crate::driver::{Request, NO_SESSION};
use crate::error::ErrorKind;
use crate::observe;
use crate::query::{Column, Event, Reply, RowIndex};
use crate::session::Session;
use crate::Error;

/// One item of a [`Client::simple_query`](crate::Client::simple_query) result.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum SimpleQueryMessage {
    /// A row, with every value in text form.
    Row(SimpleQueryRow),
    /// A statement finished; the number of rows it affected or returned.
    CommandComplete(u64),
}

/// A row of a simple query: values in PostgreSQL's text format.
#[derive(Clone)]
pub struct SimpleQueryRow {
    columns: Arc<[Column]>,
    values: Vec<Option<std::ops::Range<usize>>>,
    body: Bytes,
}

impl SimpleQueryRow {
    /// The columns.
    pub fn columns(&self) -> &[Column] {
        &self.columns
    }
    /// Number of columns.
    pub fn len(&self) -> usize {
        self.values.len()
    }
    /// Whether the row has no columns.
    pub fn is_empty(&self) -> bool {
        self.values.is_empty()
    }
    /// The text of a column (`None` for NULL).
    ///
    /// # Panics
    ///
    /// If the column does not exist; see [`try_get`](Self::try_get).
    #[track_caller]
    pub fn get<I: RowIndex>(&self, idx: I) -> Option<&str> {
        match self.try_get(idx) {
            Ok(v) => v,
            Err(e) => panic!("SimpleQueryRow::get: {e}"),
        }
    }
    /// The text of a column (`None` for NULL), or an error if the column does
    /// not exist or is not valid UTF-8.
    pub fn try_get<I: RowIndex>(&self, idx: I) -> Result<Option<&str>, Error> {
        let i = idx.index(&self.columns).ok_or_else(|| {
            Error::new(
                ErrorKind::ColumnNotFound,
                format!("no column {idx} in a row of {} columns", self.columns.len()),
            )
        })?;
        match &self.values[i] {
            None => Ok(None),
            Some(range) => std::str::from_utf8(&self.body[range.clone()])
                .map(Some)
                .map_err(|e| {
                    Error::new(ErrorKind::Decode, format!("column {i} is not valid UTF-8"))
                        .with_source(e)
                }),
        }
    }
}

impl std::fmt::Debug for SimpleQueryRow {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut map = f.debug_map();
        for (i, c) in self.columns.iter().enumerate() {
            map.entry(&c.name(), &self.try_get(i).ok().flatten());
        }
        map.finish()
    }
}

/// Reads a simple-query response to its end.
pub(crate) async fn read_simple(
    shared: &Session,
    responses: &mut Responses,
) -> Result<Vec<SimpleQueryMessage>, Error> {
    let mut out = Vec::new();
    let mut columns: Option<Arc<[Column]>> = None;
    let mut reply = Reply::without_bind();
    loop {
        let (t, body) = responses.next_raw().await.map_err(|e| reply.cut_short(e))?;
        match reply.event(t, body) {
            Event::Ready => break,
            Event::Columns(desc) => {
                columns = Some(
                    desc.fields()
                        .map(|f| Column::from_field(&f, &shared.types))
                        .collect(),
                );
            }
            // Text rows are split into their values here: the simple
            // protocol is not the hot path.
            Event::Row(body) => match (Message::parse(tag::DATA_ROW, body), &columns) {
                (Ok(Message::DataRow(row)), Some(cols)) if cols.len() == row.column_count() => {
                    out.push(SimpleQueryMessage::Row(SimpleQueryRow {
                        columns: cols.clone(),
                        values: row.ranges().collect(),
                        body: row.buffer().clone(),
                    }));
                }
                (Err(e), _) => reply.fail(Error::protocol(e.to_string())),
                _ => reply.fail(Error::protocol("DataRow does not match the RowDescription")),
            },
            Event::Complete { rows, .. } => {
                columns = None;
                out.push(SimpleQueryMessage::CommandComplete(rows));
            }
            Event::Empty | Event::Failed => {}
            Event::CopyIn => {
                // The server now waits for data; fail the COPY so it answers
                // with an error and ReadyForQuery instead of hanging.
                shared.refuse_copy_in();
            }
            Event::CopyOut(_) | Event::CopyData | Event::CopyDone => {
                reply.fail(Error::new(
                    ErrorKind::Unsupported,
                    "COPY TO STDOUT is not supported through simple_query yet",
                ));
            }
            other => reply.unexpected_event(other, "in a simple query response"),
        }
    }
    match reply.take_error() {
        Some(e) => Err(shared.request_failed(e)),
        None => Ok(out),
    }
}

impl ConnRef {
    /// Runs SQL text through the simple-query protocol (several statements
    /// allowed, text results); COPY FROM STDIN is refused before sending.
    pub(crate) async fn simple_query(&self, sql: &str) -> Result<Vec<SimpleQueryMessage>, Error> {
        let run = async {
            // Refused before anything is sent: once in copy-in mode the
            // server would read the requests pipelined behind this one as
            // COPY data and drop the connection.
            if crate::sql::any_copy_from_stdin(sql) {
                return Err(super::refuse::copy_from_stdin_refused());
            }
            self.flush_begin().await?;
            let mut responses = self
                .shared()
                .send(self.session, Request::Simple, |enc, buf| {
                    enc.query(sql, buf).map_err(encode_error)
                })
                .await?;
            read_simple(self.shared(), &mut responses).await
        };
        observe::traced(
            "simple_query",
            Some(self.shared()),
            Some(sql),
            |m| simple_rows(m),
            run,
        )
        .await
    }

    /// Runs SQL text (several statements allowed) and discards any rows.
    pub(crate) async fn batch_execute(&self, sql: &str) -> Result<(), Error> {
        self.simple_query(sql).await.map(drop)
    }
}

/// The rows a simple query returned, for its span.
fn simple_rows(messages: &[SimpleQueryMessage]) -> u64 {
    let rows = messages
        .iter()
        .filter(|m| matches!(m, SimpleQueryMessage::Row(_)));
    rows.count() as u64
}

impl ConnRef {
    /// Sends a pending BEGIN on its own (one round trip) before a request
    /// that cannot carry it: after a failed BEGIN without a Sync, the server
    /// would skip a simple Query and never answer it.
    pub(crate) async fn flush_begin(&self) -> Result<(), Error> {
        if self.session() == NO_SESSION || !self.shared().begin_pending(self.session()) {
            return Ok(());
        }
        let mut responses = send_control(self, &[]).await?;
        read_control(self.shared(), &mut responses, self.timeout())
            .await
            .map(drop)
    }
}
