//! Building SQL at run time without ever putting a value into its text:
//! values become `$n` parameters, identifiers go through [`Ident`]'s
//! quoting, and the only raw text accepted is `&'static str`.

use std::fmt;

use pgpipe_types::Encode;

use crate::error::ErrorKind;
use crate::query::{FromRow, Row};
use crate::{Error, GenericClient, RowStream};

/// PostgreSQL's limit on the parameters of one statement (the Bind
/// message counts them in 16 bits).
pub const MAX_PARAMS: usize = 65_535;

/// A bound value of a [`QueryBuilder`].
type Value<'a> = Box<dyn Encode + Send + Sync + 'a>;

/// Builds a statement and its parameters piece by piece.
///
/// ```no_run
/// # async fn f(client: &pgpipe::Client) -> Result<(), pgpipe::Error> {
/// use pgpipe::{Ident, QueryBuilder};
///
/// let mut q = QueryBuilder::new("SELECT mid, subject FROM mail.messages WHERE uid = ");
/// q.push_bind(42i64);
/// q.push(" AND mid").push_any(vec![1i64, 2, 3]); // = ANY($2): one array parameter
/// q.push(" ORDER BY ").push_ident(&Ident::new("received")).push(" DESC");
/// let built = q.build()?;
/// assert_eq!(
///     built.sql(),
///     r#"SELECT mid, subject FROM mail.messages WHERE uid = $1 AND mid = ANY($2) ORDER BY "received" DESC"#
/// );
/// let rows = built.query(client).await?;
/// # Ok(()) }
/// ```
///
/// Multi-row inserts:
///
/// ```
/// use pgpipe::QueryBuilder;
///
/// let users = [(1i64, "ann"), (2, "bob")];
/// let mut q = QueryBuilder::new("INSERT INTO users (id, name) ");
/// q.push_values(&users, |mut row, (id, name)| {
///     row.push_bind(*id).push_bind(*name);
/// });
/// assert_eq!(q.sql(), "INSERT INTO users (id, name) VALUES ($1, $2), ($3, $4)");
/// ```
///
/// # The statement cache
///
/// Every distinct SQL text is a distinct prepared statement in the
/// per-connection cache. Built queries whose *shape* varies (a different
/// number of `push_values` rows, optional filters) each take a cache slot
/// and can evict the hot statements: prefer one array parameter
/// ([`push_any`](Self::push_any), `unnest($1::int8[], $2::text[])` for
/// inserts) over a varying number of placeholders, raise
/// `statement_cache_capacity`, or use `query_mode=unnamed` for a pool that
/// mostly runs one-off shapes.
///
/// # Errors
///
/// Mistakes are kept and reported by [`build`](Self::build): more than
/// [`MAX_PARAMS`] parameters (kind `ParameterCount`, before anything is
/// sent) or an identifier PostgreSQL cannot hold (a NUL byte, empty).
pub struct QueryBuilder<'a> {
    sql: String,
    params: Vec<Value<'a>>,
    error: Option<Error>,
}

impl<'a> QueryBuilder<'a> {
    /// Starts with `sql`.
    pub fn new(sql: &'static str) -> QueryBuilder<'a> {
        QueryBuilder {
            sql: sql.to_owned(),
            params: Vec::new(),
            error: None,
        }
    }

    /// Appends SQL text. Only string literals (`&'static str`) are
    /// accepted, so that a value cannot slip into the text by accident;
    /// values go through [`push_bind`](Self::push_bind), names through
    /// [`push_ident`](Self::push_ident).
    pub fn push(&mut self, sql: &'static str) -> &mut Self {
        self.sql.push_str(sql);
        self
    }

    /// Appends text the caller vouches for (built from trusted pieces
    /// only, never from input). Prefer [`push`](Self::push).
    pub fn push_trusted(&mut self, sql: &str) -> &mut Self {
        self.sql.push_str(sql);
        self
    }

    /// Appends a quoted identifier.
    pub fn push_ident(&mut self, ident: &Ident) -> &mut Self {
        match ident.quoted() {
            Ok(q) => self.sql.push_str(&q),
            Err(e) => self.fail(e),
        }
        self
    }

    /// Binds `value` as the next parameter and appends its `$n`.
    pub fn push_bind<T: Encode + Send + Sync + 'a>(&mut self, value: T) -> &mut Self {
        if self.params.len() >= MAX_PARAMS {
            let e = Error::new(
                ErrorKind::ParameterCount,
                format!(
                    "the built query needs more than {MAX_PARAMS} parameters, PostgreSQL's limit for one statement; bind a list as one array parameter (push_any) instead"
                ),
            );
            self.fail(e);
            return self;
        }
        self.params.push(Box::new(value));
        self.sql.push('$');
        self.sql.push_str(&self.params.len().to_string());
        self
    }

