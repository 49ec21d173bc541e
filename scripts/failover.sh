#!/usr/bin/env bash
# The failover run on a real HA stack at full length: three PostgreSQL 15
# nodes under Patroni (synchronous mode) and etcd on loopback, a write and
# read load through pgpipe, then a switchover, kill -9 of the primary's
# postmaster and a network partition of the primary, each checked with the
# invariant checker (crates/pgpipe/tests/patroni_failover.rs). Prints the
# report and the failover times (a Markdown table, as in docs/scale-out.md).
#
#   scripts/failover.sh [WRITES]
#
#   WRITES   acknowledged writes each phase waits for (default 5000; in
#            CI's suite the test runs with its own default, 300)
set -euo pipefail
cd "$(dirname "$0")/.."

writes=${1:-5000}
scripts/ensure-postgres.sh
scripts/ensure-patroni.sh
echo "==> failover run: switchover, kill -9, partition; $writes acknowledged writes per phase"
PGPIPE_FAILOVER_WRITES=$writes exec cargo test -p pgpipe --locked --test patroni_failover -- --nocapture
