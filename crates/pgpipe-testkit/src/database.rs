//! Fresh databases, one per test, dropped afterwards.

use std::sync::atomic::{AtomicU64, Ordering};

use crate::addresses::Addresses;
use crate::error::TestkitError;
use crate::roles::{quote_ident, AuthRole};

/// Makes names unique within the process; the pid makes them unique across
/// test processes sharing an external server.
static COUNTER: AtomicU64 = AtomicU64::new(0);

/// PostgreSQL truncates identifiers longer than this (NAMEDATALEN - 1).
const MAX_IDENT: usize = 63;

/// A database created by [`Cluster::create_database`](crate::Cluster::create_database).
///
/// Dropped with `DROP DATABASE ... WITH (FORCE)` (sessions still connected are
/// terminated) when this value drops; best-effort: a failure is printed, not
/// raised, and a stopped cluster takes its databases with it anyway. While
/// its cluster is stopped ([`Cluster::stop`](crate::Cluster::stop)) nothing
/// is attempted.
///
/// On a streaming standby ([`Cluster::start_standby`](crate::Cluster::start_standby))
/// the primary's databases replicate: reach one there with
/// `standby.url(role, db.name())`. This value always drops the database on
/// the cluster that created it, never on a standby.
#[derive(Debug)]
pub struct TestDatabase {
    name: String,
    addr: Addresses,
    /// Set by [`TestDatabase::keep`]: the drop leaves the database alone.
    kept: bool,
}

impl TestDatabase {
    /// The database's name (the same on a standby of its cluster).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The URL for `role` over TCP (see [`Cluster::url`](crate::Cluster::url)).
    pub fn url(&self, role: AuthRole) -> String {
        self.addr.url(role, &self.name)
    }

    /// The URL for `role` over the Unix socket (see
    /// [`Cluster::socket_url`](crate::Cluster::socket_url)).
    pub fn socket_url(&self, role: AuthRole) -> String {
        self.addr.socket_url(role, &self.name)
    }

    /// The superuser's URL for this database.
    pub fn superuser_url(&self) -> String {
        self.addr.superuser_url(&self.name)
    }

    /// Keeps the database on the server instead of dropping it, for a look
    /// after a failed test; returns its name. On a throwaway cluster it
    /// still goes when the cluster does (at process exit for
    /// [`Cluster::shared`](crate::Cluster::shared)).
    pub fn keep(mut self) -> String {
        self.kept = true;
        std::mem::take(&mut self.name)
    }
}

impl Drop for TestDatabase {
    fn drop(&mut self) {
        if self.kept || self.addr.stopped.load(Ordering::SeqCst) {
            return;
        }
        if let Err(e) = drop_database(&self.addr, &self.name) {
            eprintln!(
                "pgpipe-testkit: could not drop test database {}: {e}",
                self.name
            );
        }
    }
}

pub(crate) fn create(addr: &Addresses, hint: &str) -> Result<TestDatabase, TestkitError> {
    let db = create_from(addr, hint, None)?;
    let name = db.name.clone();
    let ctx = |e: TestkitError| e.context(format!("creating test database {name}"));
    // From here on, a failure drops the database again (db's Drop).
    // PostgreSQL 15 no longer lets PUBLIC create in schema public. CREATE
    // on the database lets every test role create schemas and trusted
    // extensions (hstore, citext) as an application owner would.
    addr.connect(&name)
        .and_then(|mut c| {
            c.simple_query(&format!(
                "GRANT ALL ON SCHEMA public TO PUBLIC; GRANT ALL ON DATABASE {} TO PUBLIC",
                quote_ident(&name)
            ))
        })
        .map_err(ctx)?;
    Ok(db)
}

/// `CREATE DATABASE` with a unique name from `hint`, a copy of `template`
/// (the server's default, template1, when `None`), owned by the setup user.
pub(crate) fn create_from(
    addr: &Addresses,
    hint: &str,
    template: Option<&str>,
) -> Result<TestDatabase, TestkitError> {
    let name = unique_name(
        hint,
        std::process::id(),
        COUNTER.fetch_add(1, Ordering::Relaxed),
    );
    let mut sql = format!("CREATE DATABASE {}", quote_ident(&name));
    if let Some(template) = template {
        sql.push_str(&format!(" TEMPLATE {}", quote_ident(template)));
    }
    // CREATE DATABASE cannot run in a transaction block, so it is alone.
    addr.connect(&addr.admin_db)
        .and_then(|mut c| c.simple_query(&sql))
        .map_err(|e| e.context(format!("creating test database {name}")))?;
    Ok(TestDatabase {
        name,
        addr: addr.clone(),
        kept: false,
    })
}

pub(crate) fn drop_database(addr: &Addresses, name: &str) -> Result<(), TestkitError> {
    let mut client = addr.connect(&addr.admin_db)?;
    let ident = quote_ident(name);
    match client.simple_query(&format!("DROP DATABASE IF EXISTS {ident} WITH (FORCE)")) {
        // Before PostgreSQL 13 there is no FORCE option.
        Err(e) if e.code() == Some("42601") => client
            .simple_query(&format!("DROP DATABASE IF EXISTS {ident}"))
            .map(|_| ()),
        other => other.map(|_| ()),
    }
}

/// `pgpipe_<hint>_<pid>_<n>`: lowercase ASCII letters, digits and `_` only
/// (no quoting surprises in tests that splice the name into SQL), at most 63
/// bytes, with the unique suffix always kept whole.
pub(crate) fn unique_name(hint: &str, pid: u32, n: u64) -> String {
    let suffix = format!("_{pid}_{n}");
    let prefix = "pgpipe_";
    let room = MAX_IDENT - prefix.len() - suffix.len();
    let hint: String = hint
        .chars()
        .map(|c| match c.to_ascii_lowercase() {
            c @ ('a'..='z' | '0'..='9' | '_') => c,
            _ => '_',
        })
        .take(room)
        .collect();
    let hint = if hint.is_empty() {
        "db".to_string()
    } else {
        hint
    };
    format!("{prefix}{hint}{suffix}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_safe_unique_and_short() {
        assert_eq!(unique_name("Auth Test!", 42, 7), "pgpipe_auth_test__42_7");
        assert_eq!(unique_name("", 1, 2), "pgpipe_db_1_2");
        let long = unique_name(&"x".repeat(200), u32::MAX, u64::MAX);
        assert!(long.len() <= MAX_IDENT, "{long}");
        assert!(long.ends_with(&format!("_{}_{}", u32::MAX, u64::MAX)));
        assert_ne!(unique_name("a", 1, 1), unique_name("a", 1, 2));
        assert_eq!(unique_name("ünï", 1, 1), "pgpipe__n__1_1");
    }
}
