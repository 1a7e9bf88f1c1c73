"""Planning speed (no Spark): parse + bind + decorrelate + optimize + LIR + refinements,
measured as `EXPLAIN PHYSICAL PLAN FOR <query>` through the coordinator.

    .venv/bin/python benches/plan_speed.py [--repeat 20] [--slt ../shared/slt/sqlite/select1.test]

Prints the median planning time of a 30-line, 6-join query with 2 correlated subqueries, and
the median / p95 over each of the first 1,000 queries of select1.test.
"""

from __future__ import annotations

import argparse
import logging
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO_ROOT))

from server.coordinator import Coordinator  # noqa: E402

SCHEMA = [
    "CREATE TABLE customer (c_id int, c_name text, c_nation int, c_balance numeric(12,2))",
    "CREATE TABLE orders (o_id int, o_cust int, o_date date, o_total numeric(12,2), o_status text)",
    "CREATE TABLE lineitem (l_order int, l_part int, l_supp int, l_qty int, l_price numeric(12,2))",
    "CREATE TABLE part (p_id int, p_name text, p_type text, p_size int)",
    "CREATE TABLE supplier (s_id int, s_name text, s_nation int)",
    "CREATE TABLE nation (n_id int, n_name text, n_region int)",
]

BIG_QUERY = """
SELECT c.c_name,
       n.n_name,
       count(*) AS orders,
       sum(l.l_qty * l.l_price) AS revenue,
       (SELECT max(o2.o_total)
          FROM orders AS o2
         WHERE o2.o_cust = c.c_id
           AND o2.o_status = 'F') AS biggest_finished,
       min(p.p_size) AS smallest_part
  FROM customer AS c
  JOIN orders AS o ON o.o_cust = c.c_id
  JOIN lineitem AS l ON l.l_order = o.o_id
  JOIN part AS p ON p.p_id = l.l_part
  JOIN supplier AS s ON s.s_id = l.l_supp
  JOIN nation AS n ON n.n_id = c.c_nation
 WHERE o.o_date >= DATE '2024-01-01'
   AND s.s_nation = c.c_nation
   AND p.p_type LIKE '%BRASS'
   AND l.l_qty > (SELECT avg(l2.l_qty)
                    FROM lineitem AS l2
                   WHERE l2.l_part = p.p_id)
   AND c.c_balance > 0
   AND n.n_region IN (1, 2, 3)
 GROUP BY c.c_id, c.c_name, n.n_name
HAVING count(*) > 2
 ORDER BY revenue DESC,
          c.c_name
 LIMIT 100
"""


def slt_queries(path: Path, limit: int) -> tuple[list[str], list[str]]:
    """(statements before, first `limit` query bodies) of a sqllogictest file."""
    stmts, queries = [], []
    lines = path.read_text().split("\n")
    i = 0
    while i < len(lines) and len(queries) < limit:
        head = lines[i]
        if head.startswith(("statement", "query")):
            j = i + 1
            body = []
            while j < len(lines) and lines[j].strip() and lines[j] != "----":
                body.append(lines[j])
                j += 1
            (queries if head.startswith("query") else stmts).append("\n".join(body))
            i = j
        i += 1
    return stmts, queries


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--repeat", type=int, default=20)
    ap.add_argument("--slt", type=Path, default=REPO_ROOT.parent / "shared/slt/sqlite/select1.test")
    args = ap.parse_args()
    logging.getLogger("sqlglot").setLevel(logging.ERROR)
    with tempfile.TemporaryDirectory() as tmp:
        coord = Coordinator(tmp)
        session = coord.new_session("materialize", "materialize", {})

        def run(sql: str) -> None:
            r = coord.execute(session, coord.prepare(session, sql, []), [])
            for _ in getattr(r, "batches", []):
                pass

        for s in SCHEMA:
            run(s)
        plan = "EXPLAIN PHYSICAL PLAN FOR " + BIG_QUERY
        run(plan)
        times = []
        for _ in range(args.repeat):
            t = time.perf_counter()
            run(plan)
            times.append((time.perf_counter() - t) * 1000)
        big = statistics.median(times)
        print(f"30-line 6-join query, 2 correlated subqueries: median {big:.1f} ms over {args.repeat}")

        stmts, queries = slt_queries(args.slt, 1000)
        for s in stmts:
            if s.lstrip().upper().startswith("CREATE"):
                run(s)
        per = []
        failed = 0
        for q in queries:
            t = time.perf_counter()
            try:
                run("EXPLAIN PHYSICAL PLAN FOR " + q)
            except Exception:  # noqa: BLE001 - counted and reported
                failed += 1
            per.append((time.perf_counter() - t) * 1000)
        per.sort()
        p95 = per[int(len(per) * 0.95) - 1]
        print(f"{args.slt.name}, first {len(per)} queries: median {statistics.median(per):.1f} ms, p95 {p95:.1f} ms, failed {failed}")
        assert coord.compute.current is None, "planning must not start Spark"
        coord.close()


if __name__ == "__main__":
    main()
