//! Connection assembly: open an authenticated session (`connect/`), start
//! its driver and session state, hand back the `Client`; multi-host and
//! `target_session_attrs`.

use std::sync::Arc;

use crate::config::{Config, QueryMode, ResolvedConfig, TargetSessionAttrs};
use crate::connect::open::{self, Opened};
use crate::connect::Password;
use crate::driver::{Connection, Shared};
use crate::error::ErrorKind;
use crate::observe::Target;
use crate::session::Session;
use crate::{Client, Error, SimpleQueryMessage};

/// Connects to the server described by `url` (a `postgres://` URL or a
/// `key=value` conninfo string) and spawns the connection driver on the
/// current tokio runtime.
///
/// Values missing from the string come from the `PG*` environment variables
/// and `~/.pgpass`, as with libpq; the password file is read only if the
/// server asks for a password and none is configured.
///
/// ```no_run
/// # async fn f() -> Result<(), pgpipe::Error> {
/// let client = pgpipe::connect("postgres://app:secret@localhost/app").await?;
/// let row = client.query_one("SELECT $1::int4 + 1", (41i32,)).await?;
/// assert_eq!(row.get::<i32, _>(0), 42);
/// # Ok(()) }
/// ```
///
/// # Panics
///
/// Outside a tokio runtime (it spawns the driver); use
/// [`connect_with_driver`] to run the driver yourself.
pub async fn connect(url: &str) -> Result<Client, Error> {
    Config::parse(url).map_err(Error::from)?.connect().await
}

/// Like [`connect`], but returns the connection driver instead of spawning
/// it: poll it (e.g. spawn it on your executor) for the client to work.
///
/// # Drop behavior
///
/// The returned [`Connection`] is the connection: if it is dropped before
/// it completes (dropped unpolled, its task aborted, or the runtime that
/// runs it shut down), the connection ends at once, and every pending and
/// every later request of the [`Client`] (and its clones) fails right away
/// with an [`ErrorKind::Closed`] error
/// ([`Error::is_closed`]), never hangs. A client used from another runtime
/// than the driver's thus fails cleanly once that runtime is gone.
pub async fn connect_with_driver(url: &str) -> Result<(Client, Connection), Error> {
    Config::parse(url)
        .map_err(Error::from)?
        .connect_with_driver()
        .await
}

impl Config {
    /// Connects and spawns the driver on the current tokio runtime. See
    /// [`connect`].
    pub async fn connect(&self) -> Result<Client, Error> {
        let (client, connection) = self.connect_with_driver().await?;
        tokio::spawn(async move {
            if let Err(e) = connection.await {
                tracing::debug!("connection closed with an error: {e}");
            }
        });
        Ok(client)
    }

    /// Connects and returns the driver for you to poll. See
    /// [`connect_with_driver`].
    pub async fn connect_with_driver(&self) -> Result<(Client, Connection), Error> {
        let connect = self.connect_untraced();
        crate::observe::traced("connect", None, None, |_| 0, connect).await
    }

    async fn connect_untraced(&self) -> Result<(Client, Connection), Error> {
        let (resolved, password_file) = self.resolve_for_connect().map_err(Error::from)?;
        open::check_supported(&resolved)?;
        let order = open::order(&resolved);
        // prefer-standby: a standby if any host is one, else whatever answers.
        let passes: &[TargetSessionAttrs] = match resolved.target_session_attrs {
            TargetSessionAttrs::PreferStandby => {
                &[TargetSessionAttrs::Standby, TargetSessionAttrs::Any]
            }
            ref other => std::slice::from_ref(other),
        };
        let mut failures = Vec::new();
        for wanted in passes {
            for &index in &order {
                let target = &resolved.targets[index];
                let password = Password::new(&resolved, &password_file, index);
                let (client, mut connection) = match open::open(&resolved, target, &password).await
                {
                    Ok(opened) => start(&resolved, opened),
                    Err(e) => {
                        failures.push(e);
                        continue;
                    }
                };
                match session_matches(&client, &mut connection, *wanted).await {
                    Ok(true) => return Ok((client, connection)),
                    // Dropping both closes the socket: the server sees EOF.
                    Ok(false) => failures.push(Error::new(
                        ErrorKind::Connect,
                        format!(
                            "{} does not match target_session_attrs={}",
                            open::describe(target),
                            wanted.as_str()
                        ),
                    )),
                    Err(e) => {
                        failures.push(e.context(format!("checking {}", open::describe(target))))
                    }
                }
            }
        }
        Err(open::combine(failures))
    }
}

/// Whether a fresh session is what `wanted` asks for. PostgreSQL 14+
/// reports `in_hot_standby` and `default_transaction_read_only` at startup;
/// older servers are asked.
async fn session_matches(
    client: &Client,
    connection: &mut Connection,
    wanted: TargetSessionAttrs,
) -> Result<bool, Error> {
    if wanted == TargetSessionAttrs::Any {
        return Ok(true);
    }
    let reported = (
        client.parameter("in_hot_standby"),
        client.parameter("default_transaction_read_only"),
    );
    let (hot_standby, read_only) = match reported {
        (Some(hot), Some(ro)) => (hot == "on", ro == "on"),
        _ => {
            // The driver is not spawned yet: poll it while the query runs.
            let ask = client.simple_query(
                "SELECT pg_is_in_recovery()::text, current_setting('transaction_read_only')",
            );
            let rows = tokio::select! {
                rows = ask => rows?,
                end = &mut *connection => {
                    end?;
                    return Err(Error::closed());
                }
            };
            let row = rows
                .iter()
                .find_map(|m| match m {
                    SimpleQueryMessage::Row(r) => Some(r),
                    _ => None,
                })
                .ok_or_else(|| Error::protocol("the session check returned no row"))?;
            (
                row.try_get(0)? == Some("true"),
                row.try_get(1)? == Some("on"),
            )
        }
    };
    Ok(match wanted {
        TargetSessionAttrs::Any => true,
        TargetSessionAttrs::ReadWrite => !hot_standby && !read_only,
        TargetSessionAttrs::ReadOnly => hot_standby || read_only,
        TargetSessionAttrs::Primary => !hot_standby,
        TargetSessionAttrs::Standby | TargetSessionAttrs::PreferStandby => hot_standby,
    })
}

/// Starts the driver and the session state of an opened session.
fn start(config: &ResolvedConfig, opened: Opened) -> (Client, Connection) {
    // Unnamed mode never creates a named statement: no cache at all.
    let cache_capacity = match config.query_mode {
        QueryMode::Unnamed => 0,
        _ => config.statement_cache_capacity,
    };
    let (process_id, secret_key) = (opened.cancel.process_id, opened.cancel.legacy_secret_key());
    let mut shared = Shared::new(
        cache_capacity,
        opened.encoder,
        process_id,
        secret_key,
        config.query_timeout,
    );
    shared.coalesce = config.coalesce_sync;
    let shared = Arc::new(shared);
    let state = Arc::new(Session::new(
        shared.clone(),
        opened.parameters,
        opened.cancel,
    ));
    let target = Target::new(&config.dbname, &state.cancel.host, state.cancel.port);
    let _ = state.target.set(Arc::new(target));
    let tls = opened.socket.is_tls();
    let fd = opened.socket.tcp_fd();
    let connection = Connection::new(
        Box::new(opened.socket),
        tls,
        shared,
        state.clone(),
        opened.decoder,
        opened.leftover,
        fd,
    );
    (Client::new(state), connection)
}
