//! What a run leaves behind: the results table, verdicts and spectra on
//! stdout, and with `--json` / `--out` the JSON, Markdown and SVG charts.

use std::collections::BTreeMap;

use hdrhistogram::Histogram;

use super::report::{self, Summary, Verdict};
use super::{charts, HttpArgs, HttpReport, Key};

pub(super) fn print(args: &HttpArgs, report: &HttpReport, spectra: &BTreeMap<Key, Histogram<u64>>) {
    println!("{}", report::table(&report.summaries));
    if !report.verdicts.is_empty() {
        println!(
            "\nsweep (p99 <= {} ms, no errors, >= 95% of the rate answered):\n{}",
            args.p99_bound_ms,
            report::verdict_table(&report.verdicts)
        );
    }
    for r in report.runs.iter().filter(|r| r.errors > 0) {
        println!(
            "errors: {} {} {} round {}: {} ({})",
            r.mix,
            r.service,
            r.rate.map_or("closed".into(), |x| format!("{x:.0}/s")),
            r.round,
            r.errors,
            r.first_error.as_deref().unwrap_or("")
        );
    }
    if args.latency {
        for ((mix, service, rate), h) in spectra {
            let title = format!(
                "\n{mix} on {service} at {}",
                rate.map_or("closed loop".into(), |r| format!("{r} req/s"))
            );
            println!("{}", report::spectrum_text(&title, h));
        }
    }
}

pub(super) fn write_outputs(
    args: &HttpArgs,
    report: &HttpReport,
    spectra: &BTreeMap<Key, Histogram<u64>>,
) -> Result<(), String> {
    let json = serde_json::to_string_pretty(report).map_err(|e| e.to_string())?;
    if let Some(path) = &args.json {
        std::fs::write(path, &json).map_err(|e| format!("{}: {e}", path.display()))?;
        println!("wrote {}", path.display());
    }
    let Some(dir) = &args.out else {
        return Ok(());
    };
    std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let write = |name: &str, text: &str| -> Result<(), String> {
        let p = dir.join(name);
        std::fs::write(&p, text).map_err(|e| format!("{}: {e}", p.display()))?;
        println!("wrote {}", p.display());
        Ok(())
    };
    write("results.json", &json)?;
    let mut md = format!("Command: `{}`\n\n", report.command);
    md.push_str(&markdown_summaries(&report.summaries));
    if !report.verdicts.is_empty() {
        md.push_str("\n\n");
        md.push_str(&markdown_verdicts(&report.verdicts));
    }
    for ((mix, service, rate), h) in spectra {
        md.push_str(&format!(
            "\n\n<details><summary>{mix} on {service} at {}</summary>\n\n```\n{}```\n</details>",
            rate.map_or("closed loop".into(), |r| format!("{r} req/s")),
            report::spectrum_text("", h)
        ));
    }
    write("results.md", &md)?;
    // One spectrum chart per mix and rate, the services together.
    let mut groups: BTreeMap<(String, Option<u64>), Vec<charts::Series>> = BTreeMap::new();
    for ((mix, service, rate), h) in spectra {
        groups
            .entry((mix.clone(), *rate))
            .or_default()
            .push((service.clone(), report::spectrum_points(h)));
    }
    for ((mix, rate), series) in &groups {
        let tag = rate.map_or("closed".into(), |r| r.to_string());
        let path = dir.join(format!("spectrum-{mix}-{tag}.svg"));
        let title = format!(
            "{mix}: latency by percentile at {}",
            rate.map_or("closed loop".into(), |r| format!("{r} req/s"))
        );
        charts::spectrum(&path, &title, series)?;
        println!("wrote {}", path.display());
    }
    if !report.verdicts.is_empty() {
        let mut by_mix: BTreeMap<String, Vec<charts::Series>> = BTreeMap::new();
        for s in &report.summaries {
            let Some(rate) = s.rate else { continue };
            let series = by_mix.entry(s.mix.clone()).or_default();
            match series.iter_mut().find(|(n, _)| *n == s.service) {
                Some((_, pts)) => pts.push((rate, s.achieved_rps)),
                None => series.push((s.service.clone(), vec![(rate, s.achieved_rps)])),
            }
        }
        for (mix, mut series) in by_mix {
            for (_, pts) in &mut series {
                pts.sort_by(|a, b| a.0.total_cmp(&b.0));
            }
            let path = dir.join(format!("throughput-{mix}.svg"));
            charts::throughput(&path, &format!("{mix}: answered vs offered rate"), &series)?;
            println!("wrote {}", path.display());
        }
    }
    Ok(())
}

/// The summaries as a Markdown table.
pub fn markdown_summaries(summaries: &[Summary]) -> String {
    let table = report::table(summaries);
    text_to_markdown(&table)
}

/// The verdicts as a Markdown table.
pub fn markdown_verdicts(verdicts: &[Verdict]) -> String {
    text_to_markdown(&report::verdict_table(verdicts))
}

fn text_to_markdown(table: &str) -> String {
    // Columns are separated by two or more spaces in the text table.
    let rows: Vec<Vec<String>> = table
        .lines()
        .filter(|l| !l.starts_with('-'))
        .map(|l| {
            l.split("  ")
                .map(str::trim)
                .filter(|c| !c.is_empty())
                .map(String::from)
                .collect()
        })
        .collect();
    let Some((head, body)) = rows.split_first() else {
        return String::new();
    };
    let headers: Vec<&str> = head.iter().map(String::as_str).collect();
    report::render(&headers, body, true)
}
