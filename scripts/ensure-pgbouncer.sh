#!/usr/bin/env bash
# Makes sure PgBouncer is installed for the pgbouncer integration tests
# (pgpipe-testkit's Bouncer looks for `pgbouncer` on PATH, in /usr/sbin, or
# at $PGPIPE_PGBOUNCER). Installs the distribution's package with apt-get
# when we are root on Debian/Ubuntu; otherwise says exactly what to install.
set -euo pipefail

have_pgbouncer() {
  if [ -n "${PGPIPE_PGBOUNCER:-}" ] && [ -x "$PGPIPE_PGBOUNCER" ]; then return 0; fi
  command -v pgbouncer >/dev/null 2>&1 && return 0
  [ -x /usr/sbin/pgbouncer ] && return 0
  return 1
}

if have_pgbouncer; then
  exit 0
fi

if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  echo "PgBouncer not found; installing it with apt-get..." >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -q
  apt-get install -y -q --no-install-recommends pgbouncer >&2
  # The package starts a system-wide instance; the tests start their own.
  if command -v service >/dev/null 2>&1; then service pgbouncer stop >/dev/null 2>&1 || true; fi
  have_pgbouncer && exit 0
fi

cat >&2 <<'MSG'
PgBouncer was not found. Install it, then run this command again:
  Debian/Ubuntu:  sudo apt-get install -y pgbouncer
  Fedora/RHEL:    sudo dnf install -y pgbouncer
  macOS:          brew install pgbouncer
or point PGPIPE_PGBOUNCER at the pgbouncer binary.
MSG
exit 1
