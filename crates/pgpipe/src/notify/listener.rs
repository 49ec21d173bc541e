//! [`Listener`]: LISTEN on a connection of its own that survives
//! reconnects.
//!
//! One task owns the listener's connection. It LISTENs to every channel
//! someone subscribes to, pings the server when idle, and when the
//! connection is lost (or a ping goes unanswered) reconnects with
//! exponential backoff, always to a read-write server (LISTEN is refused
//! on a standby), re-issues every LISTEN, and only then tells each
//! subscriber with one `Gap { reason: Reconnected }`.

use std::sync::atomic::{AtomicI32, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::{mpsc, oneshot};

use super::command::Command;
use super::event::GapReason;
use super::hub::Hub;
use super::subscription::{Notifications, Owner};
use super::{check_channel, listen_sql, unlisten_sql, DEFAULT_BUFFER};
use crate::config::{ConfigError, IntoConfig};
use crate::error::ErrorKind;
use crate::{Client, Config, Error, TargetSessionAttrs};

/// Counters of a [`Listener`] (see [`Listener::stats`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct ListenerStats {
    /// Times the connection was re-established.
    pub reconnects: u64,
    /// Notifications handed to subscribers (once per subscriber).
    pub delivered: u64,
    /// Notifications dropped because a subscriber's buffer was full.
    pub lagged: u64,
    /// Gaps yielded or queued (lagged and reconnected).
    pub gaps: u64,
    /// The most notifications any one subscriber held unread: at most the
    /// buffer bound.
    pub peak_buffered: usize,
}

/// How a [`Listener`] behaves; from [`Listener::builder`].
#[derive(Debug, Clone)]
pub struct ListenerBuilder {
    config: Config,
    /// Why the connection string given to [`Listener::builder`] was
    /// refused: reported by `connect`.
    invalid: Option<ConfigError>,
    buffer: usize,
    ping_interval: Duration,
    backoff_min: Duration,
    backoff_max: Duration,
    subscribe_timeout: Duration,
}

impl ListenerBuilder {
    /// Each subscriber's buffer, in notifications (default 1024). A
    /// subscriber that falls further behind gets a lagged [`Gap`](super::Event::Gap).
    pub fn buffer(mut self, notifications: usize) -> Self {
        self.buffer = notifications.max(1);
        self
    }

    /// How often an idle listener checks that its connection is alive
    /// (default 30 s); a ping unanswered for as long counts as a lost
    /// connection, so a dead peer is noticed within about twice this.
    pub fn ping_interval(mut self, interval: Duration) -> Self {
        self.ping_interval = interval.max(Duration::from_millis(10));
        self
    }

    /// The first and the longest wait between reconnection attempts
    /// (default 100 ms doubling up to 10 s).
    pub fn reconnect_backoff(mut self, first: Duration, longest: Duration) -> Self {
        self.backoff_min = first;
        self.backoff_max = longest.max(first);
        self
    }

    /// How long [`Listener::listen`] waits for its LISTEN, including for a
    /// reconnection under way (default 30 s).
    pub fn subscribe_timeout(mut self, timeout: Duration) -> Self {
        self.subscribe_timeout = timeout;
        self
    }

    /// Connects and starts the listener (see [`Listener`]).
    pub async fn connect(self) -> Result<Listener, Error> {
        if let Some(e) = &self.invalid {
            return Err(e.clone().into());
        }
        let hub = Arc::new(Hub::new(true));
        let live = open(&self.config, &hub).await?;
        let pid = Arc::new(AtomicI32::new(live.client.backend_pid()));
        let reconnects = Arc::new(AtomicU64::new(0));
        let (commands, rx) = mpsc::unbounded_channel();
        tokio::spawn(run(
            live,
            rx,
            Task {
                builder: self.clone(),
                hub: hub.clone(),
                pid: pid.clone(),
                reconnects: reconnects.clone(),
            },
        ));
        Ok(Listener {
            hub,
            commands,
            buffer: self.buffer,
            subscribe_timeout: self.subscribe_timeout,
            pid,
            reconnects,
        })
    }
}

