//! The server's share of a run: CPU time of the PostgreSQL backends that
//! served it, read from `/proc` when the server runs on this machine.
//!
//! Which backends: every client backend of the server (pids from
//! `pg_stat_activity`, the same numbers `pg_backend_pid()` gives each
//! connection) except the observer's own. Drivers alternate, so during a
//! run only the measured driver's backends are busy; the others sit idle.
//! Backends that exit during a run (ozo's connect-per-request, `stream`'s
//! child) are counted through the postmaster's reaped-children CPU
//! (`cutime + cstime`), minus what they had used before the run started.

use std::collections::HashMap;
use std::time::Duration;

use crate::error::BenchError;

/// Watches the server's backends through one extra, otherwise idle,
/// connection.
#[derive(Debug)]
pub struct ServerCpu {
    observer: pgpipe::Client,
    postmaster: u32,
    tick: Duration,
}

/// Backend CPU at one moment.
#[derive(Debug, Clone, Default)]
pub struct ServerSnapshot {
    /// utime + stime of each client backend, in clock ticks.
    backends: HashMap<u32, u64>,
    /// The postmaster's cutime + cstime (its reaped children), in ticks.
    reaped: u64,
}

/// The fields of `/proc/<pid>/stat` after the command name: (ppid, utime +
/// stime, cutime + cstime), in clock ticks.
fn stat(pid: u32) -> Option<(u32, u64, u64)> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    parse_stat(&text)
}

/// The command name of a process (`postgres` for every server process,
/// whatever title it shows).
fn comm(pid: u32) -> Option<String> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/comm")).ok()?;
    Some(text.trim().to_owned())
}

/// CPU time (user + system, all threads) process `pid` has used so far,
/// in clock ticks; `None` when it is gone or not visible.
pub fn process_ticks(pid: u32) -> Option<u64> {
    stat(pid).map(|(_, cpu, _)| cpu)
}

/// The length of one clock tick of `/proc/<pid>/stat`.
pub fn clock_tick() -> Duration {
    // SAFETY: sysconf has no preconditions.
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    Duration::from_secs(1) / hz.max(1) as u32
}

fn parse_stat(text: &str) -> Option<(u32, u64, u64)> {
    // The command name is in parentheses and may contain spaces: the fields
    // start after the last ')'. Field 3 (state) is first there.
    let rest = &text[text.rfind(')')? + 1..];
    let f: Vec<&str> = rest.split_whitespace().collect();
    let num = |i: usize| -> Option<u64> { f.get(i)?.parse().ok() };
    // Numbered from 3 (state): ppid 4, utime 14, stime 15, cutime 16, cstime 17.
    Some((
        num(4 - 3)? as u32,
        num(14 - 3)? + num(15 - 3)?,
        num(16 - 3)? + num(17 - 3)?,
    ))
}

impl ServerCpu {
    /// Connects the observer; `Ok(None)` when the server's processes are
    /// not visible here (another machine, a container).
    pub async fn connect(url: &str) -> Result<Option<ServerCpu>, BenchError> {
        let observer = pgpipe::connect(url)
            .await
            .map_err(|e| BenchError::new(format!("server CPU observer: {e}")))?;
        let own: i32 = match observer.query_one("SELECT pg_backend_pid()", ()).await {
            Ok(row) => row.get(0),
            Err(_) => return Ok(None),
        };
        // The observer's backend must be a process of this machine named
        // postgres, and its parent the postmaster (checked against
        // postmaster.pid when the data directory is readable), else the
        // pids name someone else's processes.
        let Some((postmaster, _, _)) = stat(own as u32) else {
            return Ok(None);
        };
        if comm(own as u32).as_deref() != Some("postgres")
            || comm(postmaster).as_deref() != Some("postgres")
        {
            return Ok(None);
        }
        if let Ok(row) = observer
            .query_one("SELECT current_setting('data_directory')", ())
            .await
        {
            let dir: String = row.get(0);
            if let Ok(pidfile) = std::fs::read_to_string(format!("{dir}/postmaster.pid")) {
                let listed: Option<u32> =
                    pidfile.lines().next().and_then(|l| l.trim().parse().ok());
                if listed != Some(postmaster) {
                    return Ok(None);
                }
            }
        }
        Ok(Some(ServerCpu {
            observer,
            postmaster,
            tick: clock_tick(),
        }))
    }

