"""The one-shot renderer's LEFT OUTER JOIN rule (compute.render.outer_join), without Spark:
which Unions of Materialize's LEFT JOIN plan it renders as one outer join, and that each of
its conditions keeps it from firing when broken (plans from SQL, then altered). EXPLAIN keeps
Materialize's plan."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace

import pytest

from compute.plan import lir, pipeline
from compute.render import outer_join
from sql.scalar import BOOL, CallUnary, Column, Literal
from tests.golden_runner import GoldenSession

Q13 = ("SELECT c_count, count(*) AS custdist FROM (SELECT c_custkey, count(o_orderkey) FROM customer "
       "LEFT OUTER JOIN orders ON c_custkey = o_custkey AND o_comment NOT LIKE '%special%requests%' "
       "GROUP BY c_custkey) AS c_orders (c_custkey, c_count) GROUP BY c_count ORDER BY custdist DESC, c_count DESC")


@pytest.fixture(scope="module")
def gs() -> Iterator[GoldenSession]:
    s = GoldenSession()
    try:
        s.run("CREATE TABLE customer (c_custkey int, c_name text)")
        s.run("CREATE TABLE orders (o_orderkey int, o_custkey int, o_comment text)")
        yield s
    finally:
        s.close()


def plan(gs: GoldenSession, sql: str) -> lir.Plan:
    bound = gs.coord.prepare(gs.session, "EXPLAIN PHYSICAL PLAN FOR " + sql, []).plan.bound  # type: ignore[union-attr]
    return pipeline.dataflow(pipeline.optimized_mir(bound), bound.finishing).plan


EMPTY = outer_join.Scope({}, {}, {})


def fired(p: lir.Plan, scope: outer_join.Scope = EMPTY) -> list[outer_join.LeftOuter]:
    """The outer joins the renderer finds in p's Unions, with the bindings in scope as it has them."""
    n = p.node
    if isinstance(n, lir.Let):
        return fired(n.value, scope) + fired(n.body, scope.bind(n.id, n.value))
    found = outer_join.left_outer_joins(n.inputs, scope) if isinstance(n, lir.Union) else []
    return found + [o for c in pipeline.lir_children(n) for o in fired(c, scope)]


@pytest.mark.parametrize(("sql", "count"), [
    (Q13, 1),
    ("SELECT * FROM customer LEFT JOIN orders ON c_custkey = o_custkey", 1),
    ("SELECT * FROM orders RIGHT JOIN customer ON c_custkey = o_custkey", 1),
    ("SELECT * FROM customer LEFT JOIN orders ON c_custkey = o_custkey AND o_orderkey > c_custkey", 1),
    ("SELECT * FROM customer LEFT JOIN orders ON c_custkey = o_custkey AND c_name > 'x'", 1),
    ("SELECT * FROM customer LEFT JOIN orders ON c_custkey = o_custkey OR c_name = o_comment", 1),
    ("SELECT * FROM customer LEFT JOIN orders ON o_comment = 'x'", 1),
    ("SELECT c_name, o_orderkey FROM customer LEFT JOIN orders ON c_custkey = o_custkey WHERE c_name > 'b'", 1),
    ("SELECT * FROM customer c LEFT JOIN orders o ON c_custkey = o_custkey "
     "LEFT JOIN orders o2 ON o2.o_orderkey = o.o_orderkey", 2),
    ("SELECT * FROM customer c LEFT JOIN (orders o LEFT JOIN customer c2 ON c2.c_custkey = o.o_orderkey) "
     "ON c.c_custkey = o.o_custkey", 2),
    # no LEFT JOIN: an anti-join alone is not one
    ("SELECT * FROM customer WHERE NOT EXISTS (SELECT 1 FROM orders WHERE o_custkey = c_custkey)", 0),
    ("SELECT c_custkey FROM customer EXCEPT ALL SELECT o_custkey FROM orders", 0),
])
def test_rule_fires_on_left_joins(gs: GoldenSession, sql: str, count: int) -> None:
    assert len(fired(plan(gs, sql))) == count


def test_q13_is_one_outer_join_on_the_key(gs: GoldenSession) -> None:
    (o,) = fired(plan(gs, Q13))
    # customer's key equals orders' o_custkey (null-safe) and is not NULL; orders' own
    # filter (the NOT LIKE) stays in the right input; the output: c_custkey, o_orderkey
    assert o.eq == ((Column(0, o.eq[0][0].typ), Column(2, o.eq[0][0].typ)),)  # type: ignore[union-attr]
    assert o.on == (CallUnary("not", CallUnary("is_null", Column(0, o.eq[0][0].typ), BOOL), BOOL),)  # type: ignore[union-attr]
    assert o.outputs == (0, 1) and o.preds == () and o.base_arity == 1


