"""Load-independent costs of a prepared point lookup (benches/load.py's `SELECT * FROM lk
WHERE id = $1` on a 100-row table) executed repeatedly in one session, in-process: per
execution the Spark analyzer / optimizer rule runs, the CPU time of the JVM thread serving
the session's py4j calls, py4j round trips and Spark jobs (benches/step_counts.py's meter),
with Spark plan templates (compute.render.templates) and without them (every execution's
text parsed and analysed by `spark.sql`, as before them).

    PYTHONPATH=. python benches/lookup_counts.py [--executions 200]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benches.step_counts import METER, Counts  # noqa: E402


def measure(executions: int, templated: bool) -> list[Counts]:
    from compute.render import driver_calls, templates
    from server.api import RowsResult
    from server.coordinator import Coordinator
    from sql.types import INT4

    tmp = tempfile.TemporaryDirectory()
    c = Coordinator(str(Path(tmp.name) / "data"))
    s = c.new_session("materialize", "materialize", {})

    def run(sql: str, params: list[Any] | None = None) -> list[tuple]:
        r = c.execute(s, c.prepare(s, sql, [INT4] if params else []), params or [])
        return [row for batch in r.batches for row in batch] if isinstance(r, RowsResult) else []

    orig = templates.frame
    if not templated:
        templates.frame = driver_calls.sql_frame  # type: ignore[assignment]
    try:
        run("CREATE TABLE lk (id int, v text)")
        run("INSERT INTO lk SELECT g, 'v' || g FROM generate_series(0, 99) AS g")
        METER.install()
        spark = c.spark()
        out: list[Counts] = []
        for i in range(executions):
            with METER.measure(spark, out):
                got = run("SELECT * FROM lk WHERE id = $1", [(i * 7) % 100])
            assert got == [((i * 7) % 100, f"v{(i * 7) % 100}")], got
    finally:
        templates.frame = orig  # type: ignore[method-assign]
        c.close()
        tmp.cleanup()
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--executions", type=int, default=200)
    a = ap.parse_args()
    print(f"a prepared lookup on 100 rows, {a.executions} executions in one session (the first is the table's"
          " first read); medians of executions 2..n, and the first")
    print(f"{'templates':>9} {'rule runs':>9} {'jvm cpu ms':>10} {'py4j':>5} {'jobs':>5} | first: {'rule runs':>9} {'jvm cpu ms':>10}")
    for templated in (False, True):
        rows = measure(a.executions, templated)
        rest = rows[1:]

        def med(f: Any, rs: list[Counts] = rest) -> float:
            return statistics.median(f(r) for r in rs)

        print(f"{'on' if templated else 'off':>9} {med(lambda r: r.rules):>9g} {med(lambda r: r.jvm_cpu_s * 1000):>10.1f}"
              f" {med(lambda r: r.py4j):>5g} {med(lambda r: r.jobs):>5g} |        {rows[0].rules:>9g} {rows[0].jvm_cpu_s * 1000:>10.1f}")


if __name__ == "__main__":
    main()
