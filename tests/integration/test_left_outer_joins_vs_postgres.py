"""LEFT / RIGHT JOINs rendered as one Spark LEFT OUTER JOIN in one-shot plans
(compute.render.outer_join), answered as PostgreSQL 15 answers them: NULL keys on either
side, duplicate keys on either side, residual (non-equi) ON conditions, ON conditions on the
right side only or on the left side, stacked and nested LEFT JOINs, WHERE clauses above, a
LEFT JOIN inside aggregates and subqueries; with union-negate consolidation on and off
(`enable_consolidate_after_union_negate` changes the plan's Union that the rule replaces)."""

from __future__ import annotations

from collections.abc import Iterator

import psycopg
import pytest

from tests.integration.harness import MzServer
from tests.pgref import paired_with_postgres, sorted_outcome

pytestmark = pytest.mark.integration

SETUP = [
    "CREATE TABLE {s}.l (k int, v int, tag text)",
    "INSERT INTO {s}.l VALUES (1, 10, 'a'), (1, 10, 'a'), (2, 20, 'b'), (3, NULL, 'c'), (NULL, 40, 'd'), "
    "(NULL, NULL, 'e'), (5, 50, 'f'), (5, 51, 'f'), (6, 60, NULL)",
    "CREATE TABLE {s}.r (k int, v int, w int, note text)",
    "INSERT INTO {s}.r VALUES (1, 10, 0, 'x'), (1, 11, 1, 'special'), (1, 11, 1, 'special'), (2, NULL, 2, NULL), "
    "(NULL, 40, 3, 'x'), (4, 40, 4, 'y'), (5, 50, 5, 'special requests'), (NULL, NULL, 6, 'z')",
    "CREATE TABLE {s}.d (k int, name text)",
    "INSERT INTO {s}.d VALUES (1, 'one'), (2, 'two'), (3, 'three'), (5, 'five'), (NULL, 'none'), (2, 'deux')",
    "CREATE TABLE {s}.e (k int, name text)",
]

QUERIES = [
    # key equality: duplicates on both sides, NULL keys on both sides
    "SELECT l.*, r.w FROM l LEFT JOIN r ON l.k = r.k",
    "SELECT * FROM l LEFT JOIN r ON l.k = r.k",
    "SELECT * FROM l LEFT OUTER JOIN r ON r.k = l.k AND r.v = l.v",
    "SELECT l.tag, r.note FROM r RIGHT JOIN l ON l.k = r.k",
    "SELECT * FROM r RIGHT JOIN l ON l.k = r.k AND r.w > 0",
    # residual conditions: non-equi, over both sides, over the right side only, left side only
    "SELECT l.*, r.w FROM l LEFT JOIN r ON l.k = r.k AND r.w > l.k",
    "SELECT l.*, r.w FROM l LEFT JOIN r ON l.k = r.k AND r.note NOT LIKE '%special%requests%'",
    "SELECT l.*, r.w FROM l LEFT JOIN r ON l.k = r.k AND l.v > 10",
    "SELECT l.*, r.w FROM l LEFT JOIN r ON l.k = r.k AND l.tag IS NOT NULL",
    "SELECT l.*, r.w FROM l LEFT JOIN r ON l.k < r.k",
    "SELECT l.*, r.w FROM l LEFT JOIN r ON l.k = r.k OR l.v = r.v",
    "SELECT l.*, r.w FROM l LEFT JOIN r ON r.w > 3",
    "SELECT l.*, r.w FROM l LEFT JOIN r ON r.note = 'x'",
    "SELECT l.*, r.w FROM l LEFT JOIN r ON true",
    "SELECT l.*, r.w FROM l LEFT JOIN r ON false",
    "SELECT l.*, r.w FROM l LEFT JOIN r ON l.k + 1 = r.k",
    "SELECT l.*, r.w FROM l LEFT JOIN r ON coalesce(l.k, 4) = r.k",
    "SELECT l.*, e.name FROM l LEFT JOIN e ON l.k = e.k",
    "SELECT l.*, r.w FROM (SELECT * FROM l WHERE false) l LEFT JOIN r ON l.k = r.k",
    # WHERE / projections above
    "SELECT l.tag, r.w FROM l LEFT JOIN r ON l.k = r.k WHERE l.tag > 'b'",
    "SELECT l.tag, r.w FROM l LEFT JOIN r ON l.k = r.k WHERE r.w IS NULL",
    "SELECT l.tag, r.w FROM l LEFT JOIN r ON l.k = r.k WHERE coalesce(r.w, -1) < 2",
    "SELECT r.w, r.note FROM l LEFT JOIN r ON l.k = r.k",
    "SELECT l.k, coalesce(r.note, 'none'), r.w + 1 FROM l LEFT JOIN r ON l.k = r.k",
    "SELECT DISTINCT l.k, r.k FROM l LEFT JOIN r ON l.k = r.k",
    # stacked and nested
    "SELECT l.*, r.w, d.name FROM l LEFT JOIN r ON l.k = r.k LEFT JOIN d ON d.k = l.k",
    "SELECT l.*, r.w, d.name FROM l LEFT JOIN r ON l.k = r.k LEFT JOIN d ON d.k = r.w AND d.name <> 'two'",
    "SELECT l.tag, r.w, d.name, e.name FROM l LEFT JOIN r ON l.k = r.k LEFT JOIN d ON d.k = r.k LEFT JOIN e ON e.k = d.k",
    "SELECT l.tag, x.w, x.name FROM l LEFT JOIN (r LEFT JOIN d ON d.k = r.w) x ON x.k = l.k",
    "SELECT l.tag, x.w, x.name FROM l LEFT JOIN (SELECT r.k, r.w, d.name FROM r JOIN d ON d.k = r.k) x ON x.k = l.k",
    "SELECT l.tag, r.w FROM l JOIN d ON d.k = l.k LEFT JOIN r ON r.k = d.k",
    # aggregates (TPC-H q13's shape) and subqueries
    "SELECT c, count(*) FROM (SELECT l.k, count(r.w) FROM l LEFT JOIN r ON l.k = r.k "
    "AND r.note NOT LIKE '%special%requests%' GROUP BY l.k) AS t (k, c) GROUP BY c",
    "SELECT l.tag, count(r.w), sum(r.w) FROM l LEFT JOIN r ON l.k = r.k GROUP BY l.tag",
    "SELECT d.name, (SELECT count(r.w) FROM l LEFT JOIN r ON l.k = r.k AND r.w > d.k WHERE l.k = d.k) FROM d",
    "SELECT * FROM d WHERE EXISTS (SELECT 1 FROM l LEFT JOIN r ON l.k = r.k WHERE l.k = d.k AND r.w IS NULL)",
    "SELECT * FROM l LEFT JOIN r ON l.k = r.k UNION ALL SELECT * FROM l LEFT JOIN r ON l.v = r.v",
    "WITH x AS (SELECT l.k, r.w FROM l LEFT JOIN r ON l.k = r.k) SELECT * FROM x a LEFT JOIN x b ON a.w = b.k",
    # FULL JOIN (its left part may be rendered as the outer join)
    "SELECT * FROM l FULL JOIN r ON l.k = r.k",
    "SELECT * FROM l FULL JOIN r ON l.k = r.k AND r.w <> 2",
]


