//! One host of a shard: its pool (opened on first use), its role and WAL
//! position as its last probe saw them, and the probe itself.

use std::fmt;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use pgpipe_types::PgLsn;
use tokio::time::Instant;

use super::patroni_member::PatroniMember;
use super::position::reached;
use super::token::WriteToken;
use crate::config::Host;
use crate::error::ErrorKind;
use crate::pool::budget::Budget;
use crate::{Client, Config, Error, Pool, PoolConfig};

/// The `application_name` of the probes' sessions.
pub(crate) const PROBE_APPLICATION_NAME: &str = "pgpipe cluster probe";

/// What a host is, as the server last said (never configured).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Role {
    /// Not probed yet.
    Unknown,
    /// Not in recovery and accepting writes: the shard's primary.
    Primary,
    /// In recovery (`pg_is_in_recovery()`): a streaming replica.
    Standby,
    /// Not in recovery but read-only (`default_transaction_read_only`, a
    /// fenced old primary), or a write there failed with SQLSTATE 25006
    /// since its last probe: no writes go there.
    ReadOnly,
    /// The last probe could not reach it.
    Unreachable,
}

/// What the last probe of a host saw.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Seen {
    pub(crate) role: Role,
    /// The replay position of a standby, the insert position of a primary.
    pub(crate) position: Option<PgLsn>,
    /// When the probe that saw this started: the position was at least
    /// this far then.
    pub(crate) at: Option<Instant>,
    /// `in_hot_standby` as the probe's open session last reported it
    /// (PostgreSQL 14+).
    pub(crate) in_hot_standby: Option<bool>,
    /// `wal_block_size`, for positions at a page boundary.
    pub(crate) wal_block: u64,
    /// The backend serving the probe's session.
    pub(crate) probe_pid: Option<i32>,
    /// A primary's current timeline; the timeline a standby receives WAL
    /// on (`pg_stat_wal_receiver`), `None` when it streams from nowhere or
    /// the server does not show it to this user.
    pub(crate) timeline: Option<u32>,
    /// The server hides `pg_stat_wal_receiver` from this user (it needs
    /// `pg_read_all_stats`): a standby's timeline cannot be known.
    pub(crate) timeline_hidden: bool,
}

impl Seen {
    /// Whether this standby has replayed the write of `token`: its replay
    /// position has reached the token's and, when the token names a
    /// timeline, it receives that timeline or a later one. A standby still
    /// on an older timeline (cut off from a failed primary, not yet
    /// following the new one) may have replayed WAL the new primary never
    /// had, past the token's position: position alone would call it
    /// caught up. Where the server hides the standby's timeline, position
    /// alone decides.
    pub(crate) fn has_replayed(&self, token: WriteToken) -> bool {
        let Some(position) = self.position else {
            return false;
        };
        if !reached(position, token.lsn(), self.wal_block) {
            return false;
        }
        match (token.timeline(), self.timeline) {
            (None, _) => true,
            (Some(wanted), Some(receiving)) => receiving >= wanted,
            (Some(_), None) => self.timeline_hidden,
        }
    }
}

pub(crate) struct HostNode {
    pub(crate) label: String,
    /// The TCP host and port, to find the host among Patroni's members.
    address: Option<(String, u16)>,
    /// What Patroni last said of this host (feature `patroni`).
    patroni: Mutex<Option<PatroniMember>>,
    config: Config,
    /// `config` with the probe's own `application_name`.
    probe_config: Config,
    pool_config: PoolConfig,
    /// The cluster's connection budget, if it has one.
    budget: Option<Arc<Budget>>,
    pool: Mutex<Option<Pool>>,
    /// Requests routed here, and those that failed (for stats).
    pub(crate) requests: AtomicU64,
    pub(crate) errors: AtomicU64,
    seen: Mutex<Seen>,
    /// When a write here last failed with 25006: a probe that started
    /// before it (its answer possibly older than the refusal) must not
    /// make the host primary again.
    demoted_at: Mutex<Option<Instant>>,
    last_error: Mutex<Option<String>>,
    /// The probe's own session, kept open between probes; the lock also
    /// makes on-demand refreshes of one host run one at a time.
    probe: tokio::sync::Mutex<Option<Client>>,
    /// Whether the probe's own session is open (for stats, which cannot
    /// wait for the lock above).
    probe_session_open: AtomicBool,
}

