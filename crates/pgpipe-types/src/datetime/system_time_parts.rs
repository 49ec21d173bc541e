//! A `SystemTime`'s seconds and nanoseconds since 1970 without
//! `SystemTime::duration_since`.
//!
//! Why: std's API offers no cheaper way to read a `SystemTime`, and
//! `duration_since` is an out-of-line call that returns its `Result`
//! through memory. In a binary COPY of rows with one timestamp each it was
//! 16 % of the writer's CPU, more than any other single item.
//!
//! How: `SystemTime`'s `Hash` is derived from its fields, and `Hash::hash`
//! is generic, so it is compiled here, with the hasher below, down to two
//! loads. On Unix the fields are the seconds (`i64`) and nanoseconds
//! (`u32`) since 1970, the nanoseconds always in `0..1e9`. That layout is
//! std's, not a promise, so it is checked once, against `duration_since`,
//! on instants before, at and after 1970; if anything differs (another
//! platform, a future std), every call takes `duration_since`.

use std::hash::{Hash, Hasher};
use std::sync::atomic::{AtomicU8, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// Not checked yet / the `Hash` layout matches / it does not.
const UNCHECKED: u8 = 0;
const MATCHES: u8 = 1;
const DIFFERS: u8 = 2;

static LAYOUT: AtomicU8 = AtomicU8::new(UNCHECKED);

/// `t` as whole seconds since 1970 (negative before) and the nanoseconds
/// after them (`0..1_000_000_000`).
#[inline]
pub(crate) fn unix_parts(t: &SystemTime) -> (i64, u32) {
    match LAYOUT.load(Ordering::Relaxed) {
        MATCHES => {
            if let Some(parts) = hashed_parts(t) {
                return parts;
            }
        }
        UNCHECKED => check_layout(),
        _ => {}
    }
    unix_parts_std(t)
}

/// The same through std's API.
#[cold]
#[inline(never)]
pub(crate) fn unix_parts_std(t: &SystemTime) -> (i64, u32) {
    match t.duration_since(UNIX_EPOCH) {
        Ok(after) => (after.as_secs() as i64, after.subsec_nanos()),
        Err(e) => {
            let before = e.duration();
            let secs = -(before.as_secs() as i64);
            match before.subsec_nanos() {
                0 => (secs, 0),
                n => (secs - 1, 1_000_000_000 - n),
            }
        }
    }
}

/// Records what `SystemTime::hash` writes: one `i64`, then one `u32`.
#[derive(Default)]
struct Fields {
    secs: i64,
    nanos: u32,
    /// How many of the expected writes came, in order; anything else
    /// poisons it.
    seen: u8,
}

const POISONED: u8 = u8::MAX;

impl Hasher for Fields {
    fn finish(&self) -> u64 {
        0
    }
    fn write(&mut self, _: &[u8]) {
        self.seen = POISONED;
    }
    #[inline(always)]
    fn write_i64(&mut self, v: i64) {
        if self.seen == 0 {
            self.secs = v;
            self.seen = 1;
        } else {
            self.seen = POISONED;
        }
    }
    #[inline(always)]
    fn write_u32(&mut self, v: u32) {
        if self.seen == 1 {
            self.nanos = v;
            self.seen = 2;
        } else {
            self.seen = POISONED;
        }
    }
}

#[inline(always)]
fn hashed_parts(t: &SystemTime) -> Option<(i64, u32)> {
    let mut fields = Fields::default();
    t.hash(&mut fields);
    (fields.seen == 2 && fields.nanos < 1_000_000_000).then_some((fields.secs, fields.nanos))
}

#[cold]
#[inline(never)]
fn check_layout() {
    let probes = [
        UNIX_EPOCH,
        UNIX_EPOCH + Duration::new(1_767_225_600, 123_456_789),
        UNIX_EPOCH + Duration::new(0, 1),
        UNIX_EPOCH - Duration::new(0, 1),
        UNIX_EPOCH - Duration::new(1, 999_999_999),
        UNIX_EPOCH - Duration::new(946_684_800, 500_000_000),
        UNIX_EPOCH + Duration::new(253_402_300_799, 999_999_999),
    ];
    let matches = probes
        .iter()
        .all(|t| hashed_parts(t) == Some(unix_parts_std(t)));
    LAYOUT.store(if matches { MATCHES } else { DIFFERS }, Ordering::Relaxed);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parts_match_duration_since_before_at_and_after_1970() {
        let times = [
            UNIX_EPOCH,
            UNIX_EPOCH + Duration::new(1, 0),
            UNIX_EPOCH + Duration::new(1_767_225_600, 999_999_999),
            UNIX_EPOCH - Duration::new(0, 1),
            UNIX_EPOCH - Duration::new(3, 0),
            UNIX_EPOCH - Duration::new(3, 250_000_000),
            SystemTime::now(),
        ];
        for _ in 0..2 {
            // The first round checks the layout on its first call.
            for t in &times {
                assert_eq!(unix_parts(t), unix_parts_std(t), "{t:?}");
            }
        }
        assert_eq!(
            unix_parts_std(&(UNIX_EPOCH - Duration::new(3, 250_000_000))),
            (-4, 750_000_000)
        );
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn on_this_platform_the_fast_path_is_taken() {
        // Linux is what pgpipe is measured on; if std's layout changes this
        // fails (and the code falls back to `duration_since`, correctly).
        check_layout();
        assert_eq!(LAYOUT.load(Ordering::Relaxed), MATCHES);
    }
}
