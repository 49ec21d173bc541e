//! Listening ports for the servers the testkit starts.
//!
//! A port the kernel hands out for `bind(0)` comes from the ephemeral range,
//! the same range it draws from for every outgoing connection. Between the
//! moment the testkit releases such a port and the moment postgres, patroni
//! or etcd binds it, any client socket on the machine may take it as its
//! local port, and the server then fails with "Address already in use". On
//! a 2-core CI machine running hundreds of connecting tests, that happened.
//!
//! So the ports come from below the ephemeral range, where the kernel never
//! assigns a port by itself: only another explicit bind can take one. Within
//! a process a counter hands out each port once; across processes (nextest,
//! several test binaries) the start is spread by process id and each port is
//! checked with a bind before it is handed out.

use std::net::TcpListener;
use std::sync::atomic::{AtomicU32, Ordering};

use crate::error::TestkitError;

/// Where Linux's ephemeral range is configured.
const EPHEMERAL_RANGE: &str = "/proc/sys/net/ipv4/ip_local_port_range";

/// The lowest port handed out: above the registered services people run
/// on developer machines (5432, 6379, 8080, 9000...).
const LOWEST: u16 = 10_000;

/// Fewer free ports than this below (or above) the ephemeral range, and
/// the kernel's choice is used instead.
const SMALLEST_RANGE: u16 = 2_000;

/// How many candidates are tried before giving up.
const ATTEMPTS: u32 = 512;

/// Next offset into the range, per process.
static NEXT: AtomicU32 = AtomicU32::new(u32::MAX);

/// A loopback port nothing listens on now and that no outgoing connection
/// will take while the caller starts its server on it.
pub(crate) fn free_port() -> Result<u16, TestkitError> {
    let ephemeral = std::fs::read_to_string(EPHEMERAL_RANGE)
        .ok()
        .and_then(|text| parse_range(&text));
    let Some((low, high)) = ephemeral.and_then(outside_ephemeral) else {
        return kernel_port();
    };
    let span = u32::from(high - low) + 1;
    let start = std::process::id().wrapping_mul(7919) % span;
    // The first call seeds the counter with the process's own start.
    let _ = NEXT.compare_exchange(u32::MAX, start, Ordering::Relaxed, Ordering::Relaxed);
    for _ in 0..ATTEMPTS {
        let offset = NEXT.fetch_add(1, Ordering::Relaxed) % span;
        let port = low + offset as u16;
        if TcpListener::bind(("127.0.0.1", port)).is_ok() {
            return Ok(port);
        }
    }
    Err(TestkitError::new(format!(
        "no free port on 127.0.0.1 in {low}..={high} after {ATTEMPTS} attempts"
    )))
}

/// The kernel's choice, for machines whose ephemeral range leaves no room.
fn kernel_port() -> Result<u16, TestkitError> {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .map_err(|e| TestkitError::io("choosing a free port on 127.0.0.1", e))
}

/// `ip_local_port_range`'s two numbers.
fn parse_range(text: &str) -> Option<(u16, u16)> {
    let mut parts = text.split_whitespace().map(str::parse::<u16>);
    match (parts.next(), parts.next()) {
        (Some(Ok(low)), Some(Ok(high))) if low <= high => Some((low, high)),
        _ => None,
    }
}

/// The larger stretch of ports outside the ephemeral range `low..=high`,
/// when it is big enough to spread over.
fn outside_ephemeral((low, high): (u16, u16)) -> Option<(u16, u16)> {
    let below = (low > LOWEST).then(|| (LOWEST, low - 1));
    let above = (high < u16::MAX).then(|| (high.max(LOWEST - 1) + 1, u16::MAX));
    [below, above]
        .into_iter()
        .flatten()
        .filter(|(a, b)| b - a + 1 >= SMALLEST_RANGE)
        .max_by_key(|(a, b)| b - a)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_range_is_read_from_the_kernels_two_numbers() {
        assert_eq!(parse_range("32768\t60999\n"), Some((32768, 60999)));
        assert_eq!(parse_range("1024 65535"), Some((1024, 65535)));
        assert_eq!(parse_range("60999 32768"), None);
        assert_eq!(parse_range("32768"), None);
        assert_eq!(parse_range("junk"), None);
    }

    #[test]
    fn ports_come_from_the_larger_stretch_outside_the_ephemeral_range() {
        // Linux's default: below it is 10000..=32767.
        assert_eq!(outside_ephemeral((32768, 60999)), Some((10_000, 32_767)));
        // Ephemeral ports low: above it.
        assert_eq!(outside_ephemeral((1024, 50_000)), Some((50_001, 65_535)));
        // Nothing left on either side worth spreading over.
        assert_eq!(outside_ephemeral((1024, 65_535)), None);
        assert_eq!(outside_ephemeral((11_000, 64_000)), None);
    }

    #[test]
    fn a_port_is_outside_the_ephemeral_range_free_and_handed_out_once() {
        let ephemeral = std::fs::read_to_string(EPHEMERAL_RANGE)
            .ok()
            .and_then(|t| parse_range(&t));
        let ports: Vec<u16> = (0..64).map(|_| free_port().unwrap()).collect();
        let mut unique = ports.clone();
        unique.sort_unstable();
        unique.dedup();
        assert_eq!(
            unique.len(),
            ports.len(),
            "a port handed out twice: {ports:?}"
        );
        for &port in &ports {
            if let Some((low, high)) = ephemeral.filter(|r| outside_ephemeral(*r).is_some()) {
                assert!(
                    !(low..=high).contains(&port),
                    "{port} is in the ephemeral range {low}..={high}"
                );
            }
            TcpListener::bind(("127.0.0.1", port))
                .unwrap_or_else(|e| panic!("{port} was handed out but cannot be bound: {e}"));
        }
    }

    #[test]
    fn a_port_someone_listens_on_is_skipped() {
        let first = free_port().unwrap();
        // Hold the next candidate, then ask again: the held one is passed over.
        let held_port = first.wrapping_add(1);
        let Ok(_held) = TcpListener::bind(("127.0.0.1", held_port)) else {
            return; // taken by someone else already, which proves nothing
        };
        let next = free_port().unwrap();
        assert_ne!(next, held_port);
    }
}
