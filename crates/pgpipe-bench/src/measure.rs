//! Client-side costs of a run: CPU time and context switches (getrusage),
//! read/write syscalls ([`crate::syscalls`]), allocations, and what the tokio
//! runtime's workers did (parks, time busy polling tasks). The server's side
//! is in [`crate::server_cpu`].

use std::time::Duration;

use crate::alloc;

/// CPU time (user + system) and context switches (voluntary +
/// involuntary) of this process, or of its waited-for children.
fn usage(who: libc::c_int) -> (Duration, u64) {
    // SAFETY: getrusage only writes into the zeroed struct we pass.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: valid pointer to a rusage struct.
    let rc = unsafe { libc::getrusage(who, &mut usage) };
    if rc != 0 {
        return (Duration::ZERO, 0);
    }
    let tv = |t: libc::timeval| {
        Duration::from_secs(t.tv_sec.max(0) as u64) + Duration::from_micros(t.tv_usec.max(0) as u64)
    };
    (
        tv(usage.ru_utime) + tv(usage.ru_stime),
        usage.ru_nvcsw.max(0) as u64 + usage.ru_nivcsw.max(0) as u64,
    )
}

/// What the current tokio runtime's workers have done so far: how many
/// times they parked (ran out of tasks and slept) and how long they were
/// busy (not parked), summed over the workers; `None` outside a runtime.
///
/// Parks are the runtime's own decision to sleep, so unlike context
/// switches they do not count preemptions by other processes: on a loaded
/// machine they still say how often a driver's hand-offs left a worker
/// idle. Busy time is wall-clock time (tokio's `worker_total_busy_duration`),
/// so it includes time a worker was runnable but preempted: set against
/// the CPU per operation it tells a driver whose workers sleep between
/// its tasks from one whose workers stay on their tasks.
fn runtime_work() -> Option<(u64, Duration)> {
    let metrics = tokio::runtime::Handle::try_current().ok()?.metrics();
    let mut parks = 0;
    let mut busy = Duration::ZERO;
    for worker in 0..metrics.num_workers() {
        parks += metrics.worker_park_count(worker);
        busy += metrics.worker_total_busy_duration(worker);
    }
    Some((parks, busy))
}

/// Peak resident set size of this process so far, in bytes.
pub fn peak_rss_bytes() -> Option<u64> {
    // SAFETY: as in `usage`.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: valid pointer to a rusage struct.
    let rc = unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut usage) };
    (rc == 0).then(|| usage.ru_maxrss.max(0) as u64 * 1024)
}

/// Which process's CPU a [`Probe`] measures.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CpuOf {
    /// This process (in-process drivers).
    SelfProcess,
    /// Children waited for during the run (pgbench).
    Children,
}

/// A snapshot taken when a measured run starts.
#[derive(Debug, Clone, Copy)]
pub struct Probe {
    of: CpuOf,
    cpu: Duration,
    ctx_switches: u64,
    syscalls: Option<u64>,
    allocs: u64,
    runtime: Option<(u64, Duration)>,
}

/// What a [`Probe`] measured.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Costs {
    /// CPU time spent (user + system).
    pub cpu: Duration,
    /// Allocations made; `None` when the work ran in another process.
    pub allocs: Option<u64>,
    /// Context switches (voluntary + involuntary).
    pub ctx_switches: Option<u64>,
    /// Read- and write-family syscalls ([`crate::syscalls::total`]);
    /// `None` for children and where the kernel's counters are unavailable.
    pub syscalls: Option<u64>,
    /// Times the tokio runtime's workers parked; `None` for children.
    pub worker_parks: Option<u64>,
    /// Wall-clock time the tokio runtime's workers were busy (not parked);
    /// `None` for children.
    pub worker_busy: Option<Duration>,
}

impl Probe {
    /// Takes the starting snapshot.
    pub fn start(of: CpuOf) -> Probe {
        let who = match of {
            CpuOf::SelfProcess => libc::RUSAGE_SELF,
            CpuOf::Children => libc::RUSAGE_CHILDREN,
        };
        let (cpu, ctx_switches) = usage(who);
        Probe {
            of,
            cpu,
            ctx_switches,
            syscalls: match of {
                CpuOf::SelfProcess => crate::syscalls::total(),
                CpuOf::Children => None,
            },
            allocs: alloc::allocations(),
            runtime: match of {
                CpuOf::SelfProcess => runtime_work(),
                CpuOf::Children => None,
            },
        }
    }

    /// The costs since [`Probe::start`].
    pub fn finish(&self) -> Costs {
        let allocs = alloc::allocations();
        let now = Probe::start(self.of);
        let (worker_parks, worker_busy) = match (now.runtime, self.runtime) {
            (Some((parks, busy)), Some((parks_before, busy_before))) => (
                Some(parks.saturating_sub(parks_before)),
                Some(busy.saturating_sub(busy_before)),
            ),
            _ => (None, None),
        };
        Costs {
            cpu: now.cpu.saturating_sub(self.cpu),
            ctx_switches: Some(now.ctx_switches.saturating_sub(self.ctx_switches)),
            syscalls: match (now.syscalls, self.syscalls) {
                (Some(b), Some(a)) => Some(b.saturating_sub(a)),
                _ => None,
            },
            allocs: match self.of {
                CpuOf::SelfProcess => Some(allocs.saturating_sub(self.allocs)),
                CpuOf::Children => None,
            },
            worker_parks,
            worker_busy,
        }
    }
}

/// What pgpipe counts of its receive low-water mark (`ClientStats`'s
/// `low_water_raised` and `low_water_tail_waits`), summed over a run's
/// connections. A tail wait costs a timer, two `setsockopt` calls and a
/// re-arm, so a change that makes them a habit (a mark a slow server
/// cannot fill within the wait) shows here before it shows in the rate.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct LowWater {
    /// Times the mark went up from down.
    pub raises: u64,
    /// Times the driver found nothing more within the tail wait and read
    /// what had come.
    pub tail_waits: u64,
}

impl LowWater {
    /// The counts since `before` (a snapshot of the same connections).
    pub fn since(self, before: LowWater) -> LowWater {
        LowWater {
            raises: self.raises.saturating_sub(before.raises),
            tail_waits: self.tail_waits.saturating_sub(before.tail_waits),
        }
    }

    /// The sum over connections that count (`None` when none does: a
    /// driver without a low-water mark).
    pub fn total(counts: impl IntoIterator<Item = Option<LowWater>>) -> Option<LowWater> {
        counts.into_iter().flatten().reduce(|a, b| LowWater {
            raises: a.raises + b.raises,
            tail_waits: a.tail_waits + b.tail_waits,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn low_water_counts_sum_only_the_drivers_that_keep_them() {
        let a = LowWater {
            raises: 3,
            tail_waits: 5,
        };
        let b = LowWater {
            raises: 1,
            tail_waits: 0,
        };
        assert_eq!(
            LowWater::total([Some(a), None, Some(b)]),
            Some(LowWater {
                raises: 4,
                tail_waits: 5
            })
        );
        assert_eq!(LowWater::total([None, None]), None);
        assert_eq!(
            a.since(b),
            LowWater {
                raises: 2,
                tail_waits: 5
            }
        );
        // A counter cannot go back; a reconnect that reset one must not
        // come out as billions.
        assert_eq!(b.since(a).tail_waits, 0);
    }
}
