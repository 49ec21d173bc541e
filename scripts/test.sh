#!/usr/bin/env bash
# Everything CI checks: formatting, lints, and every unit, integration,
# property and doc test, against throwaway PostgreSQL clusters; then the
# version matrix: the whole suite again on PostgreSQL 18 and a subset on
# every other major that could be installed (13, 14, 16, 17), with the same
# test binaries (PGPIPE_PG_VERSION picks the server, nothing is rebuilt).
#
#   PGPIPE_MATRIX=0   skips the matrix (the suite runs on 15 only)
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
# A clean CI build (settings above) takes about 10 GiB by the end of the
# version matrix (9.9 GiB measured, the feature builds included). A failing
# `df` (odd platform, target dir not made yet) skips the check rather than
# the tests.
build_dir=${CARGO_TARGET_DIR:-.}
[ -d "$build_dir" ] || build_dir=.
free_kib=$(df -Pk "$build_dir" 2>/dev/null | awk 'NR == 2 { print $4 }') || free_kib=
if [ -n "$free_kib" ] && [ "$free_kib" -lt $((11 * 1024 * 1024)) ]; then
  echo "warning: only $((free_kib / 1024)) MiB free where the build goes ($build_dir); the test build needs about 10 GiB" >&2
fi

matrix=()
if [ -z "${PGPIPE_TEST_URL:-}" ]; then
  scripts/ensure-postgres.sh
  if [ "${PGPIPE_MATRIX:-1}" != 0 ]; then
    # Prints the majors it installed (15 included); a registry out of reach
    # leaves its versions out, with the command to install them by hand.
    read -r -a matrix < <(scripts/ensure-postgres-versions.sh || true) || true
    # The tests that start a version themselves (server_versions.rs and the
    # testkit's versions.rs) fail, instead of skipping, on one listed here
    # that is missing.
    export PGPIPE_PG_VERSIONS="${matrix[*]}"
    echo "==> PostgreSQL versions installed: ${matrix[*]:-none beyond the default}"
  fi
fi
# The pgbouncer tests (crates/pgpipe/tests/pgbouncer.rs) need PgBouncer.
scripts/ensure-pgbouncer.sh
# The failover run on a real HA stack (crates/pgpipe/tests/patroni_failover.rs
# and the testkit's PatroniCluster) needs Patroni and etcd.
scripts/ensure-patroni.sh
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
started=$(date +%s)
echo "==> cargo test"
cargo test --workspace --locked
if [ -n "${PGPIPE_TEST_URL:-}" ]; then default_server="the server of PGPIPE_TEST_URL"; else default_server=${PGPIPE_PG_VERSION:-15}; fi
ran=("$default_server ($(($(date +%s) - started)) s, whole suite)")
echo "==> cargo test --features metrics (metrics through a recording exporter)"
cargo test -p pgpipe --locked --features metrics --test observe_metrics
echo "==> cargo test --features opentelemetry (spans and metrics through the OpenTelemetry SDK; builds its example)"
cargo test -p pgpipe --locked --features opentelemetry --test observe_opentelemetry --example opentelemetry
echo "==> named-query example (sql/mail.sql against a throwaway cluster)"
cargo run --locked -p pgpipe --example named_queries

# The matrix. What differs per version (protocol 3.2, direct SSL,
# in_hot_standby, channel binding, require_auth) is tested across every
# version by server_versions.rs above; here each major runs the tests of
# what a server version can change: connecting and authentication, TLS,
# protocol versions, types, COPY, LISTEN, failover with a standby, and the
# statement cache.
subset=(
  --test connect --test require_auth --test tls --test tls_matrix
  --test protocol_32 --test types_scalar --test types_array
  --test types_datetime --test types_range --test types_conversions
  --test types_geometric --test types_system --test types_text_fallback
  --test types_tsvector --test copy --test copy_binary
  --test listen --test failover --test statement_cache --test queries
)
for major in "${matrix[@]}"; do
  # The version the suite just ran on.
  [ "$major" = "${PGPIPE_PG_VERSION:-15}" ] && continue
  started=$(date +%s)
  if [ "$major" = 18 ]; then
    # Doc tests and the compile-fail tests do not touch a server. They are
    # skipped by name, not by leaving a package out: `--exclude` changes
    # how the workspace's features unify, and cargo would build every test
    # binary a second time (minutes, and gigabytes of disk).
    echo "==> cargo test on PostgreSQL $major (whole suite but doc and compile-fail tests)"
    PGPIPE_PG_VERSION=$major cargo test --workspace --locked --tests -- --skip misuse_is_a_compile_error
    ran+=("$major ($(($(date +%s) - started)) s, whole suite)")
  else
    echo "==> cargo test on PostgreSQL $major (subset)"
    # `--workspace`, not `-p pgpipe`: the same feature set as the suite
    # above, so its test binaries are reused rather than built again.
    PGPIPE_PG_VERSION=$major cargo test --workspace --locked "${subset[@]}"
    ran+=("$major ($(($(date +%s) - started)) s, subset)")
  fi
done
echo "==> PostgreSQL versions tested:"
printf '    %s\n' "${ran[@]}"
