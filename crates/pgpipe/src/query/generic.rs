//! [`GenericClient`]: the one trait for "something that runs queries",
//! implemented by `Client`, `Transaction`, `PooledClient` and `Pool`.

use std::future::Future;
use std::pin::Pin;

use pgpipe_types::Params;

use super::{Batch, ConnRef, FromRow, Row, RowStream, SimpleQueryMessage, Statement, ToStatement};
use crate::Error;

pub(crate) use sealed::{Lent, Sealed};

/// Something that runs queries: a [`Client`](crate::Client), a
/// [`Transaction`](crate::Transaction), a
/// [`PooledClient`](crate::PooledClient) or a [`Pool`](crate::Pool).
/// Write code against `&impl GenericClient` and let the caller choose a
/// dedicated connection, a transaction or a pool; named queries and the
/// query builder take it too, and COPY and upsert run on it through
/// [`GenericCopy`](crate::GenericCopy) and
/// [`GenericUpsert`](crate::GenericUpsert), implemented for every
/// `GenericClient`.
///
/// Every method means the same on all four; each is documented on
/// [`Client`](crate::Client). On a [`Pool`](crate::Pool) one statement runs
/// on a shared, pipelined connection (see [`Pool::query`](crate::Pool::query)),
/// and what needs a session of its own takes a checkout for as long as it
/// needs it: a [`RowStream`], a [`Batch`], a COPY (until it ends), `upsert_rows`
/// and `batch_execute` (for the call).
///
/// The trait is sealed: it cannot be implemented outside pgpipe.
///
/// ```no_run
/// use pgpipe::{Error, GenericClient};
///
/// async fn user_count(db: &impl GenericClient) -> Result<i64, Error> {
///     let row = db.query_one("SELECT count(*) FROM users", ()).await?;
///     Ok(row.get(0))
/// }
///
/// # async fn f() -> Result<(), Error> {
/// let mut client = pgpipe::connect("postgres://app@localhost/app").await?;
/// let pool = pgpipe::Pool::connect("postgres://app@localhost/app").await?;
/// let a = user_count(&client).await?;
/// let b = user_count(&pool).await?;
/// let tx = client.transaction().await?;
/// let c = user_count(&tx).await?;
/// tx.commit().await?;
/// # Ok(()) }
/// ```
pub trait GenericClient: Sealed + Send + Sync {
    /// Runs a statement and returns all its rows (see
    /// [`Client::query`](crate::Client::query)).
    fn query<S, P>(
        &self,
        statement: &S,
        params: P,
    ) -> impl Future<Output = Result<Vec<Row>, Error>> + Send
    where
        S: ToStatement + ?Sized + Sync,
        P: Params + Send + Sync;

    /// Runs a statement that must return exactly one row (see
    /// [`Client::query_one`](crate::Client::query_one)).
    fn query_one<S, P>(
        &self,
        statement: &S,
        params: P,
    ) -> impl Future<Output = Result<Row, Error>> + Send
    where
        S: ToStatement + ?Sized + Sync,
        P: Params + Send + Sync;

    /// Runs a statement that returns at most one row (see
    /// [`Client::query_opt`](crate::Client::query_opt)).
    fn query_opt<S, P>(
        &self,
        statement: &S,
        params: P,
    ) -> impl Future<Output = Result<Option<Row>, Error>> + Send
    where
        S: ToStatement + ?Sized + Sync,
        P: Params + Send + Sync;

    /// Runs a statement and reads every row into `T` (see
    /// [`Client::query_as`](crate::Client::query_as)).
    fn query_as<T, S, P>(
        &self,
        statement: &S,
        params: P,
    ) -> impl Future<Output = Result<Vec<T>, Error>> + Send
    where
        T: FromRow + Send,
        S: ToStatement + ?Sized + Sync,
        P: Params + Send + Sync;

    /// [`query_as`](Self::query_as) for exactly one row (see
    /// [`Client::query_one_as`](crate::Client::query_one_as)).
    fn query_one_as<T, S, P>(
        &self,
        statement: &S,
        params: P,
    ) -> impl Future<Output = Result<T, Error>> + Send
    where
        T: FromRow + Send,
        S: ToStatement + ?Sized + Sync,
        P: Params + Send + Sync;

    /// [`query_as`](Self::query_as) for at most one row (see
    /// [`Client::query_opt_as`](crate::Client::query_opt_as)).
    fn query_opt_as<T, S, P>(
        &self,
        statement: &S,
        params: P,
    ) -> impl Future<Output = Result<Option<T>, Error>> + Send
    where
        T: FromRow + Send,
        S: ToStatement + ?Sized + Sync,
        P: Params + Send + Sync;

    /// Runs a statement and returns the number of rows it affected (see
    /// [`Client::execute`](crate::Client::execute)).
    fn execute<S, P>(
        &self,
        statement: &S,
        params: P,
    ) -> impl Future<Output = Result<u64, Error>> + Send
    where
        S: ToStatement + ?Sized + Sync,
        P: Params + Send + Sync;

