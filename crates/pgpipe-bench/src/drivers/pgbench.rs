//! The `pgbench` peer (libpq): a generated script of point selects run with
//! `-M prepared` (`-M extended` for `unprepared`), `-c <connections> -j 1`.
//! N concurrent requests on one connection are expressed as a pipeline of N
//! selects (`\startpipeline` .. `\endpipeline`) per transaction: batches,
//! not a continuous pipeline. Only throughput is parsed (no percentiles).

use std::path::PathBuf;
use std::time::Duration;

use crate::error::BenchError;
use crate::fixtures::{KV_ROWS, POINT_SQL};
use crate::workload::{Variant, Workload};

/// The script for one transaction of `n` point selects.
pub fn script(n: usize) -> String {
    let select = POINT_SQL.replace("$1", ":k");
    if n <= 1 {
        return format!("\\set k random(1, {KV_ROWS})\n{select};\n");
    }
    let mut s = String::new();
    for i in 0..n {
        s.push_str(&format!("\\set k{i} random(1, {KV_ROWS})\n"));
    }
    s.push_str("\\startpipeline\n");
    for i in 0..n {
        s.push_str(&POINT_SQL.replace("$1", &format!(":k{i}")));
        s.push_str(";\n");
    }
    s.push_str("\\endpipeline\n");
    s
}

/// Parses `tps = 1234.5 (...)` from pgbench's report.
pub fn parse_tps(output: &str) -> Option<f64> {
    output.lines().find_map(|l| {
        let rest = l.trim().strip_prefix("tps = ")?;
        rest.split_whitespace().next()?.parse().ok()
    })
}

/// A pgbench setup: connection environment and script file.
#[derive(Debug)]
pub struct Pgbench {
    env: Vec<(String, String)>,
    script: PathBuf,
    per_txn: usize,
    connections: usize,
    mode: &'static str,
}

impl Pgbench {
    /// Writes the script for `variant` of `workload`.
    pub fn new(url: &str, workload: Workload, variant: &Variant) -> Result<Pgbench, BenchError> {
        let config: tokio_postgres::Config = url
            .parse()
            .map_err(|e| BenchError::new(format!("pgbench: bad URL: {e}")))?;
        let mut env = Vec::new();
        if let Some(h) = config.get_hosts().first() {
            let h = match h {
                tokio_postgres::config::Host::Tcp(h) => h.clone(),
                tokio_postgres::config::Host::Unix(p) => p.to_string_lossy().into_owned(),
            };
            env.push(("PGHOST".to_string(), h));
        }
        if let Some(p) = config.get_ports().first() {
            env.push(("PGPORT".to_string(), p.to_string()));
        }
        if let Some(u) = config.get_user() {
            env.push(("PGUSER".to_string(), u.to_string()));
        }
        if let Some(d) = config.get_dbname() {
            env.push(("PGDATABASE".to_string(), d.to_string()));
        }
        if let Some(p) = config.get_password() {
            env.push((
                "PGPASSWORD".to_string(),
                String::from_utf8_lossy(p).into_owned(),
            ));
        }
        let per_txn = match variant.shape {
            crate::shape::Shape::Batch { size } => size.max(1),
            _ => variant.tasks_per_conn.max(1),
        };
        let path = std::env::temp_dir().join(format!(
            "pgpipe-bench-{}-{}-{}.sql",
            std::process::id(),
            workload.name(),
            variant.label
        ));
        std::fs::write(&path, script(per_txn))?;
        Ok(Pgbench {
            env,
            script: path,
            per_txn,
            connections: variant.connections.max(1),
            mode: if workload == Workload::Unprepared {
                "extended"
            } else {
                "prepared"
            },
        })
    }

    /// Runs pgbench for `duration` (rounded up to whole seconds, its
    /// granularity), optionally at `rate` selects/s; returns (selects, elapsed).
    pub async fn run(
        &self,
        duration: Duration,
        rate: Option<f64>,
    ) -> Result<(u64, Duration), BenchError> {
        let secs = duration.as_secs_f64().ceil().max(1.0) as u64;
        let mut cmd = tokio::process::Command::new("pgbench");
        cmd.arg("-n")
            .arg("-f")
            .arg(&self.script)
            .arg("-M")
            .arg(self.mode)
            .arg("-c")
            .arg(self.connections.to_string())
            .arg("-j")
            .arg("1")
            .arg("-T")
            .arg(secs.to_string())
            .kill_on_drop(true);
        if let Some(r) = rate {
            cmd.arg("-R").arg(format!("{:.3}", r / self.per_txn as f64));
        }
        for (k, v) in &self.env {
            cmd.env(k, v);
        }
        let out = tokio::time::timeout(Duration::from_secs(secs + 30), cmd.output())
            .await
            .map_err(|_| BenchError::new("pgbench did not finish in time"))?
            .map_err(|e| BenchError::new(format!("cannot run pgbench: {e}")))?;
        let stdout = String::from_utf8_lossy(&out.stdout);
        if !out.status.success() {
            return Err(BenchError::new(format!(
                "pgbench failed: {}",
                String::from_utf8_lossy(&out.stderr).trim()
            )));
        }
        if stdout
            .lines()
            .any(|l| l.starts_with("number of failed transactions") && !l.contains(": 0 "))
        {
            return Err(BenchError::new("pgbench reported failed transactions"));
        }
        let tps = parse_tps(&stdout)
            .filter(|t| *t > 0.0)
            .ok_or_else(|| BenchError::new("pgbench printed no tps"))?;
        let selects = tps * self.per_txn as f64 * secs as f64;
        Ok((selects as u64, Duration::from_secs(secs)))
    }
}

impl Drop for Pgbench {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.script);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tps_is_parsed() {
        let out = "latency average = 0.1 ms\ntps = 9876.543210 (without initial connection time)\n";
        assert_eq!(parse_tps(out), Some(9876.54321));
        assert_eq!(parse_tps("nothing"), None);
        assert!(script(3).contains("\\startpipeline"));
    }
}
