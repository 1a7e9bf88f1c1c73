"""The incremental renderer of maintained dataflows (compute.render.delta), without the server:
for each maintained query, seeded random sequences of insert / delete batches (NULLs and
duplicates included) are applied step by step; after every step the accumulated output must
equal the one-shot render of the same plan over the accumulated inputs AND PostgreSQL 15
running the same SQL on the same data."""

from __future__ import annotations

import random
from collections.abc import Iterator
from decimal import Decimal
from typing import Any

import psycopg
import pytest

from compute.plan import lir
from tests.pgref import reference_postgres

pytestmark = pytest.mark.spark

TABLES = {
    "t1": ("a int", "b int", "s text"),
    "t2": ("a int", "c int"),
    "t3": ("c int", "d text"),
}
VALUES: dict[str, tuple[tuple[Any, ...], ...]] = {
    "t1": ((None, 0, 1, 2, 3, 4), (None, 0, 1, 2, 3), (None, "x", "y", "z")),
    "t2": ((None, 0, 1, 2, 3, 4), (None, 0, 1, 2, 3)),
    "t3": ((None, 0, 1, 2, 3), (None, "p", "q")),
}

QUERIES = {
    # joins
    "inner_join_reduce": "SELECT t1.b, count(*), sum(t2.c) FROM t1 JOIN t2 ON t1.a = t2.a GROUP BY t1.b",
    "left_join": "SELECT t1.a, t1.b, t2.c FROM t1 LEFT JOIN t2 ON t1.a = t2.a",
    "full_join": "SELECT t1.b, t2.c FROM t1 FULL JOIN t2 ON t1.a = t2.a",
    "three_way_join": "SELECT t1.a, t2.c, t3.d FROM t1 JOIN t2 ON t1.a = t2.a JOIN t3 ON t2.c = t3.c",
    "cross_join": "SELECT t2.c, t3.d FROM t2, t3 WHERE t2.a > 2",
    # reductions
    "accumulable": "SELECT a, count(*), count(b), sum(b) FROM t1 GROUP BY a",
    "global_aggregate": "SELECT count(*), sum(b), count(s) FROM t1",
    "avg_min_max": "SELECT a, avg(b), min(b), max(b), min(s), max(s) FROM t1 GROUP BY a",
    "distinct": "SELECT DISTINCT a, b FROM t1",
    "count_distinct": "SELECT a, count(DISTINCT b) FROM t1 GROUP BY a",
    "basic_lists": "SELECT a, string_agg(s, ',' ORDER BY s), array_agg(b ORDER BY b) FROM t1 GROUP BY a",
    "having": "SELECT a, max(s) FROM t1 GROUP BY a HAVING count(*) > 1",
    # top-k
    "top1_distinct_on": "SELECT DISTINCT ON (a) a, b, s FROM t1 ORDER BY a, b DESC, s",
    "topk_per_group": "SELECT g.a, x.b FROM (SELECT DISTINCT a FROM t1) g, "
                      "LATERAL (SELECT b FROM t1 WHERE t1.a = g.a ORDER BY b LIMIT 2 OFFSET 1) x",
    "topk_global": "SELECT a, b FROM t1 ORDER BY a, b LIMIT 3",
    # set operations
    "except": "SELECT a FROM t1 EXCEPT SELECT a FROM t2",
    "except_all": "SELECT a FROM t1 EXCEPT ALL SELECT a FROM t2",
    "intersect": "SELECT a FROM t1 INTERSECT SELECT a FROM t2",
    "intersect_all": "SELECT a FROM t1 INTERSECT ALL SELECT a FROM t2",
    "union": "SELECT a FROM t1 UNION SELECT c FROM t2",
    "union_all": "SELECT a, b FROM t1 UNION ALL SELECT a, c FROM t2",
    # windows
    "window_row_number": "SELECT a, b, s, row_number() OVER (PARTITION BY a ORDER BY b, s) FROM t1",
    "window_sum": "SELECT a, b, sum(b) OVER (PARTITION BY a ORDER BY b) FROM t1",
    # subqueries
    "correlated_scalar": "SELECT a, (SELECT count(*) FROM t2 WHERE t2.a = t1.a) FROM t1",
    "correlated_filter": "SELECT a, b FROM t1 WHERE b > (SELECT avg(c) FROM t2 WHERE t2.a = t1.a)",
    # table functions
    "generate_series": "SELECT t1.a, g FROM t1, generate_series(1, t1.b) AS g",
    "unnest": "SELECT t1.a, u FROM t1, unnest(ARRAY[t1.a, t1.b]) AS u",
}