    /// Appends `= ANY($n)` with `values` bound as ONE array parameter: an
    /// IN-list of any length that is one statement shape and one
    /// parameter (write `<> ALL` yourself for NOT IN).
    pub fn push_any<T>(&mut self, values: Vec<T>) -> &mut Self
    where
        Vec<T>: Encode + Send + Sync + 'a,
    {
        self.sql.push_str(" = ANY(");
        self.push_bind(values);
        self.sql.push(')');
        self
    }

    /// Starts a list whose items are joined by `separator` (a literal).
    pub fn separated(&mut self, separator: &'static str) -> Separated<'_, 'a> {
        Separated {
            builder: self,
            separator,
            first: true,
        }
    }

    /// Appends `VALUES (...), (...)`: one parenthesized row per item,
    /// filled by `row` through a comma-[`Separated`] list.
    pub fn push_values<I, F>(&mut self, rows: I, mut row: F) -> &mut Self
    where
        I: IntoIterator,
        F: FnMut(Separated<'_, 'a>, I::Item),
    {
        self.sql.push_str("VALUES ");
        for (i, item) in rows.into_iter().enumerate() {
            if i > 0 {
                self.sql.push_str(", ");
            }
            self.sql.push('(');
            row(self.separated(", "), item);
            self.sql.push(')');
        }
        self
    }

    /// The SQL so far.
    pub fn sql(&self) -> &str {
        &self.sql
    }

    /// The number of parameters bound so far.
    pub fn param_count(&self) -> usize {
        self.params.len()
    }

    /// The statement and its parameters, or the first mistake made while
    /// building.
    pub fn build(self) -> Result<BuiltQuery<'a>, Error> {
        if let Some(e) = self.error {
            return Err(e);
        }
        Ok(BuiltQuery {
            sql: self.sql,
            params: self.params,
        })
    }

    fn fail(&mut self, e: Error) {
        self.error.get_or_insert(e);
    }
}

impl fmt::Debug for QueryBuilder<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Parameter values are never shown.
        f.debug_struct("QueryBuilder")
            .field("sql", &self.sql)
            .field("params", &self.params.len())
            .finish()
    }
}

/// A list inside a [`QueryBuilder`] whose items are separated by a fixed
/// string (see [`QueryBuilder::separated`]).
#[derive(Debug)]
pub struct Separated<'b, 'a> {
    builder: &'b mut QueryBuilder<'a>,
    separator: &'static str,
    first: bool,
}

impl<'a> Separated<'_, 'a> {
    fn item(&mut self) -> &mut QueryBuilder<'a> {
        if !self.first {
            self.builder.sql.push_str(self.separator);
        }
        self.first = false;
        self.builder
    }

    /// Appends a literal item.
    pub fn push(&mut self, sql: &'static str) -> &mut Self {
        self.item().push(sql);
        self
    }

    /// Appends a bound value as an item.
    pub fn push_bind<T: Encode + Send + Sync + 'a>(&mut self, value: T) -> &mut Self {
        self.item().push_bind(value);
        self
    }

    /// Appends a quoted identifier as an item.
    pub fn push_ident(&mut self, ident: &Ident) -> &mut Self {
        self.item().push_ident(ident);
        self
    }

    /// Appends literal text to the current item, without a separator.
    pub fn push_unseparated(&mut self, sql: &'static str) -> &mut Self {
        self.builder.push(sql);
        self
    }

    /// Binds a value into the current item, without a separator.
    pub fn push_bind_unseparated<T: Encode + Send + Sync + 'a>(&mut self, value: T) -> &mut Self {
        self.builder.push_bind(value);
        self
    }
}

/// A finished [`QueryBuilder`]: SQL text and its parameters, run through
/// the ordinary query methods.
pub struct BuiltQuery<'a> {
    sql: String,
    params: Vec<Value<'a>>,
}

impl<'a> BuiltQuery<'a> {
    /// The SQL text (with `$n` placeholders).
    pub fn sql(&self) -> &str {
        &self.sql
    }

    /// The parameters, for any query method: `client.query(q.sql(), q.params())`.
    pub fn params(&self) -> &[Value<'a>] {
        &self.params
    }

    /// Runs it with [`query`](GenericClient::query) on a `Client`,
    /// `Transaction`, `PooledClient` or `Pool`.
    pub async fn query<C>(&self, on: &C) -> Result<Vec<Row>, Error>
    where
        C: GenericClient + ?Sized,
    {
        on.query(self.sql(), self.params()).await
    }

