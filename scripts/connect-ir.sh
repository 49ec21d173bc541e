#!/usr/bin/env bash
# Client instructions per connect (the ozo `basic` request), pgpipe beside
# tokio-postgres: `scripts/op-ir.sh [--tls] connect`, kept under the name
# earlier measurements give.
#
#   scripts/connect-ir.sh [--tls] [N_SMALL N_LARGE]
set -euo pipefail
cd "$(dirname "$0")/.."
tls=()
if [ "${1:-}" = --tls ]; then
  tls=(--tls)
  shift
fi
exec scripts/op-ir.sh "${tls[@]}" connect "$@"
