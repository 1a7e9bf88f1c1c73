"""Monotonic one-shot SELECTs: `enable_monotonic_oneshot_selects` off vs on, side by side.

    .venv/bin/python benches/monotonic_oneshot.py [--sizes 1000000,10000000] [--repeat 3]

Loads `m(k int, g int, v int)` (g has 1000 groups) and times, with the flag off (Basic TopK /
bucketed hierarchical Reduce) and on (MonotonicTop1 / MonotonicTopK / monotonic Reduce):
global MIN/MAX, top-3 per group, DISTINCT ON, and LIMIT over a subquery. Results of both
settings are compared, and the plan variant used is printed.
"""

from __future__ import annotations

import argparse
import re
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO_ROOT))

from tests.integration.harness import MzServer  # noqa: E402

QUERIES = [
    ("global min/max", "SELECT min(v), max(v) FROM m"),
    ("top-3 per group", "SELECT g, v FROM (SELECT DISTINCT g FROM m) grp, LATERAL "
                        "(SELECT v FROM m WHERE m.g = grp.g ORDER BY v DESC LIMIT 3) t"),
    ("DISTINCT ON", "SELECT DISTINCT ON (g) g, k, v FROM m ORDER BY g, v DESC, k"),
    ("LIMIT over subquery", "SELECT * FROM (SELECT k, v FROM m ORDER BY v DESC, k LIMIT 10) s"),
]


def variants(plan: str) -> str:
    """The TopK/Reduce variants a physical plan uses."""
    return ",".join(sorted(set(re.findall(r"TopK::\w+|Reduce::\w+", plan))))


def load(conn, n: int) -> None:
    conn.execute("DROP TABLE IF EXISTS m")
    conn.execute("CREATE TABLE m (k int, g int, v int)")
    batch = 200_000
    for start in range(0, n, batch):
        with conn.cursor().copy("COPY m FROM STDIN") as cp:
            for i in range(start, min(n, start + batch)):
                cp.write_row((i, i % 1000, (i * 7919) % 1_000_003))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--sizes", default="1000000,10000000")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--spark-master", default="local[2]")
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="mzspark-mono-"))
    server = MzServer(tmp / "mzdata", tmp / "server.log", spark_master=args.spark_master)
    server.start()
    table = []
    try:
        with server.connect() as conn:
            for n in (int(x) for x in args.sizes.split(",")):
                t0 = time.perf_counter()
                load(conn, n)
                print(f"loaded {n} rows in {time.perf_counter() - t0:.1f} s", flush=True)
                for name, sql in QUERIES:
                    res = {}
                    for flag in ("off", "on"):
                        conn.execute(f"SET enable_monotonic_oneshot_selects = {flag}")
                        plan = conn.execute("EXPLAIN PHYSICAL PLAN FOR " + sql).fetchone()[0]
                        rows = conn.execute(sql).fetchall()
                        ts = []
                        for _ in range(args.repeat):
                            t = time.perf_counter()
                            conn.execute(sql).fetchall()
                            ts.append((time.perf_counter() - t) * 1000)
                        res[flag] = (statistics.median(ts), sorted(rows), variants(plan))
                    same = res["off"][1] == res["on"][1]
                    off_ms, on_ms = res["off"][0], res["on"][0]
                    table.append((n, name, off_ms, res["off"][2], on_ms, res["on"][2], off_ms / on_ms, same))
                    print(f"{n} {name}: off {off_ms:.0f} ms [{res['off'][2]}], on {on_ms:.0f} ms [{res['on'][2]}], "
                          f"speedup {off_ms / on_ms:.2f}x, same result: {same}", flush=True)
    finally:
        server.stop()
        shutil.rmtree(tmp, ignore_errors=True)
    print("\n| rows | query | off ms | plan off | on ms | plan on | speedup | same |")
    print("|---:|---|---:|---|---:|---|---:|---|")
    for n, name, off_ms, p_off, on_ms, p_on, sp, same in table:
        print(f"| {n} | {name} | {off_ms:.0f} | {p_off} | {on_ms:.0f} | {p_on} | {sp:.2f}x | {same} |")


if __name__ == "__main__":
    main()
