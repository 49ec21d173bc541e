//! Preparing a named statement: Parse and Describe, then the user-defined
//! parameter and column types looked up.

use std::sync::Arc;

use pgpipe_proto::frontend::{self, Target};
use pgpipe_types::Type;

use super::conn::ConnRef;
use super::{encode_error, Column, Event, Reply, Statement};
use crate::driver::Request;
use crate::observe;
use crate::Error;

impl ConnRef {
    /// Prepares a named statement, the server inferring every parameter type.
    pub(crate) async fn prepare(&self, sql: &str) -> Result<Statement, Error> {
        self.prepare_typed(sql, &[]).await
    }

    /// Prepares a named statement, declaring the first `types.len()`
    /// parameter types.
    pub(crate) async fn prepare_typed(
        &self,
        sql: &str,
        types: &[Type],
    ) -> Result<Statement, Error> {
        let prepare = self.prepare_untraced(sql, types);
        observe::traced("prepare", Some(self.shared()), Some(sql), |_| 0, prepare).await
    }

    async fn prepare_untraced(&self, sql: &str, types: &[Type]) -> Result<Statement, Error> {
        let name = self.shared().next_statement_name();
        let oids: Vec<u32> = types.iter().map(Type::oid).collect();
        let mut responses = self
            .shared()
            .send(self.session, Request::Statement, |enc, buf| {
                enc.parse(&name, sql, &oids, buf).map_err(encode_error)?;
                enc.describe(Target::Statement, &name, buf)
                    .map_err(encode_error)?;
                frontend::sync(buf);
                Ok(())
            })
            .await?;
        let mut params = Vec::new();
        let mut columns: Arc<[Column]> = Arc::from(Vec::new());
        let mut reply = Reply::without_bind();
        loop {
            let (tag, body) = responses.next_raw().await.map_err(|e| reply.cut_short(e))?;
            match reply.event(tag, body) {
                Event::Ready => break,
                Event::Step | Event::NoRows | Event::Failed => {}
                Event::Params(desc) => params = desc.types().map(Type::from_oid).collect(),
                Event::Columns(desc) => {
                    columns = desc
                        .fields()
                        .map(|f| Column::from_field(&f, &self.shared().types))
                        .collect();
                }
                other => reply.unexpected_event(other, "while preparing"),
            }
        }
        if let Some(e) = reply.take_error() {
            return Err(self.shared().request_failed(e));
        }
        // Describe user-defined parameter and column types now, so values
        // are checked and encoded against their real types.
        let statement = Statement::new(name, sql.to_owned(), Vec::new(), columns, self.shared());
        let unknown: Vec<u32> = params
            .iter()
            .map(Type::oid)
            .filter(|&oid| !self.shared().types.knows(oid))
            .collect();
        if !unknown.is_empty() {
            self.describe_types(&unknown).await?;
        }
        let params = params
            .iter()
            .map(|t| self.shared().types.get(t.oid()))
            .collect();
        let columns = match self.resolve_columns(statement.columns()).await? {
            Some(described) => described,
            None => statement.shared_columns().clone(),
        };
        Ok(statement.with_types(params, columns))
    }
}
