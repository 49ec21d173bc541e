//! results.md: the same table in Markdown, with the machine and command.

use std::path::Path;

use crate::error::BenchError;
use crate::output::table;
use crate::suite::Report;

/// The Markdown document.
pub fn render(report: &Report) -> String {
    let m = &report.machine;
    let mut s = String::from("# pgpipe-bench results\n\n");
    s.push_str(&format!("Command: `{}`\n\n", report.command));
    s.push_str(&format!(
        "Machine: {} ({} cores, {:.1} GiB), kernel {}; PostgreSQL {}; pgpipe commit {}\n\n",
        m.cpu_model.as_deref().unwrap_or("?"),
        m.cores,
        m.memory_bytes.unwrap_or(0) as f64 / (1u64 << 30) as f64,
        m.kernel.as_deref().unwrap_or("?"),
        m.postgres_version.as_deref().unwrap_or("?"),
        m.git_commit.as_deref().unwrap_or("?"),
    ));
    s.push_str(&format!(
        "Rounds: {} x {:.1} s after {:.1} s warm-up, drivers alternating.\n\n",
        report.rounds, report.duration_secs, report.warmup_secs
    ));
    s.push_str(&format!("| {} |\n", table::HEADERS.join(" | ")));
    s.push_str(&format!("|{}\n", " --- |".repeat(table::HEADERS.len())));
    let (rows, not_run) = table::shown_rows(&report.results);
    for r in &rows {
        s.push_str(&format!("| {} |\n", table::cells(r).join(" | ")));
    }
    let notes: Vec<String> = not_run
        .iter()
        .map(|l| format!("- {l}"))
        .chain(rows.iter().filter_map(|r| {
            r.note
                .as_ref()
                .map(|n| format!("- {} {} {}: {n}", r.workload, r.variant, r.driver))
        }))
        .collect();
    let charts: Vec<String> = {
        let mut w: Vec<&str> = report.results.iter().map(|r| r.workload.as_str()).collect();
        w.dedup();
        w.iter().map(|w| format!("![{w}]({w}.svg)")).collect()
    };
    if !charts.is_empty() {
        s.push_str("\nCharts (ops/s, log scale):\n\n");
        s.push_str(&charts.join("\n"));
        s.push('\n');
    }
    if !notes.is_empty() {
        s.push_str("\nNotes:\n\n");
        s.push_str(&notes.join("\n"));
        s.push('\n');
    }
    s
}

/// Writes `results.md`, `results.json` and one `<workload>.svg` chart per
/// workload into `dir`; returns their paths.
pub fn write_dir(report: &Report, dir: &Path) -> Result<Vec<String>, BenchError> {
    std::fs::create_dir_all(dir)?;
    let md = dir.join("results.md");
    std::fs::write(&md, render(report))?;
    let json = dir.join("results.json");
    crate::output::json::write(report, &json)?;
    let mut paths = vec![md.display().to_string(), json.display().to_string()];
    paths.extend(crate::output::charts::write(&report.results, dir)?);
    Ok(paths)
}
