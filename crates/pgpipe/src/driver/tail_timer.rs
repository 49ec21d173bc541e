//! The low-water mark's tail timer, finer than tokio's.
//!
//! tokio's timer ticks in milliseconds: a 1 ms sleep ends 1 to 2 ms later.
//! The receive low-water mark ([`low_water`](super::low_water)) waits on
//! such a timer at the end of every long answer (its last piece is below
//! the mark and never wakes the driver), so every answer over a MiB ended
//! about 1.5 ms late: 5 % of a 50,000-row result of 9 columns on a quiet
//! machine. On Linux a `timerfd` on tokio's I/O driver ends within
//! microseconds of its deadline, for one `timerfd_settime` per wait (one
//! per 64 KiB batch of a stream). Elsewhere, or when the descriptor cannot
//! be made, tokio's timer serves as before.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use tokio::time::{Instant, Sleep};

/// A one-shot timer armed again before each wait.
pub(crate) enum TailTimer {
    #[cfg(target_os = "linux")]
    Fine(fine::Timerfd),
    /// Made at the first arm (it needs the runtime's timer).
    Coarse(Option<Pin<Box<Sleep>>>),
}

impl TailTimer {
    /// A `timerfd` where the platform and the runtime allow, else tokio's
    /// timer. Must be called within a tokio runtime.
    pub(crate) fn new() -> TailTimer {
        #[cfg(target_os = "linux")]
        if let Some(fd) = fine::Timerfd::new() {
            return TailTimer::Fine(fd);
        }
        TailTimer::coarse()
    }

    /// tokio's timer (the tests that drive time by hand use it).
    pub(crate) fn coarse() -> TailTimer {
        TailTimer::Coarse(None)
    }

    /// Whether it is the fine timer (its waits are not rounded up to a
    /// millisecond).
    pub(crate) fn is_fine(&self) -> bool {
        !matches!(self, TailTimer::Coarse(_))
    }

    /// Starts the wait over: it ends `after` from now.
    pub(crate) fn arm(&mut self, after: Duration) {
        match self {
            #[cfg(target_os = "linux")]
            TailTimer::Fine(fd) => {
                if !fd.arm(after) {
                    // The kernel refused (it does not for a valid
                    // descriptor): fall back rather than wait forever.
                    *self = TailTimer::coarse();
                    self.arm(after);
                }
            }
            TailTimer::Coarse(Some(sleep)) => sleep.as_mut().reset(Instant::now() + after),
            TailTimer::Coarse(none) => *none = Some(Box::pin(tokio::time::sleep(after))),
        }
    }

    /// Ready once the wait armed last has ended; registers `cx` until then.
    pub(crate) fn poll_ended(&mut self, cx: &mut Context<'_>) -> Poll<()> {
        match self {
            #[cfg(target_os = "linux")]
            TailTimer::Fine(fd) => fd.poll_ended(cx),
            TailTimer::Coarse(Some(sleep)) => sleep.as_mut().poll(cx),
            // Never armed: nothing to wait for.
            TailTimer::Coarse(None) => Poll::Ready(()),
        }
    }
}

#[cfg(target_os = "linux")]
mod fine {
    use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
    use std::task::{ready, Context, Poll};
    use std::time::Duration;

    use tokio::io::unix::AsyncFd;

    /// A non-blocking `CLOCK_MONOTONIC` timerfd registered with tokio's
    /// I/O driver.
    pub(crate) struct Timerfd {
        fd: AsyncFd<OwnedFd>,
    }

    impl Timerfd {
        pub(super) fn new() -> Option<Timerfd> {
            // Registering outside a runtime panics; the caller falls back.
            tokio::runtime::Handle::try_current().ok()?;
            // SAFETY: plain system call; the flags are valid for it.
            let raw = unsafe {
                libc::timerfd_create(
                    libc::CLOCK_MONOTONIC,
                    libc::TFD_NONBLOCK | libc::TFD_CLOEXEC,
                )
            };
            if raw < 0 {
                return None;
            }
            // SAFETY: `raw` was just returned open by the kernel and is
            // owned by nobody else.
            let owned = unsafe { OwnedFd::from_raw_fd(raw) };
            // SAFETY: the AsyncFd owns the descriptor: it stays open and
            // the same for the AsyncFd's whole life.
            let fd =
                unsafe { AsyncFd::register_with_interest(owned, tokio::io::Interest::READABLE) };
            // A registration the I/O driver refuses (out of resources):
            // the caller falls back to tokio's timer.
            fd.ok().map(|fd| Timerfd { fd })
        }

