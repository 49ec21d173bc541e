//! The user's shard resolver behind a TTL cache: one look-up in flight per
//! key (single flight), stale answers served for a bounded time while a
//! refresh runs.

use std::collections::HashMap;
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::watch;
use tokio::time::Instant;

use super::key::ShardKey;
use super::map::ShardMap;
use super::ShardId;
use crate::error::ErrorKind;
use crate::Error;

/// How a resolver's answers are cached (see [`ShardMap::resolver`]).
///
/// ```
/// use std::time::Duration;
/// use pgpipe::cluster::ResolverConfig;
///
/// let config = ResolverConfig::new()
///     .ttl(Duration::from_secs(60))
///     .stale_for(Duration::from_secs(30))
///     .timeout(Duration::from_secs(2))
///     .max_entries(1_000_000);
/// ```
#[derive(Debug, Clone)]
pub struct ResolverConfig {
    ttl: Duration,
    stale_for: Duration,
    timeout: Duration,
    max_entries: usize,
}

impl Default for ResolverConfig {
    fn default() -> ResolverConfig {
        ResolverConfig::new()
    }
}

impl ResolverConfig {
    /// A TTL of 5 minutes, stale answers served for 1 more minute, a 5 s
    /// look-up timeout and at most 100,000 cached keys.
    pub fn new() -> ResolverConfig {
        ResolverConfig {
            ttl: Duration::from_secs(300),
            stale_for: Duration::from_secs(60),
            timeout: Duration::from_secs(5),
            max_entries: 100_000,
        }
    }

    /// How long an answer is used without asking again.
    pub fn ttl(mut self, ttl: Duration) -> ResolverConfig {
        self.ttl = ttl;
        self
    }

    /// How long past its TTL an answer is still served while one refresh
    /// runs in the background (stale-while-revalidate); a refresh that
    /// fails keeps the old answer until this ends too. Zero: an expired
    /// answer waits for a fresh look-up.
    pub fn stale_for(mut self, stale_for: Duration) -> ResolverConfig {
        self.stale_for = stale_for;
        self
    }

    /// How long a caller waits for a look-up; the look-up itself is
    /// abandoned after this too.
    pub fn timeout(mut self, timeout: Duration) -> ResolverConfig {
        self.timeout = timeout;
        self
    }

    /// The most keys cached; past it, expired ones are dropped, then all
    /// but the ones being looked up.
    pub fn max_entries(mut self, max_entries: usize) -> ResolverConfig {
        self.max_entries = max_entries.max(1);
        self
    }
}

type Lookup = Pin<Box<dyn Future<Output = Result<ShardId, Error>> + Send>>;
type ResolveFn = dyn Fn(ShardKey) -> Lookup + Send + Sync;
/// What a look-up ended with, for every caller waiting on it (an `Error`
/// is not `Clone`: its kind and text are).
type Outcome = Option<Result<ShardId, (ErrorKind, String)>>;

impl ShardMap {
    /// Keys resolved by `resolve`, an async function of yours (a query to
    /// a directory database, a call to a service), its answers cached as
    /// `config` says. However many tasks ask for one key at once, one
    /// look-up runs; its answer (or error) goes to all of them. Errors are
    /// not cached. A shard id the resolver returns that the cluster does not
    /// have is an error at routing.
    ///
    /// ```no_run
    /// # async fn f(directory: pgpipe::Pool) -> Result<(), pgpipe::Error> {
    /// use pgpipe::cluster::{ResolverConfig, ShardKey, ShardMap};
    ///
    /// let map = ShardMap::resolver(
    ///     move |key: ShardKey| {
    ///         let directory = directory.clone();
    ///         async move {
    ///             let uid = key.as_int().unwrap_or(-1);
    ///             let row = directory
    ///                 .query_one("SELECT shard FROM users WHERE uid = $1", (uid,))
    ///                 .await?;
    ///             Ok(row.get::<i32, _>(0) as u32)
    ///         }
    ///     },
    ///     ResolverConfig::new(),
    /// );
    /// # Ok(()) }
    /// ```
    pub fn resolver<F, Fut>(resolve: F, config: ResolverConfig) -> ShardMap
    where
        F: Fn(ShardKey) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<ShardId, Error>> + Send + 'static,
    {
        let resolve: Box<ResolveFn> = Box::new(move |key| Box::pin(resolve(key)));
        ShardMap::from_resolver(Resolver(Arc::new(Shared {
            resolve,
            config,
            cache: Mutex::default(),
        })))
    }
}

