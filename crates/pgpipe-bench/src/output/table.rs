//! The terminal (and Markdown) table.

use crate::results::{ResultRow, Status};

/// Column headers.
pub const HEADERS: [&str; 25] = [
    "workload",
    "variant",
    "driver",
    "ops/s (median)",
    "min..max",
    "vs tokio-pg",
    "vs raw",
    "p50 us",
    "p99 us",
    "p99.9 us",
    "cpu us/op",
    "cpu vs tokio-pg",
    "srv cpu us/op",
    "sys cpu us/op",
    "sys vs tokio-pg",
    "ctxsw/op",
    "parks/op",
    "busy us/op",
    "rw syscalls/op",
    "allocs/op",
    "raises/op",
    "tails/op",
    "peak RSS MiB",
    "srv conns",
    "heap MiB",
];

fn num(v: Option<f64>, digits: usize) -> String {
    v.map_or_else(|| "-".to_string(), |x| format!("{x:.digits$}"))
}

fn ratio(v: Option<f64>) -> String {
    v.map_or_else(|| "-".to_string(), |x| format!("{x:.2}x"))
}

/// The cells of one row (`-` where nothing was measured; `~` marks a wide
/// spread between rounds).
pub fn cells(r: &ResultRow) -> Vec<String> {
    let ok = r.status == Status::Ok;
    let ops = if ok {
        let mark = if r.wide_spread { " ~" } else { "" };
        format!("{}{mark}", num(r.ops_per_sec, 0))
    } else {
        "-".into()
    };
    let range = match (r.ops_per_sec_min, r.ops_per_sec_max) {
        (Some(a), Some(b)) if ok => format!("{a:.0}..{b:.0}"),
        _ => "-".into(),
    };
    vec![
        r.workload.clone(),
        r.variant.clone(),
        r.driver.clone(),
        ops,
        range,
        ratio(r.ratio_vs_tokio_postgres),
        ratio(r.ratio_vs_raw),
        num(r.p50_us, 1),
        num(r.p99_us, 1),
        num(r.p999_us, 1),
        num(r.client_cpu_us_per_op, 2),
        ratio(r.cpu_ratio_vs_tokio_postgres),
        num(r.server_cpu_us_per_op, 2),
        num(r.system_cpu_us_per_op, 2),
        ratio(r.system_cpu_ratio_vs_tokio_postgres),
        num(r.ctx_switches_per_op, 2),
        num(r.worker_parks_per_op, 2),
        num(r.worker_busy_us_per_op, 2),
        num(r.syscalls_per_op, 2),
        num(r.allocs_per_op, 1),
        num(r.low_water_raises_per_op, 2),
        num(r.low_water_tail_waits_per_op, 2),
        num(r.peak_rss_bytes.map(|b| b as f64 / (1u64 << 20) as f64), 1),
        num(r.server_connections.map(|n| n as f64), 0),
        num(
            r.client_heap_bytes.map(|b| b as f64 / (1u64 << 20) as f64),
            1,
        ),
    ]
}

/// Splits off the drivers that ran nothing in a whole workload (every row
/// `unsupported`): the rows to show, and one line per such workload naming
/// those drivers and why (they are summarized, not dropped silently; the
/// JSON keeps every row).
pub fn shown_rows(rows: &[ResultRow]) -> (Vec<&ResultRow>, Vec<String>) {
    let idle = |w: &str, d: &str| {
        rows.iter()
            .filter(|r| r.workload == w && r.driver == d)
            .all(|r| r.status == Status::Unsupported)
    };
    let mut shown = Vec::new();
    let mut summary: Vec<(String, Vec<String>)> = Vec::new();
    for r in rows {
        if !idle(&r.workload, &r.driver) {
            shown.push(r);
            continue;
        }
        let why = format!(
            "{} ({})",
            r.driver,
            r.note.as_deref().unwrap_or("unsupported")
        );
        match summary.iter_mut().find(|(w, _)| *w == r.workload) {
            Some((_, ds)) if ds.iter().any(|d| d.starts_with(&format!("{} (", r.driver))) => {}
            Some((_, ds)) => ds.push(why),
            None => summary.push((r.workload.clone(), vec![why])),
        }
    }
    let lines = summary
        .into_iter()
        .map(|(w, ds)| format!("{w}: not run by {}", ds.join(", ")))
        .collect();
    (shown, lines)
}