    /// The backends' CPU now.
    pub async fn snapshot(&self) -> Result<ServerSnapshot, BenchError> {
        let rows = self
            .observer
            .query(
                "SELECT pid FROM pg_stat_activity \
                 WHERE backend_type = 'client backend' AND pid <> pg_backend_pid()",
                (),
            )
            .await
            .map_err(|e| BenchError::new(format!("server CPU observer: {e}")))?;
        let mut backends = HashMap::with_capacity(rows.len());
        for row in rows {
            let pid: i32 = row.get(0);
            if let Some((ppid, cpu, _)) = stat(pid as u32) {
                if ppid == self.postmaster {
                    backends.insert(pid as u32, cpu);
                }
            }
        }
        let reaped = stat(self.postmaster).map_or(0, |(_, _, c)| c);
        Ok(ServerSnapshot { backends, reaped })
    }

    /// Waits (at most 2 s) until no more client backends exist than in
    /// `start`, and a little longer: backends of a finished round (pgbench
    /// exits, its backends exit) reach the postmaster's reaped CPU only
    /// once reaped, which a snapshot taken at once can precede.
    pub async fn settle(&self, start: &ServerSnapshot) {
        let deadline = std::time::Instant::now() + Duration::from_secs(2);
        while std::time::Instant::now() < deadline {
            match self.snapshot().await {
                Ok(now) if now.backends.len() > start.backends.len() => {
                    tokio::time::sleep(Duration::from_millis(10)).await;
                }
                _ => break,
            }
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }

    /// Backend CPU between two snapshots.
    pub fn between(&self, start: &ServerSnapshot, end: &ServerSnapshot) -> Duration {
        self.tick * cpu_between(start, end) as u32
    }
}

/// Ticks spent between `start` and `end`: backends alive at the end count
/// what they spent since the start (all of it if they are new); backends
/// gone by the end count through the postmaster's reaped CPU, minus what
/// they had spent before the start.
fn cpu_between(start: &ServerSnapshot, end: &ServerSnapshot) -> u64 {
    let mut ticks: u64 = 0;
    for (pid, cpu) in &end.backends {
        ticks += cpu.saturating_sub(start.backends.get(pid).copied().unwrap_or(0));
    }
    let gone_before: u64 = start
        .backends
        .iter()
        .filter(|(pid, _)| !end.backends.contains_key(pid))
        .map(|(_, cpu)| cpu)
        .sum();
    ticks
        + end
            .reaped
            .saturating_sub(start.reaped)
            .saturating_sub(gone_before)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stat_fields_after_a_command_name_with_spaces() {
        let line = "4242 (postgres: bench x) S 100 4242 4242 0 -1 4194560 1 0 0 0 \
                    70 30 5 6 20 0 1 0 1 1 1";
        assert_eq!(parse_stat(line), Some((100, 100, 11)));
        assert_eq!(parse_stat("garbage"), None);
    }

    #[test]
    fn exited_backends_count_only_what_they_spent_during_the_run() {
        let start = ServerSnapshot {
            backends: HashMap::from([(1, 100), (2, 50)]),
            reaped: 1000,
        };
        // 1 spent 20; 2 exited having spent 50 + 30 (all 80 reaped); 3 is new.
        let end = ServerSnapshot {
            backends: HashMap::from([(1, 120), (3, 7)]),
            reaped: 1080,
        };
        assert_eq!(cpu_between(&start, &end), 20 + 30 + 7);
    }
}
