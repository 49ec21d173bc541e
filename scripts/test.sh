#!/usr/bin/env bash
# Everything CI checks: formatting, lints, and every unit, integration,
# property and doc test, against throwaway PostgreSQL clusters.
set -euo pipefail
cd "$(dirname "$0")/.."

# A fresh CI build gains nothing from incremental caches or full debug info,
# and both cost disk: a clean workspace test build with them is several times
# larger, and CI's machine is the developer's, with whatever disk is left.
# Line tables keep backtraces readable.
if [ -n "${CI:-}" ]; then
  export CARGO_INCREMENTAL=0
  export CARGO_PROFILE_DEV_DEBUG=line-tables-only
  export CARGO_PROFILE_TEST_DEBUG=line-tables-only
fi

# A full disk shows up as a linker error deep in the build; say it up front.
# A clean CI build (settings above) takes about 5 GiB. A failing `df` (odd
# platform, target dir not made yet) skips the check rather than the tests.
build_dir=${CARGO_TARGET_DIR:-.}
[ -d "$build_dir" ] || build_dir=.
free_kib=$(df -Pk "$build_dir" 2>/dev/null | awk 'NR == 2 { print $4 }') || free_kib=
if [ -n "$free_kib" ] && [ "$free_kib" -lt $((6 * 1024 * 1024)) ]; then
  echo "warning: only $((free_kib / 1024)) MiB free where the build goes ($build_dir); the test build needs about 5 GiB" >&2
fi

if [ -z "${PGPIPE_TEST_URL:-}" ]; then
  scripts/ensure-postgres.sh
fi
# The pgbouncer tests (crates/pgpipe/tests/pgbouncer.rs) need PgBouncer.
scripts/ensure-pgbouncer.sh
# The bench's syscall counters need tracefs; its tests check the `-` path
# where it cannot be mounted.
scripts/ensure-tracefs.sh

echo "==> cargo fmt --check"
cargo fmt --all -- --check
if [ -r /usr/share/postgresql/15/errcodes.txt ]; then
  echo "==> SQLSTATE table matches PostgreSQL 15's errcodes.txt"
  python3 scripts/gen-sqlstate.py /usr/share/postgresql/15/errcodes.txt 15 --check
fi
echo "==> cargo clippy --all-targets -- -D warnings"
cargo clippy --workspace --all-targets --locked -- -D warnings
echo "==> cargo test"
cargo test --workspace --locked
echo "==> cargo test --features metrics (metrics through a recording exporter)"
cargo test -p pgpipe --locked --features metrics --test observe_metrics
echo "==> named-query example (sql/mail.sql against a throwaway cluster)"
cargo run --locked -p pgpipe --example named_queries
