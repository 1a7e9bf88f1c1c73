"""The LEFT JOIN stack with and without union-negate consolidation (DESIGN §11).

    .venv/bin/python benches/left_join_stack.py [--sizes 1,100000] [--joins 3,8] [--repeat 3]

`foo(a, b)` has N rows; each `more_i(x, y)` holds N/2 matching keys (every even `a`), read
through a keyed view `more_i_keyed = SELECT DISTINCT ON (x) * FROM more_i`. The query is
`foo LEFT JOIN more_1_keyed ... LEFT JOIN more_J_keyed`. Each LEFT JOIN lowers to
inner-join ∪ (foo-side rows without a match, padded with NULLs), a Union with a Negate.
For each size and stack depth, with `enable_consolidate_after_union_negate` on and off, it
prints the records out of each LEFT JOIN's Union (EXPLAIN ANALYZE) and the median time of
the query itself. Expected: N, N, N, ... with consolidation; growing without.
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


def setup(conn, n: int, joins: int) -> None:
    conn.execute("DROP SCHEMA IF EXISTS ljs CASCADE")
    conn.execute("CREATE SCHEMA ljs")
    conn.execute("SET search_path = ljs")
    conn.execute("CREATE TABLE foo (a int, b int)")
    with conn.cursor().copy("COPY foo FROM STDIN") as cp:
        for i in range(n):
            cp.write_row((i, i % 97))
    for j in range(1, joins + 1):
        conn.execute(f"CREATE TABLE more_{j} (x int, y int)")
        with conn.cursor().copy(f"COPY more_{j} FROM STDIN") as cp:
            for i in range(0, n, 2):
                cp.write_row((i, i * j))
        conn.execute(f"CREATE VIEW more_{j}_keyed AS SELECT DISTINCT ON (x) * FROM more_{j}")


def stack_sql(joins: int) -> str:
    sql = "SELECT * FROM foo"
    for j in range(1, joins + 1):
        sql += f" LEFT JOIN more_{j}_keyed AS m{j} ON foo.a = m{j}.x"
    return sql


def union_records(plan: str) -> list[int]:
    """Records out of each LEFT JOIN's output Union (the Unions that are not themselves
    the negated-input Union), innermost join first."""
    out = []
    for line in plan.splitlines():
        m = re.match(r"\s*Union // \{ node_id: (\d+), records: (\d+) \}", line)
        if m:
            out.append((int(m.group(1)), int(m.group(2))))
    return [r for _, r in sorted(out)]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--sizes", default="1,100000")
    ap.add_argument("--joins", default="3,8")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--spark-master", default="local[2]")
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="mzspark-ljs-"))
    server = MzServer(tmp / "mzdata", tmp / "server.log", spark_master=args.spark_master)
    server.start()
    rows = []
    try:
        with server.connect() as conn:
            for n in (int(x) for x in args.sizes.split(",")):
                for joins in (int(x) for x in args.joins.split(",")):
                    setup(conn, n, joins)
                    sql = stack_sql(joins)
                    for flag in ("on", "off"):
                        conn.execute(f"SET enable_consolidate_after_union_negate = {flag}")
                        plan = conn.execute("EXPLAIN ANALYZE " + sql).fetchone()[0]
                        recs = union_records(plan)
                        times = []
                        for _ in range(args.repeat):
                            t = time.perf_counter()
                            got = conn.execute(f"SELECT count(*) FROM ({sql}) s").fetchone()[0]
                            times.append((time.perf_counter() - t) * 1000)
                        assert got == n, (got, n)
                        rows.append((n, joins, flag, recs, statistics.median(times)))
                        print(f"N={n} joins={joins} consolidation={flag}: union records {recs}, {statistics.median(times):.0f} ms", flush=True)
    finally:
        server.stop()
        shutil.rmtree(tmp, ignore_errors=True)
    print("\n| N | joins | consolidation | records out of each LEFT JOIN's Union | median ms |")
    print("|---:|---:|---|---|---:|")
    for n, joins, flag, recs, ms in rows:
        print(f"| {n} | {joins} | {flag} | {', '.join(map(str, recs))} | {ms:.0f} |")


if __name__ == "__main__":
    main()
