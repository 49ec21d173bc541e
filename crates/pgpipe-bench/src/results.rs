//! Result rows: one per (workload, variant, driver), summarizing its rounds.

use hdrhistogram::Histogram;
use serde::Serialize;

use crate::histogram;
use crate::runner::RunOutcome;

/// max/min of the rounds' throughput above which a row is flagged.
pub const SPREAD_LIMIT: f64 = 1.2;

/// One round's figures.
#[derive(Debug, Clone, Serialize)]
pub struct Round {
    /// Operations per second.
    pub ops_per_sec: f64,
    /// Client CPU (user + system) per operation, microseconds.
    pub cpu_us_per_op: f64,
    /// Server (backend) CPU per operation, microseconds, when visible.
    pub server_cpu_us_per_op: Option<f64>,
    /// Context switches of the client per operation.
    pub ctx_switches_per_op: Option<f64>,
    /// Client read + write syscalls per operation (`/proc/self/io`).
    pub syscalls_per_op: Option<f64>,
    /// Parks of the client's runtime workers per operation.
    pub worker_parks_per_op: Option<f64>,
    /// Wall-clock time the client's runtime workers were busy per
    /// operation, microseconds.
    pub worker_busy_us_per_op: Option<f64>,
    /// Allocations per operation (`None` out of process).
    pub allocs_per_op: Option<f64>,
    /// Times pgpipe raised its receive low-water mark, per operation.
    pub low_water_raises_per_op: Option<f64>,
    /// pgpipe's low-water tail waits per operation.
    pub low_water_tail_waits_per_op: Option<f64>,
    /// Rows per operation, when the driver reported its rows.
    pub rows_per_op: Option<f64>,
    /// Peak RSS of the process that did the work, when measured.
    pub peak_rss_bytes: Option<u64>,
    /// Server connections the driver held after the round (`shards`).
    pub server_connections: Option<u64>,
    /// Live heap bytes the driver holds (`shards`).
    pub client_heap_bytes: Option<u64>,
}

impl Round {
    /// The figures of one run; `server` is the backends' CPU during it.
    pub fn from_outcome(o: &RunOutcome, server: Option<std::time::Duration>) -> Round {
        let ops = o.ops.max(1) as f64;
        Round {
            ops_per_sec: o.ops_per_sec(),
            cpu_us_per_op: o.costs.cpu.as_secs_f64() * 1e6 / ops,
            server_cpu_us_per_op: server.map(|d| d.as_secs_f64() * 1e6 / ops),
            ctx_switches_per_op: o.costs.ctx_switches.map(|n| n as f64 / ops),
            syscalls_per_op: o.costs.syscalls.map(|n| n as f64 / ops),
            worker_parks_per_op: o.costs.worker_parks.map(|n| n as f64 / ops),
            worker_busy_us_per_op: o.costs.worker_busy.map(|d| d.as_secs_f64() * 1e6 / ops),
            allocs_per_op: o.costs.allocs.map(|a| a as f64 / ops),
            low_water_raises_per_op: o.low_water.map(|l| l.raises as f64 / ops),
            low_water_tail_waits_per_op: o.low_water.map(|l| l.tail_waits as f64 / ops),
            rows_per_op: o.rows.filter(|_| o.ops > 0).map(|r| r as f64 / ops),
            peak_rss_bytes: o.peak_rss,
            server_connections: o.server_connections,
            client_heap_bytes: o.client_heap_bytes,
        }
    }
}

/// How a row came out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    /// Measured.
    Ok,
    /// The driver cannot express the workload (shown as `-`).
    Unsupported,
    /// The driver failed (shown as `-`, the error in `note`).
    Failed,
}

