"""Many concurrent sessions, a mixed workload: mzspark vs PostgreSQL 15 side by side in one run.

    .venv/bin/python benches/load.py [--connections 200] [--queries 20] [--spark-master local[2]]

Each of `--connections` sessions (its own connection, autocommit, extended protocol) sends
`--queries` statements one after another, cycling through three kinds:
- `SELECT 1` (constant: answered by the coordinator, never by Spark);
- a point lookup `SELECT * FROM lk WHERE id = $1` on a 100-row table (bound parameter);
- a single-row `INSERT INTO ins VALUES ($1, $2)` (durable before it is acknowledged).
All sessions connect first, then start together. Printed per engine: statements per second
over the whole mix, p50 / p99 latency per kind, errors (by SQLSTATE), and the server's open
file descriptors before the load, after it, and after every session closed (a leak shows as
"after close", taken 15 s after the last session closed, above "before"), and the server's CPU
seconds (its Python process and its JVM) per 1,000 statements of the load. At the end every
acknowledged INSERT is re-counted.
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO_ROOT))

KINDS = ("select1", "lookup", "insert")
IDLE_WAIT_S = 15.0


def cpu_s(pid: int | None) -> float | None:
    """CPU seconds (user + system) of a process and of its children's threads still running
    (the server's JVM), None when unknown: a load-independent cost of the workload."""
    if pid is None:
        return None
    tick = os.sysconf("SC_CLK_TCK")
    total = 0.0
    for p in [pid, *_children(pid)]:
        try:
            f = Path(f"/proc/{p}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += (int(f[11]) + int(f[12])) / tick
    return total


def _children(pid: int) -> list[int]:
    out = []
    for p in os.listdir("/proc"):
        if p.isdigit():
            try:
                if int(Path(f"/proc/{p}/stat").read_text().rsplit(")", 1)[1].split()[1]) == pid:
                    out.append(int(p))
            except OSError:
                continue
    return out


def fds(pid: int | None) -> int | None:
    """Open file descriptors of a process and its threads (None when unknown)."""
    if pid is None:
        return None
    try:
        return len(os.listdir(f"/proc/{pid}/fd"))
    except OSError:
        return None


async def session(dsn: str, n: int, queries: int, start: asyncio.Event, ready: list[int],
                  lat: dict[str, list[float]], errors: collections.Counter[str], acked: list[int]) -> None:
    import psycopg

    async with await psycopg.AsyncConnection.connect(dsn, autocommit=True) as c:
        ready[0] += 1
        await start.wait()
        for i in range(queries):
            kind = KINDS[(n + i) % 3]
            t0 = time.perf_counter()
            try:
                if kind == "select1":
                    await (await c.execute("SELECT 1")).fetchall()
                elif kind == "lookup":
                    await (await c.execute("SELECT * FROM lk WHERE id = %s", ((n * 7 + i) % 100,))).fetchall()
                else:
                    await c.execute("INSERT INTO ins VALUES (%s, %s)", (n * 1_000_000 + i, "x" * 20))
                    acked[0] += 1
            except psycopg.Error as e:
                errors[e.sqlstate or "?"] += 1
                continue
            lat[kind].append((time.perf_counter() - t0) * 1000)


async def run(dsn: str, connections: int, queries: int) -> tuple[float, dict[str, list[float]], collections.Counter[str], int]:
    """(wall seconds, latencies per kind in ms, errors by SQLSTATE, acknowledged INSERTs)."""
    lat: dict[str, list[float]] = {k: [] for k in KINDS}
    errors: collections.Counter[str] = collections.Counter()
    acked, ready = [0], [0]
    start = asyncio.Event()
    tasks = [asyncio.create_task(session(dsn, n, queries, start, ready, lat, errors, acked)) for n in range(connections)]
    # every session connected (or failed to) before the clock starts
    while ready[0] < sum(not t.done() for t in tasks):
        await asyncio.sleep(0.1)
    t0 = time.perf_counter()
    start.set()
    results = await asyncio.gather(*tasks, return_exceptions=True)
    wall = time.perf_counter() - t0
    for r in results:
        if isinstance(r, BaseException):
            errors[type(r).__name__] += 1
    return wall, lat, errors, acked[0]


def pct(xs: list[float], p: int) -> float:
    if not xs:
        return float("nan")
    if len(xs) == 1:
        return xs[0]
    return statistics.quantiles(xs, n=100)[p - 1]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--connections", type=int, default=200)
    ap.add_argument("--queries", type=int, default=20)
    ap.add_argument("--spark-master", default="local[2]")
    ap.add_argument("--server-args", default="", help="extra arguments for the mzspark server")
    args = ap.parse_args()

    import psycopg

    from tests.integration.harness import MzServer
    from tests.pgref import reference_postgres

    tmp = Path(tempfile.mkdtemp(prefix="bench-load-"))
    server = MzServer(tmp / "mzdata", tmp / "server.log", spark_master=args.spark_master,
                      extra_args=tuple(args.server_args.split()))
    server.start(timeout=600)
    rows: list[str] = []
    try:
        with reference_postgres("bench-load-", settings=(f"max_connections={args.connections + 20}",)) as pg_dsn:
            for name, dsn, pid in (("mzspark", server.dsn, server.proc.pid if server.proc else None),
                                   ("PostgreSQL", pg_dsn, None)):
                with psycopg.connect(dsn, autocommit=True) as c:
                    c.execute("CREATE TABLE lk (id int, v text)")
                    c.execute("INSERT INTO lk SELECT g, 'v' || g FROM generate_series(0, 99) AS g")
                    c.execute("CREATE TABLE ins (id bigint, v text)")
                    c.execute("SELECT * FROM lk WHERE id = 1").fetchall()  # warm
                before, cpu0 = fds(pid), cpu_s(pid)
                wall, lat, errors, acked = asyncio.run(run(dsn, args.connections, args.queries))
                after, cpu1 = fds(pid), cpu_s(pid)
                time.sleep(IDLE_WAIT_S)  # the server's idle worker threads leave (and close their py4j sockets)
                closed = fds(pid)
                with psycopg.connect(dsn, autocommit=True) as c:
                    (have,) = c.execute("SELECT count(*) FROM ins").fetchone()  # type: ignore[misc]
                assert have == acked, f"{name}: {have} rows for {acked} acknowledged INSERTs"
                total = sum(len(v) for v in lat.values())
                err = ", ".join(f"{k} x{v}" for k, v in sorted(errors.items())) or "0"
                fd = "n/a" if before is None else f"{before} / {after} / {closed}"
                cpu = "n/a" if cpu0 is None or cpu1 is None else f"{(cpu1 - cpu0) * 1000 / max(total, 1):.2f}"
                rows.append(f"| {name} | {total / wall:,.0f} | " + " | ".join(
                    f"{pct(lat[k], 50):.1f} / {pct(lat[k], 99):.1f}" for k in KINDS) + f" | {err} | {fd} | {cpu} |")
    finally:
        server.stop()
        shutil.rmtree(tmp, ignore_errors=True)

    print(f"\n{args.connections} connections x {args.queries} statements "
          f"(a third each: SELECT 1, point lookup on 100 rows, single-row INSERT)\n")
    print("| engine | statements/s | SELECT 1 p50 / p99 ms | lookup p50 / p99 ms | INSERT p50 / p99 ms "
          "| errors | server fds before / after load / after close | server CPU s / 1,000 statements |")
    print("|---|---:|---:|---:|---:|---|---|---:|")
    for r in rows:
        print(r)


if __name__ == "__main__":
    main()
