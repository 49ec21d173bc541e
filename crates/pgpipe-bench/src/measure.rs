//! Client-side costs of a run: CPU time (getrusage) and allocations.

use std::time::Duration;

use crate::alloc;

/// CPU time (user + system) of this process, or of its waited-for children.
fn cpu_time(who: libc::c_int) -> Duration {
    // SAFETY: getrusage only writes into the zeroed struct we pass.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: valid pointer to a rusage struct.
    let rc = unsafe { libc::getrusage(who, &mut usage) };
    if rc != 0 {
        return Duration::ZERO;
    }
    let tv = |t: libc::timeval| {
        Duration::from_secs(t.tv_sec.max(0) as u64) + Duration::from_micros(t.tv_usec.max(0) as u64)
    };
    tv(usage.ru_utime) + tv(usage.ru_stime)
}

/// Peak resident set size of this process so far, in bytes.
pub fn peak_rss_bytes() -> Option<u64> {
    // SAFETY: as in `cpu_time`.
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
    allocs: u64,
}

/// What a [`Probe`] measured.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Costs {
    /// CPU time spent (user + system).
    pub cpu: Duration,
    /// Allocations made; `None` when the work ran in another process.
    pub allocs: Option<u64>,
}

impl Probe {
    /// Takes the starting snapshot.
    pub fn start(of: CpuOf) -> Probe {
        let who = match of {
            CpuOf::SelfProcess => libc::RUSAGE_SELF,
            CpuOf::Children => libc::RUSAGE_CHILDREN,
        };
        Probe {
            of,
            cpu: cpu_time(who),
            allocs: alloc::allocations(),
        }
    }

    /// The costs since [`Probe::start`].
    pub fn finish(&self) -> Costs {
        let allocs = alloc::allocations();
        let now = Probe::start(self.of);
        Costs {
            cpu: now.cpu.saturating_sub(self.cpu),
            allocs: match self.of {
                CpuOf::SelfProcess => Some(allocs.saturating_sub(self.allocs)),
                CpuOf::Children => None,
            },
        }
    }
}
