"""The star join of issue 17 in all 24 FROM orders of its four tables, side by side.

    .venv/bin/python benches/join_orders.py [--fact 200000] [--dim 2000] [--repeat 3]

`fact(d1, d2, d3, v)` has --fact rows, `dim1..dim3(id, name)` --dim rows each (loaded with
COPY FROM STDIN). The query is

    SELECT count(*), sum(v) FROM <the four tables in some order>
    WHERE fact.d1 = dim1.id AND fact.d2 = dim2.id AND fact.d3 = dim3.id

After one warm-up round over all orders, --repeat rounds run every order once (each round in
a shuffled order, so warm-up and load drift spread over all orders); for every order it
prints the median time, the ratio to the best order, and whether EXPLAIN shows one join without a cross_join stage.
Acceptance: every order within 1.2x of the best.

With --chains, it instead times chains of 24 and 64 ten-row tables joined by equalities in
random FROM orders (tests/integration/test_join_orders_vs_postgres.py's queries; acceptance:
under 2 s and 5 s).
"""

from __future__ import annotations

import argparse
import itertools
import random
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO_ROOT))

from tests.integration.harness import MzServer  # noqa: E402

QUERY = "SELECT count(*), sum(v) FROM {} WHERE fact.d1 = dim1.id AND fact.d2 = dim2.id AND fact.d3 = dim3.id"


def setup(conn, fact: int, dim: int) -> None:
    conn.execute("DROP SCHEMA IF EXISTS stars CASCADE")
    conn.execute("CREATE SCHEMA stars")
    conn.execute("SET search_path = stars")
    conn.execute("CREATE TABLE fact (d1 int, d2 int, d3 int, v int)")
    with conn.cursor().copy("COPY fact FROM STDIN") as cp:
        for i in range(fact):
            cp.write_row((i % dim, (i * 7) % dim, (i * 13) % dim, i % 1000))
    for d in ("dim1", "dim2", "dim3"):
        conn.execute(f"CREATE TABLE {d} (id int, name text)")
        with conn.cursor().copy(f"COPY {d} FROM STDIN") as cp:
            for i in range(dim):
                cp.write_row((i, f"{d}-{i}"))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--fact", type=int, default=200_000)
    ap.add_argument("--dim", type=int, default=2000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--spark-master", default="local[2]")
    ap.add_argument("--chains", action="store_true")
    args = ap.parse_args()
    if args.chains:
        return chains(args)
    tmp = Path(tempfile.mkdtemp(prefix="mzspark-joinorders-"))
    server = MzServer(tmp / "mzdata", tmp / "server.log", spark_master=args.spark_master)
    server.start()
    results: list[tuple[str, float, bool, tuple]] = []
    try:
        with server.connect() as conn:
            setup(conn, args.fact, args.dim)
            orders = [", ".join(o) for o in itertools.permutations(["dim1", "dim2", "dim3", "fact"])]
            plans, answers = {}, {}
            for order in orders:  # one warm-up round over all orders (JIT, source caches)
                sql = QUERY.format(order)
                plan = "\n".join(r[0] for r in conn.execute("EXPLAIN PHYSICAL PLAN FOR " + sql).fetchall())
                plans[order] = plan.count("Join::") == 1 and "cross_join" not in plan
                answers[order] = tuple(conn.execute(sql).fetchone())
            times: dict[str, list[float]] = {o: [] for o in orders}
            rng = random.Random(0)
            for r in range(args.repeat):  # rounds over all orders, each round shuffled
                for order in rng.sample(orders, len(orders)):
                    start = time.perf_counter()
                    conn.execute(QUERY.format(order)).fetchall()
                    times[order].append(time.perf_counter() - start)
                print(f"round {r + 1} of {args.repeat} done", flush=True)
            results = [(o, statistics.median(times[o]), plans[o], answers[o]) for o in orders]
    finally:
        server.stop()
        shutil.rmtree(tmp, ignore_errors=True)
    best = min(t for _, t, _, _ in results)
    print()
    print(f"{'FROM order':28s} {'median s':>9s} {'x best':>7s}  one join, no cross_join")
    for order, t, one, _ in results:
        print(f"{order:28s} {t:9.3f} {t / best:7.2f}  {'yes' if one else 'NO'}")
    answers = {a for _, _, _, a in results}
    worst = max(t for _, t, _, _ in results) / best
    print(f"\nworst / best = {worst:.2f} (acceptance: <= 1.2); same answer in every order: {len(answers) == 1}")


def chains(args) -> None:
    from tests.integration.test_join_orders_vs_postgres import _setup, chain_query

    tmp = Path(tempfile.mkdtemp(prefix="mzspark-chains-"))
    server = MzServer(tmp / "mzdata", tmp / "server.log", spark_master=args.spark_master)
    server.start()
    try:
        with server.connect() as conn:
            conn.execute("CREATE SCHEMA chains")
            conn.execute("SET search_path = chains")
            for st in _setup():
                conn.execute(st.replace("{s}", "chains"))
            for n in (24, 64):
                for seed in range(3):
                    sql = chain_query(n, seed)
                    conn.execute(sql).fetchall()  # warm-up
                    times = []
                    for _ in range(args.repeat):
                        start = time.perf_counter()
                        conn.execute(sql).fetchall()
                        times.append(time.perf_counter() - start)
                    print(f"{n}-table chain, seed {seed}: median {statistics.median(times):.3f} s", flush=True)
    finally:
        server.stop()
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