STEPS = 3


@pytest.fixture(scope="module")
def env() -> Iterator[dict[str, Any]]:
    from compute.render.spark import spark_session
    from tests.golden_runner import GoldenSession

    gs = GoldenSession()
    for t, cols in TABLES.items():
        gs.run(f"CREATE TABLE {t} ({', '.join(cols)})")
    spark = spark_session()
    with reference_postgres("pgdelta-") as dsn, psycopg.connect(dsn, autocommit=True) as pg:
        for t, cols in TABLES.items():
            pg.execute(f"CREATE TABLE {t} ({', '.join(cols)})")
        yield {"gs": gs, "spark": spark, "pg": pg}
    gs.coord.close()
    gs.tmp.cleanup()


def maintained_plan(gs: Any, sql: str) -> lir.Dataflow:
    """The maintained dataflow of `CREATE MATERIALIZED VIEW mv AS sql`."""
    from compute.plan import pipeline
    from server.resolver import Resolver
    from sql import statements as st
    from sql.bind import Binder

    c = gs.coord
    target = st.classify(f"CREATE MATERIALIZED VIEW _delta_mv AS {sql}")
    assert isinstance(target, st.CreateView)
    b = Binder(Resolver(c.catalog, gs.session, c.system))
    rel = b._finish_nested(b.bind_query(target.query, top=False))
    m = pipeline.optimize(pipeline.to_mir_rel(rel))
    return pipeline.dataflow(m, None, name="mv", single_time=False)


def norm(v: Any) -> Any:
    if isinstance(v, bool) or v is None or isinstance(v, str):
        return v
    if isinstance(v, (int, float, Decimal)):
        return round(float(v), 6)
    if isinstance(v, (list, tuple)):
        return tuple(norm(x) for x in v)
    return v


def as_bag(rows: list[tuple[tuple[Any, ...], int]]) -> dict[tuple[Any, ...], int]:
    out: dict[tuple[Any, ...], int] = {}
    for r, d in rows:
        k = tuple(norm(v) for v in r)
        out[k] = out.get(k, 0) + d
    return {k: v for k, v in out.items() if v}


class Inputs:
    """Accumulated table contents and random update batches (deletes of present rows)."""

    def __init__(self, seed: int, types: dict[str, tuple]) -> None:
        self.rng = random.Random(seed)
        self.types = types  # by source id
        self.acc: dict[str, dict[tuple[Any, ...], int]] = {t: {} for t in TABLES}

    def batch(self, t: str, inserts: int, deletes: int) -> list[tuple[tuple[Any, ...], int]]:
        present = [r for r, d in self.acc[t].items() for _ in range(d)]
        rows = [(tuple(self.rng.choice(vs) for vs in VALUES[t]), 1) for _ in range(inserts)]
        # a duplicate of an existing row now and then
        if present and self.rng.random() < 0.5:
            rows.append((self.rng.choice(present), 1))
        rows += [(r, -1) for r in self.rng.sample(present, min(deletes, len(present)))]
        for r, d in rows:
            self.acc[t][r] = self.acc[t].get(r, 0) + d
            if self.acc[t][r] == 0:
                del self.acc[t][r]
        return rows


def oneshot_rows(spark: Any, df: lir.Dataflow, ids: dict[str, str], inputs: Inputs) -> dict[tuple[Any, ...], int]:
    from compute.render import oneshot

    def read(i: str, ts: tuple) -> oneshot.Rel:
        rows = list(inputs.acc[ids[i]].items())
        return oneshot.Rel(ctx.view(oneshot.constant_df(spark, rows, inputs.types[i]), False), len(inputs.types[i]))

    ctx = oneshot.RenderContext(spark, read, source_mfps=dict(df.source_mfps))
    try:
        r = oneshot.consolidate(oneshot.render(df.plan, ctx), ctx)
        return as_bag(oneshot.arrow_rows(spark.sql(r.sql).toArrow(), df.types))
    finally:
        ctx.release()


