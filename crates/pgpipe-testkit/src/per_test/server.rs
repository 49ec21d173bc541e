//! Which server the per-test databases live on: `PGPIPE_TEST_URL`, else
//! `DATABASE_URL`, else the process's throwaway cluster.

use std::sync::OnceLock;

use crate::cluster::{test_url, Cluster};
use crate::error::TestkitError;

/// The environment variable sqlx users already set; read when
/// `PGPIPE_TEST_URL` is not set.
pub const DATABASE_URL_VAR: &str = "DATABASE_URL";

static FROM_DATABASE_URL: OnceLock<Result<Cluster, TestkitError>> = OnceLock::new();

/// The server [`run_test`](crate::run_test) creates its databases on, set
/// up on first use (thread-safe, once per process):
///
/// 1. `PGPIPE_TEST_URL`, when set: [`Cluster::shared`] points at it;
/// 2. `DATABASE_URL`, when set;
/// 3. otherwise [`Cluster::shared`]: a throwaway cluster started by the
///    first test of the process and deleted when the process exits.
///
/// The URL's user must be allowed to create databases.
pub fn test_server() -> Result<&'static Cluster, TestkitError> {
    if test_url().is_none() {
        if let Some(url) = database_url() {
            return FROM_DATABASE_URL
                .get_or_init(|| Cluster::external(DATABASE_URL_VAR, &url))
                .as_ref()
                .map_err(Clone::clone);
        }
    }
    Cluster::shared()
}

fn database_url() -> Option<String> {
    std::env::var(DATABASE_URL_VAR)
        .ok()
        .filter(|u| !u.trim().is_empty())
}
