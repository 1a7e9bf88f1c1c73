"""One maintained step for a 1-row change vs a full recompute of the same view, at growing
state (DESIGN §5.2: a step's cost must grow with |Δ|, not |state|), and the state kept by a
monotonic TopK (thinning) vs a Basic TopK over appended rows.

    PYTHONPATH=. python benches/maintained_step.py [--sizes 1,4,16] [--steps 3] [--topk-rows 1000000]

View: SELECT d.g, count(*), sum(f.v) FROM f JOIN d ON f.k = d.k GROUP BY d.g
(f: N rows over N/16 keys; d: one row per key, N/160 groups). Times are wall-clock ms; the
step time is the median of `--steps` 1-row steps (inserts and deletes of one f row); the
recompute is the one-shot render of the same plan over the same (cached) inputs, collected.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

VIEW = "SELECT d.g, count(*), sum(f.v) FROM f JOIN d ON f.k = d.k GROUP BY d.g"
TOPK = "SELECT g.a, x.b FROM (SELECT DISTINCT a FROM t) g, LATERAL (SELECT b FROM t WHERE t.a = g.a ORDER BY b DESC LIMIT 3) x"


def _plan(gs, sql: str):
    from tests.integration.test_delta_render import maintained_plan

    return maintained_plan(gs, sql)


def _ms(t: float) -> float:
    return (time.perf_counter() - t) * 1000


def _recompute_ms(spark, df, frames: dict) -> float:
    from compute.render import oneshot

    ctx = oneshot.RenderContext(spark, lambda i, ts: oneshot.Rel(ctx.view(frames[i], False), len(ts)), source_mfps=dict(df.source_mfps))
    try:
        t = time.perf_counter()
        r = oneshot.consolidate(oneshot.render(df.plan, ctx), ctx)
        spark.sql(r.sql).toArrow()
        return _ms(t)
    finally:
        ctx.release()


def _delta_batch(spark, tmp: str, s: int, k: int, diff: int):
    """A step's input as the controller reads it: one f row written to a batch file, read
    back by oneshot.read_shard_range (a few rows: a local relation)."""
    import pyarrow.parquet as pq

    from catalog.storage.arrow_types import rows_to_arrow
    from compute.render import oneshot
    from sql.types import INT4

    path = f"{tmp}/delta{s}.parquet"
    pq.write_table(rows_to_arrow((INT4, INT4), [(k, 5)], s + 1, diff), path)
    return oneshot.read_shard_range(spark, [path], (INT4, INT4), s, s + 1, has_retractions=diff < 0, rows=1)


def bench_view(spark, gs, millions: float, steps: int) -> dict:
    import tempfile

    from compute.render.delta import DeltaDataflow
    from compute.render.spark import collect_arrow

    tmp = tempfile.mkdtemp(prefix="maintained-step-")

    n = int(millions * 1_000_000)
    keys, groups = max(n // 16, 1), max(n // 160, 1)
    df = _plan(gs, VIEW)
    ids = {qn.split(".")[-1]: sid for sid, qn in df.sources}
    f = spark.sql(f"SELECT CAST(id % {keys} AS INT) AS c0, CAST(id % 100 AS INT) AS c1, CAST(1 AS BIGINT) AS diff FROM range({n})").cache()
    d = spark.sql(f"SELECT CAST(id AS INT) AS c0, CAST(id % {groups} AS INT) AS c1, CAST(1 AS BIGINT) AS diff FROM range({keys})").cache()
    f.count(), d.count()
    flow = DeltaDataflow(spark, df)
    t = time.perf_counter()
    flow.hydrate({ids["f"]: f, ids["d"]: d})
    hydrate = _ms(t)
    times, actions = [], []
    for s in range(steps):
        row = _delta_batch(spark, tmp, s, (s * 7919) % keys, 1 if s % 2 == 0 else -1)
        a0 = flow.actions
        t = time.perf_counter()
        collect_arrow(flow.step({ids["f"]: row}), small=False)
        times.append(_ms(t))
        actions.append(flow.actions - a0)
    rec = min(_recompute_ms(spark, df, {ids["f"]: f, ids["d"]: d}) for _ in range(2))
    state = sum(flow.state_rows().values())
    flow.close()
    f.unpersist(), d.unpersist()
    step = statistics.median(times)
    return {"M": millions, "state_rows": state, "hydrate_ms": hydrate, "step_ms": step, "steps": [round(x) for x in times],
            "actions": actions[-1], "recompute_ms": rec, "ratio": step / rec}


def bench_topk(spark, gs, rows: int) -> list[tuple[str, int, int]]:
    """State rows kept per TopK variant after `rows` appended rows (100 groups, top 3)."""
    from compute.plan import lir
    from compute.render.delta import DeltaDataflow
    from tests.integration.test_delta_render import with_topk_plan

    df = _plan(gs, TOPK)
    sid = df.sources[0][0]

    out = []
    for label, plan in (("Basic", lir.TopKBasic()), ("MonotonicTopK", lir.TopKMonotonicTopK(False))):
        flow = DeltaDataflow(spark, replace(df, plan=with_topk_plan(df.plan, plan)))
        half = rows // 2
        # hydrate with half the rows, then append the rest in one step
        flow.hydrate({sid: spark.sql(f"SELECT CAST(id % 100 AS INT) AS c0, CAST(id AS INT) AS c1, CAST(1 AS BIGINT) AS diff FROM range({half})")})
        flow.step({sid: spark.sql(f"SELECT CAST(id % 100 AS INT) AS c0, CAST(id AS INT) AS c1, CAST(1 AS BIGINT) AS diff FROM range({half}, {rows})")})
        state = flow.state_rows()
        out.append((label, sum(state.values()), max(state.values(), default=0)))
        flow.close()
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="1,4,16", help="millions of rows of f")
    ap.add_argument("--steps", type=int, default=3)
    ap.add_argument("--topk-rows", type=int, default=1_000_000)
    args = ap.parse_args()

    from compute.render.spark import spark_session
    from tests.golden_runner import GoldenSession

    gs = GoldenSession()
    gs.run("CREATE TABLE f (k int, v int)")
    gs.run("CREATE TABLE d (k int, g int)")
    gs.run("CREATE TABLE t (a int, b int)")
    spark = spark_session()
    results = []
    for m in (float(x) for x in args.sizes.split(",")):
        r = bench_view(spark, gs, m, args.steps)
        results.append(r)
        print(r, flush=True)
    print()
    print(f"{'state (M rows of f)':>20} {'state rows':>12} {'hydrate ms':>11} {'step ms':>9} {'actions':>8} {'recompute ms':>13} {'ratio':>7}")
    for r in results:
        print(f"{r['M']:>20g} {r['state_rows']:>12} {r['hydrate_ms']:>11.0f} {r['step_ms']:>9.0f} {r['actions']:>8} {r['recompute_ms']:>13.0f} {r['ratio']:>7.3f}")
    if len(results) > 1:
        a, b = results[0], results[-1]
        print(f"step slope: {(b['step_ms'] - a['step_ms']) / (b['M'] - a['M']):.1f} ms per 1M rows of state")
    if args.topk_rows:
        print()
        print(f"TopK (top 3 of 100 groups) after {args.topk_rows} appended rows: state rows")
        for label, total, biggest in bench_topk(spark, gs, args.topk_rows):
            print(f"{label:>15} {total:>10} (largest node {biggest})")
    gs.coord.close()
    gs.tmp.cleanup()


if __name__ == "__main__":
    main()
