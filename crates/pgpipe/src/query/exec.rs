//! The query methods every front (`Client`, `Transaction`, pooled
//! connections, the pool) delegates to: rows, one row, typed rows, a
//! stream, an affected-row count, a batch.

use pgpipe_types::Params;
use tracing::Instrument;

use super::conn::ConnRef;
use super::{send_query, Batch, FromRow, Row, RowStream, StatementRef, ToStatement};
use crate::driver::NO_SESSION;
use crate::error::ErrorKind;
use crate::observe;
use crate::query::sql_of;
use crate::Error;

impl ConnRef {
    /// Runs a statement and returns all its rows.
    pub(crate) async fn query<S, P>(&self, statement: &S, params: P) -> Result<Vec<Row>, Error>
    where
        S: ToStatement + ?Sized,
        P: Params,
    {
        let mut rows = Vec::new();
        let ran = self
            .run_traced(statement, &params, |row| rows.push(row))
            .await?;
        if let Some(columns) = ran.described {
            for row in &mut rows {
                row.set_columns(columns.clone());
            }
        }
        Ok(rows)
    }

    /// Runs a statement and reads every row into `T`, its columns checked
    /// once before any row is decoded.
    pub(crate) async fn query_as<T, S, P>(&self, statement: &S, params: P) -> Result<Vec<T>, Error>
    where
        T: FromRow,
        S: ToStatement + ?Sized,
        P: Params,
    {
        // Rows are decoded as they arrive, while their bytes are still in
        // the cache; the check runs on the first row's columns, before any
        // decode. Only when a column type still needs a catalog lookup are
        // the rows held until the lookup is done.
        let mut out = Vec::new();
        let mut held = Vec::new();
        let mut plan: Option<Result<T::Columns, Error>> = None;
        let mut failed: Option<Error> = None;
        let ran = self
            .run_traced(statement, &params, |row| {
                if failed.is_some() {
                    return;
                }
                if plan.is_none()
                    && held.is_empty()
                    && row.columns().iter().all(|c| c.type_().is_known())
                {
                    plan = Some(T::check(row.columns()));
                }
                match &plan {
                    Some(Ok(columns)) => match T::decode(&row, columns) {
                        Ok(value) => out.push(value),
                        Err(e) => failed = Some(e),
                    },
                    Some(Err(_)) => {}
                    None => held.push(row),
                }
            })
            .await?;
        match (plan, failed) {
            (Some(Err(e)), _) | (_, Some(e)) => return Err(e),
            (Some(Ok(_)), None) => return Ok(out),
            (None, None) => {}
        }
        // No row checked yet: an empty result (still checked, so a mistake
        // shows before the first row ever arrives) or rows held for a lookup.
        let Some(columns) = ran.described.or(ran.columns) else {
            return Ok(Vec::new());
        };
        let plan = T::check(&columns)?;
        held.iter_mut()
            .map(|row| {
                row.set_columns(columns.clone());
                T::decode(row, &plan)
            })
            .collect()
    }

    /// [`query_as`](Self::query_as) for exactly one row.
    pub(crate) async fn query_one_as<T, S, P>(&self, statement: &S, params: P) -> Result<T, Error>
    where
        T: FromRow,
        S: ToStatement + ?Sized,
        P: Params,
    {
        let mut rows = self.query_as::<T, S, P>(statement, params).await?;
        match rows.len() {
            1 => Ok(rows.remove(0)),
            n => Err(Error::new(
                ErrorKind::RowCount,
                format!("query_one_as: expected exactly one row, the query returned {n}"),
            )),
        }
    }

    /// [`query_as`](Self::query_as) for at most one row.
    pub(crate) async fn query_opt_as<T, S, P>(
        &self,
        statement: &S,
        params: P,
    ) -> Result<Option<T>, Error>
    where
        T: FromRow,
        S: ToStatement + ?Sized,
        P: Params,
    {
        let mut rows = self.query_as::<T, S, P>(statement, params).await?;
        match rows.len() {
            0 => Ok(None),
            1 => Ok(rows.pop()),
            n => Err(Error::new(
                ErrorKind::RowCount,
                format!("query_opt_as: expected at most one row, the query returned {n}"),
            )),
        }
    }