def pg_rows(pg: psycopg.Connection, sql: str, inputs: Inputs) -> dict[tuple[Any, ...], int]:
    for t in TABLES:
        pg.execute(f"DELETE FROM {t}")
        rows = [r for r, d in inputs.acc[t].items() for _ in range(d)]
        if rows:
            ph = ", ".join(["%s"] * len(rows[0]))
            with pg.cursor() as cur:
                cur.executemany(f"INSERT INTO {t} VALUES ({ph})", rows)
    return as_bag([(tuple(r), 1) for r in pg.execute(sql).fetchall()])


@pytest.mark.parametrize("name", sorted(QUERIES))
def test_delta_matches_oneshot_and_postgres(env: dict[str, Any], name: str) -> None:
    from compute.render import oneshot
    from compute.render.delta import DeltaDataflow

    sql, spark = QUERIES[name], env["spark"]
    df = maintained_plan(env["gs"], sql)
    assert DeltaDataflow.supports(df)
    ids = {sid: qn.split(".")[-1] for sid, qn in df.sources}
    types = {sid: tuple(c.type for c in env["gs"].coord.catalog.get_item_by_id(sid).columns) for sid in ids}
    inputs = Inputs(sum(map(ord, name)), types)

    def frames(batches: dict[str, list]) -> dict[str, Any]:
        return {sid: oneshot.constant_df(spark, batches[ids[sid]], types[sid]) for sid in ids if ids[sid] in batches}

    flow = DeltaDataflow(spark, df)
    try:
        out: dict[tuple[Any, ...], int] = {}
        for step in range(STEPS + 1):
            if step == 0:
                batches = {t: inputs.batch(t, 12, 0) for t in TABLES}
                got = flow.hydrate(frames(batches))
            else:
                touched = [t for t in TABLES if inputs.rng.random() < 0.7] or ["t1"]
                batches = {t: inputs.batch(t, 3, 2) for t in touched}
                got = flow.step(frames(batches))
            delta = oneshot.arrow_rows(got.toArrow(), df.types)
            assert all(d != 0 for _, d in delta)
            for k, v in as_bag(delta).items():
                out[k] = out.get(k, 0) + v
            out = {k: v for k, v in out.items() if v}
            expected = oneshot_rows(spark, df, ids, inputs)
            assert out == expected, f"step {step}: delta-maintained != one-shot"
            assert out == pg_rows(env["pg"], sql, inputs), f"step {step}: delta-maintained != PostgreSQL"
        assert all(n >= 0 for n in flow.state_rows().values())
    finally:
        flow.close()



def with_topk_plan(p: lir.Plan, plan: lir.TopKPlan) -> lir.Plan:
    """`p` with every TopK's plan replaced (a monotonic input, which tables are not for the
    planner, is the caller's promise)."""
    from dataclasses import replace

    from compute.plan.pipeline import lir_children

    n = p.node
    if isinstance(n, lir.TopK):
        return lir.Plan(p.node_id, replace(n, plan=plan, input=with_topk_plan(n.input, plan)))
    new = [with_topk_plan(k, plan) for k in lir_children(n)]
    match n:
        case lir.Join() | lir.Union():
            return lir.Plan(p.node_id, replace(n, inputs=tuple(new)))
        case lir.Let():
            return lir.Plan(p.node_id, replace(n, value=new[0], body=new[1]))
        case lir.Constant() | lir.Get():
            return p
        case _:
            return lir.Plan(p.node_id, replace(n, input=new[0]))  # type: ignore[arg-type]


def _topk_nodes(p: lir.Plan) -> list[int]:
    from compute.plan.pipeline import lir_children

    return ([p.node_id] if isinstance(p.node, lir.TopK) else []) + [x for c in lir_children(p.node) for x in _topk_nodes(c)]


