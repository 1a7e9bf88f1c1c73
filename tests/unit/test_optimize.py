"""The MIR optimizer's pipelines: order as DESIGN §4.2 lists, fixpoints reached quickly."""

from __future__ import annotations

import pytest

import sql.optimize as opt
from compute.plan import pipeline
from tests.golden_runner import GoldenSession


def test_pipeline_order() -> None:
    assert [t.__name__ for t in opt.LOGICAL] == [
        "normalize_lets", "fusion", "predicate_pushdown", "projection_pushdown", "fold_constants",
        "reduce_elision", "threshold_elision", "union_negate", "literal_lifting", "redundant_join",
    ]
    assert [t.__name__ for t in opt.PHYSICAL] == ["join_implementation", "canonicalize_mfp", "relation_cse"]


# plans where two transforms once undid each other's work until the round limit
QUERIES = [
    "SELECT a FROM t1 WHERE b IS NOT NULL OR EXISTS (SELECT 1 FROM t1 AS x WHERE x.b < t1.b)",
    "SELECT c - d, (SELECT count(*) FROM t1 AS x WHERE x.b < t1.b), b FROM t1 WHERE d > e",
    "SELECT a, (SELECT count(*) FROM t1 AS x WHERE x.c > t1.c AND x.d < t1.d) FROM t1 WHERE a > b OR EXISTS (SELECT 1 FROM t1 AS x WHERE x.b < t1.b) OR d > e",
]


@pytest.mark.parametrize("q", QUERIES)
def test_fixpoint_converges(q: str, monkeypatch: pytest.MonkeyPatch) -> None:
    gs = GoldenSession()
    try:
        gs.run("CREATE TABLE t1 (a int, b int, c int, d int, e int)")
        m = pipeline.to_mir(gs.coord.prepare(gs.session, "EXPLAIN DECORRELATED PLAN FOR " + q, []).plan.bound)  # type: ignore[union-attr]
        calls = []

        def counted(t):
            def f(r):
                calls.append(t.__name__)
                return t(r)
            return f

        out = opt.fixpoint(m, tuple(counted(t) for t in opt.LOGICAL))
        assert len(calls) <= 5 * len(opt.LOGICAL), f"{len(calls)} transform runs"
        assert opt.fixpoint(out, opt.LOGICAL) == out
        for t in opt.LOGICAL:
            assert t(out) == out, f"{t.__name__} still changes the fixpoint"
    finally:
        gs.close()
