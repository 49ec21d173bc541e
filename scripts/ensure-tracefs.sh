#!/usr/bin/env bash
# The benchmark counts socket syscalls with perf tracepoint counters, which
# need tracefs (for the tracepoints' ids) and root or CAP_PERFMON. A fresh
# machine may not have tracefs mounted; mount it when we are root and can.
# Never fails the run: where counting stays impossible, the bench shows `-`
# and its tests check that path instead (they print why).
set -uo pipefail

for root in /sys/kernel/tracing /sys/kernel/debug/tracing; do
  if [ -d "$root/events/syscalls" ]; then
    exit 0
  fi
done

if [ "$(id -u)" != 0 ]; then
  echo "note: tracefs is not mounted and this is not root: syscall counters will show '-'" >&2
  echo "      (as root: mount -t tracefs nodev /sys/kernel/tracing)" >&2
  exit 0
fi

if [ -d /sys/kernel/tracing ] && mount -t tracefs nodev /sys/kernel/tracing 2>/dev/null \
  && [ -d /sys/kernel/tracing/events/syscalls ]; then
  echo "==> mounted tracefs at /sys/kernel/tracing (syscall counters)"
  exit 0
fi
if [ -d /sys/kernel/debug ] && { [ -d /sys/kernel/debug/tracing ] || mount -t debugfs nodev /sys/kernel/debug 2>/dev/null; } \
  && [ -d /sys/kernel/debug/tracing/events/syscalls ]; then
  echo "==> mounted debugfs at /sys/kernel/debug (syscall counters)"
  exit 0
fi
echo "note: could not mount tracefs here: syscall counters will show '-'" >&2
exit 0
