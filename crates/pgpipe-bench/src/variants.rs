//! The variants each workload runs under a plan.

use crate::catalog::{PoolMode, Variant, Workload};
use crate::cli::Plan;
use crate::families::magicstack::{self, MagicQuery};
use crate::shape::{CopyCase, OzoCase, Shape, TeCase};

/// Tasks of each TechEmpower variant (all on one connection, as many
/// HTTP requests in flight would share a connection of a pipelining pool).
pub const TE_TASKS: usize = 16;

/// The `pipeline` variant with 1 % failing statements (64 tasks, one
/// connection).
pub const FAILING_VARIANT: &str = "64-fail1%";

/// Selects per batch of the `batch` workload's variants.
pub const BATCH_SIZES: [usize; 2] = [16, 64];

/// Concurrent tasks of the `shards` workload (all shards together).
pub const SHARD_TASKS: usize = 256;

/// Connection counts of the ozo `complex-*` rows (the talk's 1..64).
pub const OZO_CONNECTIONS: [usize; 7] = [1, 2, 4, 8, 16, 32, 64];
/// The same in the quick suite.
pub const OZO_CONNECTIONS_QUICK: [usize; 2] = [1, 8];

fn variant(label: &str, connections: usize, tasks: usize, pool: PoolMode, shape: Shape) -> Variant {
    Variant {
        label: label.into(),
        connections,
        tasks_per_conn: tasks,
        pool,
        shape,
    }
}

fn one(label: &str, shape: Shape) -> Variant {
    variant(label, 1, 1, PoolMode::Dedicated, shape)
}

fn ozo(quick: bool) -> Vec<Variant> {
    let mut v = vec![
        one("basic", Shape::Ozo(OzoCase::Basic)),
        one("reuse", Shape::Ozo(OzoCase::Reuse)),
        one("pool", Shape::Ozo(OzoCase::Pool)),
        one("parsed", Shape::Ozo(OzoCase::Parsed)),
    ];
    let counts: &[usize] = if quick {
        &OZO_CONNECTIONS_QUICK
    } else {
        &OZO_CONNECTIONS
    };
    for (name, case) in [
        ("complex-raw", OzoCase::ComplexRaw),
        ("complex-parsed", OzoCase::ComplexParsed),
    ] {
        for &n in counts {
            // n tasks over n connections (a pool of n + 1, as in the talk).
            v.push(variant(
                &format!("{name}-{n}"),
                n,
                1,
                PoolMode::Dedicated,
                Shape::Ozo(case),
            ));
        }
    }
    v
}

impl Plan {
    /// The variants `workload` runs (those named by `--variants`, if given).
    pub fn variants(&self, workload: Workload) -> Vec<Variant> {
        let mut v = self.all_variants(workload);
        if !self.variant_filter.is_empty() {
            v.retain(|v| self.variant_filter.contains(&v.label));
        }
        v
    }

    /// Every variant `workload` has under this plan's settings.
    pub fn all_variants(&self, workload: Workload) -> Vec<Variant> {
        match workload {
            Workload::Latency => vec![Variant::single(1)],
            Workload::Pipeline => {
                let mut v: Vec<Variant> = self
                    .concurrency
                    .iter()
                    .map(|&c| Variant::single(c))
                    .collect();
                v.push(variant(
                    FAILING_VARIANT,
                    1,
                    64,
                    PoolMode::Dedicated,
                    Shape::Failing,
                ));
                if self.connections > 1 {
                    v.push(variant(
                        &format!("{}conn", self.connections),
                        self.connections,
                        64,
                        PoolMode::Dedicated,
                        Shape::Plain,
                    ));
                }
                v
            }
            Workload::Unprepared => {
                if self.quick {
                    vec![Variant::single(64)]
                } else {
                    self.concurrency
                        .iter()
                        .map(|&c| Variant::single(c))
                        .collect()
                }
            }
            Workload::Rows1Col | Workload::Rows9Col | Workload::RowsJson | Workload::Rows60Ts => {
                let mut v = Vec::new();
                if self.real_server {
                    v.push(one("50k", Shape::Plain));
                    v.push(one("50k-stream", Shape::Streamed));
                }
                if self.replay_server {
                    v.push(one("replay", Shape::Replay));
                }
                v
            }
            Workload::Pool => {
                let shared = |max_size, shared| PoolMode::Shared {
                    max_size,
                    shared,
                    line_at: None,
                };
                // The admission line's price on single-statement tasks:
                // 256 of them on a lane of two, each connection full at 64.
                let lined = PoolMode::Shared {
                    max_size: 8,
                    shared: None,
                    line_at: Some(64),
                };
                vec![
                    variant("64-dedicated", 1, 64, PoolMode::Dedicated, Shape::Plain),
                    variant("64-pool1", 1, 64, shared(2, Some(1)), Shape::Plain),
                    variant("256x8-dedicated", 8, 32, PoolMode::Dedicated, Shape::Plain),
                    variant("256x8", 8, 32, shared(8, None), Shape::Plain),
                    variant("256x8-line64", 8, 32, lined, Shape::Plain),
                    variant("256x8-get", 8, 32, PoolMode::Checkout, Shape::Plain),
                    variant("64x8-tx", 8, 8, PoolMode::Transaction, Shape::Plain),
                ]
            }
            Workload::Ozo => ozo(self.quick),
            Workload::Techempower => [
                ("fortunes", TeCase::Fortunes),
                ("queries-20", TeCase::Queries),
                ("updates-20", TeCase::Updates),
            ]
            .into_iter()
            .map(|(label, case)| variant(label, 1, TE_TASKS, PoolMode::Dedicated, Shape::Te(case)))
            .collect(),
            // One task per connection sending batch after batch, as
            // pgbench runs one pipeline at a time.
            Workload::Batch => BATCH_SIZES
                .iter()
                .map(|&size| one(&size.to_string(), Shape::Batch { size }))
                .collect(),
            Workload::Shards => vec![variant(
                &SHARD_TASKS.to_string(),
                1,
                SHARD_TASKS,
                PoolMode::Dedicated,
                Shape::Shards,
            )],
            // MagicStack's default concurrency: 10 connections, one
            // worker on each.
            Workload::Magicstack => MagicQuery::ALL
                .into_iter()
                .map(|q| {
                    variant(
                        q.name(),
                        magicstack::CONCURRENCY,
                        1,
                        PoolMode::Dedicated,
                        Shape::Magic(q),
                    )
                })
                .collect(),
            Workload::Copy => vec![
                one("in-1M", Shape::Copy(CopyCase::In)),
                one("out-1M", Shape::Copy(CopyCase::Out)),
            ],
            Workload::Stream => {
                let rows = self.stream_rows;
                let label = if rows.is_multiple_of(1_000_000) {
                    format!("{}M", rows / 1_000_000)
                } else {
                    rows.to_string()
                };
                vec![one(&label, Shape::Stream { rows })]
            }
        }
    }
}
