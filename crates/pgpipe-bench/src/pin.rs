//! `--pin`: the client (this process and its children, such as pgbench) on
//! one half of the CPUs and a throwaway server on the other, so the two do
//! not steal each other's cores mid-measurement and the client's CPU per
//! operation is not blurred by the server's.

use std::fs;
use std::io;
use std::path::Path;

use crate::error::BenchError;

/// Which CPUs each side gets.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pinning {
    /// CPUs of the bench process (every driver runs here).
    pub client: Vec<usize>,
    /// CPUs of the server's processes; empty when the server is not ours.
    pub server: Vec<usize>,
}

impl Pinning {
    /// One line for the report.
    pub fn describe(&self) -> String {
        if self.server.is_empty() {
            format!(
                "client pinned to CPUs {:?}; the server (--url) is not pinned",
                self.client
            )
        } else {
            format!(
                "client pinned to CPUs {:?}, server to CPUs {:?}",
                self.client, self.server
            )
        }
    }
}

/// Splits the CPUs this process may use: the first half to the client, the
/// rest to the server (with two CPUs, one each).
pub fn split(available: &[usize]) -> Result<(Vec<usize>, Vec<usize>), BenchError> {
    if available.len() < 2 {
        return Err(BenchError::new(format!(
            "--pin needs at least 2 CPUs to split between client and server; this process may use {:?}",
            available
        )));
    }
    let half = available.len() / 2;
    Ok((available[..half].to_vec(), available[half..].to_vec()))
}

/// The CPUs this process may run on.
pub fn available_cpus() -> Result<Vec<usize>, BenchError> {
    // SAFETY: a zeroed cpu_set_t is a valid empty set, and the size passed
    // is its own.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    let rc =
        unsafe { libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) };
    if rc != 0 {
        return Err(BenchError::new(format!(
            "--pin: sched_getaffinity failed: {}",
            io::Error::last_os_error()
        )));
    }
    Ok((0..libc::CPU_SETSIZE as usize)
        // SAFETY: `cpu` is below CPU_SETSIZE, the set's capacity.
        .filter(|&cpu| unsafe { libc::CPU_ISSET(cpu, &set) })
        .collect())
}

/// Pins every thread of process `pid` (threads created later inherit it).
pub fn pin_process(pid: u32, cpus: &[usize]) -> Result<(), BenchError> {
    let tasks = fs::read_dir(format!("/proc/{pid}/task"))
        .map_err(|e| BenchError::new(format!("--pin: cannot list the threads of {pid}: {e}")))?;
    for task in tasks.flatten() {
        let Some(tid) = task
            .file_name()
            .to_str()
            .and_then(|t| t.parse::<i32>().ok())
        else {
            continue;
        };
        set_affinity(tid, cpus).map_err(|e| {
            BenchError::new(format!("--pin: cannot pin thread {tid} of {pid}: {e}"))
        })?;
    }
    Ok(())
}

/// Pins a throwaway cluster: its postmaster (backends forked later inherit
/// the mask) and the processes it already forked. `root` is the cluster's
/// directory (`Cluster::dir`).
pub fn pin_cluster(root: &Path, cpus: &[usize]) -> Result<(), BenchError> {
    let pid_file = root.join("data/postmaster.pid");
    let postmaster: u32 = fs::read_to_string(&pid_file)
        .ok()
        .and_then(|s| s.lines().next().and_then(|l| l.trim().parse().ok()))
        .ok_or_else(|| {
            BenchError::new(format!(
                "--pin: cannot read the postmaster's pid from {}",
                pid_file.display()
            ))
        })?;
    pin_process(postmaster, cpus)?;
    for child in children_of(postmaster) {
        // A child may exit between listing and pinning; that is fine.
        let _ = pin_process(child, cpus);
    }
    Ok(())
}

/// Processes whose parent is `parent`, from /proc/<pid>/stat.
fn children_of(parent: u32) -> Vec<u32> {
    let Ok(entries) = fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| parent_of(*pid) == Some(parent))
        .collect()
}

fn parent_of(pid: u32) -> Option<u32> {
    let stat = fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name (field 2) is in parentheses and may hold spaces.
    let after_name = &stat[stat.rfind(')')? + 1..];
    after_name.split_whitespace().nth(1)?.parse().ok()
}

fn set_affinity(tid: i32, cpus: &[usize]) -> io::Result<()> {
    // SAFETY: a zeroed cpu_set_t is a valid empty set; CPU_SET only touches
    // indices below CPU_SETSIZE (checked), and the size passed is the set's.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    for &cpu in cpus {
        if cpu < libc::CPU_SETSIZE as usize {
            unsafe { libc::CPU_SET(cpu, &mut set) };
        }
    }
    let rc = unsafe { libc::sched_setaffinity(tid, std::mem::size_of::<libc::cpu_set_t>(), &set) };
    if rc == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

/// The CPUs thread or process `pid` may run on (for tests).
pub fn affinity_of(pid: u32) -> Result<Vec<usize>, BenchError> {
    let status = fs::read_to_string(format!("/proc/{pid}/status"))
        .map_err(|e| BenchError::new(format!("cannot read /proc/{pid}/status: {e}")))?;
    let list = status
        .lines()
        .find_map(|l| l.strip_prefix("Cpus_allowed_list:"))
        .ok_or_else(|| BenchError::new("no Cpus_allowed_list in /proc status"))?;
    parse_cpu_list(list.trim())
}

/// Parses a kernel CPU list such as `0-2,5`.
pub fn parse_cpu_list(list: &str) -> Result<Vec<usize>, BenchError> {
    let bad = || BenchError::new(format!("malformed CPU list {list:?}"));
    let mut out = Vec::new();
    for part in list.split(',').filter(|p| !p.is_empty()) {
        match part.split_once('-') {
            Some((a, b)) => {
                let (a, b): (usize, usize) =
                    (a.parse().map_err(|_| bad())?, b.parse().map_err(|_| bad())?);
                if a > b {
                    return Err(bad());
                }
                out.extend(a..=b);
            }
            None => out.push(part.parse().map_err(|_| bad())?),
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpus_split_in_halves() {
        assert_eq!(split(&[0, 1]).unwrap(), (vec![0], vec![1]));
        assert_eq!(
            split(&[0, 1, 2, 3, 4]).unwrap(),
            (vec![0, 1], vec![2, 3, 4])
        );
        let err = split(&[3]).unwrap_err().to_string();
        assert!(err.contains("at least 2 CPUs"), "{err}");
    }

    #[test]
    fn cpu_lists_parse() {
        assert_eq!(parse_cpu_list("0-2,5").unwrap(), vec![0, 1, 2, 5]);
        assert_eq!(parse_cpu_list("1").unwrap(), vec![1]);
        assert!(parse_cpu_list("2-1").is_err());
        assert!(parse_cpu_list("x").is_err());
    }

    #[test]
    fn a_thread_can_be_pinned_and_read_back() {
        let available = available_cpus().unwrap();
        let first = available[0];
        // Pin a fresh thread of our own, not the test harness's threads.
        let handle = std::thread::spawn(move || {
            // SAFETY: gettid has no preconditions.
            let tid = unsafe { libc::gettid() };
            set_affinity(tid, &[first]).unwrap();
            affinity_of(tid as u32).unwrap()
        });
        assert_eq!(handle.join().unwrap(), vec![first]);
    }
}
