"""Acknowledged single-row INSERTs per second with 1, 4 and 16 concurrent writers: mzspark
vs PostgreSQL 15, side by side in one run.

    .venv/bin/python benches/writes.py [--seconds 10] [--writers 1,4,16]

Each writer is its own connection (psycopg 3, autocommit) sending `INSERT INTO w VALUES
($1, $2)` (extended protocol, parameters bound) as fast as the acknowledgements come, for
`--seconds` per writer count. mzspark acknowledges an INSERT only after the batch file holding
it is fsynced and the catalog transaction recording it committed; concurrent INSERTs share
one such commit (group commit, server/group_commit.py). PostgreSQL runs from tests/pgref.py
with `fsync=off`, so its figure is an upper bound for a durable PostgreSQL. At the end the
row counts are checked: every acknowledged INSERT is in the table.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO_ROOT))


def run(dsn: str, writers: int, seconds: float, base: int) -> tuple[int, list[float]]:
    """(acknowledged inserts, per-insert latencies in ms) of `writers` concurrent writers."""
    import psycopg

    acked = [0] * writers
    lat: list[list[float]] = [[] for _ in range(writers)]
    stop = time.monotonic() + seconds
    errors: list[BaseException] = []

    def writer(w: int) -> None:
        try:
            with psycopg.connect(dsn, autocommit=True) as c:
                i = 0
                while time.monotonic() < stop:
                    t0 = time.perf_counter()
                    c.execute("INSERT INTO w VALUES (%s, %s)", (base + w * 10_000_000 + i, "x" * 20))
                    lat[w].append((time.perf_counter() - t0) * 1000)
                    acked[w] += 1
                    i += 1
        except BaseException as e:  # noqa: BLE001 - reported below
            errors.append(e)

    threads = [threading.Thread(target=writer, args=(w,)) for w in range(writers)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        raise errors[0]
    return sum(acked), [x for per in lat for x in per]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seconds", type=float, default=10.0)
    ap.add_argument("--writers", default="1,4,16")
    args = ap.parse_args()
    counts = [int(x) for x in args.writers.split(",")]

    import psycopg

    from tests.integration.harness import MzServer
    from tests.pgref import reference_postgres

    tmp = Path(tempfile.mkdtemp(prefix="bench-writes-"))
    server = MzServer(tmp / "mzdata", tmp / "server.log")
    server.start(timeout=600)
    results: dict[tuple[str, int], tuple[int, list[float]]] = {}
    try:
        with reference_postgres("bench-writes-") as pg_dsn:
            for name, dsn in (("mzspark", server.dsn), ("PostgreSQL", pg_dsn)):
                with psycopg.connect(dsn, autocommit=True) as c:
                    c.execute("CREATE TABLE w (id bigint, v text)")
                total = 0
                for k, n in enumerate(counts):
                    results[(name, n)] = run(dsn, n, args.seconds, k * 1_000_000_000)
                    total += results[(name, n)][0]
                with psycopg.connect(dsn, autocommit=True) as c:
                    (have,) = c.execute("SELECT count(*) FROM w").fetchone()  # type: ignore[misc]
                assert have == total, f"{name}: {have} rows for {total} acknowledged INSERTs"
    finally:
        server.stop()
        shutil.rmtree(tmp, ignore_errors=True)

    def q(xs: list[float], p: float) -> float:
        return statistics.quantiles(xs, n=100)[int(p) - 1] if len(xs) >= 2 else (xs[0] if xs else 0.0)

    print(f"\nsingle-row INSERTs, {args.seconds:g} s per writer count (every acknowledged row re-counted)\n")
    print("| writers | mzspark inserts/s | p50 ms | p95 ms | PostgreSQL inserts/s (fsync=off) | p50 ms | p95 ms | mzspark / PostgreSQL |")
    print("|---:|---:|---:|---:|---:|---:|---:|---:|")
    for n in counts:
        (ma, ml), (pa_, pl) = results[("mzspark", n)], results[("PostgreSQL", n)]
        mr, pr = ma / args.seconds, pa_ / args.seconds
        print(f"| {n} | {mr:,.0f} | {q(ml, 50):.1f} | {q(ml, 95):.1f} | {pr:,.0f} | {q(pl, 50):.1f} | {q(pl, 95):.1f} | "
              f"{mr / pr if pr else 0:.3f}x |")




if __name__ == "__main__":
    main()