def test_explain_keeps_materializes_plan(gs: GoldenSession) -> None:
    text = "\n".join(r[0] for r in gs.run("EXPLAIN PHYSICAL PLAN FOR " + Q13))
    assert "Negate" in text and "Reduce::Distinct" in text and text.count("Join::Linear") == 2, text


def _left_join_union(p: lir.Plan) -> tuple[lir.Let, lir.Union]:
    """The With (J) and its Union of `SELECT * FROM customer LEFT JOIN orders ON ...`."""
    assert isinstance(p.node, lir.Let) and isinstance(p.node.body.node, lir.Union)
    return p.node, p.node.body.node


def _with_union(p: lir.Plan, inputs: tuple[lir.Plan, ...]) -> lir.Plan:
    let, u = _left_join_union(p)
    return replace(p, node=replace(let, body=replace(let.body, node=replace(u, inputs=inputs))))


SIMPLE = "SELECT * FROM customer LEFT JOIN orders ON c_custkey = o_custkey"


def test_rule_fires_on_the_unaltered_plan(gs: GoldenSession) -> None:
    assert len(fired(plan(gs, SIMPLE))) == 1


def test_not_when_the_right_side_may_hold_negative_rows(gs: GoldenSession) -> None:
    p = plan(gs, SIMPLE)
    let, _ = _left_join_union(p)
    jp = let.value
    assert isinstance(jp.node, lir.Join)
    b = jp.node.inputs[1]
    neg = replace(jp, node=replace(jp.node, inputs=(jp.node.inputs[0], lir.Plan(b.node_id, lir.Negate(b)))))
    assert fired(replace(p, node=replace(let, value=neg))) == []


def test_not_when_the_matched_part_filters_on_the_right_side(gs: GoldenSession) -> None:
    # m1 filters J where the anti-join does not look: not a LEFT JOIN any more
    p = plan(gs, SIMPLE)
    _, u = _left_join_union(p)
    g = u.inputs[0]
    assert isinstance(g.node, lir.Get)
    pred = CallUnary("is_null", Column(2, g.node.types[2]), BOOL)
    filtered = replace(g, node=replace(g.node, mfp=replace(g.node.mfp, predicates=(pred,))))
    assert fired(_with_union(p, (filtered, u.inputs[1]))) == []


def test_not_when_the_matched_part_reads_another_binding(gs: GoldenSession) -> None:
    p = plan(gs, SIMPLE)
    _, u = _left_join_union(p)
    g = u.inputs[0]
    assert isinstance(g.node, lir.Get)
    other = replace(g, node=lir.Get("l99", "l99", g.node.types, g.node.strategy, g.node.mfp, True))
    assert fired(_with_union(p, (other, u.inputs[1]))) == []


def test_not_when_the_padding_is_not_null(gs: GoldenSession) -> None:
    p = plan(gs, SIMPLE)
    _, u = _left_join_union(p)
    pad = u.inputs[1]
    assert isinstance(pad.node, lir.MfpNode)
    m = pad.node.mfp
    zero = (Literal(0, m.expressions[0].typ), *m.expressions[1:])  # type: ignore[union-attr]
    assert fired(_with_union(p, (u.inputs[0], replace(pad, node=replace(pad.node, mfp=replace(m, expressions=zero)))))) == []


def test_not_when_the_left_side_differs(gs: GoldenSession) -> None:
    # the anti-join's X is no longer the join's left input's base
    p = plan(gs, SIMPLE)
    let, _ = _left_join_union(p)
    jp = let.value
    assert isinstance(jp.node, lir.Join)
    a = jp.node.inputs[0]
    assert isinstance(a.node, lir.Get)
    extra = CallUnary("not", CallUnary("is_null", Column(1, a.node.types[1]), BOOL), BOOL)
    narrowed = replace(a, node=replace(a.node, mfp=replace(a.node.mfp, predicates=(*a.node.mfp.predicates, extra))))
    new = replace(jp, node=replace(jp.node, inputs=(narrowed, jp.node.inputs[1])))
    assert fired(replace(p, node=replace(let, value=new))) == []
