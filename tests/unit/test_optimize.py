"""The MIR optimizer's pipelines: order as DESIGN §4.2 lists, fixpoints reached quickly."""

from __future__ import annotations

import pytest

import sql.optimize as opt
from compute.plan import pipeline
from tests.golden_runner import GoldenSession


def test_pipeline_order() -> None:
    assert [t.__name__ for t in opt.LOGICAL] == [
        "normalize_lets", "fusion", "non_null_requirements", "predicate_pushdown", "projection_pushdown", "fold_constants", "fold_letrec",
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


def _local_reads_match_bindings(r) -> list[tuple[str, int, int]]:
    """(binding, value arity, arity a `Get` of it claims) wherever the two disagree."""
    from sql import mir
    from sql.transforms.visit import map_children

    bad: list[tuple[str, int, int]] = []

    def go(x, env: dict[str, int]):
        match x:
            case mir.Let(id=i, value=v, body=b):
                go(v, env)
                go(b, {**env, i: mir.arity(v)})
                return x
            case mir.Get(id=i, local=True, types=ts) if i in env and env[i] != len(ts):
                bad.append((i, env[i], len(ts)))
        return map_children(x, lambda c: go(c, env))

    go(r, {})
    return bad


# Found by the random-query oracle (tests/oracle): a Filter over a pruned `Get l` lifted the
# narrowing Project off the Get, so l's value lost columns while that Get kept its old
# arity and column numbers (KeyError in the next pass, XX000 for the client).
PRUNED_LET_QUERIES = [
    "SELECT 1 FROM (SELECT DISTINCT a2.d FROM t1 AS a1 RIGHT JOIN t1 AS a2 ON true WHERE true) AS s",
    "SELECT 100::float8 FROM (SELECT DISTINCT a2.e FROM t1 AS a1 RIGHT JOIN t1 AS a2 ON true WHERE a2.b > 0) AS s",
]


@pytest.mark.parametrize("q", PRUNED_LET_QUERIES)
def test_projection_pushdown_keeps_let_reads_consistent(q: str) -> None:
    gs = GoldenSession()
    try:
        gs.run("CREATE TABLE t1 (a int, b int, c int, d int, e int)")
        m = pipeline.to_mir(gs.coord.prepare(gs.session, "EXPLAIN DECORRELATED PLAN FOR " + q, []).plan.bound)  # type: ignore[union-attr]
        r = m
        for step in range(3 * len(opt.LOGICAL)):
            r = opt.LOGICAL[step % len(opt.LOGICAL)](r)
            assert _local_reads_match_bindings(r) == [], opt.LOGICAL[step % len(opt.LOGICAL)].__name__
        opt.optimize(m)
    finally:
        gs.close()


def test_constant_unique_keys_compare_jsonb_by_value() -> None:
    """A Constant is unique on its columns only when `=` tells its rows apart: jsonb '1.0'
    equals '1' (so a DISTINCT over them is not elided), '2' and '3' differ."""
    from sql import mir
    from sql.transforms.analysis import unique_keys
    from sql.types import SqlType

    j = (SqlType("jsonb"),)
    same = mir.Constant(((('{"a": 1.0}',), 1), (('{"a": 1}',), 1)), j)
    differ = mir.Constant(((("2",), 1), (("3",), 1)), j)
    assert unique_keys(same) == frozenset()
    assert unique_keys(differ) == frozenset({frozenset({0})})
