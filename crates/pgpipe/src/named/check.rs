//! The startup check: every named query described by the real server and
//! compared with its Rust types; every mismatch reported at once.

use std::fmt;

use super::QueryInfo;
use crate::query::Column;
use crate::query::ConnRef;
use crate::types::{Type, TypeRef};
use crate::{Error, GenericClient};

/// One finding of [`check_queries`]: which query, where, and what.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    /// The query's name.
    pub query: String,
    /// `file:line` of the query's header.
    pub location: String,
    /// What is wrong.
    pub message: String,
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}: query {}: {}",
            self.location, self.query, self.message
        )
    }
}

/// What [`check_queries`] found: errors (the query will fail or read the
/// wrong thing) and warnings (a column the catalog says may be NULL is
/// read into a field that cannot hold NULL).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Report {
    /// How many queries were checked.
    pub checked: usize,
    /// Mismatches: each would fail at run time.
    pub errors: Vec<Problem>,
    /// Possible NULLs into non-`Option` fields.
    pub warnings: Vec<Problem>,
}

impl Report {
    /// Whether no errors were found (warnings allowed).
    pub fn is_ok(&self) -> bool {
        self.errors.is_empty()
    }

    /// `Ok(self)` without errors, else an error whose message lists them
    /// all: the thing to `?` at startup.
    pub fn into_result(self) -> Result<Report, Error> {
        if self.is_ok() {
            return Ok(self);
        }
        Err(Error::new(crate::ErrorKind::Config, self.to_string()))
    }

    fn error(&mut self, info: &QueryInfo, message: impl Into<String>) {
        self.errors
            .push(problem(info.name, &info.location(), message));
    }
}

fn problem(query: &str, location: &str, message: impl Into<String>) -> Problem {
    Problem {
        query: query.to_owned(),
        location: location.to_owned(),
        message: message.into(),
    }
}

impl fmt::Display for Report {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} named queries checked: {} error(s), {} warning(s)",
            self.checked,
            self.errors.len(),
            self.warnings.len()
        )?;
        for e in &self.errors {
            write!(f, "\n  error: {e}")?;
        }
        for w in &self.warnings {
            write!(f, "\n  warning: {w}")?;
        }
        Ok(())
    }
}