/// The aligned text table, with notes for `-` rows after it.
pub fn render(all: &[ResultRow]) -> String {
    let (rows, not_run) = shown_rows(all);
    let body: Vec<Vec<String>> = rows.iter().map(|r| cells(r)).collect();
    let mut widths: Vec<usize> = HEADERS.iter().map(|h| h.len()).collect();
    for r in &body {
        for (w, c) in widths.iter_mut().zip(r) {
            *w = (*w).max(c.chars().count());
        }
    }
    let line = |cells: &[String]| {
        cells
            .iter()
            .zip(&widths)
            .enumerate()
            .map(|(i, (c, w))| {
                if i < 3 {
                    format!("{c:<w$}")
                } else {
                    format!("{c:>w$}")
                }
            })
            .collect::<Vec<_>>()
            .join("  ")
    };
    let mut out = line(&HEADERS.iter().map(|h| h.to_string()).collect::<Vec<_>>());
    out.push('\n');
    out.push_str(&"-".repeat(widths.iter().sum::<usize>() + 2 * (widths.len() - 1)));
    out.push('\n');
    let mut last = String::new();
    for (r, cells) in rows.iter().zip(&body) {
        if !last.is_empty() && last != r.workload {
            out.push('\n');
        }
        last = r.workload.clone();
        out.push_str(&line(cells));
        out.push('\n');
    }
    let notes: Vec<String> = not_run
        .iter()
        .map(|l| format!("  {l}"))
        .chain(rows.iter().filter_map(|r| {
            r.note
                .as_ref()
                .map(|n| format!("  {} {} {}: {n}", r.workload, r.variant, r.driver))
        }))
        .collect();
    if rows.iter().any(|r| r.wide_spread) {
        out.push_str("\n~ : the rounds' max/min throughput exceeds 1.2 (noisy)\n");
    }
    if !notes.is_empty() {
        out.push_str("\nnotes:\n");
        out.push_str(&notes.join("\n"));
        out.push('\n');
    }
    for r in rows.iter().filter(|r| r.spectrum.is_some()) {
        out.push_str(&format!(
            "\n{} {} {} latency spectrum (corrected for coordinated omission):\n",
            r.workload, r.variant, r.driver
        ));
        for (q, us) in r.spectrum.iter().flatten() {
            out.push_str(&format!("  {:>9.5}%  {us:>12.1} us\n", q * 100.0));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(variant: &str, driver: &str, status: Status) -> ResultRow {
        let mut r = ResultRow::empty("ozo", variant, driver, 1);
        r.status = status;
        if status == Status::Unsupported {
            r.note = Some(format!("{driver} cannot"));
        }
        r
    }

    #[test]
    fn drivers_that_ran_nothing_are_summarized_not_dropped() {
        let rows = vec![
            row("reuse", "pgpipe", Status::Ok),
            row("reuse", "sqlx", Status::Unsupported),
            row("reuse", "deadpool-postgres", Status::Unsupported),
            row("pool", "pgpipe", Status::Ok),
            row("pool", "sqlx", Status::Unsupported),
            row("pool", "deadpool-postgres", Status::Ok),
        ];
        let (shown, not_run) = shown_rows(&rows);
        let names: Vec<(&str, &str)> = shown
            .iter()
            .map(|r| (r.variant.as_str(), r.driver.as_str()))
            .collect();
        assert_eq!(
            names,
            [
                ("reuse", "pgpipe"),
                ("reuse", "deadpool-postgres"),
                ("pool", "pgpipe"),
                ("pool", "deadpool-postgres")
            ]
        );
        assert_eq!(not_run, ["ozo: not run by sqlx (sqlx cannot)"]);
        let text = render(&rows);
        assert!(
            text.contains("ozo: not run by sqlx (sqlx cannot)"),
            "{text}"
        );
        assert!(text.contains("deadpool-postgres cannot"), "{text}");
    }
}
