//! The query methods of [`Client`]: one-line delegations to the
//! execution engine under `query/`.

use pgpipe_types::{Params, Type};

use super::Client;
use crate::query::{Batch, FromRow, Row, RowStream, SimpleQueryMessage, Statement, ToStatement};
use crate::Error;
#[cfg(doc)]
use crate::ErrorKind;

impl Client {
    /// Runs a statement and returns all its rows.
    ///
    /// `statement` is SQL text or a [`Statement`]; `params` is a tuple of
    /// values (`(id, "name")`, or `()` for none) or a slice. SQL text costs
    /// one round trip: parameter types come from the Rust values, results
    /// come back in binary.
    ///
    /// ```no_run
    /// # async fn f(client: &pgpipe::Client) -> Result<(), pgpipe::Error> {
    /// let rows = client
    ///     .query("SELECT id, email FROM users WHERE id > $1 ORDER BY id", (10i64,))
    ///     .await?;
    /// for row in &rows {
    ///     let id: i64 = row.get("id");
    ///     let email: Option<&str> = row.get("email");
    /// }
    /// # Ok(()) }
    /// ```
    ///
    /// Cancel safe (see [`Client`]).
    pub async fn query<S, P>(&self, statement: &S, params: P) -> Result<Vec<Row>, Error>
    where
        S: ToStatement + ?Sized,
        P: Params,
    {
        self.conn.query(statement, params).await
    }

    /// Runs a statement and reads every row into `T` (a tuple, or a struct
    /// with `#[derive(FromRow)]`). The result's columns are checked against
    /// `T` once, before any row is decoded: a missing column, a wrong column
    /// count or a type `T` cannot hold is one error naming the column, its
    /// PostgreSQL type and the Rust type.
    ///
    /// ```no_run
    /// # async fn f(client: &pgpipe::Client) -> Result<(), pgpipe::Error> {
    /// let pairs: Vec<(i32, String)> = client
    ///     .query_as("SELECT id, name FROM users WHERE id < $1", (10i32,))
    ///     .await?;
    /// # Ok(()) }
    /// ```
    ///
    /// Cancel safe (see [`Client`]).
    pub async fn query_as<T, S, P>(&self, statement: &S, params: P) -> Result<Vec<T>, Error>
    where
        T: FromRow,
        S: ToStatement + ?Sized,
        P: Params,
    {
        self.conn.query_as(statement, params).await
    }

    /// [`query_as`](Self::query_as) for a statement that must return exactly
    /// one row (see [`query_one`](Self::query_one)).
    ///
    /// Cancel safe (see [`Client`]).
    pub async fn query_one_as<T, S, P>(&self, statement: &S, params: P) -> Result<T, Error>
    where
        T: FromRow,
        S: ToStatement + ?Sized,
        P: Params,
    {
        self.conn.query_one_as(statement, params).await
    }

    /// [`query_as`](Self::query_as) for a statement that returns at most one
    /// row (see [`query_opt`](Self::query_opt)).
    ///
    /// Cancel safe (see [`Client`]).
    pub async fn query_opt_as<T, S, P>(&self, statement: &S, params: P) -> Result<Option<T>, Error>
    where
        T: FromRow,
        S: ToStatement + ?Sized,
        P: Params,
    {
        self.conn.query_opt_as(statement, params).await
    }

    /// Runs a statement and streams its rows as they arrive, in bounded
    /// memory (see [`RowStream`]).
    ///
    /// ```no_run
    /// # async fn f(client: &pgpipe::Client) -> Result<(), pgpipe::Error> {
    /// let mut rows = client.query_stream("SELECT id FROM events WHERE day = $1", ("2026-11-22",)).await?;
    /// while let Some(row) = rows.next().await {
    ///     let id: i64 = row?.get(0);
    /// }
    /// # Ok(()) }
    /// ```
    ///
    /// Cancel safe, and the stream may be dropped half-read (see [`RowStream`]).
    pub async fn query_stream<S, P>(&self, statement: &S, params: P) -> Result<RowStream, Error>
    where
        S: ToStatement + ?Sized,
        P: Params,
    {
        self.conn.query_stream(statement, params).await
    }

