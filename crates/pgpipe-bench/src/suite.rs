//! Runs the plan: per workload variant, connect every driver, warm each up,
//! then measured rounds with the drivers alternating (A B A B ...); with
//! `--interleave`, a workload's variants alternate too.

use std::time::Duration;

use indicatif::{ProgressBar, ProgressStyle};
use serde::Serialize;

use crate::catalog::{DriverKind, Variant, Workload};
use crate::cli::Plan;
use crate::error::BenchError;
use crate::histogram;
use crate::machine::Machine;
use crate::notes;
use crate::results::{self, ResultRow, Round, Status};
use crate::runner::Subject;
use crate::server_cpu::ServerCpu;

/// Everything a run produced (the JSON document).
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    /// The command line.
    pub command: String,
    /// Seconds since the Unix epoch when the run started.
    pub started_unix: u64,
    /// The machine and server.
    pub machine: Machine,
    /// Round settings.
    pub duration_secs: f64,
    /// Measured rounds.
    pub rounds: u32,
    /// Warm-up per driver.
    pub warmup_secs: f64,
    /// Open-loop rate, if any.
    pub rate: Option<f64>,
    /// One row per workload, variant and driver.
    pub results: Vec<ResultRow>,
}

fn progress(plan: &Plan) -> ProgressBar {
    if !plan.progress {
        return ProgressBar::hidden();
    }
    let steps: usize = plan
        .workloads
        .iter()
        .map(|w| plan.variants(*w).len() * plan.drivers.len() * (1 + plan.rounds as usize))
        .sum();
    let bar = ProgressBar::new(steps as u64);
    if let Ok(style) =
        ProgressStyle::with_template("{elapsed_precise} [{bar:30}] {pos}/{len} {msg}")
    {
        bar.set_style(style.progress_chars("=> "));
    }
    bar
}

/// One driver in one variant: its connection (until it fails) and its row.
struct Cell {
    variant: Variant,
    driver: DriverKind,
    subject: Option<Subject>,
    row: ResultRow,
    rounds: Vec<Round>,
    hist: hdrhistogram::Histogram<u64>,
}

async fn connect_cell(
    plan: &Plan,
    url: &str,
    workload: Workload,
    variant: &Variant,
    driver: DriverKind,
    server_major: Option<u32>,
) -> Cell {
    let mut row = ResultRow::empty(
        workload.name(),
        &variant.label,
        driver.name(),
        workload.rows_per_op(),
    );
    let subject = if let Some(why) = driver.unsupported(workload, variant) {
        row.status = Status::Unsupported;
        row.note = Some(why.to_string());
        None
    } else if let Some(why) = crate::catalog::server_too_old(driver, server_major) {
        row.status = Status::Unsupported;
        row.note = Some(why);
        None
    } else if driver == DriverKind::Raw && plan.rate.is_some() {
        row.status = Status::Unsupported;
        row.note = Some("raw has no open-loop mode".into());
        None
    } else if driver.is_external() && plan.rate.is_some() {
        row.status = Status::Unsupported;
        row.note = Some("a child program: no open-loop mode".into());
        None
    } else if let Some(why) = crate::catalog::external_missing(driver).await {
        row.status = Status::Unsupported;
        row.note = Some(why);
        None
    } else {
        match Subject::connect(driver, url, workload, variant).await {
            Ok(s) => Some(s),
            Err(e) => {
                row.status = Status::Failed;
                row.note = Some(e.to_string());
                None
            }
        }
    };
    if row.status == Status::Ok {
        row.note = notes::note(workload, driver, variant);
    }
    Cell {
        variant: variant.clone(),
        driver,
        subject,
        row,
        rounds: Vec::new(),
        hist: histogram::new_histogram(),
    }
}