        /// Sets the one expiry `after` from now, clearing any earlier one
        /// (the kernel resets the expiry count on each set).
        pub(super) fn arm(&self, after: Duration) -> bool {
            // A zero value would disarm the timer: the shortest wait is 1 ns.
            let after = after.max(Duration::from_nanos(1));
            let spec = libc::itimerspec {
                it_interval: libc::timespec {
                    tv_sec: 0,
                    tv_nsec: 0,
                },
                it_value: libc::timespec {
                    tv_sec: after.as_secs() as libc::time_t,
                    tv_nsec: after.subsec_nanos() as libc::c_long,
                },
            };
            // SAFETY: an open timerfd; `spec` is valid for the call and the
            // old value is not asked for.
            let rc = unsafe {
                libc::timerfd_settime(self.fd.as_raw_fd(), 0, &spec, std::ptr::null_mut())
            };
            rc == 0
        }

        #[cfg(test)]
        pub(super) fn raw(&self) -> std::os::fd::RawFd {
            self.fd.as_raw_fd()
        }

        pub(super) fn poll_ended(&self, cx: &mut Context<'_>) -> Poll<()> {
            loop {
                let mut guard = match ready!(self.fd.poll_read_ready(cx)) {
                    Ok(guard) => guard,
                    // The I/O driver is gone (runtime shutting down): the
                    // wait is over; the mark comes down, the safe side.
                    Err(_) => return Poll::Ready(()),
                };
                let mut expirations = [0u8; 8];
                // SAFETY: an open, non-blocking timerfd; the buffer holds
                // the 8 bytes it returns.
                let n = unsafe {
                    libc::read(
                        self.fd.as_raw_fd(),
                        expirations.as_mut_ptr().cast(),
                        expirations.len(),
                    )
                };
                if n == 8 {
                    return Poll::Ready(());
                }
                if n < 0 && std::io::Error::last_os_error().kind() == std::io::ErrorKind::WouldBlock
                {
                    // Readiness left from an expiry that a later arm
                    // cleared: wait for the current one.
                    guard.clear_ready();
                    continue;
                }
                return Poll::Ready(());
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::future::poll_fn;

    use super::*;

    async fn ended(timer: &mut TailTimer) -> bool {
        poll_fn(|cx| Poll::Ready(timer.poll_ended(cx).is_ready())).await
    }

    #[cfg(target_os = "linux")]
    #[tokio::test]
    async fn a_fine_timer_ends_after_its_wait_and_an_arm_starts_it_over() {
        let mut timer = TailTimer::new();
        assert!(timer.is_fine(), "no timerfd on Linux");
        timer.arm(Duration::from_secs(3600));
        assert!(!ended(&mut timer).await, "an hour's wait ended at once");
        // Ends when armed short, however the earlier arm stood.
        timer.arm(Duration::from_micros(200));
        tokio::time::timeout(Duration::from_secs(30), poll_fn(|cx| timer.poll_ended(cx)))
            .await
            .expect("a 200 us wait had not ended after 30 s");
        // An expiry already read, then a long arm: not ended (a stale
        // readiness must not count).
        timer.arm(Duration::from_micros(1));
        tokio::time::timeout(Duration::from_secs(30), poll_fn(|cx| timer.poll_ended(cx)))
            .await
            .expect("a 1 us wait had not ended after 30 s");
        timer.arm(Duration::from_micros(1));
        // Let this expiry happen unread, then clear it with a long arm.
        if let TailTimer::Fine(fd) = &timer {
            let mut poll = libc::pollfd {
                fd: fd.raw(),
                events: libc::POLLIN,
                revents: 0,
            };
            // SAFETY: one valid pollfd; waits at most 30 s.
            let n = unsafe { libc::poll(&mut poll, 1, 30_000) };
            assert_eq!(n, 1, "a 1 us timerfd not readable after 30 s");
        }
        timer.arm(Duration::from_secs(3600));
        assert!(
            !ended(&mut timer).await,
            "an expiry cleared by a later arm still ended the wait"
        );
    }

    #[tokio::test(start_paused = true)]
    async fn the_coarse_timer_follows_tokios_clock() {
        let mut timer = TailTimer::coarse();
        assert!(!timer.is_fine());
        timer.arm(Duration::from_millis(5));
        assert!(!ended(&mut timer).await);
        tokio::time::advance(Duration::from_millis(6)).await;
        assert!(ended(&mut timer).await);
    }
}
