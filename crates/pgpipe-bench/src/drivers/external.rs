//! The peers of other languages, run as child programs for the
//! `magicstack` workload: asyncpg (`external/asyncpg_bench.py`, Python)
//! and pgx (`external/pgx/main.go`, Go). Each run is one child that
//! connects [`CONCURRENCY`] connections, warms them, runs the query in a
//! loop for the run's duration and prints an [`ExternalReport`]: its
//! operations, rows, the loop's wall time and its own CPU time over the
//! loop (getrusage), so start-up and connecting are not counted.
//!
//! A peer runs only when its toolchain and library are present
//! ([`availability`]): python3 that imports asyncpg; a built `pgx-bench`
//! or a `go` that can build it. Otherwise its rows show `-` with the
//! reason. `scripts/ensure-bench-peers.sh` installs both into
//! [`peers_dir`].
//!
//! [`CONCURRENCY`]: crate::families::magicstack::CONCURRENCY

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use tokio::sync::OnceCell;

use crate::driver_kind::DriverKind;
use crate::error::BenchError;
use crate::families::magicstack::{parse_report, ExternalReport, MagicQuery};

/// Longest a toolchain check (a `go build` included) may take.
const PROBE_TIMEOUT: Duration = Duration::from_secs(300);

/// Where the programs' sources are (`PGPIPE_BENCH_EXTERNAL`, or the
/// crate's `external/` folder).
pub fn sources_dir() -> PathBuf {
    std::env::var_os("PGPIPE_BENCH_EXTERNAL")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("external"))
}

/// Where `scripts/ensure-bench-peers.sh` puts the virtualenv and the
/// built pgx program (`PGPIPE_BENCH_PEERS`, or
/// `~/.cache/pgpipe-bench/peers`).
pub fn peers_dir() -> PathBuf {
    if let Some(p) = std::env::var_os("PGPIPE_BENCH_PEERS") {
        return PathBuf::from(p);
    }
    let home = std::env::var_os("HOME").unwrap_or_else(|| ".".into());
    Path::new(&home).join(".cache/pgpipe-bench/peers")
}

/// How a peer is started: a program and the arguments before the run's.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Command {
    /// The executable.
    pub program: PathBuf,
    /// Arguments before URL, query, concurrency, duration, search path.
    pub args: Vec<String>,
    /// Version of the driver, when known before running.
    pub version: Option<String>,
}

/// Whether the toolchains may download (the bench: yes, `go build` may
/// fetch pgx from the module proxy; tests: no, only what is cached).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fetch {
    /// Modules may come from the Go proxy.
    Allowed,
    /// Offline: `GOPROXY=off`.
    Offline,
}

/// The command that runs `driver`, or why it cannot run here. Checked
/// once per process and driver (a `go build` when needed).
pub async fn availability(driver: DriverKind, fetch: Fetch) -> Result<Command, String> {
    static ASYNCPG: OnceCell<Result<Command, String>> = OnceCell::const_new();
    static PGX: OnceCell<Result<Command, String>> = OnceCell::const_new();
    let cell = match driver {
        DriverKind::Asyncpg => &ASYNCPG,
        DriverKind::Pgx => &PGX,
        other => return Err(format!("{other} is not an external driver")),
    };
    cell.get_or_init(|| async move {
        let probe = async {
            match driver {
                DriverKind::Asyncpg => asyncpg().await,
                _ => pgx(fetch).await,
            }
        };
        tokio::time::timeout(PROBE_TIMEOUT, probe)
            .await
            .unwrap_or_else(|_| Err(format!("{driver}: checking the toolchain timed out")))
    })
    .await
    .clone()
}

/// The Python to use: `PGPIPE_BENCH_PYTHON`, the peers' virtualenv, or
/// `python3` on PATH.
fn python() -> PathBuf {
    if let Some(p) = std::env::var_os("PGPIPE_BENCH_PYTHON") {
        return PathBuf::from(p);
    }
    let venv = peers_dir().join("venv/bin/python3");
    if venv.exists() {
        venv
    } else {
        PathBuf::from("python3")
    }
}

