#!/usr/bin/env bash
# Makes the external peers of pgpipe-bench's `magicstack` workload ready:
#   asyncpg (+ uvloop) in a virtualenv, and the pgx program (Go) built.
# Both go to $PGPIPE_BENCH_PEERS (default ~/.cache/pgpipe-bench/peers):
#   $PGPIPE_BENCH_PEERS/venv/bin/python3   (pgpipe-bench looks here first)
#   $PGPIPE_BENCH_PEERS/pgx-bench          (the built crates/pgpipe-bench/external/pgx)
# Downloads from PyPI and the Go module proxy. Not part of scripts/test.sh:
# without the peers their rows show `-` with the reason, and their test is
# skipped with a printed reason.
set -euo pipefail
cd "$(dirname "$0")/.."

peers=${PGPIPE_BENCH_PEERS:-$HOME/.cache/pgpipe-bench/peers}
mkdir -p "$peers"
status=0

# asyncpg
if command -v python3 >/dev/null 2>&1; then
  if [ ! -x "$peers/venv/bin/python3" ]; then
    python3 -m venv "$peers/venv"
  fi
  if "$peers/venv/bin/python3" -c 'import asyncpg, uvloop' 2>/dev/null; then
    echo "asyncpg: ready ($("$peers/venv/bin/python3" -c 'import asyncpg; print(asyncpg.__version__)'))"
  else
    "$peers/venv/bin/python3" -m pip install -q --upgrade pip >&2 || true
    "$peers/venv/bin/python3" -m pip install -q asyncpg uvloop >&2
    echo "asyncpg: installed ($("$peers/venv/bin/python3" -c 'import asyncpg; print(asyncpg.__version__)'))"
  fi
else
  echo "asyncpg: python3 not found; install Python 3.8+ and run this again" >&2
  status=1
fi

# pgx
if command -v go >/dev/null 2>&1; then
  (cd crates/pgpipe-bench/external/pgx && go build -o "$peers/pgx-bench" .)
  echo "pgx: built $peers/pgx-bench ($(go version | awk '{print $3}'))"
else
  echo "pgx: go not found; install Go 1.22+ and run this again" >&2
  status=1
fi
exit $status
