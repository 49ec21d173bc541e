//! Client-side costs of a run: CPU time and context switches (getrusage),
//! read/write syscalls ([`crate::syscalls`]) and allocations. The server's side
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
        }
    }

    /// The costs since [`Probe::start`].
    pub fn finish(&self) -> Costs {
        let allocs = alloc::allocations();
        let now = Probe::start(self.of);
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
        }
    }
}
