#!/usr/bin/env bash
# Client instructions (callgrind Ir) per operation, pgpipe and
# tokio-postgres, through the bench's driver code
# (crates/pgpipe-bench/examples/op_ir.rs):
#
#   scripts/op-ir.sh [--tls] [WORKLOAD [N_SMALL N_LARGE]]
#
# WORKLOAD: connect (default; the ozo `basic` request: connect, SELECT 1,
# close), fortunes or queries (TechEmpower's, 16 tasks on one connection,
# one Sync per statement), stream (one streamed row; with
# PGPIPE_PG_VERSION=18 zero-postgres too). Each driver runs twice under callgrind, N_SMALL
# and N_LARGE operations (defaults 20 and 220 connects, 320 and 3520
# fortunes or queries, 100k and 1.1M rows); (Ir(large) - Ir(small)) / (large - small) is one
# operation with the setup cancelled out. Instruction counts, unlike
# wall-clock time, barely move with the load of the shared machine.
# The large runs' callgrind files stay in $OUT (default
# /tmp/op-ir-WORKLOAD[-tls]) for `callgrind_annotate --inclusive=yes`.
# BIN=path measures a saved op_ir binary (an older build) instead of
# building one.
set -euo pipefail
cd "$(dirname "$0")/.."

tls=()
if [ "${1:-}" = --tls ]; then
  tls=(--tls)
  shift
fi
workload=${1:-connect}
case $workload in
  connect) small=${2:-20} large=${3:-220} ;;
  fortunes | queries) small=${2:-320} large=${3:-3520} ;;
  stream) small=${2:-100000} large=${3:-1100000} ;;
  *) echo "unknown workload $workload (connect, fortunes, queries, stream)" >&2; exit 2 ;;
esac
drivers=(tokio-postgres pgpipe)
# zero-postgres speaks only protocol 3.2 (PostgreSQL 18).
[ "$workload" = stream ] && drivers=(tokio-postgres xitca-postgres pgpipe ${PGPIPE_PG_VERSION:+zero-postgres})
out=${OUT:-/tmp/op-ir-$workload${tls[0]:+-tls}}
mkdir -p "$out"

bin=${BIN:-}
if [ -z "$bin" ]; then
  cargo build --release --locked -p pgpipe-bench --example op_ir >&2
  bin=${CARGO_TARGET_DIR:-target}/release/examples/op_ir
fi

# The cluster lives as long as the serve process's stdin stays open.
fifo=$out/serve.stdin
rm -f "$fifo"
mkfifo "$fifo"
"$bin" serve "${tls[@]}" <"$fifo" >"$out/serve.out" &
serve_pid=$!
exec 3>"$fifo"
trap 'exec 3>&-; wait "$serve_pid" || true' EXIT
for _ in $(seq 600); do
  [ -s "$out/serve.out" ] && break
  kill -0 "$serve_pid" 2>/dev/null || { echo "op_ir serve failed" >&2; exit 1; }
  sleep 0.1
done
read -r url root <"$out/serve.out"

ir() { # driver n -> total Ir of the run
  local file=$out/callgrind.$1.$2
  valgrind --tool=callgrind --callgrind-out-file="$file" \
    "$bin" run "$workload" "$1" "$2" "$url" "$root" 2>"$file.log"
  grep -o '[0-9.]* allocations per operation' "$file.log" | sed "s/^/  $1 N=$2: /" >&2 || true
  awk '/Collected :/ { print $NF }' "$file.log"
}

echo "Ir per operation ($workload${tls[0]:+, --tls}; $small and $large operations):"
for driver in "${drivers[@]}"; do
  a=$(ir "$driver" "$small")
  b=$(ir "$driver" "$large")
  echo "$driver: $(((b - a) / (large - small))) Ir per operation"
done
