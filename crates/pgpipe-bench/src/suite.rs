//! Runs the plan: per workload variant, connect every driver, warm each up,
//! then measured rounds with the drivers alternating (A B A B ...).

use std::time::Duration;

use indicatif::{ProgressBar, ProgressStyle};
use serde::Serialize;

use crate::catalog::{DriverKind, PoolMode, Variant, Workload};
use crate::cli::Plan;
use crate::error::BenchError;
use crate::histogram;
use crate::machine::Machine;
use crate::notes;
use crate::results::{self, ResultRow, Round, Status};
use crate::runner::Subject;

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

/// Runs every workload variant of `plan` against `url`.
pub async fn run(plan: &Plan, url: &str) -> Vec<ResultRow> {
    let bar = progress(plan);
    let mut rows = Vec::new();
    for &workload in &plan.workloads {
        for variant in plan.variants(workload) {
            let mut subjects: Vec<(DriverKind, Option<Subject>, ResultRow)> = Vec::new();
            for &driver in &plan.drivers {
                let mut row = ResultRow::empty(
                    workload.name(),
                    &variant.label,
                    driver.name(),
                    workload.rows_per_op(),
                );
                bar.set_message(format!("{workload} {} {driver}: connecting", variant.label));
                let subject = if let Some(why) = driver.unsupported(workload, &variant) {
                    row.status = Status::Unsupported;
                    row.note = Some(why.to_string());
                    None
                } else if driver == DriverKind::Raw && plan.rate.is_some() {
                    row.status = Status::Unsupported;
                    row.note = Some("raw has no open-loop mode".into());
                    None
                } else {
                    match Subject::connect(driver, url, workload, &variant).await {
                        Ok(s) => Some(s),
                        Err(e) => {
                            row.status = Status::Failed;
                            row.note = Some(e.to_string());
                            None
                        }
                    }
                };
                if row.status != Status::Ok {
                    // The reason is already in the note.
                } else if let Some(n) = notes::shape_note(driver, &variant) {
                    row.note = Some(n);
                } else if workload == Workload::Pool {
                    row.note = Some(pool_note(driver, &variant));
                } else if driver == DriverKind::Sqlx && variant.tasks_per_conn > 1 {
                    row.note = Some("no pipelining: tasks take turns on the connection".into());
                } else if driver == DriverKind::Raw && workload == Workload::Unprepared {
                    row.note = Some(
                        "raw sends Parse+Bind+Execute+Sync every time (no statement cache)".into(),
                    );
                } else if driver == DriverKind::Pgbench && variant.tasks_per_conn > 1 {
                    row.note = Some(format!(
                        "batches of {} in \\startpipeline, not a continuous pipeline; no latency",
                        variant.tasks_per_conn
                    ));
                } else if driver == DriverKind::Pgbench {
                    row.note = Some("no latency percentiles".into());
                }
                subjects.push((driver, subject, row));
            }
            // Warm-up.
            for (driver, subject, row) in subjects.iter_mut() {
                bar.set_message(format!("{workload} {} {driver}: warm-up", variant.label));
                // A stream child is a whole measurement: no warm-up run.
                let failed = match subject {
                    Some(s) if workload != Workload::Stream => s
                        .run(variant.tasks_per_conn, plan.warmup, plan.rate)
                        .await
                        .err(),
                    _ => None,
                };
                if let Some(e) = failed {
                    fail(row, subject, e);
                }
                bar.inc(1);
            }
            // Rounds, drivers alternating.
            let mut rounds: Vec<Vec<Round>> = vec![Vec::new(); subjects.len()];
            let mut hists: Vec<_> = (0..subjects.len())
                .map(|_| histogram::new_histogram())
                .collect();
            for r in 0..plan.rounds {
                for (i, (driver, subject, row)) in subjects.iter_mut().enumerate() {
                    bar.set_message(format!(
                        "{workload} {} {driver}: round {}/{}",
                        variant.label,
                        r + 1,
                        plan.rounds
                    ));
                    if let Some(s) = subject {
                        match s
                            .run(variant.tasks_per_conn, plan.duration, plan.rate)
                            .await
                        {
                            Ok(o) => {
                                rounds[i].push(Round::from_outcome(&o));
                                let _ = hists[i].add(&o.hist);
                            }
                            Err(e) => fail(row, subject, e),
                        }
                    }
                    bar.inc(1);
                }
            }
            for (i, (_, _, mut row)) in subjects.into_iter().enumerate() {
                if row.status == Status::Ok {
                    row.summarize(&rounds[i], &hists[i], plan.rate.is_some());
                }
                rows.push(row);
            }
            // Let closed connections settle before the next variant.
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
    bar.finish_and_clear();
    results::fill_ratios(&mut rows);
    rows
}

/// What a `pool` row measured.
fn pool_note(driver: DriverKind, variant: &Variant) -> String {
    let tasks = variant.total_tasks();
    match (driver, variant.pool) {
        (DriverKind::Pgpipe, PoolMode::Dedicated) => format!(
            "{} Client(s) x {} tasks, query_one(sql) (statement cache)",
            variant.connections, variant.tasks_per_conn
        ),
        (_, PoolMode::Dedicated) => format!(
            "{} client(s) x {} tasks, prepared statement",
            variant.connections, variant.tasks_per_conn
        ),
        (DriverKind::Pgpipe, PoolMode::Shared { max_size, shared }) => format!(
            "Pool max_size {max_size}, shared lane {}, {tasks} tasks: pool.query_one(sql)",
            shared.map_or("default (max_size/4)".to_string(), |n| n.to_string())
        ),
        (DriverKind::Pgpipe, PoolMode::Checkout) => format!(
            "Pool max_size {}, {tasks} tasks: pool.get() then query_one(sql) per op",
            variant.connections
        ),
        (_, _) => format!(
            "pool max_size {}, {tasks} tasks: get() + prepare_cached + query_one per op",
            variant.connections
        ),
    }
}

fn fail(row: &mut ResultRow, subject: &mut Option<Subject>, e: BenchError) {
    row.status = Status::Failed;
    row.note = Some(e.to_string());
    *subject = None;
}