/// LISTEN/NOTIFY on a connection of its own, as streams that survive
/// reconnects.
///
/// Any number of subscribers, each to one or more channels, share the
/// listener's one connection; each gets the notifications of its channels
/// in order, in a bounded buffer (see [`Notifications`]).
///
/// When the connection is lost (the server restarts, the backend is
/// terminated, a failover, or the liveness ping goes unanswered) the
/// listener reconnects with backoff, always to a read-write server
/// (`target_session_attrs=read-write` is forced: LISTEN is refused on a
/// standby, and after a failover the new primary is found among the
/// configured hosts), re-issues every LISTEN, and **then** yields one
/// `Gap { reason: Reconnected }` to every subscriber: notifications sent
/// meanwhile are lost, so resynchronise from the database. Nothing is
/// yielded as if no time had passed.
///
/// Channel names are quoted identifiers: any name is safe.
///
/// ```no_run
/// # async fn f() -> Result<(), pgpipe::Error> {
/// use pgpipe::{Event, Listener};
/// let listener = Listener::connect("postgres://app@db1,db2/mail").await?;
/// let mut inbox = listener.listen("new_mail").await?;
/// while let Some(event) = inbox.next().await {
///     match event? {
///         Event::Notification(n) => println!("mailbox {} changed", n.payload()),
///         Event::Gap { reason } => println!("resync needed: {reason}"),
///         _ => {}
///     }
/// }
/// # Ok(()) }
/// ```
///
/// The listener's connection closes when the `Listener` and all its
/// subscriptions are dropped.
pub struct Listener {
    hub: Arc<Hub>,
    commands: mpsc::UnboundedSender<Command>,
    buffer: usize,
    subscribe_timeout: Duration,
    pid: Arc<AtomicI32>,
    reconnects: Arc<AtomicU64>,
}

impl Listener {
    /// Connects a listener with default settings to the server(s) of a
    /// connection URL or keyword/value string.
    pub async fn connect(url: &str) -> Result<Listener, Error> {
        Listener::builder(url).connect().await
    }

    /// A listener for `config` (a [`Config`], or a connection URL or
    /// keyword/value string), to be adjusted, then
    /// [`connect`](ListenerBuilder::connect)ed. A string that does not
    /// parse is reported by `connect`.
    ///
    /// ```no_run
    /// # async fn f() -> Result<(), pgpipe::Error> {
    /// use std::time::Duration;
    /// let listener = pgpipe::Listener::builder("postgres://app@localhost/app")
    ///     .ping_interval(Duration::from_secs(10))
    ///     .connect()
    ///     .await?;
    /// # Ok(()) }
    /// ```
    pub fn builder(config: impl IntoConfig) -> ListenerBuilder {
        let (config, invalid) = match config.into_config() {
            Ok(config) => (config, None),
            Err(e) => (Config::default(), Some(e)),
        };
        ListenerBuilder {
            config,
            invalid,
            buffer: DEFAULT_BUFFER,
            ping_interval: Duration::from_secs(30),
            backoff_min: Duration::from_millis(100),
            backoff_max: Duration::from_secs(10),
            subscribe_timeout: Duration::from_secs(30),
        }
    }

    /// Subscribes to one channel (see [`subscribe`](Self::subscribe)).
    pub async fn listen(&self, channel: &str) -> Result<Notifications, Error> {
        self.subscribe(&[channel]).await
    }

    /// Subscribes to several channels in one stream (in order per
    /// channel). Returns once the server LISTENs to all of them, so every
    /// notification sent after this returns is delivered (or reported as
    /// a gap).
    pub async fn subscribe(&self, channels: &[&str]) -> Result<Notifications, Error> {
        // The listener's connection belongs to its task (and changes on
        // reconnect): the span has no server fields.
        let subscribe = self.subscribe_untraced(channels);
        crate::observe::traced("listen", None, None, |_| 0, subscribe).await
    }

    async fn subscribe_untraced(&self, channels: &[&str]) -> Result<Notifications, Error> {
        let channels: Vec<String> = channels
            .iter()
            .map(|c| check_channel(c).map(|()| (*c).to_owned()))
            .collect::<Result<_, _>>()?;
        let (sub, fresh) = self.hub.subscribe(Some(&channels), self.buffer);
        let subscription = Notifications::new(
            sub,
            self.hub.clone(),
            Owner::Listener(self.commands.clone()),
        );
        if fresh.is_empty() {
            return Ok(subscription);
        }
        let (ack, acked) = oneshot::channel();
        let gone = || Error::closed().context("the listener has stopped");
        self.commands
            .send(Command::Listen {
                channels: fresh,
                ack,
            })
            .map_err(|_| gone())?;
        match tokio::time::timeout(self.subscribe_timeout, acked).await {
            Ok(Ok(result)) => result.map(|()| subscription),
            Ok(Err(_)) => Err(gone()),
            Err(_) => Err(Error::new(
                ErrorKind::Timeout,
                format!(
                    "LISTEN was not confirmed within {:?} (the listener is reconnecting)",
                    self.subscribe_timeout
                ),
            )),
        }
    }

    /// The backend process ID of the listener's current connection.
    pub fn backend_pid(&self) -> i32 {
        self.pid.load(Ordering::Relaxed)
    }

