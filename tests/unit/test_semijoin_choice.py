"""Which joins the one-shot renderer runs as Spark semi- / anti-joins (compute.render.semijoin),
decided on the LIR of real plans (no Spark): decorrelated EXISTS / IN are joins with a set
(Reduce::Distinct) that the join keys on every column, NOT EXISTS is X − that join; a join
whose set is not fully keyed, or whose other side is not X, stays a join. Answers are checked
against PostgreSQL in tests/integration/test_join_orders_vs_postgres.py and
test_lateral_joins_vs_postgres.py; EXPLAIN is unchanged (Materialize's plan)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from compute.plan import lir, pipeline
from compute.render import semijoin
from tests.golden_runner import GoldenSession


@pytest.fixture(scope="module")
def gs() -> Iterator[GoldenSession]:
    s = GoldenSession()
    try:
        s.run("CREATE TABLE t1 (a int, b int)")
        s.run("CREATE TABLE t2 (x int, y int)")
        yield s
    finally:
        s.close()


def choices(gs: GoldenSession, sql: str) -> tuple[int, int]:
    """(semi-joined set inputs, anti-join pairs) over the whole plan."""
    planned = gs.coord.prepare(gs.session, "EXPLAIN DECORRELATED PLAN FOR " + sql, []).plan
    df = pipeline.dataflow(pipeline.optimized_mir(planned.bound), None)  # type: ignore[union-attr]
    semis = antis = 0
    sets: dict[str, bool] = {}

    def walk(p: lir.Plan) -> None:
        nonlocal semis, antis
        n = p.node
        match n:
            case lir.Let(id=i, value=v, body=b):
                walk(v)
                sets[i] = semijoin.is_set(v, sets)
                walk(b)
                return
            case lir.Join(inputs=ins, equivalences=eq, arities=ar, paths=paths):
                order = [paths[0].source, *(st.lookup_relation for st in paths[0].stages)]
                semis += len(semijoin.semi_inputs(eq, ar, [semijoin.is_set(x, sets) for x in ins], order))
            case lir.Union(inputs=ins):
                antis += len(semijoin.anti_joins(ins, sets))
        for c in pipeline.lir_children(n):
            walk(c)

    walk(df.plan)
    return semis, antis


@pytest.mark.parametrize(("sql", "want"), [
    ("SELECT a FROM t1 WHERE a IN (SELECT x FROM t2)", (1, 0)),
    ("SELECT a FROM t1 WHERE EXISTS (SELECT 1 FROM t2 WHERE t2.x = t1.a)", (1, 0)),
    # the inner Distinct(t1.a, t1.b) is keyed on a only: joined
    ("SELECT a FROM t1 WHERE EXISTS (SELECT 1 FROM t2 WHERE t2.x = t1.a AND t2.y <> t1.b)", (1, 0)),
    # the set inside NOT EXISTS's join is the anti-join's D
    ("SELECT a FROM t1 WHERE NOT EXISTS (SELECT 1 FROM t2 WHERE t2.x = t1.a)", (1, 1)),
    ("SELECT b FROM t1 WHERE NOT EXISTS (SELECT 1 FROM t2 WHERE t2.x = t1.a AND t2.y > t1.b)", (1, 1)),
    # a plain join, a join with a grouped (not distinct) input, a distinct keyed on part of it
    ("SELECT * FROM t1, t2 WHERE t1.a = t2.x", (0, 0)),
    ("SELECT * FROM t1, (SELECT x, count(*) FROM t2 GROUP BY x) g WHERE t1.a = g.x", (0, 0)),
    ("SELECT * FROM t1, (SELECT DISTINCT x, y FROM t2) d WHERE t1.a = d.x", (0, 0)),
    # a distinct keyed on all its columns is a semi-join even when its columns are output
    ("SELECT t1.a, d.x FROM t1, (SELECT DISTINCT x FROM t2) d WHERE t1.a = d.x", (1, 0)),
])
def test_semi_and_anti_choices(gs: GoldenSession, sql: str, want: tuple[int, int]) -> None:
    assert choices(gs, sql) == want