impl HostNode {
    pub(crate) fn new(
        config: Config,
        pool_config: PoolConfig,
        budget: Option<Arc<Budget>>,
    ) -> HostNode {
        let mut probe_config = config.clone();
        // Tells the probes' sessions apart from the pools' in
        // pg_stat_activity (they are not counted in the budget).
        probe_config.application_name(PROBE_APPLICATION_NAME);
        HostNode {
            label: label(&config),
            address: match config.get_hosts().first() {
                Some(Host::Tcp(h)) => Some((
                    h.clone(),
                    config.get_ports().first().copied().unwrap_or(5432),
                )),
                _ => None,
            },
            patroni: Mutex::new(None),
            probe_config,
            config,
            pool_config,
            budget,
            pool: Mutex::new(None),
            requests: AtomicU64::new(0),
            errors: AtomicU64::new(0),
            seen: Mutex::new(Seen {
                role: Role::Unknown,
                position: None,
                at: None,
                in_hot_standby: None,
                wal_block: 8192,
                probe_pid: None,
                timeline: None,
                timeline_hidden: false,
            }),
            demoted_at: Mutex::new(None),
            last_error: Mutex::new(None),
            probe: tokio::sync::Mutex::new(None),
            probe_session_open: AtomicBool::new(false),
        }
    }

    /// The host's pool, created on first use (no connection opens until a
    /// statement needs one).
    pub(crate) fn pool(&self) -> Result<Pool, Error> {
        let mut pool = self.pool.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(p) = &*pool {
            return Ok(p.clone());
        }
        let (config, pool_config) = (self.config.clone(), self.pool_config.clone());
        let created = match &self.budget {
            Some(budget) => Pool::connect_lazy_in_budget(config, pool_config, budget.clone())?,
            None => Pool::connect_lazy_with_config(config, pool_config)?,
        };
        *pool = Some(created.clone());
        Ok(created)
    }