    /// Counters, for monitoring and tests.
    pub fn stats(&self) -> ListenerStats {
        let c = &self.hub.counters;
        ListenerStats {
            reconnects: self.reconnects.load(Ordering::Relaxed),
            delivered: c.delivered.load(Ordering::Relaxed),
            lagged: c.lagged.load(Ordering::Relaxed),
            gaps: c.gaps.load(Ordering::Relaxed),
            peak_buffered: c.peak_queued.load(Ordering::Relaxed),
        }
    }
}

impl std::fmt::Debug for Listener {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Listener")
            .field("backend_pid", &self.backend_pid())
            .field("stats", &self.stats())
            .finish()
    }
}

/// A connection of the listener, LISTENing to every subscribed channel.
struct Live {
    client: Client,
    /// Resolves when the connection's driver has ended.
    ended: oneshot::Receiver<()>,
}

/// Connects to a read-write server, routes its notifications to `hub`
/// and LISTENs to every channel of the hub.
async fn open(config: &Config, hub: &Arc<Hub>) -> Result<Live, Error> {
    let mut config = config.clone();
    config.target_session_attrs(TargetSessionAttrs::ReadWrite);
    let (client, driver) = config.connect_with_driver().await?;
    let (done, ended) = oneshot::channel();
    tokio::spawn(async move {
        if let Err(e) = driver.await {
            tracing::debug!("listener connection closed: {e}");
        }
        let _ = done.send(());
    });
    client.shared().notifications.set_sink(hub.clone());
    let channels = hub.channels();
    if !channels.is_empty() {
        client.batch_execute(&listen_sql(&channels)?).await?;
    }
    Ok(Live { client, ended })
}

struct Task {
    builder: ListenerBuilder,
    hub: Arc<Hub>,
    pid: Arc<AtomicI32>,
    reconnects: Arc<AtomicU64>,
}

/// Why serving a connection stopped.
enum Stopped {
    /// Everyone is gone: close and end.
    Unused,
    /// The connection is lost: reconnect.
    Lost(String),
}

async fn run(mut live: Live, mut rx: mpsc::UnboundedReceiver<Command>, task: Task) {
    loop {
        match serve(&mut live, &mut rx, &task).await {
            Stopped::Unused => {
                live.client.close();
                return;
            }
            Stopped::Lost(why) => {
                tracing::info!("listener connection lost ({why}); reconnecting");
                live.client.close();
            }
        }
        let mut delay = task.builder.backoff_min;
        live = loop {
            match open(&task.builder.config, &task.hub).await {
                Ok(l) => break l,
                Err(e) => {
                    tracing::warn!("listener reconnect failed: {e}; retrying in {delay:?}");
                    tokio::time::sleep(delay).await;
                    if rx.is_closed() {
                        return;
                    }
                    delay = (delay * 2).min(task.builder.backoff_max);
                }
            }
        };
        task.pid.store(live.client.backend_pid(), Ordering::Relaxed);
        task.reconnects.fetch_add(1, Ordering::Relaxed);
        // Only now, with every LISTEN in place again: from here on nothing
        // is missed, and what was sent meanwhile is the gap.
        task.hub.gap(GapReason::Reconnected);
    }
}

async fn serve(live: &mut Live, rx: &mut mpsc::UnboundedReceiver<Command>, task: &Task) -> Stopped {
    let interval = task.builder.ping_interval;
    let mut ping = tokio::time::interval_at(tokio::time::Instant::now() + interval, interval);
    ping.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let client = live.client.with_timeout(interval);
    loop {
        tokio::select! {
            _ = &mut live.ended => return Stopped::Lost("the connection closed".into()),
            command = rx.recv() => match command {
                None => return Stopped::Unused,
                Some(Command::Listen { channels, ack }) => {
                    let result = match listen_sql(&channels) {
                        Ok(sql) => client.batch_execute(&sql).await,
                        Err(e) => Err(e),
                    };
                    let lost = result.as_ref().is_err_and(|e| e.is_closed() || e.is_timeout());
                    if lost {
                        // Re-LISTENed (or failed for good) after reconnecting.
                        let _ = ack.send(Err(Error::closed().context("the listener's connection was lost; retry")));
                        return Stopped::Lost("LISTEN failed".into());
                    }
                    let _ = ack.send(result);
                }
                Some(Command::Unlisten(channels)) => {
                    // Someone may have subscribed again meanwhile.
                    let current = task.hub.channels();
                    let gone: Vec<String> =
                        channels.into_iter().filter(|c| !current.contains(c)).collect();
                    if !gone.is_empty() {
                        if let Ok(sql) = unlisten_sql(&gone) {
                            let _ = client.batch_execute(&sql).await;
                        }
                    }
                }
            },
            _ = ping.tick() => {
                if let Err(e) = client.execute("SELECT 1", ()).await {
                    return Stopped::Lost(format!("the liveness ping failed: {e}"));
                }
            }
        }
    }
}