async fn asyncpg() -> Result<Command, String> {
    let python = python();
    let out = tokio::process::Command::new(&python)
        .args(["-c", "import asyncpg; print(asyncpg.__version__)"])
        .stdin(Stdio::null())
        .kill_on_drop(true)
        .output()
        .await
        .map_err(|e| {
            format!(
                "no {} ({e}): run scripts/ensure-bench-peers.sh",
                python.display()
            )
        })?;
    if !out.status.success() {
        return Err(format!(
            "{} cannot import asyncpg: run scripts/ensure-bench-peers.sh",
            python.display()
        ));
    }
    let script = sources_dir().join("asyncpg_bench.py");
    if !script.exists() {
        return Err(format!("{} is missing", script.display()));
    }
    Ok(Command {
        program: python,
        args: vec![script.to_string_lossy().into_owned()],
        version: Some(String::from_utf8_lossy(&out.stdout).trim().to_string()),
    })
}

/// The pgx program: `PGPIPE_BENCH_PGX`, or the peers' `pgx-bench` when it
/// is newer than its sources, or built there now with `go build`.
async fn pgx(fetch: Fetch) -> Result<Command, String> {
    if let Some(p) = std::env::var_os("PGPIPE_BENCH_PGX") {
        return Ok(Command {
            program: PathBuf::from(p),
            args: Vec::new(),
            version: None,
        });
    }
    let src = sources_dir().join("pgx");
    let exe = peers_dir().join("pgx-bench");
    let modified = |p: &Path| std::fs::metadata(p).and_then(|m| m.modified()).ok();
    let newest_source = ["main.go", "go.mod", "go.sum"]
        .iter()
        .filter_map(|f| modified(&src.join(f)))
        .max();
    let fresh = match (modified(&exe), newest_source) {
        (Some(e), Some(s)) => e >= s,
        (Some(_), None) => true,
        _ => false,
    };
    if !fresh {
        if !src.join("main.go").exists() {
            return Err(format!("{} is missing", src.join("main.go").display()));
        }
        let mut cmd = tokio::process::Command::new("go");
        cmd.arg("build")
            .arg("-o")
            .arg(&exe)
            .arg(".")
            .current_dir(&src)
            .stdin(Stdio::null())
            .kill_on_drop(true);
        if fetch == Fetch::Offline {
            cmd.env("GOPROXY", "off").env("GOFLAGS", "-mod=mod");
        }
        let out = cmd.output().await.map_err(|e| {
            format!("no go toolchain ({e}): install Go, then run scripts/ensure-bench-peers.sh")
        })?;
        if !out.status.success() {
            let err = String::from_utf8_lossy(&out.stderr);
            let first = err.lines().next().unwrap_or("").trim();
            return Err(format!(
                "go cannot build {} ({first}): run scripts/ensure-bench-peers.sh",
                src.display()
            ));
        }
    }
    Ok(Command {
        program: exe,
        args: Vec::new(),
        version: None,
    })
}

/// One run of `query` by the peer `command`: `concurrency` connections
/// for `duration`.
pub async fn run(
    command: &Command,
    url: &str,
    query: MagicQuery,
    concurrency: usize,
    duration: Duration,
) -> Result<ExternalReport, BenchError> {
    let out = tokio::process::Command::new(&command.program)
        .args(&command.args)
        .arg(url)
        .arg(query.name())
        .arg(concurrency.to_string())
        .arg(format!("{:.3}", duration.as_secs_f64()))
        .arg(query.schema())
        .stdin(Stdio::null())
        .kill_on_drop(true)
        .output()
        .await
        .map_err(|e| BenchError::new(format!("cannot run {}: {e}", command.program.display())))?;
    if !out.status.success() {
        let err = String::from_utf8_lossy(&out.stderr);
        let last = err
            .lines()
            .rev()
            .find(|l| !l.trim().is_empty())
            .unwrap_or("");
        return Err(BenchError::new(format!(
            "{} failed ({}): {}",
            command.program.display(),
            out.status,
            last.trim()
        )));
    }
    parse_report(&String::from_utf8_lossy(&out.stdout))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_programs_are_in_the_repo() {
        let dir = sources_dir();
        assert!(dir.join("asyncpg_bench.py").exists());
        assert!(dir.join("pgx/main.go").exists());
        assert!(dir.join("pgx/go.mod").exists());
        assert!(dir.join("pgx/go.sum").exists());
    }

    #[tokio::test]
    async fn only_the_external_drivers_are_probed() {
        let e = availability(DriverKind::Pgpipe, Fetch::Offline).await;
        assert!(e.unwrap_err().contains("not an external driver"));
    }
}
