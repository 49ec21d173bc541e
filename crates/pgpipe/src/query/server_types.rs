//! Parameters that can only be encoded for the types the server inferred
//! (`Encode::needs_server_type`: values written for tokio-postgres's
//! `ToSql`, which declare no type of their own). Their types come from the
//! statement cache when the statement has run on this connection, else from
//! one Parse + Describe round trip of the unnamed statement; the values are
//! checked against them before the statement is sent.

use std::sync::Arc;

use pgpipe_proto::frontend::{self, ParamWriter, Target};
use pgpipe_proto::EncodeError;
use pgpipe_types::{Oid, Params, Type, TypeRef};

use super::conn::ConnRef;
use super::{encode_error, param_type_error, Event, Reply};
use crate::driver::Request;
use crate::error::ErrorKind;
use crate::Error;

/// Parameters with the server's types for them: Parse still declares what
/// the values declare (so the statement cache's key is the same), Bind
/// encodes each value for the type the server inferred.
pub(crate) struct Described<'p, P: ?Sized> {
    params: &'p P,
    oids: Vec<Oid>,
    types: Arc<[Type]>,
    /// Learnt with a round trip now: worth keeping in the statement cache.
    fetched: bool,
}

impl<P: Params + ?Sized> Params for Described<'_, P> {
    fn len(&self) -> usize {
        self.params.len()
    }
    fn with_type_oids<R>(&self, f: impl FnOnce(&[Oid]) -> R) -> R {
        f(&self.oids)
    }
    fn has_named_types(&self) -> bool {
        self.params.has_named_types()
    }
    fn needs_server_types(&self) -> bool {
        false
    }
    fn type_refs(&self) -> Vec<TypeRef> {
        self.params.type_refs()
    }
    fn check_types(&self, types: &[Type]) -> Result<(), (usize, &'static str)> {
        self.params.check_types(types)
    }
    fn encode(
        &self,
        types: Option<&[Type]>,
        writer: &mut ParamWriter<'_>,
    ) -> Result<(), EncodeError> {
        self.params
            .encode(Some(types.unwrap_or(&self.types)), writer)
    }
}

impl<P: ?Sized> Described<'_, P> {
    /// Whether the types were learnt with a round trip now, which also
    /// described the result's column types on this connection.
    pub(crate) fn fetched(&self) -> bool {
        self.fetched
    }

    /// Keeps the types with the statement the query just parsed (or hit)
    /// in the cache, so the next query of the same SQL needs no Describe.
    pub(crate) fn remember(&self, conn: &ConnRef, sql: &str) {
        if self.fetched {
            conn.shared()
                .with_cache(|c| c.set_param_types(sql, &self.oids, &self.types));
        }
    }
}