    /// Streams a statement's rows in bounded memory (see
    /// [`Client::query_stream`](crate::Client::query_stream)). On a pool
    /// the stream holds a checkout until it is dropped.
    fn query_stream<S, P>(
        &self,
        statement: &S,
        params: P,
    ) -> impl Future<Output = Result<RowStream, Error>> + Send
    where
        S: ToStatement + ?Sized + Sync,
        P: Params + Send + Sync;

    /// Runs SQL text through the simple-query protocol (see
    /// [`Client::simple_query`](crate::Client::simple_query)). On a pool,
    /// on a checkout for the call.
    fn simple_query(
        &self,
        sql: &str,
    ) -> impl Future<Output = Result<Vec<SimpleQueryMessage>, Error>> + Send;

    /// Runs SQL text and discards any rows (see
    /// [`Client::batch_execute`](crate::Client::batch_execute)). On a
    /// pool, on a checkout for the call.
    fn batch_execute(&self, sql: &str) -> impl Future<Output = Result<(), Error>> + Send;

    /// Starts a [`Batch`] (see [`Client::batch`](crate::Client::batch)).
    /// On a pool, the batch takes a checkout when it runs.
    fn batch(&self) -> Batch<'_>;
}

/// A [`GenericClient`] bound to one server session: a
/// [`Client`](crate::Client), a [`Transaction`](crate::Transaction) or a
/// [`PooledClient`](crate::PooledClient). It adds what only makes sense on
/// one session: prepared statements.
///
/// A [`Pool`](crate::Pool) does not implement it on purpose: a
/// [`Statement`] exists on the connection that prepared it, and the pool
/// runs each statement on whichever connection is free, so a statement
/// prepared through the pool could not be run through it. Prepare on a
/// checkout ([`Pool::get`](crate::Pool::get)) and run it there; on a pool,
/// plain SQL text is prepared and cached per connection anyway.
///
/// The trait is sealed: it cannot be implemented outside pgpipe.
///
/// ```no_run
/// use pgpipe::{Error, GenericSession};
///
/// async fn names(db: &impl GenericSession, ids: &[i32]) -> Result<Vec<String>, Error> {
///     let stmt = db.prepare("SELECT name FROM users WHERE id = $1").await?;
///     let mut names = Vec::new();
///     for id in ids {
///         names.push(db.query_one(&stmt, (*id,)).await?.get(0));
///     }
///     Ok(names)
/// }
/// ```
pub trait GenericSession: GenericClient {
    /// Prepares a named statement on the server (see
    /// [`Client::prepare`](crate::Client::prepare)).
    fn prepare(&self, sql: &str) -> impl Future<Output = Result<Statement, Error>> + Send;

    /// Prepares a named statement with the types of its first parameters
    /// (see [`Client::prepare_typed`](crate::Client::prepare_typed)).
    fn prepare_typed(
        &self,
        sql: &str,
        types: &[crate::Type],
    ) -> impl Future<Output = Result<Statement, Error>> + Send;
}

mod sealed {
    use super::*;

    /// What only pgpipe's handles have: a session to run several requests
    /// on (the handle's own, or a checkout for a pool).
    pub trait Sealed {
        /// A session for as long as the returned value lives.
        #[doc(hidden)]
        fn session(&self) -> Pin<Box<dyn Future<Output = Result<Lent<'_>, Error>> + Send + '_>>;
    }

    /// A session lent by a handle: its connection handle, and what must
    /// stay alive while it is used (a pool's checkout).
    pub struct Lent<'a> {
        conn: LentConn<'a>,
        hold: Option<Box<dyn Send + Sync>>,
    }

    enum LentConn<'a> {
        Borrowed(&'a ConnRef),
        Owned(ConnRef),
    }

    /// Whether the session is borrowed or held; not the connection itself.
    impl std::fmt::Debug for Lent<'_> {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.debug_struct("Lent")
                .field("held", &self.hold.is_some())
                .finish_non_exhaustive()
        }
    }

    impl<'a> Lent<'a> {
        /// The handle's own session.
        pub(crate) fn borrowed(conn: &'a ConnRef) -> Lent<'a> {
            Lent {
                conn: LentConn::Borrowed(conn),
                hold: None,
            }
        }

        /// A session on `conn` that lasts as long as `hold` lives.
        pub(crate) fn held(conn: ConnRef, hold: Box<dyn Send + Sync>) -> Lent<'a> {
            Lent {
                conn: LentConn::Owned(conn),
                hold: Some(hold),
            }
        }

        /// What keeps the session alive, for a result that outlives this
        /// value (a stream, a COPY).
        pub(crate) fn into_hold(self) -> Option<Box<dyn Send + Sync>> {
            self.hold
        }
    }

    impl Lent<'_> {
        /// The connection handle to run on.
        pub(crate) fn conn(&self) -> &ConnRef {
            match &self.conn {
                LentConn::Borrowed(conn) => conn,
                LentConn::Owned(conn) => conn,
            }
        }
    }
}