    /// Runs it with [`query_one`](GenericClient::query_one).
    pub async fn query_one<C>(&self, on: &C) -> Result<Row, Error>
    where
        C: GenericClient + ?Sized,
    {
        on.query_one(self.sql(), self.params()).await
    }

    /// Runs it with [`query_opt`](GenericClient::query_opt).
    pub async fn query_opt<C>(&self, on: &C) -> Result<Option<Row>, Error>
    where
        C: GenericClient + ?Sized,
    {
        on.query_opt(self.sql(), self.params()).await
    }

    /// Runs it with [`query_as`](GenericClient::query_as).
    pub async fn query_as<T, C>(&self, on: &C) -> Result<Vec<T>, Error>
    where
        T: FromRow + Send,
        C: GenericClient + ?Sized,
    {
        on.query_as(self.sql(), self.params()).await
    }

    /// Runs it with [`execute`](GenericClient::execute).
    pub async fn execute<C>(&self, on: &C) -> Result<u64, Error>
    where
        C: GenericClient + ?Sized,
    {
        on.execute(self.sql(), self.params()).await
    }

    /// Runs it with [`query_stream`](GenericClient::query_stream).
    pub async fn query_stream<C>(&self, on: &C) -> Result<RowStream, Error>
    where
        C: GenericClient + ?Sized,
    {
        on.query_stream(self.sql(), self.params()).await
    }
}

impl fmt::Debug for BuiltQuery<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("BuiltQuery")
            .field("sql", &self.sql)
            .field("params", &self.params.len())
            .finish()
    }
}

/// An SQL identifier (table, column, schema name), written into SQL only
/// quoted: `"name"` with `"` doubled, so any string names exactly that
/// object and can never end the identifier.
///
/// ```
/// use pgpipe::Ident;
///
/// assert_eq!(Ident::new("users").quoted().unwrap(), r#""users""#);
/// assert_eq!(Ident::new(r#"a"; DROP TABLE t; --"#).quoted().unwrap(), r#""a""; DROP TABLE t; --""#);
/// assert_eq!(Ident::qualified(["mail", "messages"]).quoted().unwrap(), r#""mail"."messages""#);
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Ident {
    parts: Vec<String>,
}

impl Ident {
    /// One name, used exactly as given (quoted names are case-sensitive:
    /// `Ident::new("Users")` is not `users`).
    pub fn new(name: impl Into<String>) -> Ident {
        Ident {
            parts: vec![name.into()],
        }
    }

    /// A qualified name (`schema.table`, `table.column`).
    pub fn qualified<I, S>(parts: I) -> Ident
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        Ident {
            parts: parts.into_iter().map(Into::into).collect(),
        }
    }

    /// The quoted form; an error for a name PostgreSQL cannot hold (empty,
    /// or with a NUL byte).
    pub fn quoted(&self) -> Result<String, Error> {
        if self.parts.is_empty() {
            return Err(Error::new(
                ErrorKind::InvalidUse,
                "an empty qualified identifier",
            ));
        }
        let mut out = String::new();
        for (i, part) in self.parts.iter().enumerate() {
            if i > 0 {
                out.push('.');
            }
            crate::sql::push_quoted_ident(&mut out, "identifier", part)?;
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn binds_number_in_order_and_lists_separate() {
        let mut q = QueryBuilder::new("SELECT * FROM t WHERE a IN (");
        let mut list = q.separated(", ");
        for v in [1i32, 2, 3] {
            list.push_bind(v);
        }
        q.push(") AND b").push_any(vec!["x", "y"]);
        assert_eq!(
            q.sql(),
            "SELECT * FROM t WHERE a IN ($1, $2, $3) AND b = ANY($4)"
        );
        assert_eq!(q.param_count(), 4);
    }

    #[test]
    fn the_parameter_limit_is_an_error_before_sending() {
        let mut q = QueryBuilder::new("SELECT ");
        let mut list = q.separated(", ");
        for i in 0..=MAX_PARAMS {
            list.push_bind(i as i32);
        }
        assert_eq!(q.param_count(), MAX_PARAMS);
        let e = q.build().unwrap_err();
        assert_eq!(e.kind(), ErrorKind::ParameterCount);
        assert!(e.to_string().contains("65535"), "{e}");
    }

    #[test]
    fn bad_identifiers_are_errors() {
        let mut q = QueryBuilder::new("SELECT ");
        q.push_ident(&Ident::new("a\0b"));
        assert!(q.build().unwrap_err().to_string().contains("NUL"));
        assert!(Ident::new("").quoted().is_err());
        assert!(Ident::qualified(Vec::<String>::new()).quoted().is_err());
    }
}