/// One run of `cell` (a warm-up when `round` is `None`); a measured round
/// also takes the server backends' CPU when `server` can see them.
async fn run_cell(
    plan: &Plan,
    workload: Workload,
    cell: &mut Cell,
    round: Option<u32>,
    server: Option<&ServerCpu>,
) {
    let Some(s) = &cell.subject else {
        return;
    };
    let outcome = match round {
        // A stream child is a whole measurement: no warm-up run.
        None if workload == Workload::Stream => return,
        None => s
            .run(cell.variant.tasks_per_conn, plan.warmup, plan.rate)
            .await
            .map(|_| ()),
        Some(_) => {
            // The replay server is not PostgreSQL, and `shards` runs on
            // servers of its own: no backend of this server to measure.
            let server = server.filter(|_| s.on_main_server());
            let before = match server {
                Some(sv) => sv.snapshot().await.ok(),
                None => None,
            };
            let run = s
                .run(cell.variant.tasks_per_conn, plan.duration, plan.rate)
                .await;
            let server_cpu = match (server, before) {
                (Some(sv), Some(before)) => {
                    sv.settle(&before).await;
                    sv.snapshot()
                        .await
                        .ok()
                        .map(|after| sv.between(&before, &after))
                }
                _ => None,
            };
            match run {
                Ok(o) => {
                    let server_cpu = server_cpu.or(o.server_cpu);
                    cell.rounds.push(Round::from_outcome(&o, server_cpu));
                    let _ = cell.hist.add(&o.hist);
                    Ok(())
                }
                Err(e) => Err(e),
            }
        }
    };
    if let Err(e) = outcome {
        fail(&mut cell.row, &mut cell.subject, e);
    }
}

/// Runs every workload variant of `plan` against `url`: per variant (or,
/// with `--interleave`, per workload) every driver connects and warms up,
/// then the rounds run with the drivers (and interleaved variants)
/// alternating.
pub async fn run(plan: &Plan, url: &str) -> Vec<ResultRow> {
    let bar = progress(plan);
    // Server CPU is a figure only when the server runs here; a failure to
    // watch it leaves the column empty rather than failing the run.
    let server = ServerCpu::connect(url).await.ok().flatten();
    let server_major = crate::fixtures::server_major(url).await;
    let mut rows = Vec::new();
    for &workload in &plan.workloads {
        let variants = plan.variants(workload);
        let batches: Vec<Vec<Variant>> = if plan.interleave {
            vec![variants]
        } else {
            variants.into_iter().map(|v| vec![v]).collect()
        };
        for batch in batches {
            let mut cells = Vec::new();
            for variant in &batch {
                for &driver in &plan.drivers {
                    bar.set_message(format!("{workload} {} {driver}: connecting", variant.label));
                    cells.push(
                        connect_cell(plan, url, workload, variant, driver, server_major).await,
                    );
                }
            }
            for cell in cells.iter_mut() {
                bar.set_message(format!(
                    "{workload} {} {}: warm-up",
                    cell.variant.label, cell.driver
                ));
                run_cell(plan, workload, cell, None, server.as_ref()).await;
                bar.inc(1);
            }
            for r in 0..plan.rounds {
                for cell in cells.iter_mut() {
                    bar.set_message(format!(
                        "{workload} {} {}: round {}/{}",
                        cell.variant.label,
                        cell.driver,
                        r + 1,
                        plan.rounds
                    ));
                    run_cell(plan, workload, cell, Some(r), server.as_ref()).await;
                    bar.inc(1);
                }
            }
            for mut cell in cells {
                if cell.row.status == Status::Ok {
                    cell.row
                        .summarize(&cell.rounds, &cell.hist, plan.rate.is_some());
                }
                rows.push(cell.row);
            }
            // Let closed connections settle before the next variant.
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
    bar.finish_and_clear();
    results::fill_ratios(&mut rows);
    rows
}

fn fail(row: &mut ResultRow, subject: &mut Option<Subject>, e: BenchError) {
    row.status = Status::Failed;
    row.note = Some(e.to_string());
    *subject = None;
}
