//! Where a test server is and how to reach it for setup: the part of a
//! [`Cluster`](crate::Cluster) that its [`TestDatabase`](crate::TestDatabase)s share.

use std::path::PathBuf;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use crate::error::TestkitError;
use crate::mini_client::{Endpoint, Login, MiniClient};
use crate::roles::AuthRole;
use crate::server::SQL_TIMEOUT;
use crate::url;

/// What is needed to build URLs and reach the server for setup; shared with
/// [`TestDatabase`](crate::TestDatabase), which outlives no borrow of its cluster.
#[derive(Debug, Clone)]
pub(crate) struct Addresses {
    pub host: String,
    pub port: u16,
    pub socket_dir: PathBuf,
    pub superuser: String,
    pub superuser_password: Option<String>,
    /// The database setup connections use (CREATE/DROP DATABASE run there).
    pub admin_db: String,
    /// Where setup connections go: the private socket, or the external URL's host.
    pub setup: Endpoint,
    /// The external URL's query string, passed on in every URL (sslmode...).
    pub query: Option<String>,
    pub external: bool,
    /// Set while a testkit cluster is stopped ([`Cluster::stop`](crate::Cluster::stop)), so that
    /// a [`TestDatabase`](crate::TestDatabase) dropped meanwhile does not try to reach it.
    pub stopped: Arc<AtomicBool>,
}

impl Addresses {
    pub(crate) fn url(&self, role: AuthRole, dbname: &str) -> String {
        if self.external {
            return self.superuser_url(dbname);
        }
        url::build(
            role.user(),
            Some(role.password()),
            &self.host,
            self.port,
            dbname,
            None,
        )
    }

    pub(crate) fn superuser_url(&self, dbname: &str) -> String {
        url::build(
            &self.superuser,
            self.superuser_password.as_deref(),
            &self.host,
            self.port,
            dbname,
            self.query.as_deref(),
        )
    }

    pub(crate) fn socket_url(&self, role: AuthRole, dbname: &str) -> String {
        if self.external {
            // Only the URL's own host is known; if that was a socket
            // directory, this is a socket URL, otherwise TCP.
            return self.superuser_url(dbname);
        }
        let dir = self.socket_dir.to_string_lossy();
        url::build(
            role.user(),
            Some(role.password()),
            &dir,
            self.port,
            dbname,
            None,
        )
    }

    /// A setup session as the superuser.
    pub(crate) fn connect(&self, dbname: &str) -> Result<MiniClient, TestkitError> {
        MiniClient::connect(&Login {
            endpoint: self.setup.clone(),
            user: self.superuser.clone(),
            password: self.superuser_password.clone(),
            dbname: dbname.to_string(),
            timeout: SQL_TIMEOUT,
        })
    }
}