    /// The pool if one was created.
    pub(crate) fn existing_pool(&self) -> Option<Pool> {
        self.pool.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// Counts a request routed here and whether it failed.
    pub(crate) fn count<T>(&self, result: Result<T, Error>) -> Result<T, Error> {
        self.requests.fetch_add(1, Ordering::Relaxed);
        if result.is_err() {
            self.errors.fetch_add(1, Ordering::Relaxed);
        }
        result
    }

    pub(crate) fn seen(&self) -> Seen {
        *self.seen.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// What Patroni last said of this host.
    pub(crate) fn patroni(&self) -> Option<PatroniMember> {
        self.patroni
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// Whether Patroni's last answer called this host its leader.
    pub(crate) fn patroni_leader(&self) -> bool {
        self.patroni
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .as_ref()
            .is_some_and(PatroniMember::is_leader)
    }

    /// Records Patroni's view: the member at this host's address, if any
    /// (`None` also when Patroni could not be asked).
    #[cfg_attr(not(feature = "patroni"), allow(dead_code))]
    pub(crate) fn set_patroni(&self, members: &[PatroniMember]) {
        let member = self.address.as_ref().and_then(|(host, port)| {
            members
                .iter()
                .find(|m| m.port == *port && m.host.eq_ignore_ascii_case(host))
                .cloned()
        });
        *self.patroni.lock().unwrap_or_else(|e| e.into_inner()) = member;
    }

    pub(crate) fn last_error(&self) -> Option<String> {
        self.last_error
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// A write here failed with 25006: no more writes until a probe says
    /// it is writable again.
    pub(crate) fn mark_read_only(&self, why: &Error) {
        // Under the `seen` lock, so that a probe result being applied sees
        // both or neither.
        let mut seen = self.seen.lock().unwrap_or_else(|e| e.into_inner());
        seen.role = Role::ReadOnly;
        *self.demoted_at.lock().unwrap_or_else(|e| e.into_inner()) = Some(Instant::now());
        drop(seen);
        *self.last_error.lock().unwrap_or_else(|e| e.into_inner()) = Some(why.to_string());
        tracing::info!(target: "pgpipe::cluster", host = %self.label, "a write was refused as read-only (25006): the host leaves the write lane");
    }

    /// A connection could not be opened: no requests until a probe
    /// reaches it again.
    pub(crate) fn mark_unreachable(&self, why: &Error) {
        self.seen.lock().unwrap_or_else(|e| e.into_inner()).role = Role::Unreachable;
        *self.last_error.lock().unwrap_or_else(|e| e.into_inner()) = Some(why.to_string());
    }

    /// Closes the probe's session (waiting for a probe in progress, which
    /// its timeout bounds); the next probe opens a new one.
    pub(crate) async fn close_probe(&self) {
        let mut probe = self.probe.lock().await;
        if let Some(client) = probe.take() {
            client.close();
        }
        self.probe_session_open.store(false, Ordering::Relaxed);
    }

    /// Whether the probe holds a session of its own now (it rides on a
    /// pooled connection when the host's pool has one).
    pub(crate) fn probe_session_open(&self) -> bool {
        self.probe_session_open.load(Ordering::Relaxed)
    }

    /// Probes the host unless a probe that started at or after
    /// `not_before` already finished: concurrent callers share one probe.
    ///
    /// The probe rides on a connection the host's pool already holds when
    /// it has one (without counting as the pool's use, so an idle pool
    /// still shrinks), and closes the probe's own session then: a host in
    /// use costs the server one connection, not one plus the probe's. Only
    /// a host with no pooled connection (or one that failed under the
    /// probe) is asked on the probe's own session.
    pub(crate) async fn refresh(&self, not_before: Instant, timeout: Duration) -> Seen {
        let mut probe = self.probe.lock().await;
        let seen = self.seen();
        if seen.at.is_some_and(|at| at >= not_before) {
            return seen;
        }
        let started = Instant::now();
        let deadline = started + timeout;
        let pooled = self.existing_pool().and_then(|p| p.unleased_client());
        let mut result = None;
        if let Some(client) = pooled {
            // Half the bound at most: a pooled connection stuck behind a
            // long statement must leave time to ask on a session of our own.
            let share = timeout / 2;
            if let Ok(Ok(found)) = tokio::time::timeout(share, probe_on(&client)).await {
                if let Some(own) = probe.take() {
                    own.close();
                }
                result = Some(Ok(found));
            }
        }
        let result = match result {
            Some(found) => found,
            None => {
                let left = deadline.saturating_duration_since(Instant::now());
                tokio::time::timeout(left, probe_own(&self.probe_config, &mut probe))
                    .await
                    .unwrap_or_else(|_| {
                        Err(Error::new(
                            ErrorKind::Timeout,
                            format!("the probe did not answer within {timeout:?}"),
                        ))
                    })
            }
        };
        if result.is_err() {
            // A session that failed may be broken: the next probe opens a
            // new one.
            *probe = None;
        }
        self.probe_session_open
            .store(probe.is_some(), Ordering::Relaxed);
        self.apply(started, result)
    }

    /// Records what a probe that started at `started` found. A host a
    /// write found read-only (25006) after that start stays out of the
    /// write lane: only a probe that started after the refusal may call
    /// it primary again.
    fn apply(&self, started: Instant, result: Result<Seen, Error>) -> Seen {
        let mut seen = self.seen.lock().unwrap_or_else(|e| e.into_inner());
        match result {
            Ok(found) => {
                let mut demoted_at = self.demoted_at.lock().unwrap_or_else(|e| e.into_inner());
                let stale = demoted_at.is_some_and(|d| started < d);
                let role = if stale && found.role == Role::Primary {
                    Role::ReadOnly
                } else {
                    found.role
                };
                if !stale {
                    *demoted_at = None;
                }
                *seen = Seen {
                    at: Some(started),
                    role,
                    ..found
                };
                if !stale {
                    *self.last_error.lock().unwrap_or_else(|e| e.into_inner()) = None;
                }
            }
            Err(e) => {
                tracing::debug!(target: "pgpipe::cluster", host = %self.label, error = %e, "probe failed");
                seen.role = Role::Unreachable;
                seen.at = Some(started);
                *self.last_error.lock().unwrap_or_else(|e| e.into_inner()) = Some(e.to_string());
            }
        }
        *seen
    }
}

/// One probe on the probe's own session (opened if needed).
async fn probe_own(config: &Config, session: &mut Option<Client>) -> Result<Seen, Error> {
    if session.as_ref().is_none_or(Client::is_closed) {
        *session = Some(config.connect().await?);
    }
    probe_on(session.as_ref().ok_or_else(Error::closed)?).await
}

/// One probe on `client`: recovery state, read-only state, and the WAL
/// position in one statement.
async fn probe_on(client: &Client) -> Result<Seen, Error> {
    let row = client
        .query_one(
            "SELECT pg_is_in_recovery(), \
                    current_setting('transaction_read_only') = 'on', \
                    CASE WHEN pg_is_in_recovery() THEN pg_last_wal_replay_lsn() \
                         ELSE pg_current_wal_insert_lsn() END, \
                    current_setting('wal_block_size')::int8, \
                    CASE WHEN pg_is_in_recovery() \
                         THEN (SELECT received_tli::int8 FROM pg_stat_wal_receiver) \
                         ELSE ('x' || substr(pg_walfile_name(pg_current_wal_insert_lsn()), 1, 8))::bit(32)::int8 \
                    END, \
                    pg_has_role('pg_read_all_stats', 'USAGE')",
            (),
        )
        .await?;
    let in_recovery: bool = row.try_get(0)?;
    let read_only: bool = row.try_get(1)?;
    let position: Option<PgLsn> = row.try_get(2)?;
    let wal_block: i64 = row.try_get(3)?;
    let timeline: Option<i64> = row.try_get(4)?;
    let sees_receiver: bool = row.try_get(5)?;
    let role = match (in_recovery, read_only) {
        (true, _) => Role::Standby,
        (false, true) => Role::ReadOnly,
        (false, false) => Role::Primary,
    };
    Ok(Seen {
        role,
        position,
        at: None,
        // Sent by 14+ with every change, on this open session: a promotion
        // reaches it with the answer to the probe's statement.
        in_hot_standby: client.parameter("in_hot_standby").map(|v| v == "on"),
        wal_block: u64::try_from(wal_block).unwrap_or(8192).max(1),
        probe_pid: Some(client.backend_pid()),
        timeline: timeline.and_then(|t| u32::try_from(t).ok()),
        timeline_hidden: in_recovery && !sees_receiver,
    })
}

/// `host:port/dbname`, without user or password, for messages and status.
fn label(config: &Config) -> String {
    let host = match config.get_hosts().first() {
        Some(Host::Tcp(h)) if h.contains(':') => format!("[{h}]"),
        Some(Host::Tcp(h)) => h.clone(),
        Some(Host::Unix(dir)) => dir.display().to_string(),
        None => "localhost".to_owned(),
    };
    let port = config.get_ports().first().copied().unwrap_or(5432);
    format!("{host}:{port}/{}", config.get_dbname().unwrap_or(""))
}

impl fmt::Debug for HostNode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("HostNode")
            .field("label", &self.label)
            .field("seen", &self.seen())
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn host() -> HostNode {
        let mut config = Config::new();
        config.host("127.0.0.1").dbname("db");
        HostNode::new(config, PoolConfig::new(), None)
    }

    fn found(role: Role) -> Result<Seen, Error> {
        Ok(Seen {
            role,
            position: None,
            at: None,
            in_hot_standby: None,
            wal_block: 8192,
            probe_pid: Some(1),
            timeline: None,
            timeline_hidden: false,
        })
    }

    fn standby(position: u64, timeline: Option<u32>, hidden: bool) -> Seen {
        Seen {
            position: Some(PgLsn::new(position)),
            timeline,
            timeline_hidden: hidden,
            ..found(Role::Standby).unwrap()
        }
    }

    /// Position first, then the timeline when the token names one and the
    /// server shows the standby's.
    #[test]
    fn a_standby_has_replayed_a_token_on_its_timeline_or_a_later_one() {
        let token = |text: &str| text.parse::<WriteToken>().unwrap();
        assert!(standby(0x500, Some(2), false).has_replayed(token("0/500@2")));
        assert!(standby(0x500, Some(3), false).has_replayed(token("0/500@2")));
        assert!(!standby(0x4FF, Some(2), false).has_replayed(token("0/500@2")));
        // Past the position on an older timeline: WAL the new primary may
        // never have had.
        assert!(!standby(0x9000, Some(1), false).has_replayed(token("0/500@2")));
        // Streaming from nowhere, timeline visible to us: cannot tell.
        assert!(!standby(0x9000, None, false).has_replayed(token("0/500@2")));
        // Hidden from this user, or a token that names no timeline: the
        // position alone decides.
        assert!(standby(0x9000, None, true).has_replayed(token("0/500@2")));
        assert!(standby(0x9000, Some(1), false).has_replayed(token("0/500")));
        assert!(!Seen {
            position: None,
            ..standby(0, Some(2), false)
        }
        .has_replayed(token("0/500@2")));
    }

    fn refused() -> Error {
        Error::new(
            ErrorKind::Db,
            "cannot execute INSERT in a read-only transaction",
        )
    }

    /// A probe in flight when a write met 25006 answers from before the
    /// refusal: its "primary" must not put the host back in the write lane.
    /// A probe started after the refusal decides.
    #[test]
    fn a_25006_sticks_until_a_later_probe_says_otherwise() {
        let host = host();
        host.apply(Instant::now(), found(Role::Primary));
        assert_eq!(host.seen().role, Role::Primary);

        let in_flight = Instant::now();
        host.mark_read_only(&refused());
        assert_eq!(
            host.apply(in_flight, found(Role::Primary)).role,
            Role::ReadOnly
        );
        assert_eq!(host.seen().role, Role::ReadOnly);
        assert!(host.last_error().is_some());
        // What the old probe found otherwise is kept (a standby stays one).
        assert_eq!(
            host.apply(in_flight, found(Role::Standby)).role,
            Role::Standby
        );

        let later = Instant::now();
        assert_eq!(host.apply(later, found(Role::Primary)).role, Role::Primary);
        assert!(host.last_error().is_none());
        // Cleared: an old probe's answer counts again.
        assert_eq!(
            host.apply(in_flight, found(Role::Primary)).role,
            Role::Primary
        );
    }
}
