#!/usr/bin/env python3
"""Runs one of MagicStack's benchmark queries (github.com/MagicStack/pgbench,
queries/*.json) with asyncpg for pgpipe-bench's `magicstack` workload and
prints one JSON line:

    {"driver": "asyncpg", "query": "pg_type", "ops": N, "rows": R,
     "elapsed_secs": S, "cpu_secs": C, "version": "...", "loop": "uvloop"}

Usage: asyncpg_bench.py URL QUERY CONCURRENCY DURATION_SECS SEARCH_PATH

The tables are made by pgpipe-bench (MagicStack's setup SQL) in the schema
SEARCH_PATH names. A Pool of CONCURRENCY connections; each worker holds one
connection (as MagicStack's asyncpg worker holds one) and runs the query in a
loop the way asyncpg documents as fastest: a prepared statement's `fetch`
(binary results), `copy_records_to_table` (binary COPY) for copyfrom,
`executemany` (pipelined) for batch; uvloop when it is importable, as
MagicStack runs it. cpu_secs is this process's user + system time
(getrusage) over the measured loop only.
"""

import asyncio
import json
import resource
import sys
import time

import asyncpg

# MagicStack's queries/*.json, verbatim: (query, args).
QUERIES = {
    "pg_type": (
        "select typname, typnamespace, typowner, typlen, typbyval, typcategory, "
        "typispreferred, typisdefined, typdelim, typrelid, typelem, typarray "
        "from pg_type where typtypmod = $1 and typisdefined = $2",
        [-1, True],
    ),
    "generate_series": ("SELECT i FROM generate_series(1, $1) AS i", [1000]),
    "large_object": ("SELECT * FROM _bytes", []),
    "arrays": ("SELECT * FROM _test", []),
    "copyfrom": ("COPY _test(a, b, c, d, e, f, g) FROM STDIN", []),
    "batch": (
        "INSERT INTO _test (a, b, c, d, e, f, g) VALUES ($1, $2, $3, $4, $5, $6, $7);",
        [],
    ),
    "oneplusone": ("SELECT 1+1", []),
}

ROW = (10, 11, 10, "TESTTESTTEST", 10.333, 12341234, "123412341234")
COLUMNS = ["a", "b", "c", "d", "e", "f", "g"]


def cpu_secs():
    ru = resource.getrusage(resource.RUSAGE_SELF)
    return ru.ru_utime + ru.ru_stime


def check(query, records):
    """Checks what a row-returning query read; returns the row count."""
    n = len(records)
    if query == "pg_type":
        ok = n > 0
    elif query == "generate_series":
        ok = n == 1000 and sum(r[0] for r in records) == 500500
    elif query == "large_object":
        ok = n == 100 and all(len(r[0]) == 1000 for r in records)
    elif query == "arrays":
        ok = n == 100 and all(len(r[0]) == 100 and r[0][99] == 100 for r in records)
    elif query == "oneplusone":
        ok = n == 1 and records[0][0] == 2
    else:
        ok = True
    if not ok:
        raise RuntimeError(f"{query}: unexpected answer ({n} rows)")
    return n


async def make_op(conn, query):
    """One run of the query on conn, after a first (warm-up) run."""
    sql, args = QUERIES[query]
    if query == "copyfrom":
        records = [ROW] * 10000

        async def one():
            status = await conn.copy_records_to_table(
                "_test", columns=COLUMNS, records=records
            )
            n = int(status.rpartition(" ")[2])
            if n != len(records):
                raise RuntimeError(f"copyfrom: {status}")
            return n

    elif query == "batch":
        records = [ROW] * 1000

        async def one():
            await conn.executemany(sql, records)
            return len(records)

    else:
        stmt = await conn.prepare(sql)

        async def one():
            return check(query, await stmt.fetch(*args))

    await one()  # prepares, fills caches; not counted
    return one


async def run(one, deadline):
    ops = rows = 0
    while time.monotonic() < deadline:
        rows += await one()
        ops += 1
    return ops, rows


async def main():
    if len(sys.argv) != 6:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    url, query, concurrency, secs, search_path = sys.argv[1:]
    if query not in QUERIES:
        sys.exit(f"unknown query {query!r}")
    concurrency, secs = int(concurrency), float(secs)
    pool = await asyncpg.create_pool(
        url,
        min_size=concurrency,
        max_size=concurrency,
        server_settings={"search_path": search_path},
    )
    conns = [await pool.acquire() for _ in range(concurrency)]
    ops = await asyncio.gather(*(make_op(c, query) for c in conns))
    cpu0 = cpu_secs()
    start = time.monotonic()
    results = await asyncio.gather(*(run(one, start + secs) for one in ops))
    elapsed = time.monotonic() - start
    cpu = cpu_secs() - cpu0
    for c in conns:
        await pool.release(c)
    await pool.close()
    print(
        json.dumps(
            {
                "driver": "asyncpg",
                "query": query,
                "ops": sum(o for o, _ in results),
                "rows": sum(r for _, r in results),
                "elapsed_secs": elapsed,
                "cpu_secs": cpu,
                "version": asyncpg.__version__,
                "loop": LOOP,
            }
        )
    )


LOOP = "asyncio"

if __name__ == "__main__":
    try:
        import uvloop

        LOOP = "uvloop"
        uvloop.install()
    except ImportError:
        pass
    asyncio.run(main())
