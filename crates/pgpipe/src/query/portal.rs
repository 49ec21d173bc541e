//! Portals: a result fetched N rows at a time (Execute with a row limit),
//! for cursors inside a transaction block.

use std::sync::Arc;

use pgpipe_proto::frontend::{self, Target};
use pgpipe_types::Params;

use crate::driver::{Request, SessionId};
use crate::error::ErrorKind;
use crate::query::ConnRef;
use crate::query::{bind_to, check_prepared, encode_error, StatementRef, ToStatement};
use crate::query::{Column, Event, Reply, Row};
use crate::session::Session;
use crate::Error;

/// A bound statement whose rows are fetched in pieces: the server keeps the
/// result open and produces the next rows only when asked, so a huge result
/// costs neither the client nor the server memory.
///
/// A portal lives in a transaction block: create it after `BEGIN` and use
/// it before `COMMIT`/`ROLLBACK`. It is closed on the server when dropped.
///
/// ```no_run
/// # async fn f(client: &pgpipe::Client) -> Result<(), pgpipe::Error> {
/// client.batch_execute("BEGIN").await?;
/// let mut portal = client.bind_portal("SELECT id FROM events ORDER BY id", ()).await?;
/// while !portal.is_exhausted() {
///     for row in portal.fetch(1000).await? {
///         let id: i64 = row.get(0);
///     }
/// }
/// drop(portal);
/// client.batch_execute("COMMIT").await?;
/// # Ok(()) }
/// ```
pub struct Portal {
    shared: Arc<Session>,
    /// The transaction handle's session, so fetches go out inside it.
    session: SessionId,
    name: String,
    columns: Arc<[Column]>,
    exhausted: bool,
}

impl ConnRef {
    /// What [`Client::bind_portal`](crate::Client::bind_portal) runs.
    pub(crate) async fn bind_portal<S, P>(&self, statement: &S, params: P) -> Result<Portal, Error>
    where
        S: ToStatement + ?Sized,
        P: Params,
    {
        let statement = statement.to_statement();
        let bind = self.bind_portal_untraced(statement, params);
        crate::observe::traced(
            "bind_portal",
            Some(self.shared()),
            crate::query::sql_of(&statement),
            |_| 0,
            bind,
        )
        .await
    }

    async fn bind_portal_untraced<P: Params>(
        &self,
        statement: StatementRef<'_>,
        params: P,
    ) -> Result<Portal, Error> {
        let shared = self.shared();
        if let StatementRef::Prepared(stmt) = statement {
            check_prepared(shared, stmt, &params)?;
        }
        match statement {
            StatementRef::Sql(sql) => super::refuse::refuse_copy_from_stdin(sql)?,
            StatementRef::Prepared(stmt) if stmt.copies_from_stdin() => {
                return Err(super::refuse::copy_from_stdin_refused())
            }
            StatementRef::Prepared(_) => {}
        }
        match statement {
            StatementRef::Sql(sql) if params.needs_server_types() => {
                // Values written for tokio-postgres: the server's parameter
                // types first (see `server_types`).
                let described = Box::pin(self.describe_params(sql, &params)).await?;
                self.bind_portal_with(statement, &described).await
            }
            _ => self.bind_portal_with(statement, &params).await,
        }
    }

