//! The query methods of every handle bound to one session (a
//! transaction, a pooled connection), written once: each is a one-line
//! delegation to the execution engine, documented on `Client`.

/// Expands to the query methods, inside an `impl` block of a type that has
/// `fn conn(&self) -> &ConnRef`.
macro_rules! delegate_queries {
    () => {
        /// Like [`Client::query`](crate::Client::query).
        pub async fn query<S, P>(
            &self,
            statement: &S,
            params: P,
        ) -> Result<Vec<$crate::Row>, $crate::Error>
        where
            S: $crate::ToStatement + ?Sized,
            P: $crate::Params,
        {
            self.conn().query(statement, params).await
        }

        /// Like [`Client::query_as`](crate::Client::query_as).
        pub async fn query_as<T, S, P>(
            &self,
            statement: &S,
            params: P,
        ) -> Result<Vec<T>, $crate::Error>
        where
            T: $crate::FromRow,
            S: $crate::ToStatement + ?Sized,
            P: $crate::Params,
        {
            self.conn().query_as(statement, params).await
        }

        /// Like [`Client::query_one_as`](crate::Client::query_one_as).
        pub async fn query_one_as<T, S, P>(
            &self,
            statement: &S,
            params: P,
        ) -> Result<T, $crate::Error>
        where
            T: $crate::FromRow,
            S: $crate::ToStatement + ?Sized,
            P: $crate::Params,
        {
            self.conn().query_one_as(statement, params).await
        }

        /// Like [`Client::query_opt_as`](crate::Client::query_opt_as).
        pub async fn query_opt_as<T, S, P>(
            &self,
            statement: &S,
            params: P,
        ) -> Result<Option<T>, $crate::Error>
        where
            T: $crate::FromRow,
            S: $crate::ToStatement + ?Sized,
            P: $crate::Params,
        {
            self.conn().query_opt_as(statement, params).await
        }

        /// Like [`Client::query_stream`](crate::Client::query_stream).
        pub async fn query_stream<S, P>(
            &self,
            statement: &S,
            params: P,
        ) -> Result<$crate::RowStream, $crate::Error>
        where
            S: $crate::ToStatement + ?Sized,
            P: $crate::Params,
        {
            self.conn().query_stream(statement, params).await
        }

        /// Like [`Client::query_one`](crate::Client::query_one).
        pub async fn query_one<S, P>(
            &self,
            statement: &S,
            params: P,
        ) -> Result<$crate::Row, $crate::Error>
        where
            S: $crate::ToStatement + ?Sized,
            P: $crate::Params,
        {
            self.conn().query_one(statement, params).await
        }

        /// Like [`Client::query_opt`](crate::Client::query_opt).
        pub async fn query_opt<S, P>(
            &self,
            statement: &S,
            params: P,
        ) -> Result<Option<$crate::Row>, $crate::Error>
        where
            S: $crate::ToStatement + ?Sized,
            P: $crate::Params,
        {
            self.conn().query_opt(statement, params).await
        }

        /// Like [`Client::execute`](crate::Client::execute).
        pub async fn execute<S, P>(&self, statement: &S, params: P) -> Result<u64, $crate::Error>
        where
            S: $crate::ToStatement + ?Sized,
            P: $crate::Params,
        {
            self.conn().execute(statement, params).await
        }

        /// Like [`Client::batch`](crate::Client::batch).
        pub fn batch(&self) -> $crate::Batch<'_> {
            self.conn().batch()
        }

        /// Like [`Client::prepare`](crate::Client::prepare).
        pub async fn prepare(&self, sql: &str) -> Result<$crate::Statement, $crate::Error> {
            self.conn().prepare(sql).await
        }

        /// Like [`Client::prepare_typed`](crate::Client::prepare_typed).
        pub async fn prepare_typed(
            &self,
            sql: &str,
            types: &[$crate::Type],
        ) -> Result<$crate::Statement, $crate::Error> {
            self.conn().prepare_typed(sql, types).await
        }

        /// Like [`Client::simple_query`](crate::Client::simple_query).
        pub async fn simple_query(
            &self,
            sql: &str,
        ) -> Result<Vec<$crate::SimpleQueryMessage>, $crate::Error> {
            self.conn().simple_query(sql).await
        }

        /// Like [`Client::batch_execute`](crate::Client::batch_execute).
        pub async fn batch_execute(&self, sql: &str) -> Result<(), $crate::Error> {
            self.conn().batch_execute(sql).await
        }

        /// Like [`Client::notify`](crate::Client::notify).
        pub async fn notify(&self, channel: &str, payload: &str) -> Result<(), $crate::Error> {
            self.conn().notify(channel, payload).await
        }

        /// Like [`Client::bind_portal`](crate::Client::bind_portal).
        pub async fn bind_portal<S, P>(
            &self,
            statement: &S,
            params: P,
        ) -> Result<$crate::Portal, $crate::Error>
        where
            S: $crate::ToStatement + ?Sized,
            P: $crate::Params,
        {
            self.conn().bind_portal(statement, params).await
        }

        /// Like [`Client::register_type`](crate::Client::register_type).
        pub async fn register_type(&self, name: &str) -> Result<$crate::Type, $crate::Error> {
            self.conn().register_type(name).await
        }
    };
}

pub(crate) use delegate_queries;
