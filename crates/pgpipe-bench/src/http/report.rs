//! Results of `pgpipe-bench http`: one record per run, medians per
//! (mix, service, rate), the sweep's verdicts, the wrk2 `-L` spectrum,
//! a text table and Markdown.

use hdrhistogram::Histogram;
use serde::Serialize;

use crate::histogram::percentiles;

/// One measured run.
#[derive(Debug, Clone, Serialize)]
pub struct RunRecord {
    /// Mix name.
    pub mix: String,
    /// Service (driver) name.
    pub service: String,
    /// Target rate (open loop), `None` for closed loop.
    pub rate: Option<f64>,
    /// Round number (from 1).
    pub round: u32,
    /// Answers received.
    pub requests: u64,
    /// Wrong or failed answers plus requests never sent.
    pub errors: u64,
    /// The first error.
    pub first_error: Option<String>,
    /// Answers per second.
    pub achieved_rps: f64,
    /// Corrected p50, µs.
    pub p50_us: f64,
    /// Corrected p99, µs.
    pub p99_us: f64,
    /// Corrected p99.9, µs.
    pub p999_us: f64,
    /// Corrected max, µs.
    pub max_us: f64,
    /// Uncorrected p99 (from the actual send), µs.
    pub p99_uncorrected_us: f64,
    /// CPU of the service process per answer, µs (services this tool
    /// started).
    pub service_cpu_us: Option<f64>,
    /// CPU of the database backends per answer, µs (a server on this
    /// machine).
    pub server_cpu_us: Option<f64>,
}

/// Medians over the rounds of one (mix, service, rate).
#[derive(Debug, Clone, Serialize)]
pub struct Summary {
    /// Mix name.
    pub mix: String,
    /// Service name.
    pub service: String,
    /// Target rate (`None`: closed loop).
    pub rate: Option<f64>,
    /// Rounds measured.
    pub rounds: usize,
    /// Median answers/s.
    pub achieved_rps: f64,
    /// Median p50, µs.
    pub p50_us: f64,
    /// Median p99, µs.
    pub p99_us: f64,
    /// Median p99.9, µs.
    pub p999_us: f64,
    /// Largest max, µs.
    pub max_us: f64,
    /// Errors over all rounds.
    pub errors: u64,
    /// Median CPU of the service process per answer, µs.
    pub service_cpu_us: Option<f64>,
    /// Median CPU of the database backends per answer, µs.
    pub server_cpu_us: Option<f64>,
    /// Open loop: the rate was sustained (no errors, ≥ 95% of the rate
    /// answered, median p99 within the bound).
    pub sustained: Option<bool>,
}

/// The sweep's answer for one mix and service.
#[derive(Debug, Clone, Serialize)]
pub struct Verdict {
    /// Mix name.
    pub mix: String,
    /// Service name.
    pub service: String,
    /// Highest swept rate sustained, if any.
    pub highest_rate: Option<f64>,
    /// That rate over tokio-postgres's.
    pub vs_tokio_postgres: Option<f64>,
}

/// The median of the values present, `None` if there are none.
fn median_of(v: impl Iterator<Item = Option<f64>>) -> Option<f64> {
    let v: Vec<f64> = v.flatten().collect();
    (!v.is_empty()).then(|| median(v))
}

