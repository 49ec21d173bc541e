//! Pool settings: the [`PoolConfig`] builder and the `pool_*` parameters of
//! a connection URL.

use std::borrow::Cow;
use std::time::Duration;

use crate::config::{parse_duration, query_items, split_query, ConfigError};

/// Settings of a [`Pool`](super::Pool).
///
/// Build one in code, or let [`Pool::connect`](super::Pool::connect) read
/// the `pool_*` query parameters of a connection URL:
///
/// | URL parameter | setting | unit | default |
/// | --- | --- | --- | --- |
/// | `pool_max_size` | [`max_size`](Self::max_size) | connections | 10 |
/// | `pool_min_idle` | [`min_idle`](Self::min_idle) | connections | 0 |
/// | `pool_acquire_timeout` | [`acquire_timeout`](Self::acquire_timeout) | bare number: ms; or `2s`, `250ms` | 30000 |
/// | `pool_idle_timeout` | [`idle_timeout`](Self::idle_timeout) | bare number: s (0: never); or `10min` | 600 |
/// | `pool_max_lifetime` | [`max_lifetime`](Self::max_lifetime) | bare number: s (0: never); or `30min` | 1800 |
/// | `pool_health_check_after` | [`health_check_after`](Self::health_check_after) | bare number: ms; or `1s` | 1000 |
/// | `pool_shared_connections` | [`shared_connections`](Self::shared_connections) | connections | `max_size / 4`, at least 1 (0 when `max_size` is 1) |
/// | `pool_shared_line_at` | [`shared_line_at`](Self::shared_line_at) | statements per shared connection (0: no line) | no line |
///
/// ```
/// use std::time::Duration;
/// use pgpipe::PoolConfig;
///
/// let config = PoolConfig::new()
///     .max_size(32)
///     .min_idle(4)
///     .acquire_timeout(Duration::from_secs(2))
///     .max_lifetime(Some(Duration::from_secs(600)));
/// assert_eq!(config.get_max_size(), 32);
/// assert_eq!(config.get_shared_connections(), 8);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PoolConfig {
    max_size: usize,
    min_idle: usize,
    acquire_timeout: Duration,
    idle_timeout: Option<Duration>,
    max_lifetime: Option<Duration>,
    health_check_after: Option<Duration>,
    shared_connections: Option<usize>,
    shared_line_at: Option<usize>,
}

/// Default of [`PoolConfig::max_size`].
const DEFAULT_MAX_SIZE: usize = 10;
/// Default of [`PoolConfig::acquire_timeout`]: long enough for a burst,
/// short enough that a stuck pool surfaces as an error rather than a hang.
const DEFAULT_ACQUIRE_TIMEOUT: Duration = Duration::from_secs(30);
const DEFAULT_IDLE_TIMEOUT: Duration = Duration::from_secs(600);
const DEFAULT_MAX_LIFETIME: Duration = Duration::from_secs(1800);
/// A connection used within the last second is very likely alive; older
/// ones pay one round trip to make sure.
const DEFAULT_HEALTH_CHECK_AFTER: Duration = Duration::from_secs(1);

impl Default for PoolConfig {
    fn default() -> PoolConfig {
        PoolConfig::new()
    }
}

impl PoolConfig {
    /// The defaults (see the table above).
    pub fn new() -> PoolConfig {
        PoolConfig {
            max_size: DEFAULT_MAX_SIZE,
            min_idle: 0,
            acquire_timeout: DEFAULT_ACQUIRE_TIMEOUT,
            idle_timeout: Some(DEFAULT_IDLE_TIMEOUT),
            max_lifetime: Some(DEFAULT_MAX_LIFETIME),
            health_check_after: Some(DEFAULT_HEALTH_CHECK_AFTER),
            shared_connections: None,
            shared_line_at: None,
        }
    }

    /// The most connections the pool keeps open at once, counting idle,
    /// checked-out, shared and opening ones. At least 1.
    pub fn max_size(mut self, max_size: usize) -> PoolConfig {
        self.max_size = max_size;
        self
    }

    /// How many idle connections a background task keeps ready (within
    /// `max_size`). Idle connections beyond this number are closed after
    /// [`idle_timeout`](Self::idle_timeout).
    pub fn min_idle(mut self, min_idle: usize) -> PoolConfig {
        self.min_idle = min_idle;
        self
    }

