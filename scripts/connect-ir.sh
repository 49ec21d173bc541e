#!/usr/bin/env bash
# Client instructions per connect (the ozo `basic` request), pgpipe beside
# tokio-postgres: `scripts/op-ir.sh [--tls] connect`, kept under the name
# earlier measurements give.
#
#   scripts/connect-ir.sh [--tls] [N_SMALL N_LARGE]
set -euo pipefail
here=$(dirname "$0")
if [ "${1:-}" = --tls ]; then
  shift
  exec "$here/op-ir.sh" --tls connect "$@"
fi
exec "$here/op-ir.sh" connect "$@"