@pytest.mark.parametrize(("sql", "plan", "k"), [
    ("SELECT DISTINCT ON (a) a, b, s FROM t1 ORDER BY a, b DESC, s", lir.TopKMonotonicTop1(False), 1),
    ("SELECT g.a, x.b FROM (SELECT DISTINCT a FROM t1) g, "
     "LATERAL (SELECT b FROM t1 WHERE t1.a = g.a ORDER BY b DESC LIMIT 2) x", lir.TopKMonotonicTopK(False), 2),
])
def test_monotonic_topk_keeps_only_the_top_rows(env: dict[str, Any], sql: str, plan: lir.TopKPlan, k: int) -> None:
    """Over appended rows a monotonic TopK keeps only the current top k per group (thinning),
    and its output still equals the one-shot render and PostgreSQL after every step."""
    from dataclasses import replace

    from compute.render import oneshot
    from compute.render.delta import DeltaDataflow

    spark = env["spark"]
    df = maintained_plan(env["gs"], sql)
    mono = replace(df, plan=with_topk_plan(df.plan, plan))
    ids = {sid: qn.split(".")[-1] for sid, qn in df.sources}
    types = {sid: tuple(c.type for c in env["gs"].coord.catalog.get_item_by_id(sid).columns) for sid in ids}
    inputs = Inputs(7, types)
    flow = DeltaDataflow(spark, mono)
    try:
        out: dict[tuple[Any, ...], int] = {}
        for step in range(STEPS + 1):
            batches = {"t1": inputs.batch("t1", 15, 0)}
            frames = {sid: oneshot.constant_df(spark, batches[ids[sid]], types[sid]) for sid in ids}
            got = flow.hydrate(frames) if step == 0 else flow.step(frames)
            for key, v in as_bag(oneshot.arrow_rows(got.toArrow(), df.types)).items():
                out[key] = out.get(key, 0) + v
            out = {key: v for key, v in out.items() if v}
            assert out == oneshot_rows(spark, df, ids, inputs), f"step {step}"
            assert out == pg_rows(env["pg"], sql, inputs), f"step {step}"
            groups = len({r[0] for r in inputs.acc["t1"]})
            rows = sum(inputs.acc["t1"].values())
            for nid in _topk_nodes(mono.plan):
                held = flow.state_rows().get(nid, 0)
                assert held <= k * groups < rows, (nid, held, groups, rows)
    finally:
        flow.close()


def test_failed_step_leaves_the_state_unchanged(env: dict[str, Any]) -> None:
    """A step whose output fails (division by zero in a map above a join, after the join's
    input arrangements took their batches) changes nothing: later steps are right."""
    from compute.render import oneshot
    from compute.render.delta import DeltaDataflow

    sql = "SELECT t1.a, 12 / t2.c FROM t1 JOIN t2 ON t1.a = t2.a"
    spark = env["spark"]
    df = maintained_plan(env["gs"], sql)
    ids = {sid: qn.split(".")[-1] for sid, qn in df.sources}
    types = {sid: tuple(c.type for c in env["gs"].coord.catalog.get_item_by_id(sid).columns) for sid in ids}
    by_name = {v: k for k, v in ids.items()}

    def frames(batches: dict[str, list]) -> dict[str, Any]:
        return {by_name[t]: oneshot.constant_df(spark, rows, types[by_name[t]]) for t, rows in batches.items()}

    inputs = Inputs(3, types)
    acc = inputs.acc
    flow = DeltaDataflow(spark, df)
    try:
        first: dict[str, list[Any]] = {"t1": [((1, 1, "x"), 1), ((2, 2, "y"), 1)], "t2": [((1, 3), 1), ((2, 4), 1)]}
        out = as_bag(oneshot.arrow_rows(flow.hydrate(frames(first)).toArrow(), df.types))
        before = dict(flow.state_rows())
        with pytest.raises(Exception, match="(?i)division by zero|divide by zero"):
            flow.step(frames({"t1": [((1, 5, "z"), 1)], "t2": [((1, 0), 1)]}))
        assert dict(flow.state_rows()) == before
        for t, rows in first.items():
            for r, d in rows:
                acc[t][r] = acc[t].get(r, 0) + d
        ok: dict[str, list[Any]] = {"t1": [((2, 7, "q"), 1)], "t2": [((2, 6), 1)]}
        for t, rows in ok.items():
            for r, d in rows:
                acc[t][r] = acc[t].get(r, 0) + d
        for key, v in as_bag(oneshot.arrow_rows(flow.step(frames(ok)).toArrow(), df.types)).items():
            out[key] = out.get(key, 0) + v
        out = {key: v for key, v in out.items() if v}
        assert out == oneshot_rows(spark, df, ids, inputs)
        assert out == pg_rows(env["pg"], sql, inputs)
    finally:
        flow.close()


def _last_job_stages(spark: Any) -> int:
    st = spark.sparkContext.statusTracker()
    job = st.getJobInfo(max(st.getJobIdsForGroup(None)))
    return len(job.stageIds)