    /// The bound on one acquire: waiting for a free slot, opening a
    /// connection and checking it. An exhausted pool answers with an error of
    /// kind [`Timeout`](crate::ErrorKind::Timeout) when it expires.
    /// `Duration::ZERO` fails at once unless a connection is ready in the
    /// idle list.
    pub fn acquire_timeout(mut self, timeout: Duration) -> PoolConfig {
        self.acquire_timeout = timeout;
        self
    }

    /// Closes connections idle for longer than this (while more than
    /// `min_idle` are idle). `None`: never.
    pub fn idle_timeout(mut self, timeout: Option<Duration>) -> PoolConfig {
        self.idle_timeout = timeout;
        self
    }

    /// Closes connections older than this, each at a point within ±10% of
    /// it so that connections opened together do not all reconnect at the
    /// same moment. A connection in use is closed when it is returned.
    /// `None`: never.
    pub fn max_lifetime(mut self, lifetime: Option<Duration>) -> PoolConfig {
        self.max_lifetime = lifetime;
        self
    }

    /// A connection idle for longer than this is pinged (an empty query)
    /// before it is handed out; a failed ping discards it and another is
    /// tried. `Some(Duration::ZERO)`: ping on every checkout; `None`: never
    /// ping (a dead connection is still discarded once its driver has seen
    /// the socket close).
    pub fn health_check_after(mut self, after: Option<Duration>) -> PoolConfig {
        self.health_check_after = after;
        self
    }

    /// How many connections serve [`Pool::query`](super::Pool::query) and
    /// friends, pipelining statements from all callers; they count towards
    /// `max_size` and must leave room for checkouts (fewer than `max_size`).
    /// 0: those methods check out a connection per statement instead.
    pub fn shared_connections(mut self, n: usize) -> PoolConfig {
        self.shared_connections = Some(n);
        self
    }

    /// Fair tails at saturation for [`Pool::query`](super::Pool::query)
    /// and friends: once every shared connection holds `depth` statements,
    /// a task with none in flight waits its turn in arrival order and goes
    /// where room frees first, instead of joining a pipeline that may slow
    /// after it was chosen (its backend preempted on a busy server, a
    /// lock). A task already admitted never waits, so a request's
    /// statements still go together; the wait is bounded by
    /// [`acquire_timeout`](Self::acquire_timeout), and
    /// [`PoolStats::shared_waiting`](super::PoolStats::shared_waiting)
    /// counts the tasks in line. `None` (the default) or `Some(0)`: no
    /// line, every statement joins a pipeline at once.
    ///
    /// It trades throughput for the tail: in the bench's saturated HTTP
    /// mix of 20 statements per request, `Some(64)` kept the p99 at
    /// 0.6-0.7x tokio-postgres with deadpool's (without: 0.8-1.4x) at
    /// 1.4-1.6x its rate (without: 1.8-2.0x); 256 tasks of one statement
    /// each on a lane of two lost a sixth of their rate to it (the bench's
    /// `pool 256x8-line64` beside `256x8`). Use it
    /// where requests of many statements share the lane under load.
    ///
    /// ```
    /// use pgpipe::PoolConfig;
    ///
    /// let config = PoolConfig::new().max_size(16).shared_line_at(Some(64));
    /// assert_eq!(config.get_shared_line_at(), Some(64));
    /// ```
    pub fn shared_line_at(mut self, depth: Option<usize>) -> PoolConfig {
        self.shared_line_at = depth.filter(|&d| d > 0);
        self
    }

    /// See [`shared_line_at`](Self::shared_line_at).
    pub fn get_shared_line_at(&self) -> Option<usize> {
        self.shared_line_at
    }

    /// See [`max_size`](Self::max_size).
    pub fn get_max_size(&self) -> usize {
        self.max_size
    }

    /// See [`min_idle`](Self::min_idle).
    pub fn get_min_idle(&self) -> usize {
        self.min_idle
    }

    /// See [`acquire_timeout`](Self::acquire_timeout).
    pub fn get_acquire_timeout(&self) -> Duration {
        self.acquire_timeout
    }

    /// See [`idle_timeout`](Self::idle_timeout).
    pub fn get_idle_timeout(&self) -> Option<Duration> {
        self.idle_timeout
    }