    /// Runs a statement that must return exactly one row.
    ///
    /// Zero rows or more than one is an error of kind
    /// [`ErrorKind::RowCount`] that says how many came back.
    ///
    /// Cancel safe (see [`Client`]).
    pub async fn query_one<S, P>(&self, statement: &S, params: P) -> Result<Row, Error>
    where
        S: ToStatement + ?Sized,
        P: Params,
    {
        self.conn.query_one(statement, params).await
    }

    /// Runs a statement that returns at most one row.
    ///
    /// More than one row is an error of kind [`ErrorKind::RowCount`].
    ///
    /// Cancel safe (see [`Client`]).
    pub async fn query_opt<S, P>(&self, statement: &S, params: P) -> Result<Option<Row>, Error>
    where
        S: ToStatement + ?Sized,
        P: Params,
    {
        self.conn.query_opt(statement, params).await
    }

    /// Runs a statement and returns the number of rows it affected (for
    /// INSERT, UPDATE, DELETE, MERGE, COPY) or returned (SELECT); 0 for
    /// other commands. Rows it returns are discarded without being decoded.
    ///
    /// ```no_run
    /// # async fn f(client: &pgpipe::Client) -> Result<(), pgpipe::Error> {
    /// let n = client.execute("UPDATE users SET active = $1 WHERE id < $2", (false, 100i64)).await?;
    /// # Ok(()) }
    /// ```
    ///
    /// Cancel safe (see [`Client`]).
    pub async fn execute<S, P>(&self, statement: &S, params: P) -> Result<u64, Error>
    where
        S: ToStatement + ?Sized,
        P: Params,
    {
        self.conn.execute(statement, params).await
    }

    /// Starts a [`Batch`]: statements sent in one write, results in order.
    pub fn batch(&self) -> Batch<'_> {
        self.conn.batch()
    }

    /// Prepares a named statement on the server, letting the server infer
    /// every parameter type. See [`prepare_typed`](Self::prepare_typed).
    ///
    /// Cancel safe (see [`Client`]).
    pub async fn prepare(&self, sql: &str) -> Result<Statement, Error> {
        self.conn.prepare(sql).await
    }

    /// Prepares a named statement, declaring the types of the first
    /// `types.len()` parameters. The returned [`Statement`] knows its
    /// parameter and column types, so values are checked before they are
    /// sent. The statement is closed on the server when dropped.
    ///
    /// ```no_run
    /// # async fn f(client: &pgpipe::Client) -> Result<(), pgpipe::Error> {
    /// let stmt = client.prepare("SELECT name FROM users WHERE id = $1").await?;
    /// let row = client.query_one(&stmt, (7i32,)).await?;
    /// # Ok(()) }
    /// ```
    ///
    /// Cancel safe (see [`Client`]).
    pub async fn prepare_typed(&self, sql: &str, types: &[Type]) -> Result<Statement, Error> {
        self.conn.prepare_typed(sql, types).await
    }

    /// Runs SQL text through the simple-query protocol: several statements
    /// separated by `;` are allowed, no parameters, every value comes back
    /// as text. Execution stops at the first failing statement; unless the
    /// text has explicit transaction control, the statements run in one
    /// implicit transaction. A `COPY ... FROM STDIN` in any of the
    /// statements is refused before anything is sent (use
    /// [`Client::copy_in`]): requests pipelined behind it would otherwise
    /// be read by the server as COPY data.
    ///
    /// ```no_run
    /// # async fn f(client: &pgpipe::Client) -> Result<(), pgpipe::Error> {
    /// use pgpipe::SimpleQueryMessage;
    /// for msg in client.simple_query("SELECT 1 AS one; SELECT 'two'").await? {
    ///     if let SimpleQueryMessage::Row(row) = msg {
    ///         println!("{:?}", row.get(0));
    ///     }
    /// }
    /// # Ok(()) }
    /// ```
    ///
    /// Cancel safe (see [`Client`]).
    pub async fn simple_query(&self, sql: &str) -> Result<Vec<SimpleQueryMessage>, Error> {
        self.conn.simple_query(sql).await
    }

    /// Runs SQL text (several statements allowed) and discards any rows:
    /// for schema set-up, migrations and the like.
    ///
    /// Cancel safe (see [`Client`]).
    pub async fn batch_execute(&self, sql: &str) -> Result<(), Error> {
        self.conn.batch_execute(sql).await
    }
}