@pytest.fixture(scope="module")
def both(mz_server: MzServer) -> Iterator[tuple[psycopg.Connection, psycopg.Connection]]:
    with paired_with_postgres(mz_server.connect(), "leftouter-", "lo", SETUP) as pair:
        yield pair


@pytest.mark.parametrize("consolidate", ["on", "off"])
@pytest.mark.parametrize("sql", QUERIES)
def test_left_joins_answer_as_postgres(both, sql: str, consolidate: str) -> None:
    mz, pg = both
    mz.execute(f"SET enable_consolidate_after_union_negate = {consolidate}")
    try:
        assert sorted_outcome(mz, sql) == sorted_outcome(pg, sql), sql
    finally:
        mz.execute("RESET enable_consolidate_after_union_negate")


@pytest.mark.parametrize(("sql", "joins"), [
    ("SELECT l.*, r.w FROM l LEFT JOIN r ON l.k = r.k AND r.note NOT LIKE '%special%requests%'", 1),
    ("SELECT l.tag, r.w FROM r RIGHT JOIN l ON l.k = r.k", 1),
    ("SELECT l.*, r.w, d.name FROM l LEFT JOIN r ON l.k = r.k LEFT JOIN d ON d.k = r.w", 2),
])
def test_spark_runs_one_outer_join_per_left_join(sql: str, joins: int) -> None:
    """With a small right side (broadcast), the rendered plan is Spark's outer join(s) over the
    scans: no inner join, anti-join, Distinct (aggregate) or Union left from Materialize's
    plan, and no intermediate result stored (each binding is read once)."""
    from compute.plan import pipeline
    from compute.render import oneshot
    from compute.render.spark import spark_session
    from tests.golden_runner import GoldenSession

    gs = GoldenSession()
    spark = spark_session()
    try:
        for st in SETUP:
            if st.startswith("CREATE"):
                gs.run(st.replace("{s}.", ""))
        data = {"l": [((1, 10, "a"), 1), ((None, 40, "d"), 1), ((2, 20, "b"), 1)],
                "r": [((1, 10, 0, "x"), 1), ((1, 11, 1, "y"), 2)], "d": [((0, "zero"), 1), ((1, "one"), 1)]}
        planned = gs.coord.prepare(gs.session, "EXPLAIN DECORRELATED PLAN FOR " + sql, []).plan
        ids = {i.name: i.id for i in gs.coord.catalog.items("table") if i.name in data}
        sizes = {ids[t]: len(rows) for t, rows in data.items()}  # l streamed, the right sides broadcast
        df = pipeline.dataflow(pipeline.optimized_mir(planned.bound, sizes=lambda m: sizes), None, sizes=sizes)  # type: ignore[union-attr]
        names = dict(df.sources)
        reads = []

        def read(i: str, ts: tuple) -> oneshot.Rel:
            reads.append(i)
            return oneshot.Rel(ctx.view(oneshot.constant_df(spark, data[names[i].split(".")[-1]], ts), False), len(ts))

        ctx = oneshot.RenderContext(spark, read, source_mfps=dict(df.source_mfps))
        try:
            out = spark.sql(oneshot.render(df.plan, ctx).sql)
            plan = out._jdf.queryExecution().executedPlan().toString()
            assert plan.count("LeftOuter") == joins, plan
            for op in ("Inner", "LeftAnti", "LeftSemi", "Aggregate", "Union"):
                assert op not in plan, plan
            assert len(ctx.persisted) == len(reads), ctx.persisted  # the sources' views only
        finally:
            ctx.release()
    finally:
        gs.close()