def _join_reduce_flow(env: dict[str, Any], sql: str) -> tuple[lir.Dataflow, dict[str, tuple], dict[str, str]]:
    """The maintained plan of `sql`, its sources' column types and their ids by table name."""
    df = maintained_plan(env["gs"], sql)
    ids = {sid: qn.split(".")[-1] for sid, qn in df.sources}
    types = {sid: tuple(c.type for c in env["gs"].coord.catalog.get_item_by_id(sid).columns) for sid in ids}
    return df, types, {v: k for k, v in ids.items()}


def test_a_steps_jobs_do_not_grow_with_the_steps_taken(env: dict[str, Any]) -> None:
    """Each stored piece's lineage is cut when it is computed: the Spark job of the 20th step
    has as many stages as the 3rd (without it, the scheduler walks every earlier step's
    pieces: stages grew 8 -> 47 over 40 steps), and the output stays right."""
    from compute.render import oneshot
    from compute.render.delta import DeltaDataflow

    sql = QUERIES["inner_join_reduce"]
    spark = env["spark"]
    df, types, by_name = _join_reduce_flow(env, sql)
    inputs = Inputs(11, types)
    flow = DeltaDataflow(spark, df)
    stages = []
    try:
        out = as_bag(oneshot.arrow_rows(flow.hydrate({by_name[t]: oneshot.constant_df(spark, inputs.batch(t, 6, 0), types[by_name[t]])
                                                      for t in ("t1", "t2")}).toArrow(), df.types))
        for _ in range(20):
            delta = {by_name["t1"]: oneshot.constant_df(spark, inputs.batch("t1", 1, 1), types[by_name["t1"]])}
            for key, v in as_bag(oneshot.arrow_rows(flow.step(delta).toArrow(), df.types)).items():
                out[key] = out.get(key, 0) + v
            stages.append(_last_job_stages(spark))
        out = {key: v for key, v in out.items() if v}
        assert out == pg_rows(env["pg"], sql, inputs)
        assert max(stages[2:]) <= stages[2] + 1, stages
    finally:
        flow.close()


def test_state_lost_with_its_executor_is_recognized(env: dict[str, Any]) -> None:
    """A piece whose blocks are gone (its executor was lost: here its blocks are
    removed) fails the next step with the error the controller rehydrates on."""
    from compute.render import oneshot
    from compute.render.arrangement import state_lost
    from compute.render.delta import DeltaDataflow

    spark = env["spark"]
    df = maintained_plan(env["gs"], QUERIES["accumulable"])
    sid = df.sources[0][0]
    types = tuple(c.type for c in env["gs"].coord.catalog.get_item_by_id(sid).columns)
    flow = DeltaDataflow(spark, df)
    try:
        flow.hydrate({sid: oneshot.constant_df(spark, [((1, 2, "x"), 1), ((2, 3, "y"), 1)], types)})
        for pieces in flow.state_pieces().values():
            for p in pieces:
                imr = p.cached._jdf.queryExecution().withCachedData()
                imr.cacheBuilder().cachedColumnBuffers().unpersist(True)  # its blocks are gone
        with pytest.raises(Exception) as e:
            flow.step({sid: oneshot.constant_df(spark, [((1, 5, "z"), 1)], types)}).toArrow()
        assert state_lost(e.value), str(e.value)[:500]
    finally:
        flow.close()


def test_small_step_pieces_are_local_and_large_ones_cached(env: dict[str, Any]) -> None:
    """A step's pieces of at most LOCAL_ROWS rows are local relations (no Spark cache is made
    by a 1-row step), a larger one is cached; the output is right either way."""
    from compute.render import oneshot
    from compute.render.arrangement import LOCAL_ROWS
    from compute.render.delta import DeltaDataflow

    sql = QUERIES["inner_join_reduce"]
    spark = env["spark"]
    df, types, by_name = _join_reduce_flow(env, sql)
    inputs = Inputs(23, types)
    flow = DeltaDataflow(spark, df)

    def cached() -> int:
        return int(spark.sparkContext._jsc.getPersistentRDDs().size())

    def pieces() -> dict[int, Any]:
        return {id(p): p for s in flow.spines.values() for p in s.pieces()}

    try:
        out = as_bag(oneshot.arrow_rows(flow.hydrate({by_name[t]: oneshot.constant_df(spark, inputs.batch(t, 20, 0), types[by_name[t]])
                                                      for t in ("t1", "t2")}).toArrow(), df.types))
        assert all(not p.local for p in pieces().values())  # hydration caches its pieces
        for size in (1, 1, LOCAL_ROWS + 200):
            before, held = cached(), pieces()
            delta = {by_name["t1"]: oneshot.constant_df(spark, inputs.batch("t1", size, 0), types[by_name["t1"]])}
            for key, v in as_bag(oneshot.arrow_rows(flow.step(delta).toArrow(), df.types)).items():
                out[key] = out.get(key, 0) + v
            made = [p for k, p in pieces().items() if k not in held]
            assert made, size
            if size == 1:
                assert all(p.local for p in made) and cached() <= before, (size, [p.rows for p in made])
            else:
                # (its 1,200-row batch was cached, then merged with the base into a cached base)
                assert any(not p.local for p in made), [(p.local, p.rows) for p in made]
        out = {key: v for key, v in out.items() if v}
        assert out == pg_rows(env["pg"], sql, inputs)
    finally:
        flow.close()