/// Implements [`GenericClient`] for a type whose inherent methods of the
/// same names do the work; with `own_session`, also the session hook for a
/// handle that has one (`fn conn(&self) -> &ConnRef`) and
/// [`GenericSession`].
macro_rules! impl_generic_client {
    ($ty:ty, own_session) => {
        impl $crate::query::Sealed for $ty {
            fn session(
                &self,
            ) -> ::std::pin::Pin<
                Box<
                    dyn ::std::future::Future<
                            Output = Result<$crate::query::Lent<'_>, $crate::Error>,
                        > + Send
                        + '_,
                >,
            > {
                Box::pin(::std::future::ready(Ok($crate::query::Lent::borrowed(
                    self.conn(),
                ))))
            }
        }

        impl $crate::GenericSession for $ty {
            fn prepare(
                &self,
                sql: &str,
            ) -> impl ::std::future::Future<Output = Result<$crate::Statement, $crate::Error>> + Send
            {
                <$ty>::prepare(self, sql)
            }

            fn prepare_typed(
                &self,
                sql: &str,
                types: &[$crate::Type],
            ) -> impl ::std::future::Future<Output = Result<$crate::Statement, $crate::Error>> + Send
            {
                <$ty>::prepare_typed(self, sql, types)
            }
        }

        $crate::query::impl_generic_client!($ty);
    };
    ($ty:ty) => {
        impl $crate::GenericClient for $ty {
            fn query<S, P>(
                &self,
                statement: &S,
                params: P,
            ) -> impl ::std::future::Future<Output = Result<Vec<$crate::Row>, $crate::Error>> + Send
            where
                S: $crate::ToStatement + ?Sized + Sync,
                P: $crate::Params + Send + Sync,
            {
                <$ty>::query(self, statement, params)
            }

            fn query_one<S, P>(
                &self,
                statement: &S,
                params: P,
            ) -> impl ::std::future::Future<Output = Result<$crate::Row, $crate::Error>> + Send
            where
                S: $crate::ToStatement + ?Sized + Sync,
                P: $crate::Params + Send + Sync,
            {
                <$ty>::query_one(self, statement, params)
            }

            fn query_opt<S, P>(
                &self,
                statement: &S,
                params: P,
            ) -> impl ::std::future::Future<Output = Result<Option<$crate::Row>, $crate::Error>> + Send
            where
                S: $crate::ToStatement + ?Sized + Sync,
                P: $crate::Params + Send + Sync,
            {
                <$ty>::query_opt(self, statement, params)
            }

            fn query_as<T, S, P>(
                &self,
                statement: &S,
                params: P,
            ) -> impl ::std::future::Future<Output = Result<Vec<T>, $crate::Error>> + Send
            where
                T: $crate::FromRow + Send,
                S: $crate::ToStatement + ?Sized + Sync,
                P: $crate::Params + Send + Sync,
            {
                <$ty>::query_as(self, statement, params)
            }

            fn query_one_as<T, S, P>(
                &self,
                statement: &S,
                params: P,
            ) -> impl ::std::future::Future<Output = Result<T, $crate::Error>> + Send
            where
                T: $crate::FromRow + Send,
                S: $crate::ToStatement + ?Sized + Sync,
                P: $crate::Params + Send + Sync,
            {
                <$ty>::query_one_as(self, statement, params)
            }

            fn query_opt_as<T, S, P>(
                &self,
                statement: &S,
                params: P,
            ) -> impl ::std::future::Future<Output = Result<Option<T>, $crate::Error>> + Send
            where
                T: $crate::FromRow + Send,
                S: $crate::ToStatement + ?Sized + Sync,
                P: $crate::Params + Send + Sync,
            {
                <$ty>::query_opt_as(self, statement, params)
            }

            fn execute<S, P>(
                &self,
                statement: &S,
                params: P,
            ) -> impl ::std::future::Future<Output = Result<u64, $crate::Error>> + Send
            where
                S: $crate::ToStatement + ?Sized + Sync,
                P: $crate::Params + Send + Sync,
            {
                <$ty>::execute(self, statement, params)
            }

            fn query_stream<S, P>(
                &self,
                statement: &S,
                params: P,
            ) -> impl ::std::future::Future<Output = Result<$crate::RowStream, $crate::Error>> + Send
            where
                S: $crate::ToStatement + ?Sized + Sync,
                P: $crate::Params + Send + Sync,
            {
                <$ty>::query_stream(self, statement, params)
            }

            fn simple_query(
                &self,
                sql: &str,
            ) -> impl ::std::future::Future<
                Output = Result<Vec<$crate::SimpleQueryMessage>, $crate::Error>,
            > + Send {
                <$ty>::simple_query(self, sql)
            }

            fn batch_execute(
                &self,
                sql: &str,
            ) -> impl ::std::future::Future<Output = Result<(), $crate::Error>> + Send {
                <$ty>::batch_execute(self, sql)
            }

            fn batch(&self) -> $crate::Batch<'_> {
                <$ty>::batch(self)
            }
        }
    };
}

pub(crate) use impl_generic_client;
