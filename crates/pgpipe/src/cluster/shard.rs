//! One shard's hosts: discovering their roles, finding the primary,
//! choosing a replica for a read's consistency.

use std::cmp::Reverse;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::task::JoinSet;
use tokio::time::Instant;

use super::consistency::Consistency;
use super::host::{HostNode, Role, Seen};
use super::lag::History;
#[cfg(feature = "patroni")]
use super::patroni::PatroniSource;
use super::settings::Settings;
use super::token::WriteToken;
use super::ShardId;
use crate::error::ErrorKind;
use crate::Error;

pub(crate) struct ShardNode {
    pub(crate) id: ShardId,
    pub(crate) hosts: Vec<Arc<HostNode>>,
    history: Mutex<History>,
    /// The host the last probe round found primary, to tell a failover.
    last_primary: Mutex<Option<usize>>,
    /// Whether the shard was used: only used shards are probed in the
    /// background (an unused one holds no connection).
    active: AtomicBool,
    discovered: tokio::sync::OnceCell<()>,
    /// When a route last picked a host here (for dormancy).
    last_used: Mutex<Option<Instant>>,
    next_replica: AtomicUsize,
    /// The shard's Patroni REST API, asked at each probe round.
    #[cfg(feature = "patroni")]
    pub(crate) patroni: Option<PatroniSource>,
    /// Why Patroni could not be asked at the latest round (the probes
    /// alone decide meanwhile).
    patroni_error: Mutex<Option<String>>,
}

impl ShardNode {
    pub(crate) fn new(id: ShardId, hosts: Vec<Arc<HostNode>>) -> ShardNode {
        ShardNode {
            id,
            hosts,
            history: Mutex::default(),
            last_primary: Mutex::new(None),
            active: AtomicBool::new(false),
            discovered: tokio::sync::OnceCell::new(),
            last_used: Mutex::new(None),
            next_replica: AtomicUsize::new(0),
            #[cfg(feature = "patroni")]
            patroni: None,
            patroni_error: Mutex::new(None),
        }
    }

    pub(crate) fn is_active(&self) -> bool {
        self.active.load(Ordering::Relaxed)
    }

    /// Whether the shard went unused for `after` and its pools hold no
    /// connection (none checked out, none idle), so it may go dormant.
    pub(crate) fn unused_for(&self, after: Duration, now: Instant) -> bool {
        let unused = self
            .last_used
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .is_some_and(|at| now.duration_since(at) >= after);
        unused
            && self
                .hosts
                .iter()
                .filter_map(|h| h.existing_pool())
                .all(|p| p.stats().size == 0)
    }

    /// Stops probing the shard and closes its probes' sessions: an unused
    /// shard holds no connection (its pools close theirs when idle). A
    /// use since `now` keeps it awake.
    pub(crate) async fn go_dormant(&self, after: Duration, now: Instant) {
        if !self.unused_for(after, now) {
            return;
        }
        self.active.store(false, Ordering::Relaxed);
        for host in &self.hosts {
            host.close_probe().await;
        }
        tracing::debug!(target: "pgpipe::cluster", shard = self.id, "the shard went dormant");
    }

    /// On first use, the roles of every host, asked of the servers; after
    /// dormancy, asked again (they may have changed meanwhile).
    async fn discover(&self, settings: &Settings) {
        *self.last_used.lock().unwrap_or_else(|e| e.into_inner()) = Some(Instant::now());
        if self.discovered.initialized() && !self.active.swap(true, Ordering::Relaxed) {
            self.refresh_all(Instant::now(), settings.probe_timeout)
                .await;
            return;
        }
        self.discovered
            .get_or_init(|| async {
                self.active.store(true, Ordering::Relaxed);
                self.refresh_all(Instant::now(), settings.probe_timeout)
                    .await;
            })
            .await;
    }

    /// Probes every host at once (sharing probes that started at or after
    /// `not_before`), then records the primary's position for lag.
    pub(crate) async fn refresh_all(&self, not_before: Instant, timeout: Duration) {
        let mut probes = JoinSet::new();
        for (i, host) in self.hosts.iter().enumerate() {
            let host = host.clone();
            probes.spawn(async move { (i, host.refresh(not_before, timeout).await) });
        }
        #[cfg(feature = "patroni")]
        self.ask_patroni(timeout).await;
        let mut primaries: Vec<(usize, Seen)> = Vec::new();
        while let Some(done) = probes.join_next().await {
            if let Ok((i, seen)) = done {
                if seen.role == Role::Primary {
                    primaries.push((i, seen));
                }
            }
        }
        // Two hosts that both say primary (an old primary not yet
        // fenced): see `rank_primary`.
        primaries.sort_by_key(|(i, seen)| (rank_primary(&self.hosts[*i], seen), *i));
        if let Some((i, seen)) = primaries.into_iter().next() {
            self.record_primary(i, seen);
        }
    }