impl ConnRef {
    /// The server's parameter types for `sql` with `params`, checked
    /// against the values: from the statement cache, or with one round trip.
    pub(crate) async fn describe_params<'p, P: Params + ?Sized>(
        &self,
        sql: &str,
        params: &'p P,
    ) -> Result<Described<'p, P>, Error> {
        let oids: Vec<Oid> = params.with_type_oids(<[Oid]>::to_vec);
        let cached = self.shared().with_cache(|c| c.param_types(sql, &oids));
        let fetched = cached.is_none();
        let types = match cached {
            Some(types) => types,
            None => self.fetch_param_types(sql, &oids).await?,
        };
        if types.len() != params.len() {
            return Err(Error::new(
                ErrorKind::ParameterCount,
                format!(
                    "the statement takes {} parameter(s) but {} were given: {sql}",
                    types.len(),
                    params.len()
                ),
            ));
        }
        params
            .check_types(&types)
            .map_err(|(i, rust)| param_type_error(i, rust, &types[i]))?;
        Ok(Described {
            params,
            oids,
            types,
            fetched,
        })
    }

    /// Makes sure every column type of `sql`'s result is described on this
    /// connection before the statement runs, for a stream, which hands rows
    /// out as they arrive and so cannot stop for a catalog look-up after its
    /// RowDescription. Free when the statement cache already holds the
    /// statement's columns (every run after the first on this connection);
    /// otherwise one Parse + Describe round trip, plus the look-up when a
    /// column's type is new to the connection.
    pub(crate) async fn describe_result_types<P: Params + ?Sized>(
        &self,
        sql: &str,
        params: &P,
    ) -> Result<(), Error> {
        // The hot path (every stream after the first of its SQL text):
        // described columns in the cache, checked without allocating.
        let kept = params.with_type_oids(|oids| self.shared().with_cache(|c| c.columns(sql, oids)));
        if kept
            .as_ref()
            .is_some_and(|cols| cols.iter().all(|c| c.type_().is_known()))
        {
            return Ok(());
        }
        let oids: Vec<Oid> = params.with_type_oids(<[Oid]>::to_vec);
        let Some(kept) = kept else {
            return self.fetch_statement_types(sql, &oids).await.map(|_| ());
        };
        // Kept by a run that did not look its column types up (`execute`),
        // or before the registry was cleared: describe them now.
        if let Some(described) = self.resolve_columns(&kept).await? {
            self.shared()
                .with_cache(|c| c.replace_columns(sql, &oids, &described));
        }
        Ok(())
    }

    /// The server's parameter types for `sql`; its result's column types
    /// are described in the registry on the way (the same Describe answers
    /// both), so a stream of it decodes user-defined columns.
    async fn fetch_param_types(&self, sql: &str, oids: &[Oid]) -> Result<Arc<[Type]>, Error> {
        let params = self.fetch_statement_types(sql, oids).await?;
        let registry = &self.shared().types;
        Ok(params.iter().map(|&oid| registry.get(oid)).collect())
    }

    /// Parse + Describe of the unnamed statement + Sync: one round trip, in
    /// this handle's reservation (a transaction's statement is described
    /// inside it). The unnamed statement is safe on a shared connection:
    /// one request's messages reach the server together, in order.
    /// User-defined parameter and column types are then described from the
    /// catalog (once per connection); returns the parameter type OIDs.
    async fn fetch_statement_types(&self, sql: &str, oids: &[Oid]) -> Result<Vec<Oid>, Error> {
        super::refuse::refuse_copy_from_stdin(sql)?;
        let asked = async {
            let mut responses = self
                .shared()
                .send(self.session, Request::Statement, |enc, buf| {
                    enc.parse("", sql, oids, buf).map_err(encode_error)?;
                    enc.describe(Target::Statement, "", buf)
                        .map_err(encode_error)?;
                    frontend::sync(buf);
                    Ok(())
                })
                .await?;
            let mut params: Vec<Oid> = Vec::new();
            let mut columns: Vec<Oid> = Vec::new();
            let mut reply = Reply::without_bind();
            loop {
                let (tag, body) = responses.next_raw().await.map_err(|e| reply.cut_short(e))?;
                match reply.event(tag, body) {
                    Event::Ready => break,
                    Event::Step | Event::NoRows | Event::Failed => {}
                    Event::Params(desc) => params = desc.types().collect(),
                    Event::Columns(desc) => columns = desc.fields().map(|f| f.type_oid).collect(),
                    other => reply.unexpected_event(other, "while describing the statement"),
                }
            }
            match reply.take_error() {
                Some(e) => Err(self.shared().request_failed(e)),
                None => Ok((params, columns)),
            }
        };
        let (params, columns) = match self.timeout {
            None => asked.await?,
            Some(limit) => tokio::time::timeout(limit, asked).await.map_err(|_| {
                Error::new(
                    ErrorKind::Timeout,
                    format!("describing the statement timed out after {limit:?}"),
                )
            })??,
        };
        // User-defined types (enums, composites, domains, their arrays) are
        // described from the catalog, once per connection, so `accepts`
        // sees their names and kinds: the parameters' for the encoders, the
        // columns' for a stream's rows.
        let registry = &self.shared().types;
        let mut unknown: Vec<Oid> = params
            .iter()
            .chain(&columns)
            .copied()
            .filter(|&oid| oid != 0 && !registry.knows(oid))
            .collect();
        unknown.sort_unstable();
        unknown.dedup();
        if !unknown.is_empty() {
            self.describe_types(&unknown).await?;
        }
        Ok(params)
    }
}
