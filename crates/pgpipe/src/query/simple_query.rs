//! The simple-query protocol: multi-statement SQL text with text results.

use std::sync::Arc;

use bytes::Bytes;
use pgpipe_proto::backend::{tag, Message};

use crate::driver::Responses;
use crate::driver::Shared;
use crate::error::ErrorKind;
use crate::query::{Column, RowIndex};
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
    shared: &Shared,
    responses: &mut Responses,
) -> Result<Vec<SimpleQueryMessage>, Error> {
    let mut out = Vec::new();
    let mut columns: Option<Arc<[Column]>> = None;
    let mut error = None;
    loop {
        let (tag, body) = responses.next_raw().await?;
        if tag == tag::READY_FOR_QUERY {
            break;
        }
        match Message::parse(tag, body) {
            Ok(Message::RowDescription(desc)) => {
                columns = Some(
                    desc.fields()
                        .map(|f| Column::from_field(&f, &shared.types))
                        .collect(),
                );
            }
            Ok(Message::DataRow(row)) => match &columns {
                Some(cols) if cols.len() == row.column_count() => {
                    out.push(SimpleQueryMessage::Row(SimpleQueryRow {
                        columns: cols.clone(),
                        values: row.ranges().collect(),
                        body: row.buffer().clone(),
                    }));
                }
                _ => {
                    error.get_or_insert_with(|| {
                        Error::protocol("DataRow does not match the RowDescription")
                    });
                }
            },
            Ok(Message::CommandComplete(cc)) => {
                columns = None;
                out.push(SimpleQueryMessage::CommandComplete(cc.rows().unwrap_or(0)));
            }
            Ok(Message::EmptyQueryResponse) => {}
            Ok(Message::ErrorResponse(fields)) => {
                let e = Error::from_server(&fields);
                error.get_or_insert(e);
            }
            Ok(Message::CopyInResponse(_)) => {
                // The server now waits for data; fail the COPY so it answers
                // with an error and ReadyForQuery instead of hanging.
                shared.refuse_copy_in();
            }
            Ok(Message::CopyOutResponse(_)) | Ok(Message::CopyData(_)) | Ok(Message::CopyDone) => {
                error.get_or_insert_with(|| {
                    Error::new(
                        ErrorKind::Unsupported,
                        "COPY TO STDOUT is not supported through simple_query yet",
                    )
                });
            }
            Ok(other) => {
                error
                    .get_or_insert_with(|| Error::unexpected(&other, "in a simple query response"));
            }
            Err(e) => {
                error.get_or_insert_with(|| Error::protocol(e.to_string()));
            }
        }
    }
    match error {
        Some(e) => Err(shared.request_failed(e)),
        None => Ok(out),
    }
}
