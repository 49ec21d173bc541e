//! A fresh database per test, for users' tests: the runtime behind
//! `#[pgpipe_testkit::test]`, usable without the macro too.

use std::future::Future;
use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};
use std::path::PathBuf;

use crate::cluster::Cluster;
use crate::database::{self, TestDatabase};
use crate::error::TestkitError;
use crate::url;

mod migrations;
mod outcome;
mod server;
mod template;

pub use outcome::TestOutcome;
pub use server::{test_server, DATABASE_URL_VAR};

/// What a test's fresh database starts with: a migrations folder (applied
/// once into a template that every test's database copies) and fixtures
/// (SQL run in each test's database, in order).
///
/// `#[pgpipe_testkit::test]` builds one from its arguments; build one
/// yourself for [`run_test`] or [`TestSpec::create_database`] without the
/// macro.
///
/// ```no_run
/// use pgpipe_testkit::TestSpec;
///
/// let spec = TestSpec::new("my_test")
///     .migrations(concat!(env!("CARGO_MANIFEST_DIR"), "/migrations"))
///     .fixture("users", "INSERT INTO users (name) VALUES ('ann')");
/// let db = spec.create_database()?; // dropped with `db`
/// println!("{}", db.superuser_url());
/// # Ok::<(), pgpipe_testkit::TestkitError>(())
/// ```
#[derive(Debug, Clone)]
pub struct TestSpec {
    name: String,
    migrations: Option<PathBuf>,
    fixtures: Vec<(String, String)>,
}

impl TestSpec {
    /// A spec for the test `name` (a path such as `module::test_fn`; its
    /// last segment goes into the database's name, and the whole of it
    /// into failure messages).
    pub fn new(name: impl Into<String>) -> TestSpec {
        TestSpec {
            name: name.into(),
            migrations: None,
            fixtures: Vec::new(),
        }
    }

    /// The folder of migrations: refinery-style `V<version>__<name>.sql`
    /// files, applied in version order, each as one simple-query string
    /// (several statements in one implicit transaction unless the file has
    /// its own `BEGIN`/`COMMIT`). Read when the first test of a process
    /// needs them.
    pub fn migrations(mut self, dir: impl Into<PathBuf>) -> TestSpec {
        self.migrations = Some(dir.into());
        self
    }

    /// Adds a fixture: `sql` run in the test's database after the
    /// migrations and the fixtures added before it; `label` names it in
    /// errors.
    pub fn fixture(mut self, label: impl Into<String>, sql: impl Into<String>) -> TestSpec {
        self.fixtures.push((label.into(), sql.into()));
        self
    }

    /// The name of the template database the migrations go into,
    /// `pgpipe_tpl_<hash of the folder's files>`, `None` without
    /// migrations. Templates stay on the server to be reused by later runs
    /// (on a throwaway cluster they go with it); a changed folder gets a
    /// new one. To remove one: `ALTER DATABASE <name> IS_TEMPLATE false`,
    /// then `DROP DATABASE <name>`.
    ///
    /// # Errors
    ///
    /// The folder cannot be read or holds a misnamed `.sql` file.
    pub fn template_name(&self) -> Result<Option<String>, TestkitError> {
        self.migrations
            .as_deref()
            .map(template::name_of)
            .transpose()
    }

    /// The test's name as given to [`TestSpec::new`].
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Creates the test's database on [`test_server`]: a copy of the
    /// migrations' template (built first if no process has built it yet),
    /// or of the server's default template without migrations, with the
    /// fixtures loaded. It is dropped when the returned value drops.
    ///
    /// # Errors
    ///
    /// The server cannot be started or reached, a migration or fixture
    /// fails (the message names the file or fixture and carries the
    /// server's error), or the migrations folder cannot be read.
    pub fn create_database(&self) -> Result<TestDatabase, TestkitError> {
        let cluster = test_server()?;
        self.create_on(cluster)
    }

    fn create_on(&self, cluster: &Cluster) -> Result<TestDatabase, TestkitError> {
        let addr = cluster.addresses();
        let template = match &self.migrations {
            Some(dir) => Some(template::template_for(addr, dir)?),
            None => None,
        };
        let hint = self.name.rsplit("::").next().unwrap_or(&self.name);
        let db = database::create_from(addr, hint, template.as_deref())?;
        if !self.fixtures.is_empty() {
            // A failure here drops the database again (db's Drop).
            let mut client = addr.connect(db.name())?;
            for (label, sql) in &self.fixtures {
                client.simple_query(sql).map_err(|e| {
                    e.context(format!("loading fixture {label} into {}", db.name()))
                })?;
            }
        }
        Ok(db)
    }
}

/// Runs one test against a fresh database: what `#[pgpipe_testkit::test]`
/// expands to.
///
/// Creates the database ([`TestSpec::create_database`]), then runs
/// `body(url)` (the URL of the new database, for the setup user) to
/// completion on a new single-threaded tokio runtime, and shuts the runtime
/// down, which closes the test's connections. A test that passes has its
/// database dropped. A test that panics or returns `Err` keeps it: its name
/// and URL (password hidden) are printed to stderr, and the failure goes on
/// to the test harness (the panic resumed, the `Err` as a panic with its
/// `Debug` text).
///
/// # Panics
///
/// When the database cannot be created (the message says why), and when
/// the test fails, as described above.
pub fn run_test<F, Fut>(spec: TestSpec, body: F)
where
    F: FnOnce(String) -> Fut,
    Fut: Future,
    Fut::Output: TestOutcome,
{
    let cluster = test_server().unwrap_or_else(|e| panic!("pgpipe-testkit: {}: {e}", spec.name));
    let db = spec
        .create_on(cluster)
        .unwrap_or_else(|e| panic!("pgpipe-testkit: {}: {e}", spec.name));
    let db_url = db.superuser_url();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap_or_else(|e| panic!("pgpipe-testkit: cannot build a tokio runtime: {e}"));
    let result = catch_unwind(AssertUnwindSafe(|| runtime.block_on(body(db_url.clone()))));
    // Ends the test's tasks and with them its connections, before the drop.
    drop(runtime);
    let failure = match result {
        Ok(output) => match output.into_outcome() {
            Ok(()) => return drop(db),
            Err(text) => Err(text),
        },
        Err(payload) => Ok(payload),
    };
    let name = db.keep();
    eprintln!(
        "pgpipe-testkit: test {} failed; its database {name} is kept: {}",
        spec.name,
        url::redact(&db_url)
    );
    if !cluster.is_external() {
        eprintln!(
            "pgpipe-testkit: (it lives in this process's throwaway cluster, deleted when the \
             process exits; set PGPIPE_TEST_URL or DATABASE_URL to a server of yours to look \
             at it afterwards)"
        );
    }
    match failure {
        Ok(payload) => resume_unwind(payload),
        Err(text) => panic!("test returned an error: {text}"),
    }
}