    /// Asks the shard's Patroni for its members (while the probes run)
    /// and records each host's; when it cannot be asked, the hosts lose
    /// Patroni's view and the probes alone decide.
    #[cfg(feature = "patroni")]
    async fn ask_patroni(&self, timeout: Duration) {
        let Some(source) = &self.patroni else { return };
        let members = match source.members(timeout).await {
            Ok(members) => {
                *self.patroni_error.lock().unwrap_or_else(|e| e.into_inner()) = None;
                members
            }
            Err(e) => {
                let message = e.to_string();
                let mut last = self.patroni_error.lock().unwrap_or_else(|e| e.into_inner());
                if last.as_deref() != Some(message.as_str()) {
                    tracing::warn!(target: "pgpipe::cluster", shard = self.id, error = %message, "Patroni could not be asked: roles from the probes alone");
                }
                *last = Some(message);
                Vec::new()
            }
        };
        for host in &self.hosts {
            host.set_patroni(&members);
        }
    }

    /// Why the shard's Patroni could not be asked at the latest round.
    pub(crate) fn patroni_error(&self) -> Option<String> {
        self.patroni_error
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    fn record_primary(&self, index: usize, seen: Seen) {
        let mut last = self.last_primary.lock().unwrap_or_else(|e| e.into_inner());
        let mut history = self.history.lock().unwrap_or_else(|e| e.into_inner());
        if *last != Some(index) {
            if last.is_some() {
                tracing::info!(target: "pgpipe::cluster", shard = self.id, host = %self.hosts[index].label, "the shard has a new primary");
            }
            history.clear();
            *last = Some(index);
        }
        if let (Some(at), Some(position)) = (seen.at, seen.position) {
            history.record(at, position);
        }
    }

    /// The host the servers call primary; of two, the better by
    /// `rank_primary` (the first listed of equals).
    fn current_primary(&self) -> Option<Arc<HostNode>> {
        self.hosts
            .iter()
            .enumerate()
            .filter_map(|(i, h)| {
                let seen = h.seen();
                (seen.role == Role::Primary).then(|| ((rank_primary(h, &seen), i), h))
            })
            .min_by_key(|(rank, _)| *rank)
            .map(|(_, h)| h.clone())
    }

    /// The shard's primary: as last seen, or asked again of every host
    /// until one is primary or `settings.primary_wait` has passed.
    pub(crate) async fn primary(&self, settings: &Settings) -> Result<Arc<HostNode>, Error> {
        self.discover(settings).await;
        if let Some(host) = self.current_primary() {
            return Ok(host);
        }
        self.resolve_primary(settings).await
    }

    /// The primary for a read of `token` that no replica could serve: the
    /// shard's primary, once it is on the token's timeline or a later one.
    /// A primary on an older timeline is one a failover replaced (still
    /// answering until it is fenced): it never had the write, so the read
    /// would silently miss it. The hosts are asked again until the newer
    /// primary shows, bounded by `settings.primary_wait`; then the read
    /// fails, saying which timelines it saw.
    pub(crate) async fn primary_for(
        &self,
        token: WriteToken,
        settings: &Settings,
    ) -> Result<Arc<HostNode>, Error> {
        let host = self.primary(settings).await?;
        let Some(wanted) = token.timeline() else {
            return Ok(host);
        };
        let behind = |h: &HostNode| h.seen().timeline.is_some_and(|t| t < wanted);
        if !behind(&host) {
            return Ok(host);
        }
        self.wait_for_primary(
            settings,
            |h| !behind(h),
            || {
                format!(
                    "shard {}: no host has the write of token {token}: no replica has replayed \
                     it and no primary is on its timeline {wanted} after {:?}: {}",
                    self.id,
                    settings.primary_wait,
                    self.describe_hosts()
                )
            },
        )
        .await
    }

    /// Asks every host again until one is primary (a failover in
    /// progress), bounded by `settings.primary_wait`.
    pub(crate) async fn resolve_primary(
        &self,
        settings: &Settings,
    ) -> Result<Arc<HostNode>, Error> {
        self.wait_for_primary(
            settings,
            |_| true,
            || {
                format!(
                    "shard {} has no primary after {:?}: {}",
                    self.id,
                    settings.primary_wait,
                    self.describe_hosts()
                )
            },
        )
        .await
    }

    /// Asks every host again until a primary that `accept` takes shows up,
    /// bounded by `settings.primary_wait`; then fails with a routing error
    /// worded by `fail`.
    async fn wait_for_primary(
        &self,
        settings: &Settings,
        accept: impl Fn(&HostNode) -> bool,
        fail: impl FnOnce() -> String,
    ) -> Result<Arc<HostNode>, Error> {
        let deadline = Instant::now() + settings.primary_wait;
        loop {
            self.refresh_all(Instant::now(), settings.probe_timeout)
                .await;
            if let Some(host) = self.current_primary().filter(|h| accept(h)) {
                return Ok(host);
            }
            let now = Instant::now();
            if now >= deadline {
                return Err(Error::new(ErrorKind::Routing, fail()));
            }
            tokio::time::sleep_until(deadline.min(now + settings.probe_interval)).await;
        }
    }

    /// A replica for a read of `consistency`, or `None` if none qualifies
    /// (after waiting up to `settings.token_wait` for one to replay a
    /// token).
    pub(crate) async fn replica(
        &self,
        consistency: &Consistency,
        settings: &Settings,
    ) -> Option<Arc<HostNode>> {
        self.discover(settings).await;
        let token = match consistency {
            Consistency::ReadYourWrites(token) => *token,
            Consistency::Any => {
                return self.pick(|h, s| self.within(h, s, settings.max_replica_lag))
            }
            Consistency::MaxLag(bound) => return self.pick(|h, s| self.within(h, s, Some(*bound))),
        };
        let caught_up = |_: &HostNode, s: &Seen| s.has_replayed(token);
        let deadline = Instant::now() + settings.token_wait;
        loop {
            if let Some(host) = self.pick(caught_up) {
                return Some(host);
            }
            let now = Instant::now();
            if now >= deadline {
                return None;
            }
            // Ask the standbys now (one probe per host however many
            // readers wait), then wait a little if they are still behind.
            self.refresh_standbys(now, settings).await;
            if let Some(host) = self.pick(caught_up) {
                return Some(host);
            }
            let now = Instant::now();
            if now >= deadline {
                return None;
            }
            tokio::time::sleep_until(deadline.min(now + settings.token_poll)).await;
        }
    }

    async fn refresh_standbys(&self, not_before: Instant, settings: &Settings) {
        let mut probes = JoinSet::new();
        for host in &self.hosts {
            if host.seen().role == Role::Standby {
                let host = host.clone();
                let timeout = settings.probe_timeout;
                probes.spawn(async move { host.refresh(not_before, timeout).await });
            }
        }
        while probes.join_next().await.is_some() {}
    }

    /// Whether a standby's lag is within `bound` (no bound: any standby).
    fn within(&self, _host: &HostNode, seen: &Seen, bound: Option<Duration>) -> bool {
        let Some(bound) = bound else { return true };
        self.lag(seen).is_some_and(|lag| lag <= bound)
    }

    /// A standby's lag behind the primary, from their positions.
    pub(crate) fn lag(&self, seen: &Seen) -> Option<Duration> {
        let position = seen.position?;
        self.history.lock().unwrap_or_else(|e| e.into_inner()).lag(
            position,
            seen.wal_block,
            Instant::now(),
        )
    }

    /// The next standby, round robin, among those `eligible` accepts.
    fn pick(&self, eligible: impl Fn(&HostNode, &Seen) -> bool) -> Option<Arc<HostNode>> {
        let n = self.hosts.len();
        let start = self.next_replica.fetch_add(1, Ordering::Relaxed);
        (0..n).map(|k| &self.hosts[(start + k) % n]).find_map(|h| {
            let seen = h.seen();
            (seen.role == Role::Standby && eligible(h, &seen)).then(|| h.clone())
        })
    }

    pub(crate) fn describe_hosts(&self) -> String {
        self.hosts
            .iter()
            .map(|h| {
                let seen = h.seen();
                match h.last_error() {
                    Some(e) => format!("{} ({:?}: {e})", h.label, seen.role),
                    None => format!("{} ({:?})", h.label, seen.role),
                }
            })
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// How to choose among hosts that all say primary (an old primary not yet
/// fenced beside the one a failover promoted): lower is better. Patroni's
/// leader first (Patroni never makes a host primary on its own word);
/// then the newest timeline, because a promotion always starts a timeline
/// above the one of the primary it replaces, so the older primary is the
/// one whose writes the rest of the cluster no longer follows.
fn rank_primary(host: &HostNode, seen: &Seen) -> (bool, Reverse<u32>) {
    (!host.patroni_leader(), Reverse(seen.timeline.unwrap_or(0)))
}
