#!/usr/bin/env bash
# Client instructions (callgrind Ir) per connect for the ozo `basic`
# request (connect, SELECT 1, close), pgpipe and tokio-postgres, through
# the bench's driver code (crates/pgpipe-bench/examples/connect_ir.rs).
#
#   scripts/connect-ir.sh [--tls] [N_SMALL N_LARGE]
#
# Each driver runs twice under callgrind, N_SMALL (default 20) and N_LARGE
# (default 220) connects; (Ir(large) - Ir(small)) / (large - small) is one
# connect with the setup cancelled out. Instruction counts, unlike
# wall-clock time, barely move with the load of the shared machine.
# The large runs' callgrind files stay in $OUT (default
# /tmp/connect-ir[-tls]) for `callgrind_annotate --inclusive=yes`.
# BIN=path measures a saved connect_ir binary (an older build) instead of
# building one.
set -euo pipefail
cd "$(dirname "$0")/.."

tls=()
if [ "${1:-}" = --tls ]; then
  tls=(--tls)
  shift
fi
small=${1:-20}
large=${2:-220}
out=${OUT:-/tmp/connect-ir${tls[0]:+-tls}}
mkdir -p "$out"

bin=${BIN:-}
if [ -z "$bin" ]; then
  cargo build --release --locked -p pgpipe-bench --example connect_ir >&2
  bin=${CARGO_TARGET_DIR:-target}/release/examples/connect_ir
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
  kill -0 "$serve_pid" 2>/dev/null || { echo "connect_ir serve failed" >&2; exit 1; }
  sleep 0.1
done
read -r url root <"$out/serve.out"

ir() { # driver n -> total Ir of the run
  local file=$out/callgrind.$1.$2
  valgrind --tool=callgrind --callgrind-out-file="$file" \
    "$bin" run "$1" "$2" "$url" "$root" 2>"$file.log"
  grep -o '[0-9.]* allocations per connect' "$file.log" | sed "s/^/  $1 N=$2: /" >&2 || true
  awk '/Collected :/ { print $NF }' "$file.log"
}

echo "Ir per connect (ozo basic${tls[0]:+, --tls}; $small and $large connects):"
for driver in tokio-postgres pgpipe; do
  a=$(ir "$driver" "$small")
  b=$(ir "$driver" "$large")
  echo "$driver: $(((b - a) / (large - small))) Ir per connect"
done
