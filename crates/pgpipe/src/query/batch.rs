//! Explicit batches: a known list of statements sent in one write, each
//! result returned in order.

use std::sync::Arc;

use pgpipe_proto::backend::tag;
use pgpipe_proto::frontend::{self, ParamWriter};
use pgpipe_proto::EncodeError;
use pgpipe_types::{Oid, Params, Type, TypeRef};

use super::catalog::{ParamTypes, Resolved};
use crate::driver::Request;
use crate::error::ErrorKind;
use crate::query::{
    check_prepared, encode_statement, read_response, Plan, StatementRef, ToStatement,
};
use crate::query::{Column, ConnRef, Event, Lent, Reply, Row, Sealed};
use crate::Error;

/// Parameter lists of different types side by side.
trait ErasedParams: Send + Sync {
    fn len(&self) -> usize;
    fn oids(&self) -> Vec<Oid>;
    fn check_types(&self, types: &[Type]) -> Result<(), (usize, &'static str)>;
    fn has_named_types(&self) -> bool;
    fn type_refs(&self) -> Vec<TypeRef>;
    fn encode(
        &self,
        types: Option<&[Type]>,
        writer: &mut ParamWriter<'_>,
    ) -> Result<(), EncodeError>;
}

impl<P: Params + Send + Sync> ErasedParams for P {
    fn len(&self) -> usize {
        Params::len(self)
    }
    fn oids(&self) -> Vec<Oid> {
        self.with_type_oids(|o| o.to_vec())
    }
    fn check_types(&self, types: &[Type]) -> Result<(), (usize, &'static str)> {
        Params::check_types(self, types)
    }
    fn has_named_types(&self) -> bool {
        Params::has_named_types(self)
    }
    fn type_refs(&self) -> Vec<TypeRef> {
        Params::type_refs(self)
    }
    fn encode(
        &self,
        types: Option<&[Type]>,
        writer: &mut ParamWriter<'_>,
    ) -> Result<(), EncodeError> {
        Params::encode(self, types, writer)
    }
}

/// Adapts an erased list back to [`Params`] for the shared encoder.
struct Erased<'a>(&'a dyn ErasedParams);

impl Params for Erased<'_> {
    fn len(&self) -> usize {
        self.0.len()
    }
    fn with_type_oids<R>(&self, f: impl FnOnce(&[Oid]) -> R) -> R {
        f(&self.0.oids())
    }
    fn check_types(&self, types: &[Type]) -> Result<(), (usize, &'static str)> {
        self.0.check_types(types)
    }
    fn has_named_types(&self) -> bool {
        self.0.has_named_types()
    }
    fn type_refs(&self) -> Vec<TypeRef> {
        self.0.type_refs()
    }
    fn encode(
        &self,
        types: Option<&[Type]>,
        writer: &mut ParamWriter<'_>,
    ) -> Result<(), EncodeError> {
        self.0.encode(types, writer)
    }
}

/// The result of one statement of a batch.
#[derive(Debug, Clone)]
pub struct BatchResult {
    rows: Vec<Row>,
    rows_affected: u64,
}

impl BatchResult {
    /// The rows it returned.
    pub fn rows(&self) -> &[Row] {
        &self.rows
    }
    /// Takes the rows it returned.
    pub fn into_rows(self) -> Vec<Row> {
        self.rows
    }
    /// Rows affected or returned (CommandComplete).
    pub fn rows_affected(&self) -> u64 {
        self.rows_affected
    }
}

/// A list of statements to send in one write. Build it with
/// [`Client::batch`](crate::Client::batch), then [`run`](Batch::run) it (each statement on its
/// own: one failing does not affect the others) or
/// [`run_atomic`](Batch::run_atomic) it (one implicit transaction: all
/// succeed or none take effect).
///
/// ```no_run
/// # async fn f(client: &pgpipe::Client) -> Result<(), pgpipe::Error> {
/// let mut batch = client.batch();
/// batch.add("INSERT INTO audit (event) VALUES ($1)", ("login",));
/// batch.add("UPDATE users SET last_seen = now() WHERE id = $1", (7i64,));
/// batch.add("SELECT count(*) FROM audit", ());
/// let results = batch.run_atomic().await?;
/// let count: i64 = results[2].rows()[0].get(0);
/// # Ok(()) }
/// ```
///
/// Statements given as SQL text use the statement cache like any query, but
/// a stale cached statement is not retried inside a batch: its error is
/// returned (and the entry dropped, so a second attempt works).
pub struct Batch<'a> {
    on: On<'a>,
    items: Vec<(StatementRef<'a>, Box<dyn ErasedParams + 'a>)>,
}

