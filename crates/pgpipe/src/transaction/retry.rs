//! The retry helper: run a closure in a transaction, commit, and run it
//! again from the start on a serialization failure or a deadlock.

use std::future::Future;
use std::hash::{BuildHasher, Hasher};
use std::pin::Pin;
use std::time::Duration;

use crate::Error;

use super::{Transaction, TransactionBuilder};

/// How [`Client::transaction_with_retry`](crate::Client::transaction_with_retry) retries: at most `max_attempts`
/// runs in all, waiting between them for an exponentially growing backoff
/// (from `initial_backoff`, doubled per attempt, capped at `max_backoff`)
/// with random jitter (each wait is between half and all of it), so that
/// transactions that collided do not collide again in lockstep.
///
/// ```
/// use std::time::Duration;
/// let policy = pgpipe::RetryPolicy::new()
///     .max_attempts(10)
///     .initial_backoff(Duration::from_millis(5))
///     .max_backoff(Duration::from_millis(500));
/// assert_eq!(policy.get_max_attempts(), 10);
/// ```
#[derive(Debug, Clone)]
pub struct RetryPolicy {
    max_attempts: u32,
    initial_backoff: Duration,
    max_backoff: Duration,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        RetryPolicy {
            max_attempts: 5,
            initial_backoff: Duration::from_millis(10),
            max_backoff: Duration::from_secs(1),
        }
    }
}

impl RetryPolicy {
    /// 5 attempts, backoff from 10 ms up to 1 s.
    pub fn new() -> Self {
        Self::default()
    }

    /// Runs in all, the first included (at least 1).
    pub fn max_attempts(mut self, n: u32) -> Self {
        self.max_attempts = n.max(1);
        self
    }

    /// The wait before the second attempt (before jitter).
    pub fn initial_backoff(mut self, d: Duration) -> Self {
        self.initial_backoff = d;
        self
    }

    /// The longest wait between attempts (before jitter).
    pub fn max_backoff(mut self, d: Duration) -> Self {
        self.max_backoff = d;
        self
    }

    /// Runs in all, the first included.
    pub fn get_max_attempts(&self) -> u32 {
        self.max_attempts
    }

    /// The wait after the `attempt`-th run failed (1-based): half the
    /// exponential backoff plus a random part of the other half.
    pub(crate) fn backoff(&self, attempt: u32) -> Duration {
        let exp = 2u32.saturating_pow(attempt.saturating_sub(1).min(30));
        let full = self
            .initial_backoff
            .saturating_mul(exp)
            .min(self.max_backoff);
        let half = full / 2;
        half + half.mul_f64(random_unit())
    }
}

/// A number in [0, 1): RandomState is seeded randomly per instance, enough
/// to spread retries, without a dependency.
fn random_unit() -> f64 {
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u64(0);
    (h.finish() >> 11) as f64 / (1u64 << 53) as f64
}

/// The future a retried transaction's closure returns: boxed, because it
/// borrows the attempt's [`Transaction`], and `Send`, so the whole call can
/// be spawned.
pub type RetryFuture<'t, T> = Pin<Box<dyn Future<Output = Result<T, Error>> + Send + 't>>;

/// What a retried transaction gave: the closure's value from the attempt
/// that committed, and how many attempts it took (1 when the first one
/// committed).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Retried<T> {
    /// The value the closure returned in the committed attempt.
    pub value: T,
    /// How many attempts ran, the committed one included.
    pub attempts: u32,
}

impl<T> Retried<T> {
    /// The value, without the count.
    pub fn into_value(self) -> T {
        self.value
    }
}

/// Runs `f` in a transaction from `builder` and commits; on a
/// serialization failure or deadlock, rolls back and runs it again in a new
/// transaction, up to the policy's attempts.
pub(crate) async fn run_with_retry<'a, T, F>(
    builder: TransactionBuilder<'a>,
    policy: &RetryPolicy,
    mut f: F,
) -> Result<Retried<T>, Error>
where
    F: for<'t> FnMut(&'t mut Transaction<'a>) -> RetryFuture<'t, T>,
{
    let mut attempt = 1;
    loop {
        let mut tx = builder.clone().start().await?;
        let outcome = match f(&mut tx).await {
            Ok(value) => tx.commit().await.map(|()| value),
            Err(e) => {
                // Rolled back at once (the drop queues ROLLBACK).
                drop(tx);
                Err(e)
            }
        };
        match outcome {
            Ok(value) => {
                return Ok(Retried {
                    value,
                    attempts: attempt,
                })
            }
            Err(e) if e.is_retryable_transaction() && attempt < policy.max_attempts => {
                tracing::debug!(
                    target: "pgpipe::transaction",
                    attempt,
                    code = e.code().map(|c| c.code()),
                    "transaction failed, retrying: {e}"
                );
                tokio::time::sleep(policy.backoff(attempt)).await;
                attempt += 1;
            }
            Err(e) if attempt > 1 => {
                return Err(e.context(format!("gave up after {attempt} attempts")))
            }
            Err(e) => return Err(e),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_grows_is_capped_and_jittered() {
        let p = RetryPolicy::new()
            .initial_backoff(Duration::from_millis(10))
            .max_backoff(Duration::from_millis(100));
        for _ in 0..100 {
            let b1 = p.backoff(1);
            assert!(
                b1 >= Duration::from_millis(5) && b1 <= Duration::from_millis(10),
                "{b1:?}"
            );
            let b3 = p.backoff(3);
            assert!(
                b3 >= Duration::from_millis(20) && b3 <= Duration::from_millis(40),
                "{b3:?}"
            );
            let b40 = p.backoff(40);
            assert!(
                b40 >= Duration::from_millis(50) && b40 <= Duration::from_millis(100),
                "{b40:?}"
            );
        }
        let distinct: std::collections::HashSet<_> = (0..50).map(|_| p.backoff(3)).collect();
        assert!(distinct.len() > 1, "the backoff is not jittered");
        assert_eq!(RetryPolicy::new().max_attempts(0).get_max_attempts(), 1);
    }
}
