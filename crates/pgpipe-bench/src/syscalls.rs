//! Read- and write-family syscalls of this process, counted by the kernel.
//!
//! Why not `/proc/self/io`: its `syscr`/`syscw` count only calls through
//! the VFS (`read`, `write`, `readv`, ...). Sockets in Rust's std (and so
//! in tokio and mio) use `recv` and `send`, which it never sees: every
//! driver read as zero. Here one perf tracepoint counter per syscall
//! (`syscalls:sys_enter_*`) counts every entry, including those of threads
//! created after [`start`] (`inherit`). Opening tracepoint counters needs
//! root or `CAP_PERFMON`, and tracefs mounted (for the tracepoints' ids);
//! without them the figure is `None` (shown `-`), not a wrong number, and
//! [`unavailable`] says why. `scripts/test.sh` mounts tracefs when it runs
//! as root on a machine where nobody did.

use std::fs::File;
use std::io::Read;
use std::sync::OnceLock;

/// The syscalls a client reads and writes its sockets with.
const COUNTED: [&str; 8] = [
    "read", "write", "readv", "writev", "recvfrom", "sendto", "recvmsg", "sendmsg",
];

/// Where tracefs may be mounted.
const TRACEFS: [&str; 2] = ["/sys/kernel/tracing", "/sys/kernel/debug/tracing"];

static COUNTERS: OnceLock<Result<Vec<File>, String>> = OnceLock::new();

/// Starts counting. Call it after starting any child process that must not
/// be counted (a throwaway PostgreSQL cluster would be: counters follow new
/// threads and processes) and before the runtime's threads start. Later
/// calls do nothing.
pub fn start() {
    COUNTERS.get_or_init(open_all);
}

/// Socket reads and writes (every read/write syscall variant) made since
/// [`start`], by this process's threads and the children started after it;
/// `None` if counting is unavailable.
pub fn total() -> Option<u64> {
    sum(COUNTERS.get()?.as_ref().ok()?)
}

/// Why [`total`] is `None`: not started, or the reason the counters did not
/// open (tracefs not mounted, no permission, no perf support). `None` when
/// counting works.
pub fn unavailable() -> Option<String> {
    match COUNTERS.get() {
        None => Some("syscall counting was not started".into()),
        Some(Ok(_)) => None,
        Some(Err(why)) => Some(why.clone()),
    }
}

fn sum(counters: &[File]) -> Option<u64> {
    let mut total = 0u64;
    for counter in counters {
        let mut value = [0u8; 8];
        (&*counter).read_exact(&mut value).ok()?;
        total += u64::from_ne_bytes(value);
    }
    Some(total)
}

/// All counters or none: a partial count would pass for a whole one.
fn open_all() -> Result<Vec<File>, String> {
    COUNTED.iter().map(|name| open(name)).collect()
}

/// The tracefs root holding the syscall tracepoints, if one is mounted.
fn tracefs_root() -> Option<&'static str> {
    TRACEFS
        .into_iter()
        .find(|root| std::path::Path::new(root).join("events/syscalls").is_dir())
}

/// `perf_event_attr` up to its first published size (64 bytes), which
/// every kernel accepts.
#[repr(C)]
#[derive(Default)]
struct PerfEventAttr {
    kind: u32,
    size: u32,
    config: u64,
    sample_period: u64,
    sample_type: u64,
    read_format: u64,
    flags: u64,
    wakeup_events: u32,
    bp_type: u32,
    config1: u64,
}

const PERF_TYPE_TRACEPOINT: u32 = 2;
/// `inherit` (bit 1 of the flags): count new threads and children too.
/// `disabled` (bit 0) stays clear: counting starts at once.
const INHERIT: u64 = 1 << 1;
const PERF_FLAG_FD_CLOEXEC: libc::c_ulong = 8;

#[cfg(target_os = "linux")]
fn open(syscall: &str) -> Result<File, String> {
    use std::os::fd::FromRawFd;

    let root = tracefs_root().ok_or_else(|| {
        format!(
            "tracefs is not mounted (no events/syscalls under {}); as root: mount -t tracefs nodev /sys/kernel/tracing",
            TRACEFS.join(" or ")
        )
    })?;
    let id_file = format!("{root}/events/syscalls/sys_enter_{syscall}/id");
    let id: u64 = std::fs::read_to_string(&id_file)
        .map_err(|e| format!("cannot read {id_file}: {e}"))?
        .trim()
        .parse()
        .map_err(|e| format!("{id_file} is not a tracepoint id: {e}"))?;
    let attr = PerfEventAttr {
        kind: PERF_TYPE_TRACEPOINT,
        size: std::mem::size_of::<PerfEventAttr>() as u32,
        config: id,
        flags: INHERIT,
        ..PerfEventAttr::default()
    };
    // SAFETY: perf_event_open reads `attr` (a valid, fully initialised
    // struct whose `size` says how much) and returns a new descriptor or -1.
    // pid 0 and cpu -1: this process, on any CPU; no group.
    let fd = unsafe {
        libc::syscall(
            libc::SYS_perf_event_open,
            &attr as *const PerfEventAttr,
            0 as libc::pid_t,
            -1 as libc::c_int,
            -1 as libc::c_int,
            PERF_FLAG_FD_CLOEXEC,
        )
    };
    let Some(fd) = libc::c_int::try_from(fd).ok().filter(|fd| *fd >= 0) else {
        return Err(format!(
            "perf_event_open(sys_enter_{syscall}) failed: {} (needs root or CAP_PERFMON)",
            std::io::Error::last_os_error()
        ));
    };
    // SAFETY: the descriptor was just created and nothing else owns it.
    Ok(unsafe { File::from_raw_fd(fd) })
}

#[cfg(not(target_os = "linux"))]
fn open(_syscall: &str) -> Result<File, String> {
    Err("syscall counting needs Linux perf tracepoints".into())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// As root with tracefs mounted (CI: `scripts/test.sh` mounts it) the
    /// counters open and count socket sends and receives, which
    /// `/proc/self/io` misses. Elsewhere they must refuse with a reason, so
    /// the report shows `-` rather than a wrong number.
    #[test]
    fn socket_sends_and_receives_are_counted() {
        // SAFETY: geteuid has no preconditions.
        let root = unsafe { libc::geteuid() } == 0;
        let counters = match open_all() {
            Ok(counters) => counters,
            Err(why) => {
                assert!(
                    !(root && tracefs_root().is_some()),
                    "perf tracepoint counters did not open as root with tracefs mounted: {why}"
                );
                assert!(!why.is_empty());
                eprintln!("syscall counting unavailable here, checked the refusal: {why}");
                return;
            }
        };
        let (a, b) = std::os::unix::net::UnixDatagram::pair().unwrap();
        let before = sum(&counters).unwrap();
        let mut buf = [0u8; 8];
        for _ in 0..100 {
            a.send(b"ping").unwrap();
            b.recv(&mut buf).unwrap();
        }
        let counted = sum(&counters).unwrap() - before;
        // 200 calls, and the reads of the counters themselves.
        assert!((200..260).contains(&counted), "counted {counted}");
    }
}