def test_a_one_row_step_runs_two_spark_jobs(env: dict[str, Any], tmp_path: Any, monkeypatch: Any) -> None:
    """A 1-row step of a join + reduce view, its input read as the controller reads it (a
    batch file, read in the driver): one Spark job joins the delta with the other input's
    few keys and adds up the accumulators (no broadcast job, no shuffle stage), one computes
    the output from the accumulators of the touched keys; collecting the output runs none.
    Spark's planning of a step stays bounded (analyzer / optimizer rule runs). (Merging a spine's pieces, when its policy says so, is apart.) The output stays right
    (inserts and deletes)."""
    import pyarrow.parquet as pq

    from catalog.storage.arrow_types import rows_to_arrow
    from compute.render import oneshot
    from compute.render.arrangement import Spine
    from compute.render.delta import DeltaDataflow
    from compute.render.spark import collect_arrow

    sql = QUERIES["inner_join_reduce"]
    spark = env["spark"]
    df, types, by_name = _join_reduce_flow(env, sql)
    inputs = Inputs(31, types)
    flow = DeltaDataflow(spark, df)
    scheduler = spark.sparkContext._jsc.sc().dagScheduler()
    t1 = by_name["t1"]
    merge_jobs: set[int] = set()
    merged = Spine.merged

    def counted(self: Spine, *a: Any) -> Any:
        before = scheduler.nextJobId()
        try:
            return merged(self, *a)
        finally:
            merge_jobs.update(range(before, scheduler.nextJobId()))

    monkeypatch.setattr(Spine, "merged", counted)
    try:
        out = as_bag(oneshot.arrow_rows(flow.hydrate({by_name[t]: oneshot.constant_df(spark, inputs.batch(t, 30, 0), types[by_name[t]])
                                                      for t in ("t1", "t2")}).toArrow(), df.types))
        jobs, stages, planning = [], [], []
        tracker = spark.sparkContext.statusTracker()
        metrics = spark._jvm.org.apache.spark.sql.catalyst.rules.RuleExecutor

        def rule_runs() -> int:
            return int(metrics.getCurrentMetrics().numRuns())

        for step in range(6):
            rows = inputs.batch("t1", 1, 0) if step % 2 == 0 else inputs.batch("t1", 0, 1)
            path = str(tmp_path / f"b{step}.parquet")
            pq.write_table(rows_to_arrow(types[t1], [r for r, _ in rows], step + 1, [d for _, d in rows]), path)
            delta = oneshot.read_shard_range(spark, [path], types[t1], step, step + 1, step % 2 == 1, rows=len(rows))
            before, runs = scheduler.nextJobId(), rule_runs()
            got = oneshot.arrow_rows(collect_arrow(flow.step({t1: delta}, time=step + 1), small=False), df.types)
            after = scheduler.nextJobId()
            planning.append(rule_runs() - runs)
            ours = [j for j in range(before, after) if j not in merge_jobs]
            jobs.append(len(ours))
            stages += [len(tracker.getJobInfo(j).stageIds) for j in ours]
            for key, v in as_bag(got).items():
                out[key] = out.get(key, 0) + v
        assert all(j <= 2 for j in jobs) and all(n == 1 for n in stages), (jobs, stages)
        # planning a step (analyzer / optimizer rule runs, every phase): was 4,155-5,466 a
        # step with a Dataset analyzed and a SQL execution per local piece
        assert max(planning) <= 4000, planning
        out = {key: v for key, v in out.items() if v}
        assert out == pg_rows(env["pg"], sql, inputs)
    finally:
        flow.close()
