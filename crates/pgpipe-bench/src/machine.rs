//! What the numbers were measured on.

use serde::Serialize;

/// The machine, the server and the code measured.
#[derive(Debug, Clone, Serialize, Default)]
pub struct Machine {
    /// CPU model from /proc/cpuinfo.
    pub cpu_model: Option<String>,
    /// Cores available to this process.
    pub cores: usize,
    /// Total memory, bytes.
    pub memory_bytes: Option<u64>,
    /// Kernel release.
    pub kernel: Option<String>,
    /// PostgreSQL `server_version`.
    pub postgres_version: Option<String>,
    /// Key server settings (name, value).
    pub postgres_settings: Vec<(String, String)>,
    /// `git rev-parse HEAD` of the working tree, when available.
    pub git_commit: Option<String>,
    /// Whether the server is a throwaway cluster started by the tool.
    pub throwaway_cluster: bool,
    /// How client and server were pinned to CPUs (`--pin`), if they were.
    pub pinning: Option<String>,
}

fn read(path: &str) -> Option<String> {
    std::fs::read_to_string(path).ok()
}

/// Gathers machine facts; `client` reads the server's version and settings.
pub async fn gather(client: &tokio_postgres::Client, throwaway: bool) -> Machine {
    let cpu_model = read("/proc/cpuinfo").and_then(|s| {
        s.lines()
            .find(|l| l.starts_with("model name"))
            .and_then(|l| l.split(':').nth(1))
            .map(|m| m.trim().to_string())
    });
    let memory_bytes = read("/proc/meminfo").and_then(|s| {
        s.lines()
            .find(|l| l.starts_with("MemTotal:"))
            .and_then(|l| l.split_whitespace().nth(1))
            .and_then(|kb| kb.parse::<u64>().ok())
            .map(|kb| kb * 1024)
    });
    let kernel = read("/proc/sys/kernel/osrelease").map(|s| s.trim().to_string());
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let git_commit = std::process::Command::new("git")
        .args(["rev-parse", "HEAD"])
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string());
    let mut postgres_settings = Vec::new();
    let mut postgres_version = None;
    if let Ok(rows) = client
        .query(
            "SELECT name, setting || coalesce(unit, '') FROM pg_settings WHERE name = ANY($1) ORDER BY name",
            &[&vec![
                "server_version",
                "shared_buffers",
                "fsync",
                "synchronous_commit",
                "max_connections",
                "work_mem",
                "jit",
            ]],
        )
        .await
    {
        for r in rows {
            let (Ok(n), Ok(v)) = (r.try_get::<_, String>(0), r.try_get::<_, String>(1)) else {
                continue;
            };
            if n == "server_version" {
                postgres_version = Some(v);
            } else {
                postgres_settings.push((n, v));
            }
        }
    }
    Machine {
        cpu_model,
        cores,
        memory_bytes,
        kernel,
        postgres_version,
        postgres_settings,
        git_commit,
        throwaway_cluster: throwaway,
        pinning: None,
    }
}
