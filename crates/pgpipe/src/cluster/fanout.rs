//! Fan-out: one piece of work on many shards at once, every shard's
//! outcome reported.

use std::fmt;
use std::future::Future;

use tokio::task::JoinSet;

use super::cluster::Cluster;
use super::shard_handle::Shard;
use super::ShardId;
use crate::error::ErrorKind;
use crate::Error;

/// Each shard's outcome of a fan-out, in shard id order: never a partial
/// answer passed off as whole. [`into_all`](Self::into_all) turns it into
/// all results or one error naming every shard that failed.
///
/// ```no_run
/// # async fn f(cluster: pgpipe::cluster::Cluster) -> Result<(), pgpipe::Error> {
/// let counts = cluster
///     .fan_out(|shard| async move {
///         let row = shard.primary().query_one("SELECT count(*) FROM mail", ()).await?;
///         Ok(row.get::<i64, _>(0))
///     })
///     .await;
/// for (shard, outcome) in counts.iter() {
///     match outcome {
///         Ok(n) => println!("shard {shard}: {n}"),
///         Err(e) => println!("shard {shard} failed: {e}"),
///     }
/// }
/// let total: i64 = counts.into_all()?.into_iter().map(|(_, n)| n).sum();
/// # Ok(()) }
/// ```
pub struct FanOut<T> {
    outcomes: Vec<(ShardId, Result<T, Error>)>,
}

impl<T> FanOut<T> {
    /// Each shard's outcome, in shard id order.
    pub fn iter(&self) -> impl Iterator<Item = (ShardId, &Result<T, Error>)> {
        self.outcomes.iter().map(|(id, r)| (*id, r))
    }

    /// Each shard's outcome, in shard id order.
    pub fn into_outcomes(self) -> Vec<(ShardId, Result<T, Error>)> {
        self.outcomes
    }

    /// How many shards failed.
    pub fn failed(&self) -> usize {
        self.outcomes.iter().filter(|(_, r)| r.is_err()).count()
    }

    /// Every shard's result, or an error if any shard failed: its kind is
    /// the first failure's, its message names every failed shard and why.
    ///
    /// # Errors
    ///
    /// As described: one error for all the failures.
    pub fn into_all(self) -> Result<Vec<(ShardId, T)>, Error> {
        let total = self.outcomes.len();
        let mut ok = Vec::with_capacity(total);
        let mut failed = Vec::new();
        let mut kind = None;
        for (id, outcome) in self.outcomes {
            match outcome {
                Ok(v) => ok.push((id, v)),
                Err(e) => {
                    kind.get_or_insert(e.kind());
                    failed.push(format!("shard {id}: {e}"));
                }
            }
        }
        match kind {
            None => Ok(ok),
            Some(kind) => Err(Error::new(
                kind,
                format!(
                    "{} of {total} shards failed: {}",
                    failed.len(),
                    failed.join("; ")
                ),
            )),
        }
    }
}

impl<T: fmt::Debug> fmt::Debug for FanOut<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.outcomes.iter()).finish()
    }
}

impl Cluster {
    /// Runs `work` on every shard at once (each in a task of its own) and
    /// returns each shard's outcome. Inside `work`, statements on one
    /// shard pipeline on its pools as anywhere else.
    ///
    /// ```no_run
    /// # async fn f(cluster: pgpipe::cluster::Cluster) -> Result<(), pgpipe::Error> {
    /// cluster
    ///     .fan_out(|shard| async move {
    ///         shard.primary().execute("ANALYZE mail", ()).await
    ///     })
    ///     .await
    ///     .into_all()?;
    /// # Ok(()) }
    /// ```
    pub async fn fan_out<T, F, Fut>(&self, work: F) -> FanOut<T>
    where
        F: Fn(Shard) -> Fut,
        Fut: Future<Output = Result<T, Error>> + Send + 'static,
        T: Send + 'static,
    {
        run(self.shards().collect(), work).await
    }

    /// Like [`fan_out`](Self::fan_out), on the shards `ids` (each once).
    ///
    /// ```no_run
    /// # async fn f(cluster: pgpipe::cluster::Cluster) -> Result<(), pgpipe::Error> {
    /// let found = cluster
    ///     .fan_out_to([0, 3], |shard| async move {
    ///         shard.primary().query("SELECT uid FROM users WHERE name = $1", ("ann",)).await
    ///     })
    ///     .await?;
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// Kind [`Routing`](ErrorKind::Routing) for an id the cluster does not
    /// have, before anything runs.
    pub async fn fan_out_to<T, F, Fut>(
        &self,
        ids: impl IntoIterator<Item = ShardId>,
        work: F,
    ) -> Result<FanOut<T>, Error>
    where
        F: Fn(Shard) -> Fut,
        Fut: Future<Output = Result<T, Error>> + Send + 'static,
        T: Send + 'static,
    {
        let mut ids: Vec<ShardId> = ids.into_iter().collect();
        ids.sort_unstable();
        ids.dedup();
        let shards = ids
            .into_iter()
            .map(|id| self.shard_id(id))
            .collect::<Result<Vec<_>, Error>>()?;
        Ok(run(shards, work).await)
    }
}

async fn run<T, F, Fut>(shards: Vec<Shard>, work: F) -> FanOut<T>
where
    F: Fn(Shard) -> Fut,
    Fut: Future<Output = Result<T, Error>> + Send + 'static,
    T: Send + 'static,
{
    let ids: Vec<ShardId> = shards.iter().map(Shard::id).collect();
    let mut tasks = JoinSet::new();
    for (i, shard) in shards.into_iter().enumerate() {
        let job = work(shard);
        tasks.spawn(async move { (i, job.await) });
    }
    let mut outcomes: Vec<Option<Result<T, Error>>> = ids.iter().map(|_| None).collect();
    while let Some(done) = tasks.join_next().await {
        if let Ok((i, outcome)) = done {
            outcomes[i] = Some(outcome);
        }
    }
    // A task that panicked (or was cancelled) left no outcome: it is
    // reported as that shard's failure, never dropped.
    let outcomes = ids
        .into_iter()
        .zip(outcomes)
        .map(|(id, outcome)| {
            let outcome = outcome.unwrap_or_else(|| {
                Err(Error::new(
                    ErrorKind::InvalidUse,
                    format!("the fan-out's work on shard {id} panicked"),
                ))
            });
            (id, outcome)
        })
        .collect();
    FanOut { outcomes }
}
