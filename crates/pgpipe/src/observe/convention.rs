//! How pgpipe's operations map onto the OpenTelemetry database semantic
//! conventions (checked against semantic-conventions v1.44.0: database
//! spans and metrics, PostgreSQL): which operations are database calls,
//! their `db.operation.name`, the span name, and the connection's
//! `db.namespace` / `server.address` / `server.port`.

use std::sync::Arc;

use crate::config::Host;

/// The operations that are no database call of their own: opening a
/// connection and waiting for one from a pool. Their spans stay (named
/// after the operation) but carry no `db.operation.name`, and their time
/// goes to `db.client.connection.create_time` / `.wait_time`, never to
/// `db.client.operation.duration`.
pub(crate) fn is_database_call(operation: &str) -> bool {
    !matches!(operation, "connect" | "pool.acquire")
}

/// `db.operation.name` of a client operation, where one operation name
/// describes the call. The conventions forbid taking it from the query
/// text, so the generic calls (`query`, `execute`, `simple_query`, ...),
/// which run whatever SQL they are given, have none; the calls that run
/// one known command name it. A batch of two or more statements (or
/// none) is `BATCH`; a batch of one is modeled as a single operation.
pub(crate) fn db_operation_name(
    operation: &str,
    batch_size: Option<usize>,
) -> Option<&'static str> {
    match operation {
        "commit" => Some("COMMIT"),
        "rollback" => Some("ROLLBACK"),
        "copy_in" | "copy_out" => Some("COPY"),
        "listen" => Some("LISTEN"),
        "notify" => Some("NOTIFY"),
        "batch" if batch_size != Some(1) => Some("BATCH"),
        _ => None,
    }
}

/// `db.operation.batch.size`: set for batches only, and never to 1.
pub(crate) fn batch_size(batch_size: Option<usize>) -> Option<u64> {
    batch_size.filter(|n| *n != 1).map(|n| n as u64)
}

/// The span name: `{db.query.summary}` if there is one, else
/// `{db.operation.name} {target}`, else `{target}`, else
/// `{db.system.name}`; the target is `db.collection.name`, else
/// `db.namespace`, else `server.address:server.port`. Operations that are
/// no database call are named after themselves.
pub(crate) fn span_name(
    operation: &'static str,
    db_operation: Option<&str>,
    summary: Option<&'static str>,
    collection: Option<&str>,
    target: Option<&Target>,
) -> std::borrow::Cow<'static, str> {
    use std::borrow::Cow;
    if let Some(summary) = summary {
        return Cow::Borrowed(summary);
    }
    if !is_database_call(operation) {
        return Cow::Borrowed(operation);
    }
    let place = match (collection, target) {
        (Some(c), _) => Some(c.to_owned()),
        (None, Some(t)) if !t.namespace.is_empty() => Some(t.namespace.to_string()),
        (None, Some(t)) => Some(format!("{}:{}", t.address, t.port)),
        (None, None) => None,
    };
    match (db_operation, place) {
        (Some(op), Some(place)) => Cow::Owned(format!("{op} {place}")),
        (Some(op), None) => Cow::Borrowed(op_static(op)),
        (None, Some(place)) => Cow::Owned(place),
        (None, None) => Cow::Borrowed("postgresql"),
    }
}

/// The `'static` name of a `db.operation.name` (they all are).
fn op_static(op: &str) -> &'static str {
    ["COMMIT", "ROLLBACK", "COPY", "LISTEN", "NOTIFY", "BATCH"]
        .into_iter()
        .find(|o| *o == op)
        .unwrap_or("postgresql")
}

/// What every operation on one connection reports about where it runs:
/// `db.namespace` (the database named at connect; PostgreSQL's
/// `{database}|{schema}` form would need the schema, which pgpipe does
/// not track, so the database alone, as the conventions allow),
/// `server.address` and `server.port`. Built once per connection and
/// shared by its operations' metrics.
#[derive(Debug)]
pub(crate) struct Target {
    pub(crate) namespace: Arc<str>,
    pub(crate) address: Arc<str>,
    pub(crate) port: u16,
}

impl Target {
    pub(crate) fn new(database: &str, host: &Host, port: u16) -> Target {
        let address: Arc<str> = match host {
            Host::Tcp(h) => Arc::from(h.as_str()),
            Host::Unix(dir) => Arc::from(dir.display().to_string()),
        };
        Target {
            namespace: Arc::from(database),
            address,
            port,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn target(db: &str) -> Target {
        Target::new(db, &Host::Tcp("db.example".into()), 5433)
    }

    #[test]
    fn span_names_follow_the_conventions() {
        let t = target("app");
        assert_eq!(
            span_name("query", None, Some("get_user"), None, Some(&t)),
            "get_user"
        );
        assert_eq!(span_name("query", None, None, None, Some(&t)), "app");
        assert_eq!(
            span_name("commit", Some("COMMIT"), None, None, Some(&t)),
            "COMMIT app"
        );
        assert_eq!(
            span_name(
                "copy_in",
                Some("COPY"),
                None,
                Some("mail.message"),
                Some(&t)
            ),
            "COPY mail.message"
        );
        assert_eq!(
            span_name("query", None, None, None, Some(&target(""))),
            "db.example:5433"
        );
        assert_eq!(
            span_name("listen", Some("LISTEN"), None, None, None),
            "LISTEN"
        );
        assert_eq!(span_name("query", None, None, None, None), "postgresql");
        assert_eq!(
            span_name("pool.acquire", None, None, None, None),
            "pool.acquire"
        );
    }

    #[test]
    fn operation_names_only_where_one_command_is_known() {
        assert_eq!(db_operation_name("query", None), None);
        assert_eq!(db_operation_name("execute", None), None);
        assert_eq!(db_operation_name("commit", None), Some("COMMIT"));
        assert_eq!(db_operation_name("copy_out", None), Some("COPY"));
        assert_eq!(db_operation_name("batch", Some(3)), Some("BATCH"));
        assert_eq!(db_operation_name("batch", Some(0)), Some("BATCH"));
        assert_eq!(db_operation_name("batch", Some(1)), None);
        assert_eq!(batch_size(Some(1)), None);
        assert_eq!(batch_size(Some(0)), Some(0));
        assert!(!is_database_call("connect"));
        assert!(!is_database_call("pool.acquire"));
        assert!(is_database_call("query"));
    }
}