    async fn bind_portal_with<P: Params + ?Sized>(
        &self,
        statement: StatementRef<'_>,
        params: &P,
    ) -> Result<Portal, Error> {
        let shared = self.shared();
        let name = shared.next_portal_name();
        let mut responses = shared
            .send(self.session(), Request::Statement, |enc, buf| {
                let (from, types, columns) = match statement {
                    StatementRef::Sql(sql) => {
                        params
                            .with_type_oids(|oids| enc.parse("", sql, oids, buf))
                            .map_err(encode_error)?;
                        ("", None, None)
                    }
                    StatementRef::Prepared(stmt) => (
                        stmt.name(),
                        Some(stmt.params()),
                        Some(&stmt.shared_columns()[..]),
                    ),
                };
                bind_to(enc, &name, from, params, types, columns, buf)?;
                enc.describe(Target::Portal, &name, buf)
                    .map_err(encode_error)?;
                frontend::sync(buf);
                Ok(())
            })
            .await?;
        let mut columns: Arc<[Column]> = Arc::from(Vec::new());
        let mut reply = Reply::extended();
        loop {
            let (tag, body) = responses.next_raw().await.map_err(|e| reply.cut_short(e))?;
            match reply.event(tag, body) {
                Event::Ready => break,
                Event::Step | Event::NoRows | Event::Failed => {}
                Event::Columns(desc) => {
                    columns = desc
                        .fields()
                        .map(|f| Column::from_field(&f, &shared.types))
                        .collect();
                }
                other => reply.unexpected_event(other, "while binding a portal"),
            }
        }
        if let Some(e) = reply.take_error() {
            return Err(shared.request_failed(e));
        }
        if responses.ended_idle() {
            // The Sync after Bind ended the implicit transaction, and the
            // portal with it.
            return Err(Error::new(
                ErrorKind::InvalidUse,
                "a portal needs a transaction block: run BEGIN first",
            ));
        }
        Ok(Portal {
            shared: shared.clone(),
            session: self.session(),
            name,
            columns,
            exhausted: false,
        })
    }
}

impl Portal {
    /// Fetches up to `max_rows` more rows (0 means all the rest). After the
    /// last rows, [`is_exhausted`](Self::is_exhausted) is true and further
    /// fetches return no rows.
    ///
    /// Cancel safe: a fetch dropped mid-way discards its rows, which the
    /// portal then no longer returns.
    pub async fn fetch(&mut self, max_rows: u32) -> Result<Vec<Row>, Error> {
        use tracing::Instrument;
        let op = crate::observe::Op::start("portal_fetch", Some(&self.shared), None);
        let fetched = self
            .fetch_untraced(max_rows)
            .instrument(op.span().clone())
            .await;
        op.finish(&fetched, |rows| rows.len() as u64);
        fetched
    }

    async fn fetch_untraced(&mut self, max_rows: u32) -> Result<Vec<Row>, Error> {
        if self.exhausted {
            return Ok(Vec::new());
        }
        let limit = i32::try_from(max_rows).unwrap_or(i32::MAX);
        let name = &self.name;
        let mut responses = self
            .shared
            .send(self.session, Request::Statement, |enc, buf| {
                enc.execute(name, limit, buf).map_err(encode_error)?;
                frontend::sync(buf);
                Ok(())
            })
            .await?;
        let mut rows = Vec::new();
        let mut reply = Reply::without_bind();
        loop {
            let (tag, body) = responses.next_raw().await.map_err(|e| reply.cut_short(e))?;
            match reply.event(tag, body) {
                Event::Ready => break,
                Event::Row(body) => match Row::from_body(&self.columns, body) {
                    Ok(row) => rows.push(row),
                    Err(e) => reply.fail(e),
                },
                Event::Suspended => {}
                Event::Complete { .. } | Event::Empty | Event::Failed => self.exhausted = true,
                other => reply.unexpected_event(other, "while fetching from a portal"),
            }
        }
        match reply.take_error() {
            Some(e) => Err(self.shared.request_failed(e)),
            None => Ok(rows),
        }
    }

    /// Whether every row has been fetched.
    pub fn is_exhausted(&self) -> bool {
        self.exhausted
    }

    /// The result's columns.
    pub fn columns(&self) -> &[Column] {
        &self.columns
    }
}

impl Drop for Portal {
    fn drop(&mut self) {
        // Best effort: the portal ends with its transaction anyway.
        let _ = self.shared.send_detached(self.session, |enc, buf| {
            enc.close(Target::Portal, &self.name, buf)
                .map_err(encode_error)?;
            frontend::sync(buf);
            Ok(())
        });
    }
}

impl std::fmt::Debug for Portal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Portal")
            .field("name", &self.name)
            .field("exhausted", &self.exhausted)
            .finish()
    }
}