    /// See [`max_lifetime`](Self::max_lifetime).
    pub fn get_max_lifetime(&self) -> Option<Duration> {
        self.max_lifetime
    }

    /// See [`health_check_after`](Self::health_check_after).
    pub fn get_health_check_after(&self) -> Option<Duration> {
        self.health_check_after
    }

    /// The number of shared connections: the one set, or the default
    /// (`max_size / 4`, at least 1, but 0 when `max_size` is 1 so that a
    /// checkout is always possible).
    pub fn get_shared_connections(&self) -> usize {
        match self.shared_connections {
            Some(n) => n,
            None if self.max_size <= 1 => 0,
            None => (self.max_size / 4).max(1),
        }
    }

    /// Checks the settings against each other; the error names the
    /// offending setting.
    pub(crate) fn validate(&self) -> Result<(), ConfigError> {
        if self.max_size == 0 {
            return Err(ConfigError::new(
                "pool_max_size",
                "invalid pool_max_size: a pool needs at least one connection",
            ));
        }
        if self.max_size > MAX_POOL_SIZE {
            return Err(ConfigError::new(
                "pool_max_size",
                format!("invalid pool_max_size: at most {MAX_POOL_SIZE}"),
            ));
        }
        if self.min_idle > self.max_size {
            return Err(ConfigError::new(
                "pool_min_idle",
                format!(
                    "invalid pool_min_idle: {} is more than pool_max_size ({})",
                    self.min_idle, self.max_size
                ),
            ));
        }
        let shared = self.get_shared_connections();
        if shared > 0 && shared >= self.max_size {
            return Err(ConfigError::new(
                "pool_shared_connections",
                format!(
                    "invalid pool_shared_connections: {shared} must be less than pool_max_size ({}) \
                     to leave room for checkouts",
                    self.max_size
                ),
            ));
        }
        Ok(())
    }

    /// Sets one `pool_*` parameter from its text form.
    fn set(&mut self, key: &str, value: &str) -> Result<(), ConfigError> {
        let number = || {
            value.parse::<u64>().map_err(|_| {
                ConfigError::new(
                    key,
                    format!("invalid value {value:?} for {key}: expected a whole number"),
                )
            })
        };
        let count = || {
            number().and_then(|n| {
                usize::try_from(n).map_err(|_| {
                    ConfigError::new(key, format!("invalid value {value:?} for {key}: too large"))
                })
            })
        };
        // Durations take a unit (`2s`, `250ms`, `5min`); a bare number keeps
        // the documented unit. 0 disables a timeout, as with connect_timeout.
        // Errors name the setting (the pool's convention), not the value.
        let duration =
            |bare| parse_duration(key, value, bare).map_err(|e| ConfigError::new(key, e.message()));
        let secs = || duration(Duration::from_secs(1)).map(|d| (!d.is_zero()).then_some(d));
        let millis = || duration(Duration::from_millis(1));
        match key {
            "pool_max_size" => self.max_size = count()?,
            "pool_min_idle" => self.min_idle = count()?,
            "pool_acquire_timeout" => self.acquire_timeout = millis()?,
            "pool_idle_timeout" => self.idle_timeout = secs()?,
            "pool_max_lifetime" => self.max_lifetime = secs()?,
            "pool_health_check_after" => self.health_check_after = Some(millis()?),
            "pool_shared_connections" => self.shared_connections = Some(count()?),
            "pool_shared_line_at" => self.shared_line_at = Some(count()?).filter(|&d| d > 0),
            _ => {
                return Err(ConfigError::new(
                    key,
                    format!(
                        "unknown pool parameter {key:?} (known: {})",
                        POOL_PARAMETERS.join(", ")
                    ),
                ))
            }
        }
        Ok(())
    }
}

/// A bound that keeps semaphore arithmetic far from overflow; no server
/// accepts anywhere near this many connections anyway.
const MAX_POOL_SIZE: usize = 1 << 20;

const POOL_PARAMETERS: [&str; 8] = [
    "pool_max_size",
    "pool_min_idle",
    "pool_acquire_timeout",
    "pool_idle_timeout",
    "pool_max_lifetime",
    "pool_health_check_after",
    "pool_shared_connections",
    "pool_shared_line_at",
];

