"""Hydration with operator hydration reporting on vs off, side by side (issue 12).

    .venv/bin/python benches/hydration.py [--rows 5000000] [--repeat 3] [--workers 2]

Figures: docs/hydration.md and the README's introspection section.

One server (`--workers`), tables `fact(k1, k2, k3, v)` (`--rows` rows) and three dimensions
(`--rows / 10` rows each), a view joining the four and aggregating; then, alternating,
`CREATE INDEX` with `enable_compute_operator_hydration_status_logging` off and on (CREATE
INDEX returns once the dataflow is hydrated), `DROP INDEX`. Prints the median hydration time
of each, their ratio (goal ≤ 1.1×), and the delay from a Spark task's end to its status row
(p50 / p95, from the server's log lines `hydration status delays`).
"""

from __future__ import annotations

import argparse
import re
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.integration.harness import MzServer  # noqa: E402

VIEW = ("SELECT d1.g, count(*) AS c, sum(f.v) AS s, max(d3.h) AS m FROM fact f "
        "JOIN d1 ON f.k1 = d1.id JOIN d2 ON f.k2 = d2.id JOIN d3 ON f.k3 = d3.id "
        "WHERE d2.ok GROUP BY d1.g")


def pct(xs: list[float], p: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(p * (len(xs) - 1))))]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=5_000_000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--spark-master", default="local[2]")
    a = ap.parse_args()
    dims = max(a.rows // 10, 1)
    with tempfile.TemporaryDirectory() as tmp:
        server = MzServer(Path(tmp) / "mzdata", Path(tmp) / "server.log", spark_master=a.spark_master,
                          extra_args=("--workers", str(a.workers)))
        server.start()
        try:
            mz = server.connect(autocommit=True)
            mz.execute("CREATE TABLE fact (k1 int, k2 int, k3 int, v bigint)")
            for d in ("d1", "d2", "d3"):
                mz.execute(f"CREATE TABLE {d} (id int, g int, h int, ok bool)")
                mz.execute(f"INSERT INTO {d} SELECT x, x % 100, x % 17, x % 3 <> 0 FROM generate_series(0, {dims - 1}) AS x")
            step = 1_000_000
            for lo in range(0, a.rows, step):
                hi = min(a.rows, lo + step)
                mz.execute(f"INSERT INTO fact SELECT x % {dims}, (x * 7) % {dims}, (x * 13) % {dims}, x "
                           f"FROM generate_series({lo}, {hi - 1}) AS x")
                print(f"loaded {hi} rows", file=sys.stderr, flush=True)
            mz.execute(f"CREATE VIEW v AS {VIEW}")
            times: dict[str, list[float]] = {"off": [], "on": []}
            lags: list[float] = []
            warm: dict[str, list[float]] = {"off": [], "on": []}
            # a warm-up pair (JIT, caches), then pairs in alternating order
            for r in range(-1, a.repeat):
                for mode in (("off", "on") if r % 2 else ("on", "off")):
                    mz.execute(f"ALTER SYSTEM SET enable_compute_operator_hydration_status_logging = {mode}")
                    t0 = time.monotonic()
                    mz.execute("CREATE INDEX i ON v (g)")
                    (times if r >= 0 else warm)[mode].append(time.monotonic() - t0)
                    if mode == "on":
                        # statuses are written as the listener sees the tasks end (asynchronously):
                        # how long after CREATE INDEX returned the last one turned true
                        t1 = time.monotonic()
                        while mz.execute("SELECT count(*) FROM mz_internal.mz_compute_operator_hydration_statuses "
                                         "o JOIN mz_indexes i ON o.object_id = i.id WHERE i.name = 'i' AND NOT o.hydrated"
                                         ).fetchone() != (0,):
                            assert time.monotonic() - t1 < 120, "statuses still false 120 s after CREATE INDEX returned"
                            time.sleep(0.05)
                        lags.append(time.monotonic() - t1)
                    mz.execute("DROP INDEX i")
                    print(f"run {r} reporting {mode}: {time.monotonic() - t0:.2f} s", file=sys.stderr, flush=True)
            mz.close()
        finally:
            server.stop()
        log = (Path(tmp) / "server.log").read_text(errors="replace")
    delays = [float(x) for line in re.findall(r"hydration status delays of \w+: ([\d.,]+) ms", log)
              for x in line.split(",")]
    if not times["off"]:  # --repeat 0: the warm-up pair alone
        times = warm
    off, on = statistics.median(times["off"]), statistics.median(times["on"])
    print("| rows | workers | hydration, reporting off (s) | on (s) | on / off | task end → row p50 (ms) | p95 (ms) |")
    print("|---|---|---|---|---|---|---|")
    print(f"| {a.rows:,} | {a.workers} | {off:.2f} | {on:.2f} | {on / off:.2f}× | "
          f"{pct(delays, 0.5):.0f} | {pct(delays, 0.95):.0f} |" if delays else "| no delays logged |")
    print(f"last status true after CREATE INDEX returned: max {max(lags) * 1000:.0f} ms over {len(lags)} runs")


if __name__ == "__main__":
    main()
