#!/usr/bin/env bash
# Runs the demo: with DATABASE_URL unset it starts a throwaway PostgreSQL
# cluster, connects, and runs a few queries.
set -euo pipefail
cd "$(dirname "$0")/.."

if [ -z "${DATABASE_URL:-}" ]; then
  scripts/ensure-postgres.sh
fi
exec cargo run --locked --release -p pgpipe --example demo -- "$@"
