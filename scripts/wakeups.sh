#!/usr/bin/env bash
# Who wakes the bench's runtime workers, and from where: samples the
# scheduler's wake-ups (`sched:sched_wakeup`, every 10th, with the waker's
# call stack) in the bench process for one second of a measured run, then
# groups the wake-ups of runtime workers by how they were woken (eventfd:
# the worker was parked in epoll_wait holding tokio's I/O driver; futex:
# parked without it) and by the scheduler and driver frames that did it.
#
#   scripts/wakeups.sh DRIVER [WORKLOAD VARIANT]   # default: techempower fortunes
#
# Needs perf (linux-perf) and a release build of pgpipe-bench
# (`cargo build --release -p pgpipe-bench`; BIN=path for another build).
# Output in $OUT (default /tmp/wakeups-DRIVER-VARIANT): bench.txt (the
# bench's table), stat.txt (all context switches and wake-ups over one
# second), wake.data (the samples) and wakeups.txt (the grouping).
# Counts, not times: run it on a quiet machine, since on a loaded one
# every driver wakes its workers more.
set -euo pipefail
cd "$(dirname "$0")/.."
driver=${1:?usage: scripts/wakeups.sh DRIVER [WORKLOAD VARIANT]}
workload=${2:-techempower}
variant=${3:-fortunes}
bin=${BIN:-${CARGO_TARGET_DIR:-target}/release/pgpipe-bench}
out=${OUT:-/tmp/wakeups-$driver-$variant}
mkdir -p "$out"
command -v perf >/dev/null || { echo "perf is not installed (apt-get install linux-perf)" >&2; exit 1; }

"$bin" --workloads "$workload" --variants "$variant" --drivers "$driver" \
  --rounds 5 --duration 2 --warmup 1 --out "$out/bench" >"$out/bench.txt" 2>&1 &
bench=$!
# Past the cluster's start, the fixtures and the warm-up: inside the rounds.
sleep 5
kill -0 "$bench" 2>/dev/null || { cat "$out/bench.txt" >&2; exit 1; }
perf record -e sched:sched_wakeup -c 10 --call-graph dwarf,8192 -p "$bench" \
  -o "$out/wake.data" -- sleep 1 >"$out/perf.log" 2>&1
perf stat -e context-switches,sched:sched_wakeup -p "$bench" -o "$out/stat.txt" -- sleep 1 >/dev/null 2>&1
wait "$bench"
python3 scripts/fold-wakeups.py "$out/wake.data" >"$out/wakeups.txt"
grep -E "^ *$workload +$variant" "$out/bench.txt" || true
grep -E "context-switches|sched_wakeup" "$out/stat.txt"
cat "$out/wakeups.txt"
