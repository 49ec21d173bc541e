#!/usr/bin/env bash
# Makes sure PostgreSQL server binaries (initdb, postgres) are installed, the
# way pgpipe-testkit looks for them. Installs them with apt-get when we are
# root on Debian/Ubuntu; otherwise says exactly what to install.
set -euo pipefail

have_server() {
  if [ -n "${PGPIPE_PG_BINDIR:-}" ] && [ -x "$PGPIPE_PG_BINDIR/initdb" ]; then return 0; fi
  if command -v initdb >/dev/null 2>&1 && command -v postgres >/dev/null 2>&1; then return 0; fi
  if command -v pg_config >/dev/null 2>&1 && [ -x "$(pg_config --bindir)/initdb" ]; then return 0; fi
  for d in /usr/lib/postgresql/*/bin; do
    if [ -x "$d/initdb" ] && [ -x "$d/postgres" ]; then return 0; fi
  done
  return 1
}

if have_server; then
  exit 0
fi

if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  echo "PostgreSQL server binaries not found; installing them with apt-get..." >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -q
  apt-get install -y -q --no-install-recommends postgresql >&2
  have_server && exit 0
fi

cat >&2 <<'MSG'
PostgreSQL server binaries (initdb, postgres) were not found.
Install them, then run this command again:
  Debian/Ubuntu:  sudo apt-get install -y postgresql
  Fedora/RHEL:    sudo dnf install -y postgresql-server
  macOS:          brew install postgresql
or point PGPIPE_PG_BINDIR at the directory holding initdb and postgres,
or set PGPIPE_TEST_URL / DATABASE_URL to an existing server.
MSG
exit 1