/// The cache and the user's function, shared with the look-up tasks.
pub(crate) struct Resolver(Arc<Shared>);

struct Shared {
    resolve: Box<ResolveFn>,
    config: ResolverConfig,
    cache: Mutex<HashMap<ShardKey, Entry>>,
}

#[derive(Default)]
struct Entry {
    /// The latest answer and when it came.
    answer: Option<(ShardId, Instant)>,
    /// The look-up in flight, if any.
    pending: Option<watch::Receiver<Outcome>>,
}

impl Resolver {
    /// The shard of `key`: cached, stale within bounds, or looked up once
    /// for every caller asking at the same time.
    pub(crate) async fn lookup(&self, key: &ShardKey) -> Result<ShardId, Error> {
        let shared = &self.0;
        let deadline = Instant::now() + shared.config.timeout;
        let mut pending = {
            let mut cache = shared.cache.lock().unwrap_or_else(|e| e.into_inner());
            let now = Instant::now();
            if !cache.contains_key(key) {
                prune(&mut cache, &shared.config, now);
            }
            let entry = cache.entry(key.clone()).or_default();
            if let Some((shard, at)) = entry.answer {
                let age = now.saturating_duration_since(at);
                if age < shared.config.ttl {
                    return Ok(shard);
                }
                if age < shared.config.ttl + shared.config.stale_for {
                    if entry.pending.is_none() {
                        entry.pending = Some(start(shared, key));
                    }
                    return Ok(shard);
                }
            }
            match &entry.pending {
                Some(rx) => rx.clone(),
                None => entry.pending.insert(start(shared, key)).clone(),
            }
        };
        let waited = tokio::time::timeout_at(deadline, pending.wait_for(Option::is_some)).await;
        match waited {
            Err(_) => Err(Error::new(
                ErrorKind::Timeout,
                format!(
                    "the shard resolver did not answer for key {key} within {:?}",
                    shared.config.timeout
                ),
            )),
            Ok(Err(_)) => Err(Error::new(
                ErrorKind::Routing,
                format!("the shard resolver's look-up of key {key} ended without an answer (it panicked, or the runtime is shutting down)"),
            )),
            Ok(Ok(outcome)) => match &*outcome {
                Some(Ok(shard)) => Ok(*shard),
                Some(Err((kind, message))) => Err(Error::new(
                    *kind,
                    format!("resolving the shard of key {key}: {message}"),
                )),
                None => unreachable_outcome(key),
            },
        }
    }
}

fn unreachable_outcome(key: &ShardKey) -> Result<ShardId, Error> {
    Err(Error::new(
        ErrorKind::Routing,
        format!("the shard resolver's look-up of key {key} reported nothing"),
    ))
}

/// Starts a look-up of `key` in a task of its own, so that no caller's
/// cancellation abandons it for the others.
fn start(shared: &Arc<Shared>, key: &ShardKey) -> watch::Receiver<Outcome> {
    let (tx, rx) = watch::channel(None);
    let task_shared = shared.clone();
    let key = key.clone();
    let lookup = (shared.resolve)(key.clone());
    tokio::spawn(async move {
        // Clears the pending mark however the task ends (a panic in the
        // user's future included), so the next caller starts afresh.
        let _clear = ClearPending {
            shared: task_shared.clone(),
            key: key.clone(),
        };
        let timeout = task_shared.config.timeout;
        let outcome = match tokio::time::timeout(timeout, lookup).await {
            Ok(Ok(shard)) => Ok(shard),
            Ok(Err(e)) => Err((e.kind(), e.to_string())),
            Err(_) => Err((
                ErrorKind::Timeout,
                format!("the look-up took longer than {timeout:?}"),
            )),
        };
        if let Ok(shard) = outcome {
            let mut cache = task_shared.cache.lock().unwrap_or_else(|e| e.into_inner());
            cache.entry(key).or_default().answer = Some((shard, Instant::now()));
        }
        let _ = tx.send(Some(outcome));
    });
    rx
}