/// One line of the results (the JSON schema's `results` entries).
#[derive(Debug, Clone, Serialize)]
pub struct ResultRow {
    /// Workload name.
    pub workload: String,
    /// Variant label ("64", "2conn", "50k").
    pub variant: String,
    /// Driver name.
    pub driver: String,
    /// ok / unsupported / failed.
    pub status: Status,
    /// Why unsupported or failed, or a caveat.
    pub note: Option<String>,
    /// Median of the rounds' throughput.
    pub ops_per_sec: Option<f64>,
    /// Slowest round.
    pub ops_per_sec_min: Option<f64>,
    /// Fastest round.
    pub ops_per_sec_max: Option<f64>,
    /// max/min of the rounds > 1.2.
    pub wide_spread: bool,
    /// Per-round throughput.
    pub rounds: Vec<f64>,
    /// Rows each operation reads.
    pub rows_per_op: u64,
    /// Median client CPU per operation, microseconds.
    pub client_cpu_us_per_op: Option<f64>,
    /// Client CPU per row read, nanoseconds.
    pub client_cpu_ns_per_row: Option<f64>,
    /// Median CPU of the server backends serving the driver per operation,
    /// microseconds (`None` when the server's processes are not visible
    /// here, e.g. another machine or the replay server).
    pub server_cpu_us_per_op: Option<f64>,
    /// Median of client + server CPU per operation, microseconds: what
    /// costs count when both share a machine.
    pub system_cpu_us_per_op: Option<f64>,
    /// Median client context switches (voluntary + involuntary, getrusage)
    /// per operation.
    pub ctx_switches_per_op: Option<f64>,
    /// Median client read- and write-family syscalls per operation
    /// (`read`, `write`, `readv`, `writev`, `recvfrom`, `sendto`, `recvmsg`,
    /// `sendmsg`), counted by kernel tracepoints ([`crate::syscalls`]);
    /// `None` for pgbench (another process) and without the privilege to
    /// open the counters.
    pub syscalls_per_op: Option<f64>,
    /// Median parks of the client's tokio runtime workers per operation:
    /// how often a worker ran out of tasks and went to sleep (each park is
    /// a voluntary context switch, and waking it again another). Unlike
    /// `ctx_switches_per_op` it leaves out preemptions by other processes.
    /// `None` for pgbench and child programs.
    pub worker_parks_per_op: Option<f64>,
    /// Median wall-clock time the client's tokio runtime workers were busy
    /// (not parked) per operation, summed over the workers, microseconds.
    /// Above `client_cpu_us_per_op` the workers were runnable but
    /// preempted (on a machine shared with the server, by the server);
    /// well below it, the process spends its CPU outside the workers'
    /// busy time: parking, being woken, the I/O driver. `None` for pgbench
    /// and child programs.
    pub worker_busy_us_per_op: Option<f64>,
    /// Median allocations per operation.
    pub allocs_per_op: Option<f64>,
    /// Median times pgpipe raised its receive low-water mark (`SO_RCVLOWAT`,
    /// from down) per operation; `None` for the other drivers.
    pub low_water_raises_per_op: Option<f64>,
    /// Median times per operation that pgpipe, waiting with the mark up,
    /// found nothing more within the tail wait and read what had come.
    /// Each costs a timer and two `setsockopt` calls; a few per long
    /// answer is the design, one per batch is a mark the server cannot
    /// fill in time. `None` for the other drivers.
    pub low_water_tail_waits_per_op: Option<f64>,
    /// Latency percentiles over all rounds, microseconds.
    pub p50_us: Option<f64>,
    /// 90th percentile.
    pub p90_us: Option<f64>,
    /// 99th percentile.
    pub p99_us: Option<f64>,
    /// 99.9th percentile.
    pub p999_us: Option<f64>,
    /// Largest latency.
    pub max_us: Option<f64>,
    /// Peak RSS of the measuring process, the largest of the rounds
    /// (`stream` only; null elsewhere).
    pub peak_rss_bytes: Option<u64>,
    /// Server connections the driver held, the most after any round
    /// (`shards`: counted in `pg_stat_activity` on every server of the
    /// fleet; null elsewhere).
    pub server_connections: Option<u64>,
    /// Live heap bytes the driver held once connected and primed
    /// (`shards`: the growth of the process's live heap over its setup,
    /// from the counting allocator; null elsewhere).
    pub client_heap_bytes: Option<u64>,
    /// Throughput / tokio-postgres's in the same workload and variant.
    pub ratio_vs_tokio_postgres: Option<f64>,
    /// Throughput / raw's.
    pub ratio_vs_raw: Option<f64>,
    /// Client CPU per op / tokio-postgres's.
    pub cpu_ratio_vs_tokio_postgres: Option<f64>,
    /// System (client + server) CPU per op / tokio-postgres's.
    pub system_cpu_ratio_vs_tokio_postgres: Option<f64>,
    /// Open loop only: (quantile, microseconds) like wrk2 -L.
    pub spectrum: Option<Vec<(f64, f64)>>,
}