    /// Runs a statement and streams its rows in bounded memory.
    pub(crate) async fn query_stream<S, P>(
        &self,
        statement: &S,
        params: P,
    ) -> Result<RowStream, Error>
    where
        S: ToStatement + ?Sized,
        P: Params,
    {
        let st = statement.to_statement();
        let op = observe::Op::start("query_stream", Some(self.shared()), sql_of(&st));
        let sent = async {
            if let (StatementRef::Sql(sql), true) = (st, params.needs_server_types()) {
                let described = Box::pin(self.describe_params(sql, &params)).await?;
                if !described.fetched() {
                    // Parameter types came from the cache; the columns'
                    // may still need describing.
                    Box::pin(self.describe_result_types(sql, &params)).await?;
                }
                let permit = self.shared().permit().await?;
                let sent = send_query(self.shared(), self.session, permit, st, &described);
                // The statement is in the cache now (a failed parse takes it out).
                described.remember(self, sql);
                return sent;
            }
            if let StatementRef::Sql(sql) = st {
                // Boxed: a cold path (once per statement and connection).
                Box::pin(self.describe_result_types(sql, &params)).await?;
            }
            let permit = self.shared().permit().await?;
            send_query(self.shared(), self.session, permit, st, &params)
        };
        match sent.instrument(op.span().clone()).await {
            Ok((responses, plan)) => Ok(RowStream::new(
                self.shared().clone(),
                responses,
                plan,
                op,
                self.session == NO_SESSION,
            )),
            Err(e) => Err(op.failed(e)),
        }
    }

    /// Runs a statement that must return exactly one row.
    pub(crate) async fn query_one<S, P>(&self, statement: &S, params: P) -> Result<Row, Error>
    where
        S: ToStatement + ?Sized,
        P: Params,
    {
        match self.query_first(statement, params).await? {
            (Some(row), 1) => Ok(row),
            (_, n) => Err(Error::new(
                ErrorKind::RowCount,
                format!("query_one: expected exactly one row, the query returned {n}"),
            )),
        }
    }

    /// [`query`](Self::query) that keeps only the first row, and counts
    /// them all: no vector for the one row `query_one`/`query_opt` want.
    async fn query_first<S, P>(
        &self,
        statement: &S,
        params: P,
    ) -> Result<(Option<Row>, usize), Error>
    where
        S: ToStatement + ?Sized,
        P: Params,
    {
        let (mut first, mut count) = (None, 0usize);
        let ran = self
            .run_traced(statement, &params, |row| {
                count += 1;
                if first.is_none() {
                    first = Some(row);
                }
            })
            .await?;
        if let (Some(columns), Some(row)) = (ran.described, first.as_mut()) {
            row.set_columns(columns);
        }
        Ok((first, count))
    }

    /// Runs a statement that returns at most one row.
    pub(crate) async fn query_opt<S, P>(
        &self,
        statement: &S,
        params: P,
    ) -> Result<Option<Row>, Error>
    where
        S: ToStatement + ?Sized,
        P: Params,
    {
        match self.query_first(statement, params).await? {
            (row, 0 | 1) => Ok(row),
            (_, n) => Err(Error::new(
                ErrorKind::RowCount,
                format!("query_opt: expected at most one row, the query returned {n}"),
            )),
        }
    }

    /// Runs a statement and returns the rows it affected.
    pub(crate) async fn execute<S, P>(&self, statement: &S, params: P) -> Result<u64, Error>
    where
        S: ToStatement + ?Sized,
        P: Params,
    {
        let st = statement.to_statement();
        let run = self.run(st, &params, false, drop);
        let ran = observe::traced(
            "execute",
            Some(self.shared()),
            sql_of(&st),
            |r| r.affected,
            run,
        );
        Ok(ran.await?.affected)
    }

    /// Starts a [`Batch`] on this handle.
    pub(crate) fn batch(&self) -> Batch<'_> {
        Batch::new(self)
    }
}
