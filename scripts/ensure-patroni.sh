#!/usr/bin/env bash
# Makes sure Patroni and etcd are installed for the failover run on a real
# HA stack (crates/pgpipe/tests/patroni_failover.rs, scripts/failover.sh):
# pgpipe-testkit's PatroniCluster looks for `patroni` and `etcd` on PATH,
# in /usr/bin, or at $PGPIPE_PATRONI / $PGPIPE_ETCD. Installs Debian's
# packages (`patroni` 3.0, `etcd-server` 3.4; Patroni reaches etcd through
# its v3 API) with apt-get when we are root on Debian/Ubuntu; otherwise
# says exactly what to install. Running it again changes nothing.
set -euo pipefail

have() {
  local var=$1 name=$2
  if [ -n "${!var:-}" ] && [ -x "${!var}" ]; then return 0; fi
  command -v "$name" >/dev/null 2>&1 && return 0
  [ -x "/usr/bin/$name" ] && return 0
  return 1
}

have_all() {
  have PGPIPE_PATRONI patroni && have PGPIPE_ETCD etcd
}

if have_all; then
  exit 0
fi

if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  echo "Patroni or etcd not found; installing them with apt-get..." >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -q >&2
  apt-get install -y -q --no-install-recommends patroni etcd-server >&2
  # The packages may start system-wide instances; the tests start their own.
  if command -v service >/dev/null 2>&1; then
    service patroni stop >/dev/null 2>&1 || true
    service etcd stop >/dev/null 2>&1 || true
  fi
  have_all && exit 0
fi

cat >&2 <<'MSG'
Patroni and etcd were not found (both are needed for the failover run).
Install them, then run this command again:
  Debian/Ubuntu:  sudo apt-get install -y patroni etcd-server
  Fedora/RHEL:    sudo dnf install -y patroni etcd
  elsewhere:      pip install 'patroni[etcd3]' psycopg2-binary, and etcd 3.4+
or point PGPIPE_PATRONI and PGPIPE_ETCD at the binaries.
MSG
exit 1