/// Where a batch runs: a handle's own session, or one taken when it runs.
enum On<'a> {
    Conn(&'a ConnRef),
    Deferred(&'a (dyn Sealed + Send + Sync)),
}

/// How many statements are queued; parameter values are never shown.
impl std::fmt::Debug for Batch<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Batch")
            .field("statements", &self.items.len())
            .finish_non_exhaustive()
    }
}

impl<'a> Batch<'a> {
    pub(crate) fn new(conn: &'a ConnRef) -> Batch<'a> {
        Batch {
            on: On::Conn(conn),
            items: Vec::new(),
        }
    }

    /// A batch that takes its session (a pool's checkout) when it runs.
    pub(crate) fn deferred(source: &'a (dyn Sealed + Send + Sync)) -> Batch<'a> {
        Batch {
            on: On::Deferred(source),
            items: Vec::new(),
        }
    }

    /// The session the batch runs on.
    async fn session(&self) -> Result<Lent<'a>, Error> {
        match self.on {
            On::Conn(conn) => Ok(Lent::borrowed(conn)),
            On::Deferred(source) => source.session().await,
        }
    }

    /// Appends a statement (SQL text or a [`Statement`](crate::Statement))
    /// with its parameters.
    pub fn add<S, P>(&mut self, statement: &'a S, params: P) -> &mut Self
    where
        S: ToStatement + ?Sized,
        P: Params + Send + Sync + 'a,
    {
        self.items
            .push((statement.to_statement(), Box::new(params)));
        self
    }

    /// Number of statements.
    pub fn len(&self) -> usize {
        self.items.len()
    }

    /// Whether the batch is empty.
    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    /// Looks up the named parameter types of statements given as SQL text.
    async fn resolve(&self, conn: &ConnRef) -> Result<Vec<Option<ParamTypes>>, Error> {
        let mut out = Vec::with_capacity(self.items.len());
        for (i, (statement, params)) in self.items.iter().enumerate() {
            let erased = Erased(params.as_ref());
            out.push(
                if matches!(statement, StatementRef::Sql(_)) && Params::has_named_types(&erased) {
                    let types = conn
                        .resolve_params(&erased)
                        .await
                        .map_err(|e| e.context(statement_label(i, statement)))?;
                    Some(types)
                } else {
                    None
                },
            );
        }
        Ok(out)
    }

    /// Describes user-defined column types of the results' rows.
    async fn describe(&self, conn: &ConnRef, results: &mut [BatchResult]) -> Result<(), Error> {
        for result in results {
            let Some(first) = result.rows.first() else {
                continue;
            };
            if let Some(columns) = conn.resolve_columns(first.columns()).await? {
                for row in &mut result.rows {
                    row.set_columns(columns.clone());
                }
            }
        }
        Ok(())
    }

    fn check(&self, conn: &ConnRef) -> Result<(), Error> {
        for (i, (statement, params)) in self.items.iter().enumerate() {
            if let StatementRef::Prepared(stmt) = statement {
                check_prepared(conn.shared(), stmt, &Erased(params.as_ref()))
                    .map_err(|e| e.context(statement_label(i, statement)))?;
            }
        }
        Ok(())
    }

    /// Encodes every statement, ending each with a Sync (`independent`) or
    /// only the last. On failure no bytes are queued and no cache entry
    /// points at an unparsed statement.
    fn encode(
        &self,
        conn: &ConnRef,
        enc: &pgpipe_proto::frontend::Encoder,
        buf: &mut bytes::BytesMut,
        cache: &mut crate::driver::StatementCache,
        independent: bool,
        resolved: &[Option<ParamTypes>],
    ) -> Result<Vec<Plan>, Error> {
        let shared = conn.shared();
        let mut plans = Vec::with_capacity(self.items.len());
        for (i, (statement, params)) in self.items.iter().enumerate() {
            let erased = Erased(params.as_ref());
            let encoded = match resolved.get(i) {
                Some(Some(types)) => encode_statement(
                    shared,
                    enc,
                    buf,
                    cache,
                    *statement,
                    &Resolved {
                        params: &erased,
                        types,
                    },
                    independent,
                ),
                _ => encode_statement(shared, enc, buf, cache, *statement, &erased, independent),
            };
            match encoded {
                Ok(plan) => plans.push(plan),
                Err(e) => {
                    forget_new(cache, &plans);
                    return Err(e.context(statement_label(i, statement)));
                }
            }
        }
        if !independent {
            frontend::sync(buf);
        }
        Ok(plans)
    }

    /// Sends every statement with its own Sync and returns each result in
    /// order: a failing statement fails alone. An error that prevents
    /// sending (a parameter that cannot be encoded) sends nothing.
    ///
    /// Cancel safe (see [`Client`](crate::Client)).
    pub async fn run(self) -> Result<Vec<Result<BatchResult, Error>>, Error> {
        let session = self.session().await?;
        let shared = session.conn().shared().clone();
        let rows =
            |r: &Vec<Result<BatchResult, Error>>| r.iter().flatten().map(|b| b.rows_affected).sum();
        let detail = crate::observe::Detail {
            batch_size: Some(self.items.len()),
            ..Default::default()
        };
        crate::observe::traced_with(
            "batch",
            Some(&shared),
            None,
            detail,
            rows,
            self.run_untraced(session.conn()),
        )
        .await
    }

    async fn run_untraced(self, conn: &ConnRef) -> Result<Vec<Result<BatchResult, Error>>, Error> {
        self.check(conn)?;
        let resolved = self.resolve(conn).await?;
        let shared = conn.shared();
        let permits = shared.permits(self.items.len()).await?;
        let (responses, plans) = shared.send_many(conn.session(), permits, |enc, buf, cache| {
            self.encode(conn, enc, buf, cache, true, &resolved)
        })?;
        let mut results = Vec::with_capacity(plans.len());
        for (i, (mut responses, plan)) in responses.into_iter().zip(plans).enumerate() {
            let mut rows = Vec::new();
            let outcome =
                read_response(shared, &mut responses, plan.columns(), |r| rows.push(r)).await;
            conn.learn(
                &plan,
                outcome.result.as_ref().err(),
                outcome.parsed,
                outcome.columns.as_ref(),
            );
            results.push(
                outcome
                    .result
                    .map(|rows_affected| BatchResult {
                        rows,
                        rows_affected,
                    })
                    .map_err(|e| e.context(statement_label(i, &self.items[i].0))),
            );
        }
        for result in results.iter_mut().flatten() {
            self.describe(conn, std::slice::from_mut(result)).await?;
        }
        Ok(results)
    }

    /// Sends every statement with one Sync at the end: they run in one
    /// implicit transaction, so either all take effect or none. The error
    /// says which statement failed.
    ///
    /// Cancel safe (see [`Client`](crate::Client)).
    pub async fn run_atomic(self) -> Result<Vec<BatchResult>, Error> {
        let session = self.session().await?;
        let shared = session.conn().shared().clone();
        let rows = |r: &Vec<BatchResult>| r.iter().map(|b| b.rows_affected).sum();
        let detail = crate::observe::Detail {
            batch_size: Some(self.items.len()),
            ..Default::default()
        };
        crate::observe::traced_with(
            "batch",
            Some(&shared),
            None,
            detail,
            rows,
            self.run_atomic_untraced(session.conn()),
        )
        .await
    }

    async fn run_atomic_untraced(self, conn: &ConnRef) -> Result<Vec<BatchResult>, Error> {
        self.check(conn)?;
        let resolved = self.resolve(conn).await?;
        let shared = conn.shared();
        let permit = shared.permit().await?;
        let (mut responses, plans) = shared.send_cached(
            conn.session(),
            Request::Statement,
            Some(permit),
            |enc, buf, cache| self.encode(conn, enc, buf, cache, false, &resolved),
        )?;

        let mut results: Vec<BatchResult> = Vec::with_capacity(plans.len());
        let mut rows = Vec::new();
        let mut columns: Option<Arc<[Column]>> = plans.first().and_then(Plan::columns);
        let mut failed_at: Option<usize> = None;
        let mut parsed_current = false;
        let mut reply = Reply::extended();
        loop {
            let (tag, body) = responses.next_raw().await.map_err(|e| reply.cut_short(e))?;
            let i = results.len();
            if failed_at.is_some() && tag != tag::READY_FOR_QUERY {
                continue;
            }
            match reply.event(tag, body) {
                Event::Ready => break,
                Event::Row(body) => match columns.as_ref().map(|cols| Row::from_body(cols, body)) {
                    Some(Ok(row)) => rows.push(row),
                    Some(Err(e)) => reply.fail(e),
                    None => reply.fail(Error::protocol("DataRow before RowDescription")),
                },
                // The end of one statement's result.
                Event::Complete { rows: n, .. } => {
                    results.push(BatchResult {
                        rows: std::mem::take(&mut rows),
                        rows_affected: n,
                    });
                    parsed_current = false;
                    columns = plans.get(i + 1).and_then(Plan::columns);
                }
                Event::Empty => {
                    results.push(BatchResult {
                        rows: std::mem::take(&mut rows),
                        rows_affected: 0,
                    });
                    parsed_current = false;
                    columns = plans.get(i + 1).and_then(Plan::columns);
                }
                Event::Columns(desc) => {
                    let cols: Arc<[Column]> = desc
                        .fields()
                        .map(|f| Column::from_field(&f, &conn.shared().types))
                        .collect();
                    if let Some(plan) = plans.get(i) {
                        conn.learn(plan, None, true, Some(&cols));
                    }
                    columns = Some(cols);
                }
                Event::NoRows => columns = Some(Arc::from(Vec::new())),
                Event::Step => parsed_current |= reply.parsed(),
                Event::Failed => {}
                other => reply.unexpected_event(other, "in a batch response"),
            }
            if reply.error().is_some() {
                failed_at = Some(i);
            }
        }
        let error = failed_at.zip(reply.take_error());
        match error {
            None => {
                self.describe(conn, &mut results).await?;
                Ok(results)
            }
            Some((i, e)) => {
                if let Some(plan) = plans.get(i) {
                    conn.learn(plan, Some(&e), parsed_current, None);
                }
                // The server skipped everything after the failing statement:
                // those Parses never ran.
                shared.with_cache(|c| forget_new(c, plans.get(i + 1..).unwrap_or(&[])));
                let e = if e.kind() == ErrorKind::Protocol {
                    shared.abort(e)
                } else {
                    e
                };
                Err(e.context(format!(
                    "{} (the batch was rolled back)",
                    statement_label(
                        i,
                        &self
                            .items
                            .get(i)
                            .map(|it| it.0)
                            .unwrap_or(StatementRef::Sql("?"))
                    )
                )))
            }
        }
    }
}

/// Drops the cache entries these plans created: their Parse never ran.
fn forget_new(cache: &mut crate::driver::StatementCache, plans: &[Plan]) {
    for plan in plans {
        if let Plan::Cached {
            name, parses: true, ..
        } = plan
        {
            cache.remove(name);
        }
    }
}

fn statement_label(i: usize, statement: &StatementRef<'_>) -> String {
    let sql = match statement {
        StatementRef::Sql(sql) => *sql,
        StatementRef::Prepared(stmt) => stmt.sql(),
    };
    let short: String = sql.chars().take(60).collect();
    let ellipsis = if short.len() < sql.len() { "..." } else { "" };
    format!("statement {} of the batch ({short}{ellipsis})", i + 1)
}
