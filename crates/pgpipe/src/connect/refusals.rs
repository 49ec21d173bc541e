//! Hosts that answered `N` to SSLRequest, remembered for a while so that
//! `sslmode=prefer` (the default) does not pay that round trip on every
//! connect to a server without TLS.
//!
//! Only `prefer` consults it, and only to skip asking: the connection then
//! goes plain at once, which is what the `N` would have led to. `require`,
//! `verify-ca` and `verify-full` always ask and fail on `N`, and `allow`
//! starts plain anyway. A server whose TLS is turned on while it is
//! remembered gets plain connections from `prefer` until the memory expires
//! ([`REMEMBER_FOR`]); `prefer` never promised TLS (a man in the middle can
//! answer `N` just as well), so nothing it guarantees is lost.

use std::collections::HashMap;
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

/// How long an `N` is remembered.
pub(crate) const REMEMBER_FOR: Duration = Duration::from_secs(60);

/// At most this many hosts are remembered; a full memory forgets what has
/// expired, then everything.
const MAX_HOSTS: usize = 4096;

/// The hosts (name as given, port) that refused TLS, and when.
#[derive(Debug)]
pub(crate) struct Refusals {
    ttl: Duration,
    hosts: Mutex<HashMap<(String, u16), Instant>>,
}

/// The process's memory.
pub(crate) fn shared() -> &'static Refusals {
    static REFUSALS: OnceLock<Refusals> = OnceLock::new();
    REFUSALS.get_or_init(|| Refusals::new(REMEMBER_FOR))
}

impl Refusals {
    pub(crate) fn new(ttl: Duration) -> Refusals {
        Refusals {
            ttl,
            hosts: Mutex::new(HashMap::new()),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<(String, u16), Instant>> {
        // The map stays whole whatever panicked while it was held.
        self.hosts
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// `host:port` answered `N` at `now`.
    pub(crate) fn record(&self, host: &str, port: u16, now: Instant) {
        let mut hosts = self.lock();
        if hosts.len() >= MAX_HOSTS {
            let ttl = self.ttl;
            hosts.retain(|_, at| now.saturating_duration_since(*at) < ttl);
            if hosts.len() >= MAX_HOSTS {
                hosts.clear();
            }
        }
        hosts.insert((host.to_owned(), port), now);
    }

    /// Whether `host:port` answered `N` less than the memory's time ago.
    pub(crate) fn refused(&self, host: &str, port: u16, now: Instant) -> bool {
        let mut hosts = self.lock();
        let key = (host.to_owned(), port);
        match hosts.get(&key) {
            Some(at) if now.saturating_duration_since(*at) < self.ttl => true,
            Some(_) => {
                hosts.remove(&key);
                false
            }
            None => false,
        }
    }

    /// Forgets `host:port` (it accepted TLS after all).
    pub(crate) fn forget(&self, host: &str, port: u16) {
        self.lock().remove(&(host.to_owned(), port));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_refusal_is_remembered_per_host_and_port_until_it_expires() {
        let memory = Refusals::new(Duration::from_secs(60));
        let t0 = Instant::now();
        assert!(!memory.refused("db1", 5432, t0));
        memory.record("db1", 5432, t0);
        assert!(memory.refused("db1", 5432, t0 + Duration::from_secs(59)));
        assert!(!memory.refused("db1", 5433, t0), "another port");
        assert!(!memory.refused("db2", 5432, t0), "another host");
        assert!(!memory.refused("db1", 5432, t0 + Duration::from_secs(60)));
        // Expired entries are dropped, not kept forever.
        assert!(!memory.refused("db1", 5432, t0));
        memory.record("db1", 5432, t0);
        memory.forget("db1", 5432);
        assert!(!memory.refused("db1", 5432, t0));
    }

    #[test]
    fn the_memory_is_bounded() {
        let memory = Refusals::new(Duration::from_secs(60));
        let t0 = Instant::now();
        for port in 0..(MAX_HOSTS as u16 + 10) {
            memory.record("h", port, t0);
        }
        assert!(memory.lock().len() <= MAX_HOSTS);
        assert!(memory.refused("h", MAX_HOSTS as u16 + 9, t0));
    }
}
