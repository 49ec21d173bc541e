//! The `stream` workload runs each driver in a child process of the bench
//! binary (a hidden `--stream-child DRIVER` mode), so that each driver's
//! peak RSS (VmHWM) is its own: a process's high-water mark cannot be reset.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use crate::driver_kind::DriverKind;
use crate::error::BenchError;
use crate::measure::{CpuOf, Probe};

/// Longest a child may run before it is killed.
pub const CHILD_TIMEOUT: Duration = Duration::from_secs(600);

/// What a child reports on its one line of standard output.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct ChildReport {
    /// Rows streamed and checked.
    pub rows: u64,
    /// Wall time of the stream (connect included), seconds.
    pub secs: f64,
    /// CPU time of the child during the stream, seconds.
    pub cpu_secs: f64,
    /// Allocations during the stream (0 without the counting allocator).
    pub allocs: u64,
    /// VmHWM at the end, bytes.
    pub peak_rss_bytes: Option<u64>,
    /// Context switches of the child during the stream.
    #[serde(default)]
    pub ctx_switches: Option<u64>,
    /// Read and write syscalls of the child during the stream.
    #[serde(default)]
    pub syscalls: Option<u64>,
    /// Times the child's runtime workers parked during the stream.
    #[serde(default)]
    pub worker_parks: Option<u64>,
    /// Wall-clock time the child's runtime workers were busy, seconds.
    #[serde(default)]
    pub worker_busy_secs: Option<f64>,
    /// The driver's low-water counts over the stream (pgpipe only).
    #[serde(default)]
    pub low_water: Option<crate::measure::LowWater>,
}

/// VmHWM (peak resident set size) of this process, from /proc/self/status.
pub fn vm_hwm_bytes() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

/// The child's work: stream `rows` with `driver` and report.
pub async fn run_child(driver: &str, url: &str, rows: u64) -> Result<ChildReport, BenchError> {
    let driver = DriverKind::parse(driver).map_err(BenchError::new)?;
    let probe = Probe::start(CpuOf::SelfProcess);
    let start = Instant::now();
    let (n, low_water) = crate::catalog::stream_counted(driver, url, rows).await?;
    let secs = start.elapsed().as_secs_f64();
    let costs = probe.finish();
    Ok(ChildReport {
        rows: n,
        secs,
        cpu_secs: costs.cpu.as_secs_f64(),
        allocs: costs.allocs.unwrap_or(0),
        peak_rss_bytes: vm_hwm_bytes(),
        ctx_switches: costs.ctx_switches,
        syscalls: costs.syscalls,
        worker_parks: costs.worker_parks,
        worker_busy_secs: costs.worker_busy.map(|d| d.as_secs_f64()),
        low_water,
    })
}

/// The bench binary to start children from: `PGPIPE_BENCH_EXE` when set
/// (tests point it at the built binary), else this executable.
pub fn bench_exe() -> Result<PathBuf, BenchError> {
    if let Some(p) = std::env::var_os("PGPIPE_BENCH_EXE") {
        return Ok(PathBuf::from(p));
    }
    std::env::current_exe()
        .map_err(|e| BenchError::new(format!("cannot find the bench binary: {e}")))
}

/// Runs one child of `exe` streaming `rows` with `driver`; killed after
/// [`CHILD_TIMEOUT`].
pub async fn measure(
    exe: &Path,
    driver: DriverKind,
    url: &str,
    rows: u64,
) -> Result<ChildReport, BenchError> {
    let child = tokio::process::Command::new(exe)
        .arg("--stream-child")
        .arg(driver.name())
        .arg("--stream-rows")
        .arg(rows.to_string())
        .arg("--url")
        .arg(url)
        .arg("--no-progress")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .map_err(|e| BenchError::new(format!("cannot start {}: {e}", exe.display())))?;
    let out = tokio::time::timeout(CHILD_TIMEOUT, child.wait_with_output())
        .await
        .map_err(|_| BenchError::new(format!("stream child ({driver}) timed out")))??;
    let stdout = String::from_utf8_lossy(&out.stdout);
    if !out.status.success() {
        return Err(BenchError::new(format!(
            "stream child ({driver}) failed: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        )));
    }
    let line = stdout.lines().last().unwrap_or("");
    serde_json::from_str(line)
        .map_err(|e| BenchError::new(format!("stream child ({driver}) said {line:?}: {e}")))
}