/// Splits the `pool_*` query parameters off a `postgres://` URL: returns
/// the URL without them (for [`Config::parse`](crate::Config::parse),
/// which rejects unknown keys) and the pool settings they give on top of
/// `base`. Other strings (libpq `key=value`) are returned unchanged.
pub(crate) fn split_url<'a>(
    url: &'a str,
    base: PoolConfig,
) -> Result<(Cow<'a, str>, PoolConfig), ConfigError> {
    let mut config = base;
    // Cut as Config::parse cuts it.
    let Some((head, query)) = split_query(url) else {
        return Ok((Cow::Borrowed(url), config));
    };
    let mut rest = String::with_capacity(url.len());
    rest.push_str(head);
    let mut sep = '?';
    let mut found = false;
    for item in query_items(query) {
        let (key, value) = item.split_once('=').unwrap_or((item, ""));
        if key.starts_with("pool_") {
            config.set(key, value)?;
            found = true;
        } else {
            rest.push(sep);
            rest.push_str(item);
            sep = '&';
        }
    }
    if found {
        Ok((Cow::Owned(rest), config))
    } else {
        Ok((Cow::Borrowed(url), config))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pool_parameters_are_split_off() {
        let (rest, config) = split_url(
            "postgres://u:p@h/db?sslmode=disable&pool_max_size=8&pool_min_idle=2\
             &pool_acquire_timeout=250&pool_idle_timeout=60&pool_max_lifetime=0\
             &pool_health_check_after=5&application_name=x",
            PoolConfig::new(),
        )
        .unwrap();
        assert_eq!(
            rest,
            "postgres://u:p@h/db?sslmode=disable&application_name=x"
        );
        assert_eq!(config.get_max_size(), 8);
        assert_eq!(config.get_min_idle(), 2);
        assert_eq!(config.get_acquire_timeout(), Duration::from_millis(250));
        assert_eq!(config.get_idle_timeout(), Some(Duration::from_secs(60)));
        assert_eq!(config.get_max_lifetime(), None);
        assert_eq!(
            config.get_health_check_after(),
            Some(Duration::from_millis(5))
        );
        assert_eq!(config.get_shared_connections(), 2);
        assert_eq!(config.get_shared_line_at(), None, "no line unless asked");

        let (_, config) =
            split_url("postgres://h/db?pool_shared_line_at=64", PoolConfig::new()).unwrap();
        assert_eq!(config.get_shared_line_at(), Some(64));
        let (_, config) =
            split_url("postgres://h/db?pool_shared_line_at=0", PoolConfig::new()).unwrap();
        assert_eq!(config.get_shared_line_at(), None);
        let e = split_url(
            "postgres://h/db?pool_shared_line_at=deep",
            PoolConfig::new(),
        )
        .unwrap_err();
        assert_eq!(e.part(), "pool_shared_line_at");

        let (rest, _) = split_url("postgres://h/db?pool_max_size=3", PoolConfig::new()).unwrap();
        assert_eq!(rest, "postgres://h/db");
        let (rest, _) = split_url("host=h pool_max_size=3", PoolConfig::new()).unwrap();
        assert_eq!(rest, "host=h pool_max_size=3");
    }

    #[test]
    fn bad_pool_parameters_are_named() {
        let e = split_url("postgres://h/db?pool_max_size=ten", PoolConfig::new()).unwrap_err();
        assert_eq!(e.part(), "pool_max_size");
        assert!(e.to_string().contains("pool_max_size"), "{e}");
        let e = split_url("postgres://h/db?pool_size=3", PoolConfig::new()).unwrap_err();
        assert_eq!(e.part(), "pool_size");
        let e = PoolConfig::new().max_size(0).validate().unwrap_err();
        assert_eq!(e.part(), "pool_max_size");
        let e = PoolConfig::new()
            .max_size(2)
            .min_idle(3)
            .validate()
            .unwrap_err();
        assert_eq!(e.part(), "pool_min_idle");
        let e = PoolConfig::new()
            .max_size(2)
            .shared_connections(2)
            .validate()
            .unwrap_err();
        assert_eq!(e.part(), "pool_shared_connections");
        assert_eq!(PoolConfig::new().max_size(1).get_shared_connections(), 0);
        assert!(PoolConfig::new().max_size(1).validate().is_ok());
    }
}