struct ClearPending {
    shared: Arc<Shared>,
    key: ShardKey,
}

impl Drop for ClearPending {
    fn drop(&mut self) {
        let mut cache = self.shared.cache.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(entry) = cache.get_mut(&self.key) {
            entry.pending = None;
            if entry.answer.is_none() {
                cache.remove(&self.key);
            }
        }
    }
}

/// Keeps the cache within its bound: expired answers go first, then every
/// entry without a look-up in flight.
fn prune(cache: &mut HashMap<ShardKey, Entry>, config: &ResolverConfig, now: Instant) {
    if cache.len() < config.max_entries {
        return;
    }
    let keep_for = config.ttl + config.stale_for;
    cache.retain(|_, e| {
        e.pending.is_some()
            || e.answer
                .is_some_and(|(_, at)| now.saturating_duration_since(at) < keep_for)
    });
    if cache.len() >= config.max_entries {
        cache.retain(|_, e| e.pending.is_some());
    }
}

impl fmt::Debug for Resolver {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let cached = self.0.cache.lock().map(|c| c.len()).unwrap_or(0);
        f.debug_struct("Resolver")
            .field("config", &self.0.config)
            .field("cached", &cached)
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicU32, Ordering};

    use super::*;
    use crate::cluster::map::Kind;

    fn resolver_of(map: &ShardMap) -> &Resolver {
        match map.kind() {
            Kind::Resolver(r) => r,
            _ => unreachable!(),
        }
    }

    #[tokio::test(start_paused = true)]
    async fn stale_answers_are_served_while_one_refresh_runs() {
        let calls = Arc::new(AtomicU32::new(0));
        let c = calls.clone();
        let map = ShardMap::resolver(
            move |_key| {
                let n = c.fetch_add(1, Ordering::SeqCst);
                async move { Ok(n) }
            },
            ResolverConfig::new()
                .ttl(Duration::from_secs(10))
                .stale_for(Duration::from_secs(10)),
        );
        let r = resolver_of(&map);
        let key = ShardKey::from(1i64);
        assert_eq!(r.lookup(&key).await.unwrap(), 0);
        tokio::time::advance(Duration::from_secs(11)).await;
        // Stale: the old answer now, a refresh behind it.
        assert_eq!(r.lookup(&key).await.unwrap(), 0);
        assert_eq!(r.lookup(&key).await.unwrap(), 0);
        tokio::task::yield_now().await;
        tokio::task::yield_now().await;
        assert_eq!(calls.load(Ordering::SeqCst), 2);
        assert_eq!(r.lookup(&key).await.unwrap(), 1);
        // Past ttl + stale_for: the caller waits for a fresh answer.
        tokio::time::advance(Duration::from_secs(25)).await;
        assert_eq!(r.lookup(&key).await.unwrap(), 2);
    }

    #[tokio::test]
    async fn errors_reach_every_waiter_and_are_not_cached() {
        let calls = Arc::new(AtomicU32::new(0));
        let c = calls.clone();
        let map = ShardMap::resolver(
            move |key: ShardKey| {
                let n = c.fetch_add(1, Ordering::SeqCst);
                async move {
                    if n == 0 {
                        Err(Error::new(ErrorKind::Db, format!("no user {key}")))
                    } else {
                        Ok(5)
                    }
                }
            },
            ResolverConfig::new(),
        );
        let r = resolver_of(&map);
        let err = r.lookup(&ShardKey::from(9i64)).await.unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Db);
        assert!(err.to_string().contains("no user 9"), "{err}");
        assert_eq!(r.lookup(&ShardKey::from(9i64)).await.unwrap(), 5);
    }

    #[tokio::test(start_paused = true)]
    async fn a_slow_resolver_times_out_clearly() {
        let map = ShardMap::resolver(
            |_key| async {
                tokio::time::sleep(Duration::from_secs(3600)).await;
                Ok(1)
            },
            ResolverConfig::new().timeout(Duration::from_secs(1)),
        );
        let err = resolver_of(&map)
            .lookup(&ShardKey::from("k"))
            .await
            .unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Timeout);
        assert!(err.to_string().contains("did not answer"), "{err}");
    }
}
