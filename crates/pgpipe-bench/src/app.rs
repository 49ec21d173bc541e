//! The program: a plan in, a table and result files out.

use std::path::PathBuf;
use std::time::{SystemTime, UNIX_EPOCH};

use crate::cli::Plan;
use crate::error::BenchError;
use crate::output;
use crate::suite::{self, Report};
use crate::{fixtures, machine};

/// Where results go when neither `--json` nor `--out` is given.
pub const DEFAULT_OUT: &str = "target/pgpipe-bench";

/// Runs `plan` against `url` (fixtures first) and returns the report.
pub async fn run(
    plan: &Plan,
    url: &str,
    throwaway: bool,
    command: String,
    pinning: Option<String>,
) -> Result<Report, BenchError> {
    let started_unix = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let filled = fixtures::ensure(url)
        .await
        .map_err(|e| e.context("creating fixtures"))?;
    if !filled.filled.is_empty() && plan.progress {
        eprintln!("fixtures filled: {}", filled.filled.join(", "));
    }
    let setup = fixtures::setup_client(url).await?;
    let mut machine = machine::gather(&setup, throwaway).await;
    machine.pinning = pinning;
    drop(setup);
    let results = suite::run(plan, url).await;
    Ok(Report {
        command,
        started_unix,
        machine,
        duration_secs: plan.duration.as_secs_f64(),
        rounds: plan.rounds,
        warmup_secs: plan.warmup.as_secs_f64(),
        rate: plan.rate,
        results,
    })
}

/// Writes the files the plan asks for (by default results.md and
/// results.json under [`DEFAULT_OUT`]); returns their paths.
pub fn write_outputs(plan: &Plan, report: &Report) -> Result<Vec<String>, BenchError> {
    let mut paths = Vec::new();
    if let Some(j) = &plan.json {
        output::json::write(report, j)?;
        paths.push(j.display().to_string());
    }
    let dir = match (&plan.out, &plan.json) {
        (Some(d), _) => Some(d.clone()),
        (None, None) => Some(PathBuf::from(DEFAULT_OUT)),
        (None, Some(_)) => None,
    };
    if let Some(d) = dir {
        paths.extend(output::markdown::write_dir(report, &d)?);
    }
    Ok(paths)
}
