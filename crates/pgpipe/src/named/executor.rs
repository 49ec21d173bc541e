//! What a named query runs on: a client, a pool or a pooled client.

use std::future::Future;

use crate::pool::{Pool, PooledClient};
use crate::query::FromRow;
use crate::types::Params;
use crate::{Client, Error, Transaction};

/// Something named queries (and [`check_queries`](super::check_queries))
/// run on: [`Client`], [`Pool`], [`PooledClient`], [`Transaction`], and
/// references to them.
pub trait Executor: Sync {
    /// Runs `sql` and reads its rows into `T` (see [`Client::query_as`]).
    fn query_as_sql<'a, T, P>(
        &'a self,
        sql: &'static str,
        params: P,
    ) -> impl Future<Output = Result<Vec<T>, Error>> + Send + 'a
    where
        T: FromRow + Send + 'a,
        P: Params + Send + Sync + 'a;

    /// Runs `sql` and returns the rows affected (see [`Client::execute`]).
    fn execute_sql<'a, P>(
        &'a self,
        sql: &'static str,
        params: P,
    ) -> impl Future<Output = Result<u64, Error>> + Send + 'a
    where
        P: Params + Send + Sync + 'a;

    /// Runs `f` with a client of this executor (a pool lends one).
    fn with_client<'a, R, F, Fut>(
        &'a self,
        f: F,
    ) -> impl Future<Output = Result<R, Error>> + Send + 'a
    where
        F: FnOnce(Client) -> Fut + Send + 'a,
        Fut: Future<Output = Result<R, Error>> + Send + 'a,
        R: Send + 'a;
}

impl Executor for Client {
    fn query_as_sql<'a, T, P>(
        &'a self,
        sql: &'static str,
        params: P,
    ) -> impl Future<Output = Result<Vec<T>, Error>> + Send + 'a
    where
        T: FromRow + Send + 'a,
        P: Params + Send + Sync + 'a,
    {
        self.query_as(sql, params)
    }

    fn execute_sql<'a, P>(
        &'a self,
        sql: &'static str,
        params: P,
    ) -> impl Future<Output = Result<u64, Error>> + Send + 'a
    where
        P: Params + Send + Sync + 'a,
    {
        self.execute(sql, params)
    }

    fn with_client<'a, R, F, Fut>(
        &'a self,
        f: F,
    ) -> impl Future<Output = Result<R, Error>> + Send + 'a
    where
        F: FnOnce(Client) -> Fut + Send + 'a,
        Fut: Future<Output = Result<R, Error>> + Send + 'a,
        R: Send + 'a,
    {
        f(self.clone())
    }
}

impl Executor for PooledClient {
    fn query_as_sql<'a, T, P>(
        &'a self,
        sql: &'static str,
        params: P,
    ) -> impl Future<Output = Result<Vec<T>, Error>> + Send + 'a
    where
        T: FromRow + Send + 'a,
        P: Params + Send + Sync + 'a,
    {
        self.client().query_as(sql, params)
    }

    fn execute_sql<'a, P>(
        &'a self,
        sql: &'static str,
        params: P,
    ) -> impl Future<Output = Result<u64, Error>> + Send + 'a
    where
        P: Params + Send + Sync + 'a,
    {
        self.client().execute(sql, params)
    }

    fn with_client<'a, R, F, Fut>(
        &'a self,
        f: F,
    ) -> impl Future<Output = Result<R, Error>> + Send + 'a
    where
        F: FnOnce(Client) -> Fut + Send + 'a,
        Fut: Future<Output = Result<R, Error>> + Send + 'a,
        R: Send + 'a,
    {
        f(self.client().clone())
    }
}

impl Executor for Pool {
    fn query_as_sql<'a, T, P>(
        &'a self,
        sql: &'static str,
        params: P,
    ) -> impl Future<Output = Result<Vec<T>, Error>> + Send + 'a
    where
        T: FromRow + Send + 'a,
        P: Params + Send + Sync + 'a,
    {
        self.query_as(sql, params)
    }

    fn execute_sql<'a, P>(
        &'a self,
        sql: &'static str,
        params: P,
    ) -> impl Future<Output = Result<u64, Error>> + Send + 'a
    where
        P: Params + Send + Sync + 'a,
    {
        self.execute(sql, params)
    }

    // Spelled out rather than `async fn`: the trait promises `Send`.
    #[allow(clippy::manual_async_fn)]
    fn with_client<'a, R, F, Fut>(
        &'a self,
        f: F,
    ) -> impl Future<Output = Result<R, Error>> + Send + 'a
    where
        F: FnOnce(Client) -> Fut + Send + 'a,
        Fut: Future<Output = Result<R, Error>> + Send + 'a,
        R: Send + 'a,
    {
        async move {
            let conn = self.get().await?;
            let result = f(conn.client().clone()).await;
            drop(conn);
            result
        }
    }
}

impl Executor for Transaction<'_> {
    fn query_as_sql<'a, T, P>(
        &'a self,
        sql: &'static str,
        params: P,
    ) -> impl Future<Output = Result<Vec<T>, Error>> + Send + 'a
    where
        T: FromRow + Send + 'a,
        P: Params + Send + Sync + 'a,
    {
        self.client().query_as(sql, params)
    }

    fn execute_sql<'a, P>(
        &'a self,
        sql: &'static str,
        params: P,
    ) -> impl Future<Output = Result<u64, Error>> + Send + 'a
    where
        P: Params + Send + Sync + 'a,
    {
        self.client().execute(sql, params)
    }

    fn with_client<'a, R, F, Fut>(
        &'a self,
        f: F,
    ) -> impl Future<Output = Result<R, Error>> + Send + 'a
    where
        F: FnOnce(Client) -> Fut + Send + 'a,
        Fut: Future<Output = Result<R, Error>> + Send + 'a,
        R: Send + 'a,
    {
        f(self.client().clone())
    }
}

impl<E: Executor + ?Sized> Executor for &E {
    fn query_as_sql<'a, T, P>(
        &'a self,
        sql: &'static str,
        params: P,
    ) -> impl Future<Output = Result<Vec<T>, Error>> + Send + 'a
    where
        T: FromRow + Send + 'a,
        P: Params + Send + Sync + 'a,
    {
        (**self).query_as_sql(sql, params)
    }

    fn execute_sql<'a, P>(
        &'a self,
        sql: &'static str,
        params: P,
    ) -> impl Future<Output = Result<u64, Error>> + Send + 'a
    where
        P: Params + Send + Sync + 'a,
    {
        (**self).execute_sql(sql, params)
    }

    fn with_client<'a, R, F, Fut>(
        &'a self,
        f: F,
    ) -> impl Future<Output = Result<R, Error>> + Send + 'a
    where
        F: FnOnce(Client) -> Fut + Send + 'a,
        Fut: Future<Output = Result<R, Error>> + Send + 'a,
        R: Send + 'a,
    {
        (**self).with_client(f)
    }
}
