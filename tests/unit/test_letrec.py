"""WITH MUTUALLY RECURSIVE below the goldens: the text rewrite, MIR transforms in the
presence of LetRec, the LIR analyses, and the renderer's refusal (tests/goldens/letrec.golden
pins the EXPLAIN output)."""

from __future__ import annotations

import pytest

from compute.plan import lir
from compute.plan.lower import lower
from compute.plan.non_negative import non_negative
from compute.plan.pipeline import PlanFlags, dataflow
from compute.plan.refinements.refine_single_time_consolidation import physically_monotonic
from sql import mir
from sql import statements as st
from sql.errors import SqlError
from sql.optimize import optimize
from sql.scalar import CallBinary, Column, ColumnOrder, Literal
from sql.transforms.normalize_lets import normalize_lets
from sql.transforms.predicate_pushdown import predicate_pushdown
from sql.types import BOOL, INT4

T = (INT4,)
EDGES = mir.Get("u1", "materialize.public.t", T)


def rec_get(lid: str = "l0") -> mir.Get:
    return mir.Get(lid, lid, T, local=True)


def test_rewrite_keeps_offsets_of_nested_and_quoted_bindings() -> None:
    sql = ('WITH MUTUALLY RECURSIVE (RETURN AT RECURSION LIMIT 5) "Foo" (a int, b numeric(10, 2)) AS (SELECT 1, 2), '
           'bar (c timestamp with time zone) AS (SELECT * FROM (WITH MUTUALLY RECURSIVE z (q int8) AS (SELECT 1) '
           'SELECT * FROM z) s) SELECT 1')
    text, decls = st.rewrite_wmr(sql)
    assert "MUTUALLY" not in text and "numeric" not in text and "zone" not in text
    by_name = {d.name: (off, d) for off, d in decls.items()}
    assert set(by_name) == {"Foo", "bar", "z"}
    for name, (off, _) in by_name.items():
        quoted = f'"{name}"' if name == "Foo" else name
        assert text[off: off + len(quoted)] == quoted
    assert by_name["Foo"][1].limit == (5, True) and by_name["z"][1].limit is None
    assert by_name["Foo"][1].columns == ("a", "b")


def test_plain_with_recursive_is_not_marked() -> None:
    q = st.classify("WITH RECURSIVE x (a) AS (SELECT 1) SELECT * FROM x")
    assert isinstance(q, st.Query)
    assert all(st.WMR_META not in c.meta for c in q.ast.find_all(st.exp.CTE))


@pytest.mark.parametrize("sql, state", [
    ("SELECT 1 EXCEPT WITH MUTUALLY RECURSIVE x (a int) AS (SELECT 1) SELECT * FROM x", "42601"),
    ("WITH MUTUALLY RECURSIVE (RECURSION LIMIT -1) x (a int) AS (SELECT 1) SELECT * FROM x", "42601"),
    ("WITH MUTUALLY RECURSIVE (ERROR AT RECURSION LIMIT 1, RECURSION LIMIT 2) x (a int) AS (SELECT 1) SELECT 1", "22023"),
    ("WITH MUTUALLY RECURSIVE x (a int) SELECT 1", "42601"),
    ("WITH MUTUALLY RECURSIVE x (a nosuchtype) AS (SELECT 1) SELECT 1", "42704"),
])
def test_rewrite_errors(sql: str, state: str) -> None:
    with pytest.raises(SqlError) as e:
        st.classify(sql)
    assert e.value.sqlstate == state


def test_a_let_is_not_inlined_into_a_recursive_binding() -> None:
    """Let(l9, v, LetRec(l0 = v ∪ l0)) keeps the Let: the binding reads l9 once per iteration."""
    value = mir.Reduce(EDGES, (Column(0, INT4),), ())
    letrec = mir.LetRec(("l0",), (mir.Union((rec_get("l9"), rec_get())),), (T,), (None,), rec_get())
    r = mir.Let("l9", value, letrec)
    assert normalize_lets(r) == r


def test_a_let_read_once_by_the_letrec_body_is_inlined() -> None:
    value = mir.Reduce(EDGES, (Column(0, INT4),), ())
    letrec = mir.LetRec(("l0",), (mir.Union((EDGES, rec_get())),), (T,), (None,), mir.Union((rec_get(), rec_get("l9"))))
    out = normalize_lets(mir.Let("l9", value, letrec))
    assert out == mir.LetRec(("l0",), letrec.values, (T,), (None,), mir.Union((rec_get(), value)))


def test_normalize_lets_keeps_a_letrec_even_when_nothing_recurses() -> None:
    r = mir.LetRec(("l0", "l1"), (EDGES, EDGES), (T, T), (None, None), rec_get())
    assert optimize(r) == r


def test_a_filter_over_a_letrec_reaches_only_its_body() -> None:
    cond = CallBinary("eq", Column(0, INT4), Literal(1, INT4), BOOL)
    letrec = mir.LetRec(("l0",), (mir.Union((EDGES, rec_get())),), (T,), (None,), rec_get())
    out = predicate_pushdown(mir.Filter(letrec, (cond,)))
    assert isinstance(out, mir.LetRec)
    assert out.values == letrec.values
    assert out.body == mir.Filter(rec_get(), (cond,))


def _topk_letrec() -> mir.Mir:
    """LetRec(l0 = TopK(t ∪ l0)) with a TopK(l0) consumer."""
    inner = mir.TopK(mir.Union((EDGES, rec_get())), (), (ColumnOrder(0, False, True),), 3, 0)
    return mir.LetRec(("l0",), (inner,), (T,), (None,), mir.TopK(rec_get(), (), (ColumnOrder(0, False, True),), 2, 0))


def test_lir_ids_are_post_order_values_then_body() -> None:
    plan = lower(_topk_letrec())
    assert isinstance(plan.node, lir.LetRec)
    (value,) = plan.node.values
    assert value.node_id == 3 and plan.node.body.node_id == 5 and plan.node_id == 6


def test_one_shot_refinements_leave_recursion_alone() -> None:
    df = dataflow(_topk_letrec(), None, flags=PlanFlags())
    node = df.plan.node
    assert isinstance(node, lir.LetRec)
    assert isinstance(node.values[0].node, lir.TopK) and isinstance(node.values[0].node.plan, lir.TopKBasic)
    assert isinstance(node.body.node, lir.TopK) and node.body.node.plan == lir.TopKMonotonicTopK(must_consolidate=True)


def test_physical_monotonicity_around_recursion() -> None:
    plan = lower(_topk_letrec())
    assert physically_monotonic(plan, {}, frozenset())  # its body is a TopK
    reads = lower(mir.LetRec(("l0",), (mir.Union((EDGES, rec_get())),), (T,), (None,), rec_get()))
    assert not physically_monotonic(reads, {}, frozenset())  # its body reads the binding
    value = plan.node.values[0]  # type: ignore[union-attr]
    assert physically_monotonic(value, {"l0": True}, frozenset())
    assert not physically_monotonic(value, {"l0": True}, frozenset(), in_recursion=True)
    assert not non_negative(reads)


def test_the_renderer_refuses_a_letrec() -> None:
    from compute.render import oneshot

    with pytest.raises(SqlError) as e:
        oneshot.render(lower(_topk_letrec()), None)  # type: ignore[arg-type]
    assert e.value.sqlstate == "0A000"
    assert "WITH MUTUALLY RECURSIVE is planned but not yet executable" in e.value.message