fn median(mut v: Vec<f64>) -> f64 {
    if v.is_empty() {
        return f64::NAN;
    }
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

/// One record from a run's outcome.
pub fn record(
    mix: &str,
    service: &str,
    rate: Option<f64>,
    round: u32,
    o: &super::load::Outcome,
    cpu: super::cpu::PerRequest,
) -> RunRecord {
    let p = percentiles(&o.corrected);
    let u = percentiles(&o.uncorrected);
    RunRecord {
        mix: mix.to_string(),
        service: service.to_string(),
        rate,
        round,
        requests: o.requests,
        errors: o.errors + o.not_sent,
        first_error: o.first_error.clone(),
        achieved_rps: o.achieved_rps(),
        p50_us: p.map_or(f64::NAN, |p| p.p50_us),
        p99_us: p.map_or(f64::NAN, |p| p.p99_us),
        p999_us: p.map_or(f64::NAN, |p| p.p999_us),
        max_us: p.map_or(f64::NAN, |p| p.max_us),
        p99_uncorrected_us: u.map_or(f64::NAN, |p| p.p99_us),
        service_cpu_us: cpu.service_us,
        server_cpu_us: cpu.server_us,
    }
}

/// The medians of `records` (all of one mix, service and rate).
pub fn summarize(records: &[&RunRecord], p99_bound_us: f64) -> Summary {
    let first = records[0];
    let achieved = median(records.iter().map(|r| r.achieved_rps).collect());
    let p99 = median(records.iter().map(|r| r.p99_us).collect());
    let errors = records.iter().map(|r| r.errors).sum();
    Summary {
        mix: first.mix.clone(),
        service: first.service.clone(),
        rate: first.rate,
        rounds: records.len(),
        achieved_rps: achieved,
        p50_us: median(records.iter().map(|r| r.p50_us).collect()),
        p99_us: p99,
        p999_us: median(records.iter().map(|r| r.p999_us).collect()),
        max_us: records.iter().map(|r| r.max_us).fold(0.0, f64::max),
        errors,
        service_cpu_us: median_of(records.iter().map(|r| r.service_cpu_us)),
        server_cpu_us: median_of(records.iter().map(|r| r.server_cpu_us)),
        sustained: first
            .rate
            .map(|rate| errors == 0 && achieved >= 0.95 * rate && p99 <= p99_bound_us),
    }
}

/// The results table.
pub fn table(summaries: &[Summary]) -> String {
    let headers = [
        "mix",
        "service",
        "rate",
        "rounds",
        "req/s (median)",
        "p50 ms",
        "p99 ms",
        "p99.9 ms",
        "max ms",
        "errors",
        "sustained",
        "service CPU us/req",
        "db CPU us/req",
    ];
    let rows: Vec<Vec<String>> = summaries
        .iter()
        .map(|s| {
            vec![
                s.mix.clone(),
                s.service.clone(),
                s.rate.map_or("closed".into(), |r| format!("{r:.0}")),
                s.rounds.to_string(),
                format!("{:.0}", s.achieved_rps),
                format!("{:.2}", s.p50_us / 1000.0),
                format!("{:.2}", s.p99_us / 1000.0),
                format!("{:.2}", s.p999_us / 1000.0),
                format!("{:.2}", s.max_us / 1000.0),
                s.errors.to_string(),
                match s.sustained {
                    Some(true) => "yes".into(),
                    Some(false) => "no".into(),
                    None => "-".into(),
                },
                s.service_cpu_us.map_or("-".into(), |c| format!("{c:.1}")),
                s.server_cpu_us.map_or("-".into(), |c| format!("{c:.1}")),
            ]
        })
        .collect();
    render(&headers, &rows, false)
}

/// The sweep's verdicts as a table.
pub fn verdict_table(verdicts: &[Verdict]) -> String {
    let headers = [
        "mix",
        "service",
        "highest rate with p99 within bound",
        "vs tokio-postgres",
    ];
    let rows: Vec<Vec<String>> = verdicts
        .iter()
        .map(|v| {
            vec![
                v.mix.clone(),
                v.service.clone(),
                v.highest_rate.map_or("none".into(), |r| format!("{r:.0}")),
                v.vs_tokio_postgres
                    .map_or("-".into(), |x| format!("{x:.2}x")),
            ]
        })
        .collect();
    render(&headers, &rows, false)
}

/// A table in text (`markdown` false) or Markdown.
pub fn render(headers: &[&str], rows: &[Vec<String>], markdown: bool) -> String {
    let mut widths: Vec<usize> = headers.iter().map(|h| h.len()).collect();
    for r in rows {
        for (w, c) in widths.iter_mut().zip(r) {
            *w = (*w).max(c.chars().count());
        }
    }
    let line = |cells: Vec<String>| -> String {
        let padded: Vec<String> = cells
            .iter()
            .zip(&widths)
            .map(|(c, w)| format!("{c:<w$}"))
            .collect();
        if markdown {
            format!("| {} |", padded.join(" | "))
        } else {
            padded.join("  ").trim_end().to_string()
        }
    };
    let mut out = vec![line(headers.iter().map(|h| h.to_string()).collect())];
    out.push(if markdown {
        format!(
            "|{}|",
            widths
                .iter()
                .map(|w| "-".repeat(w + 2))
                .collect::<Vec<_>>()
                .join("|")
        )
    } else {
        widths
            .iter()
            .map(|w| "-".repeat(*w))
            .collect::<Vec<_>>()
            .join("  ")
    });
    out.extend(rows.iter().map(|r| line(r.clone())));
    out.join("\n")
}

/// The spectrum as wrk2 `-L` prints it: the latency distribution at
/// 50..100 %, then the detailed percentile spectrum (value in ms,
/// percentile, total count, 1/(1-percentile)).
pub fn spectrum_text(title: &str, hist: &Histogram<u64>) -> String {
    let mut s =
        format!("{title}\n  Latency Distribution (HdrHistogram - Recorded Latency, corrected)\n");
    if hist.is_empty() {
        s.push_str("  (no requests)\n");
        return s;
    }
    for q in [0.5, 0.75, 0.9, 0.99, 0.999, 0.9999, 0.99999, 1.0] {
        let ms = hist.value_at_quantile(q) as f64 / 1e6;
        s.push_str(&format!("  {:>8.3}%  {ms:>9.3}ms\n", q * 100.0));
    }
    s.push_str("\n  Detailed Percentile spectrum:\n       Value   Percentile   TotalCount 1/(1-Percentile)\n\n");
    let mut total: u64 = 0;
    for v in hist.iter_quantiles(5) {
        total += v.count_since_last_iteration();
        let q = v.quantile_iterated_to();
        let inv = if q < 1.0 {
            format!("{:>12.2}", 1.0 / (1.0 - q))
        } else {
            format!("{:>12}", "inf")
        };
        s.push_str(&format!(
            "  {:>10.3} {:>12.6} {:>12} {inv}\n",
            v.value_iterated_to() as f64 / 1e6,
            q,
            total
        ));
    }
    s.push_str(&format!(
        "  #[Mean = {:.3}, StdDeviation = {:.3}]\n  #[Max = {:.3}, Total count = {}]\n",
        hist.mean() / 1e6,
        hist.stdev() / 1e6,
        hist.max() as f64 / 1e6,
        hist.len()
    ));
    s
}

/// `(1/(1-q), ms)` points of the spectrum, for the chart.
pub fn spectrum_points(hist: &Histogram<u64>) -> Vec<(f64, f64)> {
    if hist.is_empty() {
        return Vec::new();
    }
    hist.iter_quantiles(5)
        .filter(|v| v.quantile_iterated_to() < 1.0)
        .map(|v| {
            (
                1.0 / (1.0 - v.quantile_iterated_to()),
                v.value_iterated_to() as f64 / 1e6,
            )
        })
        .collect()
}
