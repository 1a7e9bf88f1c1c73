"""NOT IN as a filter is a null-aware anti-join (sql.lowering `_not_in`; rendered by
compute.render.semijoin.null_aware_anti as one Spark LEFT ANTI JOIN), decided on the MIR and
LIR of real plans (no Spark): a WHERE conjunct `x NOT IN (uncorrelated one-column S)` is
Threshold(X − X ⋈ S on (x = s) IS NULL OR x = s); NOT IN elsewhere (select list, under OR),
over several columns, or correlated keeps the bool_or plan. Answers: tests/integration/
test_not_in_vs_postgres.py."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from benches.tpch import ddl
from compute.plan import lir, pipeline
from compute.render import semijoin
from tests.golden_runner import GoldenSession


@pytest.fixture(scope="module")
def gs() -> Iterator[GoldenSession]:
    s = GoldenSession()
    try:
        s.run("CREATE TABLE t1 (a int, b int)")
        s.run("CREATE TABLE t2 (x int, y int)")
        for t in ("part", "partsupp", "supplier"):
            s.run(ddl(t))
        yield s
    finally:
        s.close()


def null_aware_antis(gs: GoldenSession, sql: str) -> int:
    """How many Threshold nodes of the LIR the renderer runs as null-aware anti-joins."""
    planned = gs.coord.prepare(gs.session, "EXPLAIN DECORRELATED PLAN FOR " + sql, []).plan
    df = pipeline.dataflow(pipeline.optimized_mir(planned.bound), None)  # type: ignore[union-attr]
    nonneg: dict[str, bool] = {}
    found = 0

    def walk(p: lir.Plan) -> None:
        nonlocal found
        n = p.node
        match n:
            case lir.Let(id=i, value=v, body=b):
                walk(v)
                from compute.plan.non_negative import non_negative

                nonneg[i] = non_negative(v, dict(nonneg))
                walk(b)
                return
            case lir.Threshold(input=i) if semijoin.null_aware_anti(i, nonneg) is not None:
                found += 1
        for c in pipeline.lir_children(n):
            walk(c)

    walk(df.plan)
    return found


def explain(gs: GoldenSession, sql: str) -> str:
    return "\n".join(r[0] for r in gs.run(f"EXPLAIN OPTIMIZED PLAN FOR {sql}"))


Q16 = open("benches/tpch_queries/q16.sql").read()


@pytest.mark.parametrize(("sql", "want"), [
    ("SELECT a FROM t1 WHERE a NOT IN (SELECT x FROM t2)", 1),
    ("SELECT a FROM t1 WHERE b > 0 AND a NOT IN (SELECT x FROM t2 WHERE y > 1) AND a < 9", 1),
    ("SELECT a FROM t1 WHERE NOT (a IN (SELECT x FROM t2))", 1),
    ("SELECT a FROM t1 WHERE a + 1 NOT IN (SELECT x FROM t2)", 1),
    ("SELECT a FROM t1 WHERE a NOT IN (SELECT x FROM t2) AND b NOT IN (SELECT y FROM t2)", 2),
    ("SELECT count(*) FROM t1, t2 WHERE a = x AND b NOT IN (SELECT y FROM t2 WHERE x > 0)", 1),
    (Q16, 1),
    # not a filter of its own: the bool_or plan
    ("SELECT a, a NOT IN (SELECT x FROM t2) FROM t1", 0),
    ("SELECT a FROM t1 WHERE a NOT IN (SELECT x FROM t2) OR b = 1", 0),
    ("SELECT a FROM t1 WHERE (a NOT IN (SELECT x FROM t2)) IS NULL", 0),
    # several columns, correlated, or another operator: the bool_or plan
    ("SELECT a FROM t1 WHERE (a, b) NOT IN (SELECT x, y FROM t2)", 0),
    ("SELECT a FROM t1 WHERE a NOT IN (SELECT x FROM t2 WHERE y = t1.b)", 0),
    ("SELECT a FROM t1 WHERE a <> ALL (SELECT x FROM t2)", 0),
    ("SELECT a FROM t1 WHERE a < ANY (SELECT x FROM t2)", 0),
])
def test_not_in_filters_are_null_aware_anti_joins(gs: GoldenSession, sql: str, want: int) -> None:
    assert null_aware_antis(gs, sql) == want


def test_not_in_plan_shape(gs: GoldenSession) -> None:
    plan = explain(gs, "SELECT a FROM t1 WHERE a NOT IN (SELECT x FROM t2 WHERE y > 1)")
    assert "Threshold" in plan and "CrossJoin" in plan, plan
    assert "Filter (((#0 = #2)) IS NULL OR (#0 = #2))" in plan, plan
    assert "bool_or" not in plan and "Distinct" not in plan, plan
    assert "bool_or" in explain(gs, "SELECT a, a NOT IN (SELECT x FROM t2) FROM t1")
