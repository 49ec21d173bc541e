#!/usr/bin/env python3
"""Groups the sched_wakeup samples of `scripts/wakeups.sh`.

    fold-wakeups.py WAKE.DATA [ROWS]

Each sample is one wake-up done by a thread of the bench process. They are
counted by wakee (a runtime worker, a postgres backend, anything else), and
the wake-ups of runtime workers by how (`eventfd`: the woken worker was
parked in epoll_wait holding tokio's I/O driver; `futex`: parked without
it), by the tokio scheduler functions on the waker's stack, and by the
first frames of driver code (pgpipe, tokio-postgres, xitca-postgres,
futures-channel, tokio's sync and net types) below them.
"""
import collections
import re
import subprocess
import sys

SCHED = re.compile(
    r"tokio::runtime::scheduler::multi_thread::worker::(?:<impl [^>]*>::)?([A-Za-z_]+)"
)
DRIVER = re.compile(
    r"(pgpipe::[A-Za-z_:]+|tokio_postgres::[A-Za-z_:]+|xitca_postgres::[A-Za-z_:]+"
    r"|futures_channel::[A-Za-z_:]+|pgpipe_bench::[A-Za-z_:]+|tokio::sync::[A-Za-z_:]+"
    r"|tokio::net::[A-Za-z_:]+|tokio::runtime::io::[A-Za-z_:]+)"
)


def frames(lines):
    return [l.split(None, 1)[1] if len(l.split(None, 1)) > 1 else l for l in lines]


def first_unique(pattern, syms, skip=()):
    found = []
    for s in syms:
        m = pattern.search(s)
        if m and m.group(1) not in found and m.group(1) not in skip:
            found.append(m.group(1))
    return found


def main():
    data = sys.argv[1]
    rows = int(sys.argv[2]) if len(sys.argv) > 2 else 12
    text = subprocess.run(
        ["perf", "script", "-i", data, "-F", "comm,tid,event,trace,ip,sym"],
        capture_output=True, text=True, check=True,
    ).stdout
    wakees = collections.Counter()
    paths = collections.Counter()
    for event in text.split("\n\n"):
        lines = [l.strip() for l in event.strip().splitlines() if l.strip()]
        if not lines:
            continue
        m = re.search(r"comm=(\S+) pid=\d+", lines[0])
        if not m:
            continue
        wakee = m.group(1)
        kind = ("worker" if wakee.startswith("tokio-r")
                else "postgres" if wakee.startswith("postgres") else "other")
        wakees[kind] += 1
        if kind != "worker":
            continue
        syms = frames(lines[1:])
        how = ("eventfd" if any("eventfd_write" in s for s in syms)
               else "futex" if any("futex_wake" in s for s in syms) else "other")
        sched = first_unique(SCHED, syms, skip=("with_current", "run", "Context", "maybe_move_runtime"))
        driver = first_unique(DRIVER, syms)
        paths[(how, " > ".join(sched[:3]), " < ".join(d[:90] for d in driver[:3]))] += 1
    workers = max(1, wakees["worker"])
    print("sampled wake-ups by wakee:", dict(wakees))
    for (how, sched, driver), count in paths.most_common(rows):
        print(f"{count:6d} {100 * count / workers:5.1f}%  [{how}] {sched}")
        print(f"{'':15}{driver}")


if __name__ == "__main__":
    main()