fn median(values: &[f64]) -> Option<f64> {
    let mut v: Vec<f64> = values.iter().copied().filter(|x| x.is_finite()).collect();
    if v.is_empty() {
        return None;
    }
    v.sort_by(|a, b| a.total_cmp(b));
    let m = v.len() / 2;
    Some(if v.len().is_multiple_of(2) {
        (v[m - 1] + v[m]) / 2.0
    } else {
        v[m]
    })
}

impl ResultRow {
    /// A row with nothing measured.
    pub fn empty(workload: &str, variant: &str, driver: &str, rows_per_op: u64) -> ResultRow {
        ResultRow {
            workload: workload.into(),
            variant: variant.into(),
            driver: driver.into(),
            status: Status::Ok,
            note: None,
            ops_per_sec: None,
            ops_per_sec_min: None,
            ops_per_sec_max: None,
            wide_spread: false,
            rounds: Vec::new(),
            rows_per_op,
            client_cpu_us_per_op: None,
            client_cpu_ns_per_row: None,
            server_cpu_us_per_op: None,
            system_cpu_us_per_op: None,
            ctx_switches_per_op: None,
            syscalls_per_op: None,
            worker_parks_per_op: None,
            worker_busy_us_per_op: None,
            allocs_per_op: None,
            low_water_raises_per_op: None,
            low_water_tail_waits_per_op: None,
            p50_us: None,
            p90_us: None,
            p99_us: None,
            p999_us: None,
            max_us: None,
            peak_rss_bytes: None,
            server_connections: None,
            client_heap_bytes: None,
            ratio_vs_tokio_postgres: None,
            ratio_vs_raw: None,
            cpu_ratio_vs_tokio_postgres: None,
            system_cpu_ratio_vs_tokio_postgres: None,
            spectrum: None,
        }
    }

    /// Fills the summary from the rounds and their merged latencies.
    pub fn summarize(&mut self, rounds: &[Round], hist: &Histogram<u64>, open_loop: bool) {
        let ops: Vec<f64> = rounds.iter().map(|r| r.ops_per_sec).collect();
        self.rounds = ops.clone();
        self.ops_per_sec = median(&ops);
        self.ops_per_sec_min = ops.iter().copied().reduce(f64::min);
        self.ops_per_sec_max = ops.iter().copied().reduce(f64::max);
        self.wide_spread = matches!((self.ops_per_sec_min, self.ops_per_sec_max), (Some(lo), Some(hi)) if lo > 0.0 && hi / lo > SPREAD_LIMIT);
        if let Some(r) = median(
            &rounds
                .iter()
                .filter_map(|r| r.rows_per_op)
                .collect::<Vec<_>>(),
        ) {
            self.rows_per_op = r.round().max(1.0) as u64;
        }
        self.peak_rss_bytes = rounds.iter().filter_map(|r| r.peak_rss_bytes).max();
        self.server_connections = rounds.iter().filter_map(|r| r.server_connections).max();
        self.client_heap_bytes = rounds.iter().filter_map(|r| r.client_heap_bytes).max();
        self.client_cpu_us_per_op =
            median(&rounds.iter().map(|r| r.cpu_us_per_op).collect::<Vec<_>>());
        self.client_cpu_ns_per_row = self
            .client_cpu_us_per_op
            .map(|c| c * 1000.0 / self.rows_per_op.max(1) as f64);
        let of = |f: fn(&Round) -> Option<f64>| {
            let v: Vec<f64> = rounds.iter().filter_map(f).collect();
            // A figure only when every round has it.
            if v.len() == rounds.len() {
                median(&v)
            } else {
                None
            }
        };
        self.server_cpu_us_per_op = of(|r| r.server_cpu_us_per_op);
        self.system_cpu_us_per_op = of(|r| r.server_cpu_us_per_op.map(|s| s + r.cpu_us_per_op));
        self.ctx_switches_per_op = of(|r| r.ctx_switches_per_op);
        self.syscalls_per_op = of(|r| r.syscalls_per_op);
        self.worker_parks_per_op = of(|r| r.worker_parks_per_op);
        self.worker_busy_us_per_op = of(|r| r.worker_busy_us_per_op);
        self.low_water_raises_per_op = of(|r| r.low_water_raises_per_op);
        self.low_water_tail_waits_per_op = of(|r| r.low_water_tail_waits_per_op);
        let allocs: Vec<f64> = rounds.iter().filter_map(|r| r.allocs_per_op).collect();
        self.allocs_per_op = median(&allocs);
        if let Some(p) = histogram::percentiles(hist) {
            self.p50_us = Some(p.p50_us);
            self.p90_us = Some(p.p90_us);
            self.p99_us = Some(p.p99_us);
            self.p999_us = Some(p.p999_us);
            self.max_us = Some(p.max_us);
        }
        if open_loop && !hist.is_empty() {
            self.spectrum = Some(histogram::spectrum(hist));
        }
    }
}