/// Describes every query on the server behind `on` and checks it against
/// its Rust types: the statement must prepare (tables and columns exist),
/// the parameter types the Rust fields are sent as must be accepted, and
/// the result columns must match the row type (names, types, count).
/// Every mismatch of every query is in the returned [`Report`]; a column
/// the catalog says may be NULL (`attnotnull` false, or an expression)
/// read into a non-`Option` field is a warning, unless the query lists it
/// in `assume_not_null`.
///
/// An `Err` means the check itself could not run (no connection).
///
/// ```no_run
/// # #[derive(pgpipe::FromRow)]
/// # struct Unread { unread: i64 }
/// # #[derive(pgpipe::Query)]
/// # #[query(file = "sql/mail.sql", name = "count_unread", row = Unread, assume_not_null = "unread")]
/// # struct CountUnread { uid: i64 }
/// # #[derive(pgpipe::Query)]
/// # #[query(file = "sql/mail.sql", name = "mark_seen")]
/// # struct MarkSeen { uid: i64, mids: Vec<i64> }
/// # async fn f(pool: &pgpipe::Pool) -> Result<(), pgpipe::Error> {
/// use pgpipe::named::Query as _;
/// let report = pgpipe::named::check_queries(pool, &[CountUnread::INFO, MarkSeen::INFO])
///     .await?
///     .into_result()?; // fail startup on any mismatch
/// for w in &report.warnings {
///     eprintln!("warning: {w}");
/// }
/// # Ok(()) }
/// ```
pub async fn check_queries<E: GenericClient + ?Sized>(
    on: &E,
    queries: &[&'static QueryInfo],
) -> Result<Report, Error> {
    let session = on.session().await?;
    let mut report = Report::default();
    for info in queries {
        check_one(session.conn(), info, &mut report).await?;
    }
    Ok(report)
}

async fn check_one(client: &ConnRef, info: &QueryInfo, report: &mut Report) -> Result<(), Error> {
    report.checked += 1;
    // First as it will run: parameter types declared from the Rust fields
    // (named types left to the server).
    let declared: Vec<Type> = info
        .params
        .iter()
        .map(|p| Type::from_oid(p.type_ref.oid()))
        .collect();
    let typed = client.prepare_typed(info.sql, &declared).await;
    let (statement, rejected) = match typed {
        Ok(statement) => (statement, None),
        Err(e) if e.is_db() => {
            // Again with every type inferred: if that works, the Rust types
            // were the problem, and the columns can still be checked.
            match client.prepare(info.sql).await {
                Ok(inferred) => (inferred, Some(e)),
                Err(e2) if e2.is_db() => {
                    let why = server_message(&e2);
                    report.error(info, format!("the server rejects the statement: {why}"));
                    return Ok(());
                }
                Err(e2) => return Err(e2),
            }
        }
        Err(e) => return Err(e),
    };
    report_params(info, statement.params(), rejected.as_ref(), report);
    let columns = statement.columns();
    let Some(row) = info.row else {
        return Ok(());
    };
    match (row.check)(columns) {
        Err(e) => report.error(info, format!("row type {}: {}", row.rust_type, e)),
        Ok(non_null) => {
            let nullable = nullable_columns(client, columns).await?;
            for (index, field) in non_null {
                let column = &columns[index];
                let vouched = info
                    .assume_not_null
                    .iter()
                    .any(|n| *n == column.name() || *n == field);
                if nullable[index] && !vouched {
                    let why = match column.table_oid() {
                        Some(_) => "a nullable table column (attnotnull is false)",
                        None => "an expression the catalog cannot vouch for",
                    };
                    report.warnings.push(problem(
                        info.name,
                        &info.location(),
                        format!(
                            "column {:?} is {why}, but {}.{field} cannot hold NULL: make it an Option, or list it in assume_not_null",
                            column.name(),
                            row.rust_type
                        ),
                    ));
                }
            }
        }
    }
    Ok(())
}

/// Compares the parameter types the server uses with the Rust fields'.
fn report_params(info: &QueryInfo, server: &[Type], rejected: Option<&Error>, report: &mut Report) {
    if server.len() != info.params.len() {
        report.error(
            info,
            format!(
                "the server sees {} parameter(s), the query has {}",
                server.len(),
                info.params.len()
            ),
        );
        return;
    }
    let mut explained = false;
    for (i, (p, ty)) in info.params.iter().zip(server).enumerate() {
        // Built-in types are declared to the server as they will be at run
        // time; only when that was rejected does an inferred type that
        // differs explain why.
        let declared = !p.type_ref.is_named();
        if (declared && rejected.is_none()) || p.type_ref.matches(ty) {
            continue;
        }
        explained = true;
        report.error(
            info,
            format!(
                "parameter :{} (${}) is {} in Rust, sent as {}, but the server expects {}",
                p.name,
                i + 1,
                p.rust_type,
                type_ref_name(p.type_ref),
                ty
            ),
        );
    }
    if let (Some(e), false) = (rejected, explained) {
        report.error(
            info,
            format!(
                "the server rejects the parameter types of the Rust fields ({}): {}",
                info.params
                    .iter()
                    .map(|p| format!(":{} {}", p.name, p.rust_type))
                    .collect::<Vec<_>>()
                    .join(", "),
                server_message(e)
            ),
        );
    }
}

fn type_ref_name(t: TypeRef) -> String {
    match t {
        TypeRef::Oid(oid) => Type::from_oid(oid).to_string(),
        TypeRef::Named(n) => n.to_owned(),
        TypeRef::ArrayOf(n) => format!("{n}[]"),
    }
}

fn server_message(e: &Error) -> String {
    match (e.code(), e.as_db_error()) {
        (Some(code), Some(db)) => format!("{} (SQLSTATE {})", db.message(), code.code()),
        _ => e.to_string(),
    }
}

/// For each column, whether it may be NULL: expressions always may; table
/// columns as `pg_attribute.attnotnull` says.
async fn nullable_columns(client: &ConnRef, columns: &[Column]) -> Result<Vec<bool>, Error> {
    let mut rels = Vec::new();
    let mut nums = Vec::new();
    for c in columns {
        if let (Some(rel), Some(num)) = (c.table_oid(), c.column_id()) {
            rels.push(i64::from(rel));
            nums.push(num);
        }
    }
    let mut not_null: Vec<(i64, i16)> = Vec::new();
    if !rels.is_empty() {
        let rows: Vec<(i64, i16, bool)> = client
            .query_as(
                "SELECT a.attrelid::int8, a.attnum, a.attnotnull \
                   FROM pg_catalog.pg_attribute a \
                   JOIN unnest($1::int8[], $2::int2[]) AS k(rel, num) \
                     ON a.attrelid = k.rel::oid AND a.attnum = k.num",
                (&rels, &nums),
            )
            .await?;
        not_null = rows
            .into_iter()
            .filter(|r| r.2)
            .map(|r| (r.0, r.1))
            .collect();
    }
    Ok(columns
        .iter()
        .map(|c| match (c.table_oid(), c.column_id()) {
            (Some(rel), Some(num)) => !not_null.contains(&(i64::from(rel), num)),
            _ => true,
        })
        .collect())
}

/// Checks query files without Rust types (what `pgpipe-cli check` runs):
/// every query of every file must prepare on the server. `files` are
/// `(path for messages, parsed file)`.
pub async fn check_files<E: GenericClient + ?Sized>(
    on: &E,
    files: &[(String, super::File)],
) -> Result<Report, Error> {
    let session = on.session().await?;
    let client = session.conn();
    {
        let mut report = Report::default();
        for (path, file) in files {
            for q in &file.queries {
                report.checked += 1;
                let location = format!("{path}:{}", q.line);
                match client.prepare(&q.sql).await {
                    Ok(_) => {}
                    Err(e) if e.is_db() => report.errors.push(problem(
                        &q.name,
                        &location,
                        format!("the server rejects the statement: {}", server_message(&e)),
                    )),
                    Err(e) => return Err(e),
                }
            }
        }
        Ok(report)
    }
}
