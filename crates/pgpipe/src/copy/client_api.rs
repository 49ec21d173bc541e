//! The COPY methods of [`Client`].

use pgpipe_types::Params;

use super::copy_in::CopyIn;
use super::copy_out::CopyOut;
use super::typed::{
    describe_query, describe_target, forget_targets, BinaryCopyWriter, CopyOutRows,
};
use crate::observe::{Detail, Op};
use crate::query::ConnRef;
use crate::query::FromRow;
use crate::Error;

/// Runs the start of a COPY under the span of `operation`, and hands the
/// span to the COPY it started: the span covers the whole COPY, until it
/// finishes, fails, is aborted or is dropped.
async fn traced_copy<C, F>(
    client: &ConnRef,
    operation: &'static str,
    sql: Option<&str>,
    detail: Detail<'_>,
    start: F,
    attach: impl FnOnce(&mut C, Op),
) -> Result<C, Error>
where
    F: std::future::Future<Output = Result<C, Error>>,
{
    use tracing::Instrument;
    let op = Op::start_with(operation, Some(client.shared()), sql, detail);
    match start.instrument(op.span().clone()).await {
        Ok(mut copy) => {
            attach(&mut copy, op);
            Ok(copy)
        }
        Err(e) => Err(op.failed(e)),
    }
}

impl ConnRef {
    /// What [`Client::copy_in`](crate::Client::copy_in) runs.
    pub(crate) async fn copy_in(&self, sql: &str) -> Result<CopyIn, Error> {
        let start = CopyIn::start(self, sql);
        traced_copy(
            self,
            "copy_in",
            Some(sql),
            Detail::default(),
            start,
            CopyIn::set_op,
        )
        .await
    }

    /// What [`Client::copy_out`](crate::Client::copy_out) runs.
    pub(crate) async fn copy_out(&self, sql: &str) -> Result<CopyOut, Error> {
        let start = CopyOut::start(self, sql);
        traced_copy(
            self,
            "copy_out",
            Some(sql),
            Detail::default(),
            start,
            CopyOut::set_op,
        )
        .await
    }

    /// What [`Client::copy_in_rows`](crate::Client::copy_in_rows) runs.
    pub(crate) async fn copy_in_rows<T: Params + ?Sized>(
        &self,
        table: &str,
        columns: &[&str],
    ) -> Result<BinaryCopyWriter<T>, Error> {
        let columns = match T::column_names() {
            Some(names) if columns.is_empty() => names,
            _ => columns,
        };
        let start = async {
            let described = describe_target(self, table, columns).await?;
            let started = BinaryCopyWriter::start(self, table, columns, described).await;
            if started.is_err() {
                // The table may have changed under the cached description.
                forget_targets(self);
            }
            started
        };
        // A COPY into one table names it: `db.collection.name`.
        let detail = Detail {
            collection: Some(table),
            ..Detail::default()
        };
        traced_copy(
            self,
            "copy_in",
            None,
            detail,
            start,
            BinaryCopyWriter::set_op,
        )
        .await
    }

    /// What [`Client::copy_out_rows`](crate::Client::copy_out_rows) runs.
    pub(crate) async fn copy_out_rows<T: FromRow>(
        &self,
        query: &str,
    ) -> Result<CopyOutRows<T>, Error> {
        let start = async {
            let columns = describe_query(self, query).await?;
            CopyOutRows::start(self, query, columns).await
        };
        traced_copy(
            self,
            "copy_out",
            Some(query),
            Detail::default(),
            start,
            CopyOutRows::set_op,
        )
        .await
    }
}