/// Fills the ratio columns: each row against tokio-postgres and raw in the
/// same workload and variant.
pub fn fill_ratios(rows: &mut [ResultRow]) {
    let find = |rows: &[ResultRow], w: &str, v: &str, d: &str| {
        rows.iter()
            .find(|r| r.workload == w && r.variant == v && r.driver == d && r.status == Status::Ok)
            .map(|r| {
                (
                    r.ops_per_sec,
                    r.client_cpu_us_per_op,
                    r.system_cpu_us_per_op,
                )
            })
    };
    let refs: Vec<_> = rows
        .iter()
        .map(|r| {
            (
                // In ozo, tokio-postgres's pooled rows are deadpool-postgres;
                // in shards, its pools per shard are the reference.
                find(rows, &r.workload, &r.variant, "tokio-postgres").or_else(|| {
                    (r.workload == "ozo" || r.workload == "shards")
                        .then(|| find(rows, &r.workload, &r.variant, "deadpool-postgres"))
                        .flatten()
                }),
                find(rows, &r.workload, &r.variant, "raw"),
            )
        })
        .collect();
    for (row, (tp, raw)) in rows.iter_mut().zip(refs) {
        let ratio = |a: Option<f64>, b: Option<f64>| match (a, b) {
            (Some(a), Some(b)) if b > 0.0 => Some(a / b),
            _ => None,
        };
        if let Some((ops, cpu, system)) = tp {
            row.ratio_vs_tokio_postgres = ratio(row.ops_per_sec, ops);
            row.cpu_ratio_vs_tokio_postgres = ratio(row.client_cpu_us_per_op, cpu);
            row.system_cpu_ratio_vs_tokio_postgres = ratio(row.system_cpu_us_per_op, system);
        }
        if let Some((ops, _, _)) = raw {
            row.ratio_vs_raw = ratio(row.ops_per_sec, ops);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn median_and_spread() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), Some(2.0));
        assert_eq!(median(&[4.0, 1.0, 2.0, 3.0]), Some(2.5));
        assert_eq!(median(&[]), None);
        let mut row = ResultRow::empty("pipeline", "64", "pgpipe", 1);
        let rounds: Vec<Round> = [100.0, 130.0, 110.0]
            .into_iter()
            .map(|o| Round {
                ops_per_sec: o,
                cpu_us_per_op: 2.0,
                server_cpu_us_per_op: Some(3.0),
                ctx_switches_per_op: Some(0.5),
                syscalls_per_op: None,
                worker_parks_per_op: Some(o / 1000.0),
                worker_busy_us_per_op: Some(1.5),
                allocs_per_op: Some(1.0),
                low_water_raises_per_op: None,
                low_water_tail_waits_per_op: Some(o / 100.0),
                rows_per_op: Some(1.0),
                peak_rss_bytes: None,
                server_connections: None,
                client_heap_bytes: None,
            })
            .collect();
        row.summarize(&rounds, &histogram::new_histogram(), false);
        assert_eq!(row.ops_per_sec, Some(110.0));
        assert!(row.wide_spread);
        assert_eq!(row.system_cpu_us_per_op, Some(5.0));
        assert_eq!(row.ctx_switches_per_op, Some(0.5));
        assert_eq!(row.syscalls_per_op, None);
        // The median round's, like every other figure.
        assert_eq!(row.worker_parks_per_op, Some(0.11));
        assert_eq!(row.worker_busy_us_per_op, Some(1.5));
        assert_eq!(row.low_water_tail_waits_per_op, Some(1.1));
        assert_eq!(row.low_water_raises_per_op, None);
    }
}
